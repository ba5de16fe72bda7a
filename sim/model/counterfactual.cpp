#include "model/counterfactual.hpp"

#include <algorithm>

#include "model/step_costs.hpp"
#include "model/step_estimate.hpp"

namespace trainsim::model {

namespace {

// Large enough that no transfer in a step takes measurable time, small enough to stay finite in
// every formula (bytes / bandwidth, shares divided by flow counts).
constexpr double kUnlimitedBps = 1e18;

void unlimit_inter(hardware::ClusterSpec& c) {
  c.nic_bandwidth_Bps = kUnlimitedBps;
  c.oversubscription = 1;
}

void unlimit_intra(hardware::ClusterSpec& c) {
  c.intra_bandwidth_Bps = kUnlimitedBps;
  c.pcie_switch_uplink_Bps = kUnlimitedBps;
  c.inter_socket_Bps = kUnlimitedBps;
  c.gpu.pcie_bandwidth_Bps = kUnlimitedBps;
  for (auto& e : c.ring_shares) e.per_flow_Bps = kUnlimitedBps;
}

void double_flops(hardware::ClusterSpec& c) {
  c.gpu.peak_fp32_flops *= 2;
  c.gpu.peak_fp16_flops *= 2;
  c.gpu.peak_bf16_flops *= 2;
  c.gpu.peak_fp8_flops *= 2;
}

}  // namespace

std::string class_of(const std::string& key) { return key.substr(0, key.find('.')); }

std::vector<Counterfactual> counterfactual_savings(const ModelSpec& model, const ParallelSpec& par,
                                                   const TrainingSpec& train, const hardware::ClusterSpec& cluster) {
  const StepEstimate base = estimate_step(model, par, train, cluster);
  std::vector<Counterfactual> out;
  auto add = [&](const char* key, double step_s) { out.push_back({key, step_s, std::max(0.0, base.step_s - step_s)}); };
  // The step with the host's fixed per-step work removed (and optionally a cluster change).
  auto without_host = [&](const hardware::ClusterSpec& c) {
    StepCosts costs = compute_step_costs(model, par, train, c);
    costs.step_overhead_s = 0;
    return estimate_step(costs, model, par, train, c).step_s;
  };

  {
    hardware::ClusterSpec c = cluster;
    unlimit_inter(c);
    add("interconnect.inter", estimate_step(model, par, train, c).step_s);
    unlimit_intra(c);
    add("interconnect", estimate_step(model, par, train, c).step_s);
  }
  {
    hardware::ClusterSpec c = cluster;
    unlimit_intra(c);
    add("interconnect.intra", estimate_step(model, par, train, c).step_s);
  }
  add("pipeline", base.step_s - base.bubble_s);
  {
    hardware::ClusterSpec c = cluster;
    double_flops(c);
    add("compute.flops", estimate_step(model, par, train, c).step_s);
    c.gpu.hbm_bandwidth_Bps = kUnlimitedBps;
    add("compute", without_host(c));
  }
  {
    hardware::ClusterSpec c = cluster;
    c.gpu.hbm_bandwidth_Bps = kUnlimitedBps;
    add("compute.hbm", estimate_step(model, par, train, c).step_s);
  }
  add("compute.host", without_host(cluster));
  const bool recomputes = par.recompute != Recompute::kNone;
  const bool offloads = train.offload != Offload::kNone;
  ParallelSpec no_recompute = par;
  no_recompute.recompute = Recompute::kNone;
  no_recompute.recompute_num_layers = -1;
  TrainingSpec no_offload = train;
  no_offload.offload = Offload::kNone;
  if (recomputes) add("memory.recompute", estimate_step(model, no_recompute, train, cluster).step_s);
  if (offloads) add("memory.offload", estimate_step(model, par, no_offload, cluster).step_s);
  if (recomputes || offloads) add("memory", estimate_step(model, no_recompute, no_offload, cluster).step_s);
  std::stable_sort(out.begin(), out.end(), [](const Counterfactual& a, const Counterfactual& b) { return a.saved_s > b.saved_s; });
  return out;
}

BottleneckChoice largest_saving(const std::vector<Counterfactual>& savings) {
  BottleneckChoice b;
  for (const auto& c : savings)
    if (is_class(c.resource) && (b.klass.empty() || c.saved_s > b.saved_s)) {
      b.klass = c.resource;
      b.saved_s = c.saved_s;
    }
  double best = -1;
  for (const auto& c : savings)
    if (!is_class(c.resource) && class_of(c.resource) == b.klass && c.saved_s > best) {
      b.part = c.resource;
      best = c.saved_s;
    }
  if (b.part.empty()) b.part = b.klass;
  return b;
}

}  // namespace trainsim::model
