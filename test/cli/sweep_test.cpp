// End-to-end tests of `trainsim sweep` (issue 6): where scaling goes sublinear, and why.
// Each test drives the built binary (TRAINSIM_BINARY) on a small scenario with a few steps per point.
#include "cli_test_util.hpp"
#include "model/compute.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

using trainsim::testing::Result;
using trainsim::testing::scenario;
using trainsim::testing::tmp;
using trainsim::testing::trainsim;

nlohmann::json sweep_json(const std::string& args) {
  auto r = trainsim("sweep " + args + " --jobs 2 --quiet --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty()) out.push_back(line);
  return out;
}

// tiny-gpt-2node (356.8M parameters) laid out so that only DP crosses nodes: TP8 fills a node,
// no pipeline, one replica per node; 16 sequences per replica (8 micro-batches of 2).
const std::string kDpOnly =
    " --set parallelism.tp=8 --set parallelism.pp=1 --set parallelism.dp=1 --set cluster.nodes=1"
    " --set training.global_batch=16";

// Weak scaling keeps the work per replica, so with an inter-node fabric too fast to matter the
// step grows only by the wait for the slowest replica at the gradient synchronisation: the fitted
// jitter times the expected maximum of the replicas' normal draws (model/compute.hpp
// replica_jitter_s; E[max] of 1, 2, 4, ..., 64 normals = 0, 0.5642, 1.0294, 1.4236, 1.7660, 2.0697,
// 2.3437), step(n) = step(1) + jitter (E[max dp(n)] - E[max dp(1)]). The DP all-reduce costs
// 2(n-1)/n * S / B -> 0 as B -> infinity (its latency, tens of microseconds, is < 0.1% of the step),
// and with micro-batches per pipeline fixed the 1F1B bubble (p-1)/(m+p-1) does not grow with dp
// either. This ~0.1 s step is shorter than any multi-replica run of the validation set (README
// "Accuracy"), so the jitter, fitted on steps of 0.3 s and more, dominates it: the knee is at the
// first multi-node point and named after the fixed per-step work. Checked on two layouts: DP only,
// and the scenario's own TP2 x PP2 (16 micro-batches per pipeline at every point).
TEST(SweepTest, InfiniteBandwidthWeakScalingLosesOnlyTheWaitForTheSlowestReplica) {
  const double jitter = trainsim::model::default_calibration().replica_jitter_s;
  ASSERT_GT(jitter, 0.0);
  for (const std::string& layout : {kDpOnly, std::string()}) {
    SCOPED_TRACE(layout.empty() ? "tp2 pp2" : "dp only");
    const std::string nodes = layout.empty() ? "1..32" : "1..64";
    auto j = sweep_json(scenario("tiny-gpt-2node.yaml") + " --nodes " + nodes + " --scaling weak --steps 3" + layout +
                        " --set cluster.inter_node.nic_bandwidth=100TBps --set parallelism.overlap_grad_reduce=false");
    ASSERT_GE(j["points"].size(), 6u);
    const auto& first = j["points"][0];
    const double step1 = first["step_time_s"].get<double>();
    for (const auto& p : j["points"]) {
      ASSERT_TRUE(p["feasible"].get<bool>()) << p.dump();
      const double est = step1 + jitter * (trainsim::model::expected_max_normal(p["dp"].get<int64_t>()) -
                                           trainsim::model::expected_max_normal(first["dp"].get<int64_t>()));
      EXPECT_NEAR(p["step_time_s"].get<double>(), est, 0.015 * est) << p["nodes"];
    }
    ASSERT_FALSE(j["knee_nodes"].is_null());
    EXPECT_EQ(j["knee_nodes"].get<int64_t>(), 2);
    EXPECT_EQ(j["knee_reason"].get<std::string>().rfind("compute: the fixed per-step work", 0), 0u) << j["knee_reason"];
  }
}

// A thin inter-node link and no overlap: the DP gradient all-reduce is fully exposed. Alpha-beta
// estimate (ring, bandwidth term; latency is negligible here): one ring per TP rank (NIC per GPU)
// over the n replicas moves 2(n-1)/n * S through each NIC, S = gradient bytes per GPU =
// params / (tp * pp) * 2 bytes (bf16). Weak scaling: step(n) = step(1) + 2(n-1)/n * S / B + the
// wait for the slowest of n replicas (the test above; the 1-node point has neither),
// efficiency(n) = step(1) / step(n); the knee is the first n with efficiency < 0.9. The sweep's
// knee must be that n or one power of two away, and its reason the larger of the two at the knee:
// at 10 Gb/s the interconnect (75 ms of all-reduce against 28 ms of waiting at 2 nodes), at 40 Gb/s
// the fixed per-step work (19 ms against 28).
TEST(SweepTest, ThinLinkKneeIsWhereTheAlphaBetaEstimatePutsIt) {
  for (const double gbps : {10.0, 40.0}) {
    SCOPED_TRACE(std::to_string(gbps) + " Gb/s");
    auto j = sweep_json(scenario("tiny-gpt-2node.yaml") + " --nodes 1..64 --scaling weak --steps 3" + kDpOnly +
                        " --set parallelism.overlap_grad_reduce=false --set cluster.inter_node.nic_bandwidth=" +
                        std::to_string(static_cast<int>(gbps)) + "Gbps");
    auto params = trainsim("memory " + scenario("tiny-gpt-2node.yaml") + " --json -");
    ASSERT_EQ(params.code, 0) << params.err;
    const double s_bytes = nlohmann::json::parse(params.out)["model"]["params"].get<double>() / 8 * 2;  // tp 8, pp 1, bf16
    const double b_Bps = gbps * 1e9 / 8;
    const auto& pts = j["points"];
    ASSERT_EQ(pts[0]["nodes"], 1);
    const double step1 = pts[0]["step_time_s"].get<double>();
    int64_t knee_est = 0;
    bool comm_at_knee_dominates = false;
    const double jitter = trainsim::model::default_calibration().replica_jitter_s;
    // NCCL's per-call costs (model::net_call_cost): the bytes move at 0.95 of the NIC, and each of
    // the ceil(params / 40M) bucket calls pays the ring latency 8.4 us + 2(n-1) x 14 us.
    const double calls = std::ceil(s_bytes / 2 / 40e6);
    for (const auto& p : pts) {
      const double n = p["nodes"].get<double>();
      const double latency = n > 1 ? calls * (8.4e-6 + 2 * (n - 1) * 14e-6) : 0;
      const double comm = 2 * (n - 1) / n * s_bytes / (0.95 * b_Bps) + latency;
      const double wait = jitter * trainsim::model::expected_max_normal(p["dp"].get<int64_t>());
      const double est = step1 + comm + wait;
      // The simulated step follows the estimate closely (aggregated ring on a non-blocking fabric).
      EXPECT_NEAR(p["step_time_s"].get<double>(), est, 0.02 * est) << "nodes " << n;
      if (knee_est == 0 && step1 / est < 0.9) {
        knee_est = p["nodes"].get<int64_t>();
        comm_at_knee_dominates = comm > wait;
      }
    }
    ASSERT_GT(knee_est, 0);
    ASSERT_FALSE(j["knee_nodes"].is_null());
    const int64_t knee = j["knee_nodes"].get<int64_t>();
    EXPECT_LE(std::abs(std::log2(static_cast<double>(knee)) - std::log2(static_cast<double>(knee_est))), 1.0)
        << "sweep knee " << knee << ", alpha-beta knee " << knee_est;
    EXPECT_EQ(comm_at_knee_dominates, gbps < 20);
    EXPECT_EQ(j["knee_reason"].get<std::string>().rfind(comm_at_knee_dominates ? "interconnect" : "compute: the fixed", 0), 0u)
        << j["knee_reason"];
  }
}

// Strong scaling with a pipeline: Llama 2 7B, TP2 x PP4 per node, global batch 64 sequences of
// micro-batch 1, so m = 64 / dp micro-batches per pipeline. In 1F1B the bubble time is (p-1) x the
// per-micro-batch time of a stage, independent of m, while compute shrinks as m falls: the bubble's
// share of the step grows as (p-1)/(m+p-1) and becomes the knee's reason ("pipeline"), with the
// network (400 Gb/s per GPU, overlapped DP sync) well below 10% of the step.
TEST(SweepTest, StrongScalingKneeIsThePipelineBubble) {
  auto j = sweep_json(scenario("llama2-7b-8gpu.yaml") +
                      " --nodes 1..64 --steps 3 --set parallelism.tp=2 --set parallelism.pp=4 --set parallelism.dp=1"
                      " --set training.global_batch=64 --set parallelism.zero=0");
  const auto& pts = j["points"];
  ASSERT_EQ(pts.size(), 7u);
  double prev_share = 0;
  const double bubble1 = pts[0]["bubble_share"].get<double>() * pts[0]["step_time_s"].get<double>();
  for (const auto& p : pts) {
    ASSERT_TRUE(p["feasible"].get<bool>()) << p.dump();
    EXPECT_EQ(p["micro_batches"].get<int64_t>(), 64 / p["dp"].get<int64_t>());  // global / (dp * micro_batch)
    const double share = p["bubble_share"].get<double>();
    EXPECT_GT(share, prev_share) << p["nodes"];
    prev_share = share;
    // Bubble time constant in m (1F1B: (p-1) stage slots), within 5%.
    EXPECT_NEAR(share * p["step_time_s"].get<double>(), bubble1, 0.05 * bubble1) << p["nodes"];
  }
  ASSERT_FALSE(j["knee_nodes"].is_null());
  EXPECT_EQ(j["knee_reason"].get<std::string>().rfind("pipeline", 0), 0u) << j["knee_reason"];
  for (const auto& p : pts)
    if (p["nodes"] == j["knee_nodes"]) {
      // The knee's cause is what grew in GPU time per token (issue 16), not the point's largest
      // saving: the bubble grew from the 1-node point's share to more than twice it.
      EXPECT_GT(p["bubble_share"].get<double>(), 2 * pts[0]["bubble_share"].get<double>());
      EXPECT_LT(p["exposed_comm_share"].get<double>(), 0.10);
      EXPECT_LT(p["scaling_efficiency"].get<double>(), 0.9);
    }
}

// Points that cannot run are in the report with the reason, not dropped: with TP8 x PP2 a replica
// needs 16 GPUs, so 1 node (8 GPUs) holds none; at 32 nodes dp = 256 / 16 = 16 and a global
// batch of 48 is not a multiple of dp * micro_batch = 32. The feasible points are still run.
TEST(SweepTest, InfeasiblePointsAreReportedNotDropped) {
  const std::string csv = tmp("points.csv");
  auto r = trainsim("sweep " + scenario("tiny-gpt-2node.yaml") +
                    " --nodes 1,2,4,32 --steps 3 --jobs 2 --quiet --set parallelism.tp=8 --set parallelism.pp=2"
                    " --set parallelism.dp=1 --set training.global_batch=48 --json - --csv " + csv);
  ASSERT_EQ(r.code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& pts = j["points"];
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[0]["nodes"], 1);
  EXPECT_FALSE(pts[0]["feasible"].get<bool>());
  EXPECT_NE(pts[0]["reason"].get<std::string>().find("8 GPUs do not hold whole replicas of tp*pp*cp = 16"), std::string::npos)
      << pts[0]["reason"];
  EXPECT_TRUE(pts[1]["feasible"].get<bool>());
  EXPECT_TRUE(pts[2]["feasible"].get<bool>());
  EXPECT_EQ(pts[2]["dp"], 2);
  EXPECT_EQ(pts[3]["nodes"], 32);
  EXPECT_EQ(pts[3]["dp"], 16);
  EXPECT_FALSE(pts[3]["feasible"].get<bool>());
  EXPECT_NE(pts[3]["reason"].get<std::string>().find("not a multiple of dp * micro_batch = 16 * 2 = 32"), std::string::npos)
      << pts[3]["reason"];
  // Efficiency is relative to the smallest FEASIBLE point (2 nodes).
  EXPECT_DOUBLE_EQ(pts[1]["scaling_efficiency"].get<double>(), 1.0);
  EXPECT_NE(r.err.find("infeasible: 8 GPUs do not hold whole replicas"), std::string::npos);  // and in the table
  auto rows = lines_of(csv);
  ASSERT_EQ(rows.size(), 5u);  // header + 4 points
  EXPECT_EQ(rows[1].rfind("1,8,0,0,", 0), 0u) << rows[1];
  EXPECT_EQ(rows[4].rfind("32,256,16,0,", 0), 0u) << rows[4];
  fs::remove(csv);
}

// With cluster.nvlink_domain the node counts are servers as the scenario writes them: 144 GB200
// trays of 4 GPUs are 576 GPUs (8 NVL72 domains), dp 8 for TP8 x PP9; 288 trays, dp 16.
TEST(SweepTest, NvlinkDomainNodesAreServers) {
  auto r = trainsim("sweep " + scenario("gb200-nvl72.yaml") + " --nodes 144,288 --steps 3 --jobs 2 --quiet --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto pts = nlohmann::json::parse(r.out)["points"];
  ASSERT_EQ(pts.size(), 2u);
  EXPECT_EQ(pts[0]["gpus"], 576);
  EXPECT_EQ(pts[0]["dp"], 8);
  EXPECT_TRUE(pts[0]["feasible"].get<bool>()) << pts[0];
  EXPECT_EQ(pts[1]["gpus"], 1152);
  EXPECT_EQ(pts[1]["dp"], 16);
  EXPECT_TRUE(pts[1]["feasible"].get<bool>()) << pts[1];
}

// --resume FILE: one JSON line per finished point, appended as it finishes; a second sweep with
// the same file reads those back instead of re-running them. Proof that they are read, not
// recomputed: the file does not grow for points already in it, and a value planted in a line
// comes back in the report.
TEST(SweepTest, ResumeKeepsFinishedPointsWithoutRecomputing) {
  const std::string file = tmp("resume.jsonl");
  fs::remove(file);
  const std::string base = scenario("tiny-gpt-2node.yaml") + " --steps 3";
  auto first = sweep_json(base + " --nodes 1..4 --resume " + file);
  ASSERT_EQ(lines_of(file).size(), 3u);  // 1, 2, 4 nodes
  auto second = sweep_json(base + " --nodes 1..8 --resume " + file);
  auto lines = lines_of(file);
  ASSERT_EQ(lines.size(), 4u);  // only the 8-node point was run and appended
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(first["points"][i].dump(), second["points"][i].dump());
  EXPECT_EQ(nlohmann::json::parse(lines[3])["nodes"], 8);

  // Plant a marker in the 2-node line: a resumed sweep must report it (it did not re-simulate).
  {
    std::ofstream out(file, std::ios::trunc);
    for (const auto& l : lines) {
      auto j = nlohmann::json::parse(l);
      if (j["nodes"] == 2) j["report"]["step_time_s"]["mean"] = 12.5;
      out << j.dump() << "\n";
    }
  }
  auto third = sweep_json(base + " --nodes 1..8 --resume " + file);
  EXPECT_EQ(lines_of(file).size(), 4u);
  EXPECT_EQ(third["points"][1]["step_time_s"].get<double>(), 12.5);
  EXPECT_EQ(third["points"][3].dump(), second["points"][3].dump());
  fs::remove(file);
}

// BUG (sim/cli/sweep_command.cpp, the `--resume` reader): lines are keyed by node count and
// scaling only, so a results file written for other --set overrides (or another scenario) is
// silently reused. Reproducer: sweep tiny-gpt-2node.yaml --nodes 1..4 --resume F, then the same
// with --set model.layers=48 --resume F: the 48-layer sweep reports the 24-layer step times
// (0.296 s at 1 node instead of 0.486 s). Expected: a line is reused only for the same scenario
// and overrides (e.g. keyed by a hash of the resolved point scenario); others are re-run.
TEST(SweepTest, ResumeDoesNotReusePointsOfOtherOverrides) {
  const std::string file = tmp("resume-other.jsonl");
  fs::remove(file);
  const std::string base = scenario("tiny-gpt-2node.yaml") + " --steps 3 --nodes 1..4";
  sweep_json(base + " --resume " + file);
  auto fresh = sweep_json(base + " --set model.layers=48");
  auto resumed = sweep_json(base + " --set model.layers=48 --resume " + file);
  for (size_t i = 0; i < 3; ++i)
    EXPECT_EQ(resumed["points"][i]["step_time_s"].get<double>(), fresh["points"][i]["step_time_s"].get<double>());
  fs::remove(file);
}

}  // namespace

namespace {

// Issue 16: a dedicated-fabric sweep whose knee comes from the fixed per-step work (optimizer step
// and the wait for the slowest replica, paid once a step however few tokens each GPU gets) names
// that, not recompute:
// Llama 2 7B, selective recompute, strong scaling at 256 sequences. The fixed share grows from 1%
// towards a fifth of the step as each GPU's tokens per step fall 32-fold; the sweep table shows it.
TEST(SweepTest, KneeFromTheFixedPerStepWorkIsNamed) {
  auto j = sweep_json(scenario("llama2-7b-8gpu.yaml") +
                      " --nodes 1..32 --steps 3 --set parallelism.recompute=selective --set training.global_batch=256");
  ASSERT_FALSE(j["knee_nodes"].is_null());
  EXPECT_EQ(j["knee_reason"].get<std::string>().rfind("compute: the fixed per-step work", 0), 0u) << j["knee_reason"];
  const auto& pts = j["points"];
  EXPECT_LT(pts[0]["fixed_share"].get<double>(), 0.02);
  EXPECT_GT(pts[pts.size() - 1]["fixed_share"].get<double>(), 0.15);
}

}  // namespace

namespace {

// Issue 17: `sweep --runs 8` on the contended scenario (4 tenants on a 2:1 oversubscribed fabric):
// every point is the mean of 8 seeds with a 95% t-interval; efficiency never rises significantly
// with more nodes (each point's interval reaches below the previous one's upper end), and the knee
// comes with its interval (possibly from / surely by), the mean's knee inside it.
TEST(SweepTest, SeedsPerPointGiveIntervalsAndAMonotoneEfficiency) {
  auto j = sweep_json(scenario("shared-tenants.yaml") + " --nodes 2..16 --steps 20 --runs 8");
  EXPECT_EQ(j["runs"], 8);
  const auto& pts = j["points"];
  ASSERT_EQ(pts.size(), 4u);
  double prev_hi = 1e9;
  for (const auto& p : pts) {
    ASSERT_TRUE(p["feasible"].get<bool>()) << p.dump();
    ASSERT_EQ(p["step_time_s_runs"].size(), 8u);
    // The point's step is the mean of its seeds' steps.
    double sum = 0;
    for (const auto& x : p["step_time_s_runs"]) sum += x.get<double>();
    EXPECT_NEAR(p["step_time_s"].get<double>(), sum / 8, 1e-9 * sum);
    const double lo = p["scaling_efficiency_ci95"][0].get<double>(), hi = p["scaling_efficiency_ci95"][1].get<double>();
    EXPECT_LE(lo, p["scaling_efficiency"].get<double>());
    EXPECT_GE(hi, p["scaling_efficiency"].get<double>());
    EXPECT_LE(lo, prev_hi) << "efficiency rises beyond its interval at " << p["nodes"];
    prev_hi = hi;
  }
  // Contention makes seeds differ: the intervals are not empty beyond the reference point.
  EXPECT_GT(pts[2]["scaling_efficiency_ci95"][1].get<double>() - pts[2]["scaling_efficiency_ci95"][0].get<double>(), 0.01);
  ASSERT_FALSE(j["knee_nodes"].is_null());
  const auto& ci = j["knee_nodes_ci95"];
  ASSERT_FALSE(ci[0].is_null());
  EXPECT_LE(ci[0].get<int64_t>(), j["knee_nodes"].get<int64_t>());
  if (!ci[1].is_null()) {
    EXPECT_GE(ci[1].get<int64_t>(), j["knee_nodes"].get<int64_t>());
  }
}

}  // namespace
