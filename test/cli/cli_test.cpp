// End-to-end tests of the trainsim binary: exit codes, files written (or not), determinism.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

using trainsim::testing::Result;
using trainsim::testing::scenario;
using trainsim::testing::tmp;
using trainsim::testing::trainsim;

// CONTRACT.md: steps_simulated + steps_replicated = steps; --no-replicate simulates every step, and
// the figures are the same.
TEST(CliTest, RunReplicatesTheSteadyStateUnlessToldNot) {
  auto r = trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --steps 60 --json - --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto a = nlohmann::json::parse(r.out);
  auto n = trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --steps 60 --json - --quiet --no-replicate");
  ASSERT_EQ(n.code, 0) << n.err;
  const auto b = nlohmann::json::parse(n.out);
  EXPECT_EQ(a["steps_simulated"].get<int>() + a["steps_replicated"].get<int>(), 60);
  EXPECT_GT(a["steps_replicated"].get<int>(), 50);
  EXPECT_EQ(b["steps_simulated"], 60);
  EXPECT_EQ(b["steps_replicated"], 0);
  const double ma = a["step_time_s"]["mean"].get<double>(), mb = b["step_time_s"]["mean"].get<double>();
  EXPECT_NEAR(ma, mb, 1e-9 * mb);
  EXPECT_NEAR(a["projection"]["days"].get<double>(), b["projection"]["days"].get<double>(),
              1e-9 * b["projection"]["days"].get<double>());
}

TEST(CliTest, RunWritesTheContractJsonToStdout) {
  auto r = trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --steps 5 --json - --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);  // nothing but the JSON on stdout
  EXPECT_EQ(j["steps_simulated"], 5);
  EXPECT_EQ(j["network_model"], "CM02");
  EXPECT_EQ(j["gpus"], 16);
  // The five parts (tp_comm added by issue 13) add up to the step (issue 5: within 0.1%).
  const double parts = j["breakdown_s"]["compute"].get<double>() + j["breakdown_s"]["tp_comm"].get<double>() +
                       j["breakdown_s"]["exposed_comm"].get<double>() + j["breakdown_s"]["bubble"].get<double>() +
                       j["breakdown_s"]["optimizer"].get<double>();
  EXPECT_GT(j["breakdown_s"]["tp_comm"].get<double>(), 0);  // tp 2: TP collectives are never free
  EXPECT_NEAR(parts, j["step_time_s"]["mean"].get<double>(), 1e-3 * parts);
  // projection.days = total_steps x mean step / 86400 (issue 5: within 0.1%)
  EXPECT_NEAR(j["projection"]["days"].get<double>(),
              j["projection"]["total_steps"].get<double>() * j["step_time_s"]["mean"].get<double>() / 86400,
              1e-3 * j["projection"]["days"].get<double>());
  EXPECT_NE(r.err.find("trainsim run: tiny-gpt-2node"), std::string::npos);  // the table went to stderr
}

TEST(CliTest, SameSeedGivesTheSameReport) {
  auto a = trainsim("run " + scenario("shared-tenants.yaml") + " --steps 20 --seed 3 --json - --quiet");
  auto b = trainsim("run " + scenario("shared-tenants.yaml") + " --steps 20 --seed 3 --json - --quiet");
  auto c = trainsim("run " + scenario("shared-tenants.yaml") + " --steps 20 --seed 4 --json - --quiet");
  ASSERT_EQ(a.code, 0) << a.err;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out), jc = nlohmann::json::parse(c.out);
  ja.erase("wall_s");
  jb.erase("wall_s");
  EXPECT_EQ(ja.dump(), jb.dump());
  EXPECT_NE(ja["step_time_s"]["mean"], jc["step_time_s"]["mean"]);  // contention differs by seed
}

TEST(CliTest, CsvHasOneRowPerStepAndTraceIsJson) {
  const std::string csv = tmp("steps.csv"), trace = tmp("trace.json");
  auto r = trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --steps 7 --quiet --csv " + csv + " --trace " + trace);
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(csv);
  std::string line;
  int rows = -1;  // header
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 7);
  std::ifstream t(trace);
  auto j = nlohmann::json::parse(t);
  bool forward = false, backward = false, sync = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    forward |= e["cat"] == "forward";
    backward |= e["cat"] == "backward";
    sync |= e["cat"] == "dp-sync";
  }
  EXPECT_TRUE(forward && backward && sync);
  fs::remove(csv);
  fs::remove(trace);
}

TEST(CliTest, BadInputExitsTwoWithLocationAndWritesNothing) {
  const std::string out = tmp("bad.json");
  auto r = trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --set model.layers=abc --json " + out);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("--set:1:", 0), 0u) << r.err;
  EXPECT_FALSE(fs::exists(out));
  auto missing = trainsim("run /nonexistent.yaml");
  EXPECT_EQ(missing.code, 2);
  EXPECT_EQ(missing.err, "/nonexistent.yaml: cannot read file\n");
}

TEST(CliTest, ScenarioThatDoesNotFitExitsOneAndSaysWhy) {
  // Plain DP (ZeRO-0): 16 bytes per parameter of the stage's 3.2e9, 51 GB of model states, and
  // 68 GB of activations do not fit 85.5 GB.
  auto r = trainsim("run " + scenario("llama3-405b-16k.yaml") + " --set parallelism.zero=0 --json - --quiet");
  EXPECT_EQ(r.code, 1);
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["memory"]["fits"], false);
  EXPECT_NE(j["infeasible_reason"].get<std::string>().find("does not fit"), std::string::npos);
}

TEST(CliTest, SweepReportsPointsAndEfficiency) {
  auto r = trainsim("sweep " + scenario("tiny-gpt-2node.yaml") + " --nodes 1..4 --steps 3 --jobs 2 --json - --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["points"].size(), 3u);  // 1, 2, 4 nodes
  EXPECT_EQ(j["points"][0]["nodes"], 1);
  EXPECT_NEAR(j["points"][0]["scaling_efficiency"].get<double>(), 1.0, 1e-12);  // reference point
  EXPECT_TRUE(j.contains("knee_nodes"));
}

TEST(CliTest, VarianceWithoutContentionHasZeroSpread) {
  auto r = trainsim("variance " + scenario("tiny-gpt-2node.yaml") + " --runs 3 --steps 3 --jobs 2 --json - --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["runs"].size(), 3u);
  EXPECT_EQ(j["step_time_s"]["std"], 0.0);
  EXPECT_EQ(j["step_time_s"]["cv"], 0.0);
}

TEST(CliTest, InfinitelyFastNetworkHasNoSyncWaitAndNoStretch) {
  // Data parallelism only (pp = 1: no pipeline bubble) on links of 100 TB/s with 1 ns latency:
  // nobody waits, so sync wait ~ 0 and the projection is not stretched (issue 5).
  const std::string fast =
      " --set parallelism.tp=8 --set parallelism.pp=1 --set parallelism.dp=2 --set training.global_batch=16"
      " --set cluster.inter_node.nic_bandwidth=100TBps --set cluster.inter_node.latency=1ns"
      " --set cluster.intra_node.bandwidth=100TBps --set cluster.intra_node.latency=1ns";
  auto r = trainsim("run " + scenario("tiny-gpt-2node.yaml") + fast + " --steps 5 --json - --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_LT(j["sync_wait"]["fraction"].get<double>(), 1e-3);
  EXPECT_LT(j["projection"]["stretch_days"].get<double>(), 1e-3 * j["projection"]["days"].get<double>());
  EXPECT_LT(j["breakdown_s"]["exposed_comm"].get<double>(), 1e-3 * j["step_time_s"]["mean"].get<double>());
  // The same layout on 1 GB/s NICs waits on the gradient all-reduce.
  auto slow = trainsim("run " + scenario("tiny-gpt-2node.yaml") + fast + " --set cluster.inter_node.nic_bandwidth=1GBps --steps 5 --json - --quiet");
  ASSERT_EQ(slow.code, 0) << slow.err;
  EXPECT_GT(nlohmann::json::parse(slow.out)["sync_wait"]["fraction"].get<double>(), 0.05);
}

TEST(CliTest, VersionAndUnknownSubcommand) {
  EXPECT_EQ(trainsim("--version").code, 0);
  EXPECT_EQ(trainsim("frobnicate").code, 2);
}

}  // namespace

namespace {

// Issue 13: scenarios/gpt3-175b-pcie.yaml (TP4 on 8 x H100 PCIe behind one 64 GB/s bridge) names the
// interconnect, and the TP communication it reports, as the bottleneck; the same GPUs on NVSwitch
// are compute-bound and several times faster (the layer-level figures: compute_test.cpp).
TEST(CliTest, TensorParallelOverPcieIsTheBottleneck) {
  auto pcie = trainsim("run " + scenario("gpt3-175b-pcie.yaml") + " --steps 2 --json - --quiet");
  ASSERT_EQ(pcie.code, 0) << pcie.err;
  auto nv = trainsim("run " + scenario("gpt3-175b-pcie.yaml") +
                     " --steps 2 --json - --quiet --set cluster.intra_node.fabric=nvswitch --set cluster.intra_node.bandwidth=450GBps");
  ASSERT_EQ(nv.code, 0) << nv.err;
  const auto jp = nlohmann::json::parse(pcie.out), jn = nlohmann::json::parse(nv.out);
  EXPECT_EQ(jp["bottleneck"], "interconnect");
  EXPECT_NE(jp["bottleneck_reason"].get<std::string>().find("TP/CP communication"), std::string::npos);
  EXPECT_GT(jp["breakdown_s"]["tp_comm"].get<double>(), 0.5 * jp["step_time_s"]["mean"].get<double>());
  EXPECT_NE(jn["bottleneck"], "interconnect");
  EXPECT_GT(jp["step_time_s"]["mean"].get<double>(), 3 * jn["step_time_s"]["mean"].get<double>());
}

}  // namespace

namespace trainsim::testing {
namespace {

// tools/plot.py writes under -o PREFIX and creates PREFIX's folder (issue 16: `-o out/run` failed
// when out/ did not exist).
TEST(CliTest, PlotCreatesItsOutputFolder) {
  const std::string json = tmp("plot-run.json");
  ASSERT_EQ(trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --quiet --steps 3 --json " + json).code, 0);
  const auto dir = scratch() / "plots" / "new";
  std::filesystem::remove_all(scratch() / "plots");
  const Result r = shell(std::string(TRAINSIM_SOURCE_DIR) + "/tools/plot.py run " + json + " -o " + (dir / "run").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(dir / "run-breakdown.png")) << r.out;
}

}  // namespace
}  // namespace trainsim::testing
