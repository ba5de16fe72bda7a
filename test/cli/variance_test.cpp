// End-to-end tests of tenant contention, stragglers and `trainsim variance` (issue 7).
// Each test drives the built binary (TRAINSIM_BINARY) on a small scenario with a few steps.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "hardware/gpu.hpp"
#include "model/accuracy.hpp"
#include "model/compute.hpp"

namespace {

namespace fs = std::filesystem;

using trainsim::testing::read_file;
using trainsim::testing::Result;
using trainsim::testing::scenario;
using trainsim::testing::tmp;
using trainsim::testing::trainsim;

nlohmann::json run_json(const std::string& args) {
  auto r = trainsim("run " + args + " --quiet --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

nlohmann::json variance_json(const std::string& args) {
  auto r = trainsim("variance " + args + " --jobs 2 --quiet --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

double mean_step(const nlohmann::json& report) { return report["step_time_s"]["mean"].get<double>(); }

// tiny-gpt-2node (356.8M parameters) in pure data parallelism over 2 nodes x 8 GPUs on the
// `shared` fabric: one micro-batch of 2 per GPU, gradients reduced after the backward (no
// overlap), so the inter-node phase of the all-reduce is on the critical path.
const std::string kSharedDp =
    " --set parallelism.tp=1 --set parallelism.pp=1 --set parallelism.dp=16 --set training.global_batch=32"
    " --set parallelism.overlap_grad_reduce=false --set cluster.inter_node.topology=shared";
// One tenant that is always busy (mean busy 1000 s, idle 1 ms: it starts busy with probability
// 1 - 1e-6 and never leaves within the run) and takes half of every shared link it crosses.
const std::string kHalfLoad =
    " --set contention.tenants=1 --set contention.load=0.5 --set contention.burst=1000s --set contention.idle=1ms";

// Same seed: bit-identical report and per-step CSV (wall_s aside, which is host time); another
// seed: other tenant placements and busy periods, so another mean step time.
TEST(VarianceTest, SameSeedIsBitIdenticalAndAnotherSeedDiffers) {
  const std::string csv_a = tmp("a.csv"), csv_b = tmp("b.csv");
  auto a = run_json(scenario("crux-shared-tor.yaml") + " --steps 10 --seed 5 --csv " + csv_a);
  auto b = run_json(scenario("crux-shared-tor.yaml") + " --steps 10 --seed 5 --csv " + csv_b);
  auto c = run_json(scenario("crux-shared-tor.yaml") + " --steps 10 --seed 6");
  a.erase("wall_s");
  b.erase("wall_s");
  EXPECT_EQ(a.dump(), b.dump());
  const std::string rows = read_file(csv_a);
  EXPECT_FALSE(rows.empty());
  EXPECT_EQ(rows, read_file(csv_b));
  EXPECT_NE(mean_step(a), mean_step(c));
  fs::remove(csv_a);
  fs::remove(csv_b);
}

// Without contention nothing is random: every seed gives the same step time, and `variance`
// reports std = cv = 0 (and no dedicated-vs-shared comparison, there being nothing to compare).
TEST(VarianceTest, NoContentionGivesZeroVariance) {
  const std::string dedicated =
      scenario("crux-shared-tor.yaml") + " --steps 5 --set contention.tenants=0 --set cluster.inter_node.routing=adaptive";
  auto a = run_json(dedicated + " --seed 1");
  auto b = run_json(dedicated + " --seed 2");
  EXPECT_EQ(mean_step(a), mean_step(b));
  auto v = variance_json(scenario("crux-shared-tor.yaml") + " --runs 3 --steps 5 --set contention=null --set cluster.inter_node.routing=adaptive");
  ASSERT_EQ(v["runs"].size(), 3u);
  EXPECT_EQ(v["step_time_s"]["std"].get<double>(), 0.0);
  EXPECT_EQ(v["step_time_s"]["cv"].get<double>(), 0.0);
  EXPECT_EQ(v["step_time_s"]["mean"].get<double>(), mean_step(a));
  EXPECT_FALSE(v.contains("contention_share"));
  // No spread between seeds, yet trainsim's own error stays (model/accuracy.hpp): the band around
  // the mean days is [(1 + p05), (1 + p95)] x days.
  const double days = v["projection"]["days"]["mean"].get<double>();
  const auto& band = trainsim::model::model_accuracy().step_time;
  EXPECT_NEAR(v["accuracy"]["days"]["low"].get<double>(), days * (1 + band.p05_pct / 100), 1e-9 * days);
  EXPECT_NEAR(v["accuracy"]["days"]["high"].get<double>(), days * (1 + band.p95_pct / 100), 1e-9 * days);
}

// `variance --runs 4` on a contended scenario: the runs spread (std > 0), every shared run is
// slower than the same run on a dedicated fabric, contention_share = (mean days - dedicated
// days) / mean days > 0, and the percentiles are ordered.
TEST(VarianceTest, ContendedRunsSpreadAndCostTimeAgainstTheDedicatedBaseline) {
  auto v = variance_json(scenario("crux-shared-tor.yaml") + " --runs 4 --steps 20");
  ASSERT_EQ(v["runs"].size(), 4u);
  const auto& st = v["step_time_s"];
  EXPECT_GT(st["std"].get<double>(), 0.0);
  EXPECT_NEAR(st["cv"].get<double>(), st["std"].get<double>() / st["mean"].get<double>(), 1e-12);
  EXPECT_LE(st["p10"].get<double>(), st["p50"].get<double>());
  EXPECT_LE(st["p50"].get<double>(), st["p90"].get<double>());
  ASSERT_TRUE(v.contains("dedicated"));
  const double dedicated = v["dedicated"]["step_time_s"].get<double>();
  EXPECT_LT(dedicated, st["mean"].get<double>());
  for (const auto& r : v["runs"]) EXPECT_GT(r["step_time_s"]["mean"].get<double>(), dedicated) << r["seed"];
  const double days = v["projection"]["days"]["mean"].get<double>();
  const double share = v["contention_share"].get<double>();
  EXPECT_GT(share, 0.0);
  EXPECT_NEAR(share, (days - v["dedicated"]["days"].get<double>()) / days, 1e-9);
}

// A shared link at half bandwidth stretches the inter-node part of the all-reduce 2x. Hierarchical
// all-reduce over m = 2 nodes of q = 8 GPUs: one ring per rail moves 2(m-1)/m * S/q through each
// NIC, S = 356.8M params x 2 bytes, so that part takes 2(m-1)/m * S / (q B) = 71.4 ms at
// B = 10 Gb/s and 1.78 ms at 400 Gb/s (the node's uplink is 8 NICs wide, so it is saturated by the
// 8 rails and halving it halves each ring); the NVLink parts (reduce-scatter and all-gather,
// (q-1)/q S each through each GPU's 450 GB/s port at the bus bandwidth nccl-tests measure for them,
// model::intra_collective_time_s) run at the same time (parallel::plan_collective),
// so the step grows by max(2 inter, intra) - max(inter, intra): the whole inter part at 10 Gb/s,
// less at 400 Gb/s where NVLink hides part of it. The same added time is a large share of a
// communication-bound step and a small share of a compute-bound one.
TEST(VarianceTest, HalfLoadedLinkSlowsCommunicationBoundMoreThanComputeBound) {
  const std::string base = scenario("tiny-gpt-2node.yaml") + " --steps 3" + kSharedDp;
  auto params = trainsim("memory " + scenario("tiny-gpt-2node.yaml") + " --json -");
  ASSERT_EQ(params.code, 0) << params.err;
  const double s_bytes = nlohmann::json::parse(params.out)["model"]["params"].get<double>() * 2;
  trainsim::hardware::ClusterSpec h100;  // the scenario's node: 8 H100 on NVSwitch at 450 GB/s
  h100.gpu = *trainsim::hardware::find_gpu("h100-sxm");
  h100.intra_bandwidth_Bps = 450e9;
  double relative[2] = {0, 0};
  int i = 0;
  for (const double gbps : {10.0, 400.0}) {
    SCOPED_TRACE(std::to_string(gbps) + " Gb/s");
    const std::string nic = " --set cluster.inter_node.nic_bandwidth=" + std::to_string(static_cast<int>(gbps)) + "Gbps";
    const double dedicated = mean_step(run_json(base + nic));
    const double shared = mean_step(run_json(base + nic + kHalfLoad));
    // At 0.95 of the NIC (the efficiency NCCL reaches on ConnectX-7, model::net_call_cost).
    const double inter_s = 2.0 * (2 - 1) / 2 * s_bytes / (8 * gbps * 1e9 / 8) / 0.95;
    const double intra_s = trainsim::model::intra_collective_time_s(h100, trainsim::collectives::Kind::kReduceScatter, 8, s_bytes) +
                           trainsim::model::intra_collective_time_s(h100, trainsim::collectives::Kind::kAllGather, 8, s_bytes);
    const double added_s = std::max(2 * inter_s, intra_s) - std::max(inter_s, intra_s);
    EXPECT_NEAR(shared - dedicated, added_s, 0.05 * inter_s);  // at 400 Gb/s a small difference of two near-equal parts
    relative[i++] = shared / dedicated - 1;
  }
  EXPECT_GT(relative[0], 0.30);  // 10 Gb/s: exposed sync ~half of the step, +47% measured
  EXPECT_LT(relative[1], 0.05);  // 400 Gb/s: compute and the fixed per-step cost dominate, +2%
  EXPECT_GT(relative[0], 5 * relative[1]);
}

// Crux (published_runs.yaml crux_sigcomm24, test/validation/interference.md 1.1): the 64-GPU GPT
// job sharing ToR-aggregation links with a 16-GPU BERT job went 1.53 s -> 1.70 s (+11.0%), both on
// the same ECMP fabric. scenarios/crux-shared-tor.yaml is built like that setting (the paper's
// testbed fabric; a larger model than the paper's, its comments say why; nothing fitted to the
// +11%). Alone = the same seeds without the tenant (the ECMP hashes are the seed's). Tolerance: the
// slowdown within 5 points of +11% (measured +13.4% over 8 seeds, 1.356 -> 1.538 s); the alone
// step within 20% of the paper's 1.53 s. Step-level means: the warm-up step dropped in both.
TEST(VarianceTest, CruxSharedTorSlowdownIsOfThePublishedOrder) {
  const std::string crux = scenario("crux-shared-tor.yaml") + " --runs 8 --steps 20";
  const double shared = variance_json(crux)["step_level"]["mean_s"].get<double>();
  const double alone = variance_json(crux + " --set contention.tenants=0")["step_level"]["mean_s"].get<double>();
  EXPECT_NEAR(alone, 1.53, 0.20 * 1.53);
  EXPECT_NEAR(shared / alone - 1, 0.11, 0.05);
}

TEST(VarianceTest, OneSlowNodeGatesTheStepByItsComputeShare) {
  const std::string base = scenario("tiny-gpt-2node.yaml") +
                           " --steps 3 --set parallelism.tp=8 --set parallelism.pp=1 --set parallelism.dp=4"
                           " --set cluster.nodes=4 --set training.global_batch=32";
  auto healthy = run_json(base);
  // The passes stretch whole, their folded TP communication included.
  const double compute = healthy["breakdown_s"]["compute"].get<double>() + healthy["breakdown_s"]["tp_comm"].get<double>();
  for (const char* seed : {"1", "2", "3"}) {  // the slow GPU lands on different nodes
    auto slow = run_json(base + " --set stragglers.count=1 --set stragglers.slowdown=1.5 --seed " + seed);
    const double expected = mean_step(healthy) + 0.5 * compute;
    EXPECT_NEAR(mean_step(slow), expected, 0.02 * expected) << "seed " << seed;
    EXPECT_GT(slow["sync_wait"]["fraction"].get<double>(), healthy["sync_wait"]["fraction"].get<double>());
  }
}

// Every TP rank has its own DP ring. Where rails can compete (here a `shared` topology) each ring
// loads the links above the NICs: tiny-gpt with TP8 x DP2 on 2 nodes, 10 Gb/s NICs, no overlap;
// oversubscription 8 makes each node's uplink one NIC wide (8 x 1.25 GB/s / 8), shared by the 8
// TP ranks' rings, so the DP sync takes 8x longer: +7 ring times. (Found when only TP rank 0's
// ring was simulated: the step did not change at all.)
TEST(VarianceTest, EveryTensorParallelRankLoadsTheSharedUplink) {
  const std::string base = scenario("tiny-gpt-2node.yaml") +
                           " --steps 3 --set parallelism.tp=8 --set parallelism.pp=1 --set parallelism.dp=2"
                           " --set training.global_batch=4 --set parallelism.overlap_grad_reduce=false"
                           " --set cluster.inter_node.topology=shared --set cluster.inter_node.nic_bandwidth=10Gbps";
  auto params = trainsim("memory " + scenario("tiny-gpt-2node.yaml") + " --json -");
  ASSERT_EQ(params.code, 0) << params.err;
  const double s_gpu = nlohmann::json::parse(params.out)["model"]["params"].get<double>() / 8 * 2;
  const double ring_s = 2.0 * (2 - 1) / 2 * s_gpu / (1.25e9 * 0.95);  // one TP rank's ring on its own NIC
  const double full = mean_step(run_json(base + " --set cluster.inter_node.oversubscription=1"));
  const double thin = mean_step(run_json(base + " --set cluster.inter_node.oversubscription=8"));
  EXPECT_NEAR(thin - full, 7 * ring_s, 0.05 * 7 * ring_s);
}

}  // namespace

namespace {

// Issue 17: ECMP hash collisions and no tenants. Llama 2 7B (4 layers) as pure DP on 16 DGX nodes,
// gradient sync not overlapped, a 4:1 oversubscribed fat-tree: each leaf's uplink is 8 cables.
// Hashing flows onto cables per run makes seeds differ (some cables carry more rings than others)
// and costs time against ideal balancing; adaptive routing (the bundle) removes the spread.
TEST(VarianceTest, EcmpCollisionsSpreadRunsThatAdaptiveRoutingRemoves) {
  const std::string job = scenario("llama2-7b-8gpu.yaml") +
                          " --runs 6 --steps 8 --set cluster.nodes=16 --set parallelism.dp=128 --set parallelism.tp=1"
                          " --set training.global_batch=128 --set parallelism.overlap_grad_reduce=false"
                          " --set cluster.inter_node.oversubscription=4 --set model.layers=4";
  auto ecmp = variance_json(job + " --set cluster.inter_node.routing=ecmp");
  auto adaptive = variance_json(job + " --set cluster.inter_node.routing=adaptive");
  EXPECT_GT(ecmp["step_time_s"]["cv"].get<double>(), 0.005);
  EXPECT_EQ(adaptive["step_time_s"]["std"].get<double>(), 0.0);
  // Every ECMP run is slower than ideal balancing, and the run-level days keep the spread (a hash
  // lasts the whole run: no noise inside a window averages it away).
  const double ideal = adaptive["step_time_s"]["mean"].get<double>();
  for (const auto& r : ecmp["runs"]) EXPECT_GT(r["step_time_s"]["mean"].get<double>(), ideal) << r["seed"];
  EXPECT_GT(ecmp["run_level"]["between_seed_sd_s"].get<double>(), 0.0);
  EXPECT_GT(ecmp["projection"]["days"]["p90"].get<double>(), ecmp["projection"]["days"]["p10"].get<double>());
}

}  // namespace

namespace {

double run_mean(const std::string& args) {
  auto r = trainsim("run " + args + " --quiet --advice 0 --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["step_time_s"]["mean"].get<double>() : 0;
}

// Issue 17: stragglers that come and go. Each of 16 GPUs starts a 2x-slow episode at 30 per hour,
// lasting 5 s on average: lambda = 30 x 16 / 3600 = 0.133 episodes/s, so some GPU is slow a
// fraction p = 1 - exp(-lambda x 5 s) = 0.487 of the time (the whole job waits for it). Steps are
// b (healthy) or s (one GPU 2x slow: a permanent straggler's step) and time splits p : 1 - p, so the
// mean step is 1 / ((1 - p) / b + p / s). Over 4,000 steps (~1,300 s, ~170 episodes) the simulated
// excess over b is that within 30% (episodes starting mid-step slow it partly: a little more).
TEST(VarianceTest, TransientStragglersCostTheirShareOfTime) {
  const std::string tiny = scenario("tiny-gpt-2node.yaml");
  const double b = run_mean(tiny + " --steps 20");
  const double s = run_mean(tiny + " --steps 20 --set stragglers.count=1 --set stragglers.slowdown=2");
  const double m = run_mean(tiny + " --steps 4000 --set stragglers.episodes_per_gpu_hour=30 --set stragglers.episode=5s"
                                   " --set stragglers.slowdown=2");
  const double p = 1 - std::exp(-30.0 * 16 / 3600 * 5);
  const double expected = 1 / ((1 - p) / b + p / s);
  ASSERT_GT(s, 1.2 * b);
  EXPECT_NEAR(m - b, expected - b, 0.30 * (expected - b));
  // No episodes: the healthy run exactly.
  EXPECT_EQ(run_mean(tiny + " --steps 20 --set stragglers.episodes_per_gpu_hour=0"), b);
}

}  // namespace

namespace {

// Issue 17: faulty links. The same pure-DP job on 16 nodes at 4:1 (leaf uplinks of 8 cables).
// One cable at half speed takes 1/16 of one bundle under adaptive routing (ideal balancing: the
// step barely moves, < 2%), but under ECMP every flow hashed onto that cable runs at half speed:
// the step grows by more than 5% over ECMP alone (seed 1 draws a cable that ring flows hash onto;
// the draw is deterministic per seed). Flapping cables (2 per cable-hour, 20 s each)
// make steps differ (nothing can be replicated) and cost time.
TEST(VarianceTest, DegradedCableHurtsEcmpMoreThanAdaptiveRoutingAndFlapsVarySteps) {
  const std::string job = scenario("llama2-7b-8gpu.yaml") +
                          " --set cluster.nodes=16 --set parallelism.dp=128 --set parallelism.tp=1"
                          " --set training.global_batch=128 --set parallelism.overlap_grad_reduce=false"
                          " --set cluster.inter_node.oversubscription=4 --set model.layers=4";
  const double adaptive = run_mean(job + " --steps 8");
  const double adaptive_degraded = run_mean(job + " --steps 8 --set link_faults.degraded=1");
  const double ecmp = run_mean(job + " --steps 8 --set cluster.inter_node.routing=ecmp");
  const double ecmp_degraded = run_mean(job + " --steps 8 --set cluster.inter_node.routing=ecmp --set link_faults.degraded=1");
  EXPECT_GE(adaptive_degraded, adaptive);
  EXPECT_LT(adaptive_degraded, 1.02 * adaptive);
  EXPECT_GT(ecmp_degraded, 1.05 * ecmp);
  auto r = trainsim("run " + job + " --steps 300 --quiet --advice 0 --json - --set link_faults.flaps_per_link_hour=2"
                                   " --set link_faults.flap=20s");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["steps_replicated"], 0);
  EXPECT_GT(j["step_time_s"]["max"].get<double>(), 1.001 * j["step_time_s"]["min"].get<double>());
  EXPECT_GT(j["step_time_s"]["mean"].get<double>(), adaptive);
}

}  // namespace

namespace {

// Issue 17: tenants as jobs that come and go. On shared-tenants (4 tenant slots), jobs of 5 s
// mean with 5 s gaps: each slot holds a job half the time, so over 400 steps (~1,000 s, ~100 job
// lifetimes each) the mean step lies between the dedicated fabric's and the always-present
// tenants', and steps differ.
TEST(VarianceTest, TenantJobsThatComeAndGoCostLessThanTenantsAlwaysThere) {
  const std::string shared = scenario("shared-tenants.yaml") + " --steps 400";
  const double dedicated = run_mean(shared + " --set contention.tenants=0");
  const double always = run_mean(shared);
  const double coming = run_mean(shared + " --set contention.job_duration=5s --set contention.job_gap=5s");
  EXPECT_GT(coming, dedicated * 1.05);
  EXPECT_LT(coming, always * 0.95);
}


// Load over the day (contention.diurnal_amplitude 1, peak at 14:00): the always-busy tenant takes
// load x (1 + cos(2 pi (hour - 14) / 24)) of its link. Six hours from the peak that is the plain
// load (0.5: the half-loaded step above); twelve hours from it, nothing (the dedicated step); at
// the peak all of the link, left at its 5% floor (contention.cpp kMinShare), so the inter-node
// phase takes 20 times its dedicated time: 19 x that phase added.
TEST(VarianceTest, TenantLoadFollowsTheTimeOfDay) {
  const std::string base = scenario("tiny-gpt-2node.yaml") + " --steps 3" + kSharedDp + " --set cluster.inter_node.nic_bandwidth=10Gbps";
  auto params = trainsim("memory " + scenario("tiny-gpt-2node.yaml") + " --json -");
  ASSERT_EQ(params.code, 0) << params.err;
  const double s_bytes = nlohmann::json::parse(params.out)["model"]["params"].get<double>() * 2;
  const double inter_phase_s = 2.0 * (2 - 1) / 2 * s_bytes / (8 * 10e9 / 8) / 0.95;  // as in the test above
  const std::string daily = kHalfLoad + " --set contention.diurnal_amplitude=1 --set contention.peak_hour=14";
  const double dedicated = mean_step(run_json(base));
  const double half = mean_step(run_json(base + kHalfLoad));
  EXPECT_NEAR(mean_step(run_json(base + daily + " --set contention.start_hour=20")), half, 1e-3 * half);
  EXPECT_NEAR(mean_step(run_json(base + daily + " --set contention.start_hour=2")), dedicated, 1e-3 * dedicated);
  EXPECT_NEAR(mean_step(run_json(base + daily + " --set contention.start_hour=14")) - dedicated, 19 * inter_phase_s, 0.05 * 19 * inter_phase_s);
}

// `variance` with a daily cycle and seeds spread over the day: the windows differ mostly by their
// hour; the cycle is fitted and taken out, so the spread of a 16-day run is far narrower than the
// windows' (which each see one hour), and the report says how large the cycle was.
TEST(VarianceTest, ADailyCycleSpreadsWindowsButAveragesOverTheRun) {
  auto v = variance_json(scenario("shared-tenants.yaml") + " --runs 8 --steps 60 --set contention.diurnal_amplitude=0.8");
  const auto& rl = v["run_level"];
  ASSERT_TRUE(rl["diurnal_fitted"].get<bool>());
  EXPECT_GT(rl["diurnal_sd_s"].get<double>(), 0.1 * v["step_level"]["mean_s"].get<double>());
  const auto& days = v["projection"]["days"];
  const auto& window = v["window_days"];
  EXPECT_LT(days["p90"].get<double>() - days["p10"].get<double>(), 0.2 * (window["p90"].get<double>() - window["p10"].get<double>()));
  // Without the cycle, the same windows are not fitted for one.
  auto flat = variance_json(scenario("shared-tenants.yaml") + " --runs 8 --steps 60");
  EXPECT_FALSE(flat["run_level"]["diurnal_fitted"].get<bool>());
  EXPECT_EQ(flat["run_level"]["diurnal_sd_s"].get<double>(), 0.0);
}

}  // namespace

namespace {

double exposed_comm(const std::string& args) {
  auto r = trainsim("run " + args + " --quiet --advice 0 --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? nlohmann::json::parse(r.out)["breakdown_s"]["exposed_comm"].get<double>() : 0;
}

// Issue 17 validation (test/validation/interference.md 2.3 and 2.5): published gains of better
// path selection over plain ECMP hashing for all-reduce traffic are up to 34.7% (Alibaba HPN,
// SIGCOMM'24 Sec. 6.1: four concurrent AllReduces on 512 GPUs, disjoint paths vs default hashing)
// and up to 40% (Meta, SIGCOMM'24: QP-aware hashing vs plain ECMP). Here: an all-reduce-bound job
// on 512 GPUs (64 DGX nodes, 1:1 fat-tree, one layer so compute is small, sync not overlapped),
// the exposed DP time with ECMP over that with ideal balancing, mean of 3 seeds. Tolerance: within
// a factor of two of ~37% (17% to 80%), the fabrics differing in their details.
TEST(VarianceTest, EcmpAllReduceInflationIsOfThePublishedOrder) {
  const std::string job = scenario("llama2-7b-8gpu.yaml") +
                          " --steps 6 --set cluster.nodes=64 --set parallelism.dp=512 --set parallelism.tp=1"
                          " --set training.global_batch=512 --set parallelism.overlap_grad_reduce=false --set model.layers=1";
  const double ideal = exposed_comm(job + " --set cluster.inter_node.routing=adaptive");
  double ecmp = 0;
  for (int seed = 1; seed <= 3; ++seed)
    ecmp += exposed_comm(job + " --set cluster.inter_node.routing=ecmp --seed " + std::to_string(seed)) / 3;
  ASSERT_GT(ideal, 0);
  const double inflation = ecmp / ideal - 1;
  EXPECT_GT(inflation, 0.17);
  EXPECT_LT(inflation, 0.80);
}

}  // namespace
