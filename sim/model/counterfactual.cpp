#include "model/counterfactual.hpp"

#include <algorithm>

#include "model/step_estimate.hpp"

namespace trainsim::model {

namespace {

// Large enough that no transfer in a step takes measurable time, small enough to stay finite in
// every formula (bytes / bandwidth, shares divided by flow counts).
constexpr double kUnlimitedBps = 1e18;

}  // namespace

std::vector<Counterfactual> counterfactual_savings(const ModelSpec& model, const ParallelSpec& par,
                                                   const TrainingSpec& train, const hardware::ClusterSpec& cluster) {
  const StepEstimate base = estimate_step(model, par, train, cluster);
  std::vector<Counterfactual> out;
  auto add = [&](const char* key, double step_s) { out.push_back({key, step_s, std::max(0.0, base.step_s - step_s)}); };

  {
    hardware::ClusterSpec c = cluster;
    c.nic_bandwidth_Bps = kUnlimitedBps;
    c.oversubscription = 1;
    add("interconnect.inter", estimate_step(model, par, train, c).step_s);
  }
  {
    hardware::ClusterSpec c = cluster;
    c.intra_bandwidth_Bps = kUnlimitedBps;
    c.pcie_switch_uplink_Bps = kUnlimitedBps;
    c.inter_socket_Bps = kUnlimitedBps;
    c.gpu.pcie_bandwidth_Bps = kUnlimitedBps;
    for (auto& e : c.ring_shares) e.per_flow_Bps = kUnlimitedBps;
    add("interconnect.intra", estimate_step(model, par, train, c).step_s);
  }
  add("pipeline", base.step_s - base.bubble_s);
  {
    hardware::ClusterSpec c = cluster;
    c.gpu.peak_fp32_flops *= 2;
    c.gpu.peak_fp16_flops *= 2;
    c.gpu.peak_bf16_flops *= 2;
    c.gpu.peak_fp8_flops *= 2;
    add("compute.flops", estimate_step(model, par, train, c).step_s);
  }
  {
    hardware::ClusterSpec c = cluster;
    c.gpu.hbm_bandwidth_Bps = kUnlimitedBps;
    add("compute.hbm", estimate_step(model, par, train, c).step_s);
  }
  if (par.recompute != Recompute::kNone) {
    ParallelSpec p = par;
    p.recompute = Recompute::kNone;
    p.recompute_num_layers = -1;
    add("recompute", estimate_step(model, p, train, cluster).step_s);
  }
  if (train.offload != Offload::kNone) {
    TrainingSpec t = train;
    t.offload = Offload::kNone;
    add("offload", estimate_step(model, par, t, cluster).step_s);
  }
  std::stable_sort(out.begin(), out.end(), [](const Counterfactual& a, const Counterfactual& b) { return a.saved_s > b.saved_s; });
  return out;
}

}  // namespace trainsim::model
