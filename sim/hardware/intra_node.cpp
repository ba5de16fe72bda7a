#include "hardware/intra_node.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <utility>

namespace trainsim::hardware {

namespace {

std::string num(int64_t v) { return std::to_string(v); }

}  // namespace

IntraNodePlan plan_intra_node(const ClusterSpec& c) {
  IntraNodePlan p;
  p.cluster = &c;
  p.gpus = c.gpus_per_node;
  auto add = [&p](std::string stem, std::string tail, double bw, double lat) {
    p.links.push_back({std::move(stem), std::move(tail), bw, lat});
    return static_cast<int>(p.links.size()) - 1;
  };
  const int64_t g_count = c.gpus_per_node;
  if (c.intra_fabric == IntraFabric::kNvswitch) {
    p.first_port = static_cast<int>(p.links.size());
    for (int64_t g = 0; g < g_count; ++g) {
      add("nvlink", "-" + num(g) + "_UP", c.intra_bandwidth_Bps, c.intra_latency_s / 2);
      add("nvlink", "-" + num(g) + "_DOWN", c.intra_bandwidth_Bps, c.intra_latency_s / 2);
    }
    return p;
  }
  const bool bridge = c.intra_fabric == IntraFabric::kNvlinkBridge;
  if (bridge) {
    p.first_bridge = static_cast<int>(p.links.size());
    for (int64_t pair = 0; pair < g_count / 2; ++pair) {
      add("nvlink-bridge", "-" + num(pair) + "_UP", c.intra_bandwidth_Bps, c.intra_latency_s);
      add("nvlink-bridge", "-" + num(pair) + "_DOWN", c.intra_bandwidth_Bps, c.intra_latency_s);
    }
  }
  // The PCIe side: a GPU's own link is intra_bandwidth on pcie, the catalog x16 rate beside a bridge.
  const double gpu_link = bridge ? c.gpu.pcie_bandwidth_Bps : c.intra_bandwidth_Bps;
  if (c.gpus_per_pcie_switch <= 0) {
    p.host_bridge = add("pcie", "", gpu_link, c.intra_latency_s);
    return p;
  }
  p.switches = g_count / c.gpus_per_pcie_switch;
  p.first_gpu_link = static_cast<int>(p.links.size());
  for (int64_t g = 0; g < g_count; ++g) {
    add("pcie", "-" + num(g) + "_UP", gpu_link, c.intra_latency_s / 2);
    add("pcie", "-" + num(g) + "_DOWN", gpu_link, c.intra_latency_s / 2);
  }
  const double uplink = c.pcie_switch_uplink_Bps > 0 ? c.pcie_switch_uplink_Bps : gpu_link;
  p.first_switch_link = static_cast<int>(p.links.size());
  for (int64_t s = 0; s < p.switches; ++s) {
    add("pcie-switch", "-" + num(s) + "_UP", uplink, 0);
    add("pcie-switch", "-" + num(s) + "_DOWN", uplink, 0);
  }
  if (c.sockets == 2) {
    p.socket_link = add("socket-link", "_UP", c.inter_socket_Bps, 0);
    add("socket-link", "_DOWN", c.inter_socket_Bps, 0);
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

RingShare ring_share(const ClusterSpec& c, int64_t n, int64_t stride) {
  for (const RingShareEntry& e : c.ring_shares)
    if (e.n == n && e.stride == stride) return {e.per_flow_Bps, e.latency_s, e.nvlink_only};
  const IntraNodePlan plan = plan_intra_node(c);
  const int64_t g_count = c.gpus_per_node;
  const int64_t span = n * stride;
  std::vector<std::pair<int64_t, int64_t>> flows;
  for (int64_t base = 0; base + span <= g_count; base += span)
    for (int64_t o = 0; o < stride; ++o)
      for (int64_t m = 0; m < n; ++m) flows.emplace_back(base + o + m * stride, base + o + ((m + 1) % n) * stride);
  std::vector<std::vector<int>> routes;
  std::map<int, int> crossing;
  for (const auto& [a, b] : flows) {
    routes.push_back(plan.route(a, b));
    for (int l : routes.back()) ++crossing[l];
  }
  RingShare s;
  s.per_flow_Bps = std::numeric_limits<double>::infinity();
  for (const auto& r : routes) {
    double lat = 0;
    for (int l : r) {
      const IntraLink& link = plan.links[static_cast<size_t>(l)];
      s.per_flow_Bps = std::min(s.per_flow_Bps, link.bandwidth_Bps / crossing[l]);
      lat += link.latency_s;
      if (link.stem != "nvlink" && link.stem != "nvlink-bridge") s.nvlink_only = false;
    }
    s.latency_s = std::max(s.latency_s, lat);
  }
  return s;
}

double pair_Bps(const ClusterSpec& cluster) {
  if (cluster.gpus_per_node < 2) return cluster.intra_bandwidth_Bps;
  const IntraNodePlan plan = plan_intra_node(cluster);
  double bw = std::numeric_limits<double>::infinity();
  for (int l : plan.route(0, 1)) bw = std::min(bw, plan.links[static_cast<size_t>(l)].bandwidth_Bps);
  return bw;
}

double inter_gpu_Bps(const ClusterSpec& cluster) {
  const IntraNodePlan plan = plan_intra_node(cluster);
  double bw = cluster.nic_bandwidth_per_gpu_Bps();
  if (plan.first_gpu_link >= 0) bw = std::min(bw, plan.links[static_cast<size_t>(plan.first_gpu_link)].bandwidth_Bps);
  return bw;
}

double inter_path_latency_s(const ClusterSpec& cluster) {
  const IntraNodePlan plan = plan_intra_node(cluster);
  double lat = cluster.inter_latency_s;
  if (plan.first_gpu_link >= 0) lat += 2 * plan.links[static_cast<size_t>(plan.first_gpu_link)].latency_s;
  return lat;
}

}  // namespace trainsim::hardware
