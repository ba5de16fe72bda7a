#include "model/counterfactual.hpp"

#include <algorithm>

#include "model/step_costs.hpp"
#include "model/step_estimate.hpp"

namespace trainsim::model {

namespace {

// "Unlimited": a thousand times the scenario's bandwidth (see Idealised).
constexpr double kUnlimited = 1e3;

void unlimit_inter(hardware::ClusterSpec& c) {
  c.nic_bandwidth_Bps *= kUnlimited;
  c.oversubscription = 1;
}

void unlimit_intra(hardware::ClusterSpec& c) {
  c.intra_bandwidth_Bps *= kUnlimited;
  c.pcie_switch_uplink_Bps *= kUnlimited;
  c.inter_socket_Bps *= kUnlimited;
  c.gpu.pcie_bandwidth_Bps *= kUnlimited;
  for (auto& e : c.ring_shares) e.per_flow_Bps *= kUnlimited;
}

void double_flops(hardware::ClusterSpec& c) {
  c.gpu.peak_fp32_flops *= 2;
  c.gpu.peak_fp16_flops *= 2;
  c.gpu.peak_bf16_flops *= 2;
  c.gpu.peak_fp8_flops *= 2;
}

const char* const kKeys[] = {"interconnect.inter", "interconnect.intra", "interconnect", "compute.flops", "compute.hbm",
                             "compute.host",       "compute",            "memory.recompute", "memory.offload", "memory"};

}  // namespace

std::string class_of(const std::string& key) { return key.substr(0, key.find('.')); }

Idealised idealise(const std::string& key, const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                   const hardware::ClusterSpec& cluster) {
  Idealised x{model, par, train, cluster, false};
  const bool all = key == class_of(key);  // a class: all of its parts at once
  if (key == "interconnect.inter" || key == "interconnect") unlimit_inter(x.cluster);
  if (key == "interconnect.intra" || key == "interconnect") unlimit_intra(x.cluster);
  if (key == "compute.flops" || key == "compute") double_flops(x.cluster);
  if (key == "compute.hbm" || key == "compute") x.cluster.gpu.hbm_bandwidth_Bps *= kUnlimited;
  if (key == "compute.host" || key == "compute") x.no_host_overhead = true;
  if (key == "memory.recompute" || (all && key == "memory")) {
    x.par.recompute = Recompute::kNone;
    x.par.recompute_num_layers = -1;
  }
  if (key == "memory.offload" || (all && key == "memory")) x.train.offload = Offload::kNone;
  return x;
}

std::vector<Counterfactual> counterfactual_savings(const ModelSpec& model, const ParallelSpec& par,
                                                   const TrainingSpec& train, const hardware::ClusterSpec& cluster) {
  const StepEstimate base = estimate_step(model, par, train, cluster);
  std::vector<Counterfactual> out;
  auto add = [&](const char* key) {
    const Idealised x = idealise(key, model, par, train, cluster);
    StepCosts costs = compute_step_costs(x.model, x.par, x.train, x.cluster);
    if (x.no_host_overhead) costs.step_overhead_s = 0;
    const double step_s = estimate_step(costs, x.model, x.par, x.train, x.cluster).step_s;
    out.push_back({key, step_s, std::max(0.0, base.step_s - step_s), false});
  };
  const bool recomputes = par.recompute != Recompute::kNone;
  const bool offloads = train.offload != Offload::kNone;
  for (const char* key : kKeys) {
    const std::string k = key;
    if (k == "memory.recompute" && !recomputes) continue;
    if (k == "memory.offload" && !offloads) continue;
    if (k == "memory" && !recomputes && !offloads) continue;
    add(key);
    if (k == "interconnect") out.push_back({"pipeline", base.step_s - base.bubble_s, base.bubble_s, false});
  }
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
