#include "hardware/intra_node.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace trainsim::hardware {

std::string IntraLink::name(int64_t node) const {
  std::string n = std::string(stem) + "-" + std::to_string(node);
  if (index >= 0) n += "-" + std::to_string(index);
  if (dir != nullptr) n += std::string("_") + dir;
  return n;
}

namespace {

// A GPU's own PCIe link under a tree or beside a bridge: intra_bandwidth on pcie, the catalog x16
// rate beside NVLink bridges.
double gpu_pcie_link_Bps(const ClusterSpec& c) {
  return c.intra_fabric == IntraFabric::kNvlinkBridge ? c.gpu.pcie_bandwidth_Bps : c.intra_bandwidth_Bps;
}

}  // namespace

IntraNodePlan plan_intra_node(const ClusterSpec& c) {
  IntraNodePlan p;
  p.cluster = &c;
  p.gpus = c.gpus_per_node;
  p.links.reserve(static_cast<size_t>(4 * c.gpus_per_node + 8));
  auto add = [&p](const char* stem, int64_t index, const char* dir, double bw, double lat) {
    const bool nvlink = stem[0] == 'n';  // "nvlink", "nvlink-bridge"
    p.links.push_back({stem, index, dir, bw, lat, nvlink});
    return static_cast<int>(p.links.size()) - 1;
  };
  const int64_t g_count = c.gpus_per_node;
  if (c.intra_fabric == IntraFabric::kNvswitch) {
    p.first_port = static_cast<int>(p.links.size());
    for (int64_t g = 0; g < g_count; ++g) {
      add("nvlink", g, "UP", c.intra_bandwidth_Bps, c.intra_latency_s / 2);
      add("nvlink", g, "DOWN", c.intra_bandwidth_Bps, c.intra_latency_s / 2);
    }
    return p;
  }
  const bool bridge = c.intra_fabric == IntraFabric::kNvlinkBridge;
  if (bridge) {
    p.first_bridge = static_cast<int>(p.links.size());
    for (int64_t pair = 0; pair < g_count / 2; ++pair) {
      add("nvlink-bridge", pair, "UP", c.intra_bandwidth_Bps, c.intra_latency_s);
      add("nvlink-bridge", pair, "DOWN", c.intra_bandwidth_Bps, c.intra_latency_s);
    }
  }
  const double gpu_link = gpu_pcie_link_Bps(c);
  if (c.gpus_per_pcie_switch <= 0) {
    p.host_bridge = add("pcie", -1, nullptr, gpu_link, c.intra_latency_s);
    return p;
  }
  p.switches = g_count / c.gpus_per_pcie_switch;
  p.first_gpu_link = static_cast<int>(p.links.size());
  for (int64_t g = 0; g < g_count; ++g) {
    add("pcie", g, "UP", gpu_link, c.intra_latency_s / 2);
    add("pcie", g, "DOWN", gpu_link, c.intra_latency_s / 2);
  }
  const double uplink = c.pcie_switch_uplink_Bps > 0 ? c.pcie_switch_uplink_Bps : gpu_link;
  p.first_switch_link = static_cast<int>(p.links.size());
  for (int64_t s = 0; s < p.switches; ++s) {
    add("pcie-switch", s, "UP", uplink, 0);
    add("pcie-switch", s, "DOWN", uplink, 0);
  }
  if (c.sockets == 2) {
    p.socket_link = add("socket-link", -1, "UP", c.inter_socket_Bps, 0);
    add("socket-link", -1, "DOWN", c.inter_socket_Bps, 0);
  }
  return p;
}

std::vector<int> IntraNodePlan::route(int64_t a, int64_t b) const {
  std::vector<int> r;
  const auto i = [](int64_t v) { return static_cast<int>(v); };
  if (first_port >= 0) return {first_port + i(2 * a), first_port + i(2 * b + 1)};
  if (first_bridge >= 0 && a / 2 == b / 2) return {first_bridge + i(a / 2) * 2 + (a < b ? 0 : 1)};
  if (host_bridge >= 0) return {host_bridge};
  r.push_back(first_gpu_link + i(2 * a));
  const int64_t k = cluster->gpus_per_pcie_switch;
  const int64_t sa = a / k, sb = b / k;
  if (sa != sb) {
    r.push_back(first_switch_link + i(2 * sa));
    if (socket_link >= 0) {
      const int64_t per_socket = switches / 2;
      const int64_t xa = sa / per_socket, xb = sb / per_socket;
      if (xa != xb) r.push_back(socket_link + (xa < xb ? 0 : 1));
    }
    r.push_back(first_switch_link + i(2 * sb + 1));
  }
  r.push_back(first_gpu_link + i(2 * b + 1));
  return r;
}

std::vector<std::pair<int64_t, int64_t>> ring_flows(int64_t gpus, int64_t n, int64_t stride) {
  std::vector<std::pair<int64_t, int64_t>> flows;
  const int64_t span = n * stride;
  for (int64_t base = 0; base + span <= gpus; base += span)
    for (int64_t o = 0; o < stride; ++o)
      for (int64_t m = 0; m < n; ++m) flows.emplace_back(base + o + m * stride, base + o + ((m + 1) % n) * stride);
  return flows;
}

RingShare ring_share(const ClusterSpec& c, int64_t n, int64_t stride) {
  for (const RingShareEntry& e : c.ring_shares)
    if (e.n == n && e.stride == stride) return {e.per_flow_Bps, e.latency_s, e.nvlink_only};
  // NVSwitch: every flow has its sender's port and its receiver's to itself (the general count
  // below gives the same; this is the hot path of every pipeline send's cost).
  if (c.intra_fabric == IntraFabric::kNvswitch) return {c.intra_bandwidth_Bps, c.intra_latency_s, true};
  const IntraNodePlan plan = plan_intra_node(c);
  const auto flows = ring_flows(c.gpus_per_node, n, stride);
  std::vector<std::vector<int>> routes;
  routes.reserve(flows.size());
  std::vector<int> crossing(plan.links.size(), 0);
  for (const auto& [a, b] : flows) {
    routes.push_back(plan.route(a, b));
    for (int l : routes.back()) ++crossing[static_cast<size_t>(l)];
  }
  RingShare s;
  s.per_flow_Bps = std::numeric_limits<double>::infinity();
  for (const auto& r : routes) {
    double lat = 0;
    for (int l : r) {
      const IntraLink& link = plan.links[static_cast<size_t>(l)];
      s.per_flow_Bps = std::min(s.per_flow_Bps, link.bandwidth_Bps / crossing[static_cast<size_t>(l)]);
      lat += link.latency_s;
      if (!link.nvlink) s.nvlink_only = false;
    }
    s.latency_s = std::max(s.latency_s, lat);
  }
  return s;
}

double pair_Bps(const ClusterSpec& cluster) {
  if (cluster.gpus_per_node < 2 || cluster.intra_fabric == IntraFabric::kNvswitch) return cluster.intra_bandwidth_Bps;
  const IntraNodePlan plan = plan_intra_node(cluster);
  double bw = std::numeric_limits<double>::infinity();
  for (int l : plan.route(0, 1)) bw = std::min(bw, plan.links[static_cast<size_t>(l)].bandwidth_Bps);
  return bw;
}

// Under a PCIe tree (the only plan with per-GPU PCIe links) the GPU's own link, intra_latency / 2
// each way, is on every inter-node route (platform/tree_zone.cpp).
double inter_gpu_Bps(const ClusterSpec& cluster) {
  const double nic = cluster.nic_bandwidth_per_gpu_Bps();
  if (cluster.intra_fabric == IntraFabric::kNvswitch || cluster.gpus_per_pcie_switch <= 0) return nic;
  return std::min(nic, gpu_pcie_link_Bps(cluster));
}

double inter_path_latency_s(const ClusterSpec& cluster) {
  if (cluster.intra_fabric == IntraFabric::kNvswitch || cluster.gpus_per_pcie_switch <= 0) return cluster.inter_latency_s;
  return cluster.inter_latency_s + cluster.intra_latency_s;
}

}  // namespace trainsim::hardware
