#include "platform/derive.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "platform/platform.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::platform {
namespace {

// What a set of flows running at once gets: the smallest per-flow share and the longest latency.
struct Share {
  double per_flow_Bps = std::numeric_limits<double>::infinity();
  double latency_s = 0;
  int max_flows_on_a_link = 0;  // of the links that limit some flow
};

Share concurrent_share(const std::vector<std::pair<const sg4::Host*, const sg4::Host*>>& flows) {
  std::vector<std::vector<sg4::Link*>> routes(flows.size());
  std::vector<double> latency(flows.size(), 0);
  std::map<const sg4::Link*, int> crossing;
  for (size_t i = 0; i < flows.size(); ++i) {
    flows[i].first->route_to(flows[i].second, routes[i], &latency[i]);
    std::sort(routes[i].begin(), routes[i].end());
    routes[i].erase(std::unique(routes[i].begin(), routes[i].end()), routes[i].end());
    for (const sg4::Link* l : routes[i]) ++crossing[l];
  }
  Share s;
  for (size_t i = 0; i < flows.size(); ++i) {
    s.latency_s = std::max(s.latency_s, latency[i]);
    for (const sg4::Link* l : routes[i]) {
      const bool fatpipe = l->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE;
      const int n = fatpipe ? 1 : crossing[l];
      const double share = l->get_bandwidth() / n;
      if (share < s.per_flow_Bps * (1 - 1e-12)) {
        s.per_flow_Bps = share;
        s.max_flows_on_a_link = n;
      } else if (share <= s.per_flow_Bps * (1 + 1e-12)) {
        s.max_flows_on_a_link = std::max(s.max_flows_on_a_link, n);
      }
    }
  }
  return s;
}

bool differs(double a, double b) { return std::fabs(a - b) > 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

std::string flops_text(double f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g TFLOP/s", f / 1e12);
  return buf;
}

std::string latency_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4g us", s * 1e6);
  return buf;
}

}  // namespace

DerivedCluster derive_cluster(const Platform& p, const hardware::ClusterSpec& yaml) {
  DerivedCluster out;
  out.cluster = yaml;
  hardware::ClusterSpec& c = out.cluster;
  auto note = [&out](std::string field, std::string from, std::string to) {
    out.overrides.push_back({std::move(field), std::move(from), std::move(to)});
  };

  // GPU speed: the slowest host (a collective waits for it).
  double speed = std::numeric_limits<double>::infinity();
  for (int64_t n = 0; n < p.nodes(); ++n)
    for (int64_t g = 0; g < p.gpus_per_node(); ++g) speed = std::min(speed, p.gpu(n, g)->get_speed());
  if (std::isfinite(speed) && speed > 0 && differs(speed, yaml.gpu.peak_bf16_flops)) {
    const double r = speed / yaml.gpu.peak_bf16_flops;
    c.gpu.peak_fp32_flops *= r;
    c.gpu.peak_fp16_flops *= r;
    c.gpu.peak_bf16_flops = speed;
    c.gpu.peak_fp8_flops *= r;
    note("cluster.gpu peak_bf16 (GPU host speed)", flops_text(yaml.gpu.peak_bf16_flops), flops_text(speed));
  }

  // Intra-node: node 0's ring, every GPU sending at once.
  const int64_t gpn = p.gpus_per_node();
  if (gpn > 1) {
    std::vector<std::pair<const sg4::Host*, const sg4::Host*>> ring;
    for (int64_t g = 0; g < gpn; ++g) ring.emplace_back(p.gpu(0, g), p.gpu(0, (g + 1) % gpn));
    const Share s = concurrent_share(ring);
    const bool shared = s.max_flows_on_a_link >= 2;
    const auto fabric = shared ? hardware::IntraFabric::kPcie : hardware::IntraFabric::kNvswitch;
    const double bandwidth = shared ? s.per_flow_Bps * static_cast<double>(gpn) : s.per_flow_Bps;
    if (fabric != yaml.intra_fabric) {
      c.intra_fabric = fabric;
      note("cluster.intra_node.fabric", hardware::to_string(yaml.intra_fabric), hardware::to_string(fabric));
    }
    if (std::isfinite(bandwidth) && differs(bandwidth, yaml.intra_bandwidth_Bps)) {
      c.intra_bandwidth_Bps = bandwidth;
      note("cluster.intra_node.bandwidth", util::format_bandwidth(yaml.intra_bandwidth_Bps),
           util::format_bandwidth(bandwidth));
    }
    if (differs(s.latency_s, yaml.intra_latency_s)) {
      c.intra_latency_s = s.latency_s;
      note("cluster.intra_node.latency", latency_text(yaml.intra_latency_s), latency_text(s.latency_s));
    }
  }

  // Inter-node: every rail of node 0 to the same GPU of node 1 at once.
  if (p.nodes() > 1) {
    std::vector<std::pair<const sg4::Host*, const sg4::Host*>> rails;
    for (int64_t g = 0; g < gpn; ++g) rails.emplace_back(p.gpu(0, g), p.gpu(1, g));
    const Share s = concurrent_share(rails);
    if (std::isfinite(s.per_flow_Bps) && differs(s.per_flow_Bps, yaml.nic_bandwidth_per_gpu_Bps())) {
      c.nics_per_node = gpn;
      c.nic_bandwidth_Bps = s.per_flow_Bps;
      note("cluster.inter_node.nic_bandwidth per GPU", util::format_bandwidth(yaml.nic_bandwidth_per_gpu_Bps()),
           util::format_bandwidth(s.per_flow_Bps));
    }
    if (differs(s.latency_s, yaml.inter_latency_s)) {
      c.inter_latency_s = s.latency_s;
      note("cluster.inter_node.latency", latency_text(yaml.inter_latency_s), latency_text(s.latency_s));
    }
  }
  return out;
}

std::string describe(const PlatformOverride& o) {
  return o.field + ": " + o.yaml + " (scenario) -> " + o.file + " (platform file)";
}

}  // namespace trainsim::platform
