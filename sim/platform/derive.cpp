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

#include "hardware/intra_node.hpp"
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
  bool nvlink_only = true;      // every link's name starts with "nvlink"
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
      if (l->get_name().rfind("nvlink", 0) != 0) s.nvlink_only = false;
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

  // Intra-node: node 0's rings of every group size and stride, every group of the node at once
  // (hardware::ring_share's pattern), against what the cost model would take from the scenario.
  const int64_t gpn = p.gpus_per_node();
  if (gpn > 1) {
    std::vector<hardware::RingShareEntry> measured;
    Share whole;  // the ring over the whole node
    for (int64_t n = 2; n <= gpn; ++n)
      for (int64_t stride = 1; n * stride <= gpn; ++stride) {
        if (gpn % (n * stride) != 0) continue;
        std::vector<std::pair<const sg4::Host*, const sg4::Host*>> flows;
        for (const auto& [a, b] : hardware::ring_flows(gpn, n, stride)) flows.emplace_back(p.gpu(0, a), p.gpu(0, b));
        const Share s = concurrent_share(flows);
        measured.push_back({n, stride, s.per_flow_Bps, s.latency_s, s.nvlink_only});
        if (n == gpn) whole = s;
      }
    const auto reproduces = [&measured](const hardware::ClusterSpec& spec) {
      for (const auto& e : measured) {
        const hardware::RingShare a = hardware::ring_share(spec, e.n, e.stride);
        if (differs(a.per_flow_Bps, e.per_flow_Bps) || std::fabs(a.latency_s - e.latency_s) > 1e-12 ||
            a.nvlink_only != e.nvlink_only)
          return false;
      }
      return true;
    };
    if (!reproduces(yaml)) {
      // The nearest built fabric: NVSwitch ports (no link shared by two ring flows, all NVLink) or
      // one shared bridge, at the whole-node ring's share.
      hardware::ClusterSpec mapped = yaml;
      const bool shared = whole.max_flows_on_a_link >= 2;
      mapped.intra_fabric = shared || !whole.nvlink_only ? hardware::IntraFabric::kPcie : hardware::IntraFabric::kNvswitch;
      mapped.intra_bandwidth_Bps = shared ? whole.per_flow_Bps * static_cast<double>(gpn) : whole.per_flow_Bps;
      mapped.intra_latency_s = whole.latency_s;
      mapped.gpus_per_pcie_switch = 0;
      mapped.pcie_switch_uplink_Bps = 0;
      mapped.sockets = 1;
      mapped.inter_socket_Bps = 0;
      if (reproduces(mapped)) {
        if (mapped.intra_fabric != yaml.intra_fabric)
          note("cluster.intra_node.fabric", hardware::to_string(yaml.intra_fabric), hardware::to_string(mapped.intra_fabric));
        if (differs(mapped.intra_bandwidth_Bps, yaml.intra_bandwidth_Bps))
          note("cluster.intra_node.bandwidth", util::format_bandwidth(yaml.intra_bandwidth_Bps),
               util::format_bandwidth(mapped.intra_bandwidth_Bps));
        if (differs(mapped.intra_latency_s, yaml.intra_latency_s))
          note("cluster.intra_node.latency", latency_text(yaml.intra_latency_s), latency_text(mapped.intra_latency_s));
        if (yaml.gpus_per_pcie_switch > 0)
          note("cluster.intra_node.pcie_switch_gpus", std::to_string(yaml.gpus_per_pcie_switch), "none (no PCIe switches)");
        c.intra_fabric = mapped.intra_fabric;
        c.intra_bandwidth_Bps = mapped.intra_bandwidth_Bps;
        c.intra_latency_s = mapped.intra_latency_s;
        c.gpus_per_pcie_switch = 0;
        c.pcie_switch_uplink_Bps = 0;
        c.sockets = 1;
        c.inter_socket_Bps = 0;
      } else {
        // No built fabric reproduces the file: the cost model takes the measured shares.
        c.ring_shares = measured;
        std::string from, to;
        for (const auto& e : measured) {
          if (e.stride != 1) continue;
          const std::string sep = from.empty() ? "" : ", ";
          from += sep + std::to_string(e.n) + ": " + util::format_bandwidth(hardware::ring_share(yaml, e.n, 1).per_flow_Bps);
          to += sep + std::to_string(e.n) + ": " + util::format_bandwidth(e.per_flow_Bps);
        }
        note("cluster.intra_node ring share per flow (GPUs in the ring: bandwidth)", from, to);
      }
    }
  }

  // Inter-node: every rail of node 0 to the same GPU of node 1 at once.
  if (p.nodes() > 1) {
    std::vector<std::pair<const sg4::Host*, const sg4::Host*>> rails;
    for (int64_t g = 0; g < gpn; ++g) rails.emplace_back(p.gpu(0, g), p.gpu(1, g));
    const Share s = concurrent_share(rails);
    // What the scenario implies (the NIC share; under a PCIe tree also the GPU's PCIe link).
    const double expected_Bps = hardware::inter_gpu_Bps(c);
    const double expected_lat = hardware::inter_path_latency_s(c);
    if (std::isfinite(s.per_flow_Bps) && differs(s.per_flow_Bps, expected_Bps)) {
      c.nics_per_node = gpn;
      c.nic_bandwidth_Bps = s.per_flow_Bps;
      note("cluster.inter_node.nic_bandwidth per GPU", util::format_bandwidth(expected_Bps),
           util::format_bandwidth(s.per_flow_Bps));
    }
    if (differs(s.latency_s, expected_lat)) {
      c.inter_latency_s += s.latency_s - expected_lat;
      note("cluster.inter_node.latency", latency_text(expected_lat), latency_text(s.latency_s));
    }
  }
  return out;
}

std::string describe(const PlatformOverride& o) {
  return o.field + ": " + o.yaml + " (scenario) -> " + o.file + " (platform file)";
}

}  // namespace trainsim::platform
