// model/counterfactual.hpp: what idealising one resource saves, closed form.
#include "model/counterfactual.hpp"
#include "model/compute.hpp"

#include <gtest/gtest.h>

#include <map>

#include "model/presets.hpp"
#include "model/step_estimate.hpp"

namespace trainsim::model {
namespace {

std::map<std::string, double> by_key(const std::vector<Counterfactual>& v) {
  std::map<std::string, double> m;
  for (const auto& c : v) m[c.resource] = c.saved_s;
  return m;
}

hardware::ClusterSpec h100_nodes(int64_t nodes) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  c.intra_bandwidth_Bps = 450e9;
  c.nic_bandwidth_Bps = 50e9;
  return c;
}

// TP8 GPT-3 175B layers over one shared PCIe bridge: the intra-node fabric saves the most, and its
// saving is at least the exposed TP time the step carries (the collectives become free).
TEST(Counterfactual, PcieTpIsTheIntraNodeFabric) {
  ModelSpec m = *find_model_preset("gpt3-175b");
  m.layers = 8;
  ParallelSpec p;
  p.tp = 8;
  p.sequence_parallel = true;
  TrainingSpec t;
  t.global_batch = 8;
  hardware::ClusterSpec c = h100_nodes(1);
  c.gpu = *hardware::find_gpu("h100-pcie");
  c.intra_fabric = hardware::IntraFabric::kPcie;
  c.intra_bandwidth_Bps = 64e9;
  const auto v = counterfactual_savings(m, p, t, c);
  ASSERT_FALSE(v.empty());
  const auto b = largest_saving(v);
  EXPECT_EQ(b.klass, "interconnect");
  EXPECT_EQ(b.part, "interconnect.intra");
  const auto costs = compute_step_costs(m, p, t, c);
  double tp = 0;
  for (const auto& ch : costs.stages[0].chunks) tp += ch.tp_comm_s;
  EXPECT_GE(by_key(v).at("interconnect.intra"), 0.99 * tp * static_cast<double>(costs.micro_batches));
  // One node: no inter-node traffic to idealise; the class is at least its largest part.
  EXPECT_NEAR(by_key(v).at("interconnect.inter"), 0, 1e-12);
  EXPECT_GE(by_key(v).at("interconnect"), by_key(v).at("interconnect.intra") - 1e-12);
  // Sorted, largest first, never negative; no offload or recompute key when the scenario has neither.
  for (size_t i = 1; i < v.size(); ++i) EXPECT_LE(v[i].saved_s, v[i - 1].saved_s);
  for (const auto& x : v) EXPECT_GE(x.saved_s, 0);
  EXPECT_EQ(by_key(v).count("memory.offload"), 0u);
  EXPECT_EQ(by_key(v).count("memory.recompute"), 0u);
  EXPECT_EQ(by_key(v).count("memory"), 0u);
}

// A perfect schedule saves exactly the bubble. 1F1B over 8 stages with 2 micro-batches of 4
// sequences (about 0.18 s of work per slot): the bubble is 7 slots against 2 of compute; twice the
// FLOPs, unlimited HBM and no per-step overhead together save at most (2 + 7) / 2 slots (one pipeline:
// no replica to wait for).
TEST(Counterfactual, PipelineSavesExactlyTheBubble) {
  ModelSpec m = *find_model_preset("llama2-7b");
  ParallelSpec p;
  p.pp = 8;
  p.dp = 1;
  p.micro_batch = 4;
  TrainingSpec t;
  t.global_batch = 8;
  const hardware::ClusterSpec c = h100_nodes(1);
  const auto v = counterfactual_savings(m, p, t, c);
  const StepEstimate e = estimate_step(m, p, t, c);
  EXPECT_NEAR(by_key(v).at("pipeline"), e.bubble_s, 1e-12);
  EXPECT_EQ(largest_saving(v).klass, "pipeline");
  EXPECT_EQ(largest_saving(v).part, "pipeline");
}

// The fixed per-step overhead (the wait for the slowest replica and the gradient-norm all-reduce) is saved exactly
// when it is removed: compute.host = StepCosts::step_overhead_s; the compute class (twice the FLOPs,
// unlimited HBM, no overhead together) saves more than any one of its parts.
TEST(Counterfactual, HostOverheadIsThePerStepFixedCost) {
  ModelSpec m = *find_model_preset("llama2-7b");
  m.layers = 2;
  ParallelSpec p;
  p.dp = 8;
  TrainingSpec t;
  t.global_batch = 8;
  const hardware::ClusterSpec c = h100_nodes(1);
  const auto v = counterfactual_savings(m, p, t, c);
  const auto costs = compute_step_costs(m, p, t, c);
  // The wait for the slowest of 8 replicas: the fitted jitter (0-0.10 s, compute.hpp) x 1.4236.
  ASSERT_GT(costs.step_overhead_s, 1.4 * default_calibration().replica_jitter_s);
  ASSERT_GT(default_calibration().replica_jitter_s, 0.0);
  EXPECT_NEAR(by_key(v).at("compute.host"), costs.step_overhead_s, 1e-9);
  for (const char* part : {"compute.flops", "compute.hbm", "compute.host"}) EXPECT_GT(by_key(v).at("compute"), by_key(v).at(part)) << part;
}

TEST(Counterfactual, LargestSavingPicksTheClassThenItsPart) {
  const std::vector<Counterfactual> v = {{"interconnect", 1, 3}, {"compute", 1, 2.5}, {"compute.flops", 1, 2.4},
                                         {"interconnect.inter", 1, 2}, {"interconnect.intra", 1, 1.5}, {"pipeline", 1, 1}};
  const auto b = largest_saving(v);
  EXPECT_EQ(b.klass, "interconnect");
  EXPECT_EQ(b.part, "interconnect.inter");  // not compute.flops, the largest part overall
  EXPECT_DOUBLE_EQ(b.saved_s, 3);
  EXPECT_EQ(class_of("memory.offload"), "memory");
  EXPECT_EQ(class_of("pipeline"), "pipeline");
}

// Optimizer states offloaded to the CPU: the offload key appears and saves what running without it does.
TEST(Counterfactual, OffloadSavesWhatNotOffloadingDoes) {
  ModelSpec m = *find_model_preset("llama2-7b");
  ParallelSpec p;
  p.dp = 8;
  p.zero = 1;
  TrainingSpec t;
  t.global_batch = 8;
  t.offload = Offload::kCpu;
  const hardware::ClusterSpec c = h100_nodes(1);
  const auto v = counterfactual_savings(m, p, t, c);
  TrainingSpec none = t;
  none.offload = Offload::kNone;
  const double expected = estimate_step(m, p, t, c).step_s - estimate_step(m, p, none, c).step_s;
  ASSERT_GT(expected, 0);
  EXPECT_NEAR(by_key(v).at("memory.offload"), expected, 1e-12);
  EXPECT_EQ(largest_saving(v).part == "memory.offload", largest_saving(v).klass == "memory");
}

}  // namespace
}  // namespace trainsim::model
