// Expert-parallel exchanges in the engine: hand-built mixture-of-experts chunk costs whose
// all-to-alls go on the network as flows (model::EpLayerTraffic), against their alpha-beta time on
// NVSwitch and on InfiniBand, and routing skew drawn per seed. Each simulation runs in its own
// child process (SimGrid allows one Engine per process).
#include <gtest/gtest.h>

#include <cmath>

#include "engine/step_engine.hpp"
#include "model/compute.hpp"

#include "in_child.hpp"

namespace trainsim::engine {
namespace {

using trainsim::testing::in_child;

// One stage, ep = dp ranks at tp apart: tp 1 puts the group in one node, tp 8 one member per node.
config::Scenario scenario(int64_t tp, int64_t ep, int64_t micro_batches) {
  config::Scenario sc;
  sc.name = "moe-engine-test";
  sc.cluster.gpu = *hardware::find_gpu("h100-sxm");
  sc.cluster.gpus_per_node = 8;
  sc.cluster.nodes = ep * tp / 8;
  sc.cluster.intra_bandwidth_Bps = 450e9;
  sc.cluster.intra_latency_s = 1e-8;
  sc.cluster.inter_latency_s = 1e-8;
  sc.cluster.nic_bandwidth_Bps = 50e9;  // 400 Gb/s
  sc.cluster.nics_per_node = 8;
  sc.parallel.tp = tp;
  sc.parallel.dp = ep;
  sc.parallel.ep = ep;
  sc.parallel.overlap_grad_reduce = false;
  sc.training.global_batch = micro_batches * ep;
  return sc;
}

// 1 ms forward, 2 ms backward per micro-batch; each pass has two exchanges (dispatch, combine) of
// `peer` bytes to each in-node member and `node` bytes to each other node, none of it folded.
model::StepCosts costs(int64_t micro_batches, double peer, double node) {
  model::ChunkCost ch;
  ch.forward_s = 1e-3;
  ch.backward_s = 2e-3;
  ch.param_count = 1e6;
  ch.ep.exchanges_forward = 2;
  ch.ep.exchanges_backward = 2;
  ch.ep.peer_bytes = peer;
  ch.ep.node_bytes = node;
  model::StepCosts c;
  c.micro_batches = micro_batches;
  c.stages.push_back({{ch}, 1.0, 1.0, 0});
  c.tokens_per_step = 1;
  c.model_flops_per_step = 1;
  return c;
}

double step_s(const config::Scenario& sc, const model::StepCosts& c, uint64_t seed = 1) {
  EngineOptions o;
  o.steps = 3;
  o.seed = seed;
  const RunResult r = simulate(sc, c, o);
  return r.steps.back().time_s;
}

// Inside a node: each GPU sends 2 x 1.8 GB / 14 to each of its 7 peers per pass over its own
// NVSwitch port (450 GB/s, its 7 flows sharing it; each receiver's port takes 7 alike): 7 x 2 x
// 450e6 / 7 B / 450 GB/s = 2 ms a pass more than the same step with the exchanges folded away
// (ep 1), so 4 ms a step, to within the 10 ns link latencies.
TEST(MoeEngineTest, AllToAllInsideANodeTakesItsBytesOverTheNvswitchPort) {
  const double peer = 450e9 * 1e-3 / 7;  // 1 ms of the port per exchange
  const double with = in_child([&] { return step_s(scenario(1, 8, 1), costs(1, peer, 0)); });
  auto folded = scenario(1, 8, 1);
  folded.parallel.ep = 1;
  const double without = in_child([&] { return step_s(folded, costs(1, peer, 0)); });
  ASSERT_GT(with, 0);
  ASSERT_GT(without, 0);
  EXPECT_NEAR(with - without, 4e-3, 1e-6);
}

// Across nodes (tp 8: the group's members one per node, on the same rail): 7 flows share the
// GPU's 50 GB/s NIC: the same bytes as above take 450 / 50 = 9x as long: 36 ms a step. The fabric
// gap the issue asks the engine to show, from the same traffic.
TEST(MoeEngineTest, AllToAllAcrossNodesTakesItsBytesOverTheNic) {
  const double node = 450e9 * 1e-3 / 7;
  const double with = in_child([&] { return step_s(scenario(8, 8, 1), costs(1, 0, node)); });
  auto folded = scenario(8, 8, 1);
  folded.parallel.ep = 1;
  const double without = in_child([&] { return step_s(folded, costs(1, 0, node)); });
  ASSERT_GT(with, 0);
  ASSERT_GT(without, 0);
  EXPECT_NEAR(with - without, 36e-3, 1e-5);
}

// The engine's flows against the closed form's alpha-beta time (model::all_to_all_time_s) for a
// real layer's traffic: 8 ranks in a node and 8 across nodes; the exposed exchanges the closed form
// folds into the pass are what the engine plays instead, to within 1%.
TEST(MoeEngineTest, FlowsMatchTheClosedFormsAllToAll) {
  for (int64_t tp : {1, 8}) {
    const auto sc = scenario(tp, 8, 1);
    const double bytes = 64e6;  // routed bytes one GPU sends per all-to-all
    const double a2a = model::all_to_all_time_s(sc.cluster, 8, tp, bytes);
    model::StepCosts c = costs(1, 0, 0);
    const model::EpLayerTraffic wire = model::all_to_all_wire(sc.cluster, 8, tp, bytes);
    auto& ep = c.stages[0].chunks[0].ep;
    ep.peer_bytes = wire.peer_bytes;
    ep.node_bytes = wire.node_bytes;
    ep.latency_s = wire.latency_s;
    // Inside the node the payload moves at 0.78 of the port, across at 0.86 of the NIC
    // (cost_tables.yaml collectives.all_to_all: DeepEP's measured fractions).
    EXPECT_NEAR(tp == 1 ? wire.peer_bytes : wire.node_bytes, tp == 1 ? bytes / 8 / 0.78 : bytes / 8 / 0.86, 1.0);
    const double with = in_child([&] { return step_s(sc, c); });
    auto folded_sc = sc;
    folded_sc.parallel.ep = 1;
    const double without = in_child([&] { return step_s(folded_sc, costs(1, 0, 0)); });
    EXPECT_NEAR(with - without, 4 * a2a, 0.01 * 4 * a2a) << "tp " << tp;
  }
}

// Routing skew per seed: the expert GEMMs run at the slowest of the 8 ranks' drawn loads against
// the expected slowest the closed form counts (1 + 1.4236 x 5%): seeds differ, their mean is the
// closed form's to within the draws' spread; a capacity factor of 1 caps every draw alike.
TEST(MoeEngineTest, RoutingSkewIsDrawnPerSeedAroundTheExpectedSlowestRank) {
  auto sc = scenario(1, 8, 40);
  auto skewed = [](double cap) {
    model::StepCosts c = costs(40, 0, 0);
    auto& ep = c.stages[0].chunks[0].ep;
    ep.expert_forward_s = 0.5e-3;
    ep.expert_backward_s = 1e-3;
    ep.routing_cv = 0.05;
    ep.routing_z = model::expected_max_normal(8);
    ep.capacity_factor = cap;
    return c;
  };
  double sum = 0;
  std::vector<double> steps;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    steps.push_back(in_child([&] { return step_s(sc, skewed(0), seed); }));
    sum += steps.back();
  }
  const double base = in_child([&] { auto s = sc; s.parallel.ep = 1; return step_s(s, costs(40, 0, 0)); });
  EXPECT_NE(steps[0], steps[1]);
  // 40 micro-batches x 3 ms; per pass the max of 8 normals has sd 0.59, so a step's mean factor
  // has sd 0.05 x 0.59 / sqrt(80) / 1.07 = 0.3% of the expert time, 0.1% of the step.
  EXPECT_NEAR(sum / 4, base, 0.002 * base);
  const double capped1 = in_child([&] { return step_s(sc, skewed(1.0), 1); });
  const double capped2 = in_child([&] { return step_s(sc, skewed(1.0), 2); });
  EXPECT_DOUBLE_EQ(capped1, capped2);
  EXPECT_NEAR(capped1, base, 1e-9 * base);
}

}  // namespace
}  // namespace trainsim::engine
