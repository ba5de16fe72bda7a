#include "platform/fabric.hpp"

#include <cmath>
#include <sstream>

#include "util/error.hpp"
#include "util/units.hpp"

namespace trainsim::platform {
namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw util::InputError(field + ": " + what);
}

void require_positive(const std::string& field, double v) {
  if (!std::isfinite(v) || v <= 0) bad(field, "must be a finite value > 0, got " + std::to_string(v));
}

void require_non_negative(const std::string& field, double v) {
  if (!std::isfinite(v) || v < 0) bad(field, "must be a finite value >= 0, got " + std::to_string(v));
}

}  // namespace

const char* to_string(TreeLevelRole r) {
  switch (r) {
    case TreeLevelRole::kNic: return "nic";
    case TreeLevelRole::kLeaf: return "leaf";
    case TreeLevelRole::kAggregation: return "aggregation";
    case TreeLevelRole::kCore: return "core";
  }
  return "?";
}

int64_t largest_divisor_at_most(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

void validate_cluster(const hardware::ClusterSpec& c) {
  require_positive("cluster.gpu: peak bf16 FLOP/s (the GPU hosts' speed)", c.gpu.peak_bf16_flops);
  if (c.nodes < 1) bad("cluster.nodes", "must be >= 1, got " + std::to_string(c.nodes));
  if (c.gpus_per_node < 1) bad("cluster.gpus_per_node", "must be >= 1, got " + std::to_string(c.gpus_per_node));
  if (c.nodes > kMaxGpus / c.gpus_per_node)
    bad("cluster.nodes", std::to_string(c.nodes) + " nodes x " + std::to_string(c.gpus_per_node) +
                             " GPUs exceeds the builder's limit of " + std::to_string(kMaxGpus) + " GPUs");
  require_positive("cluster.intra_node.bandwidth", c.intra_bandwidth_Bps);
  require_non_negative("cluster.intra_node.latency", c.intra_latency_s);
  if (c.gpus_per_pcie_switch < 0 || (c.gpus_per_pcie_switch > 0 && c.gpus_per_node % c.gpus_per_pcie_switch != 0))
    bad("cluster.intra_node.pcie_switch_gpus", "must divide gpus_per_node, got " + std::to_string(c.gpus_per_pcie_switch));
  require_non_negative("cluster.intra_node.pcie_switch_uplink", c.pcie_switch_uplink_Bps);
  if (c.sockets != 1 && c.sockets != 2) bad("cluster.intra_node.sockets", "must be 1 or 2, got " + std::to_string(c.sockets));
  if (c.sockets == 2) {
    if (c.gpus_per_pcie_switch == 0 || (c.gpus_per_node / c.gpus_per_pcie_switch) % 2 != 0)
      bad("cluster.intra_node.sockets", "2 sockets need an even number of PCIe switches");
    require_positive("cluster.intra_node.inter_socket_bandwidth", c.inter_socket_Bps);
  }
  if (c.intra_fabric == hardware::IntraFabric::kNvlinkBridge) {
    if (c.gpus_per_node % 2 != 0) bad("cluster.intra_node.fabric", "nvlink-bridge needs an even gpus_per_node");
    require_positive("cluster.gpu.pcie_bandwidth (the PCIe side of nvlink-bridge)", c.gpu.pcie_bandwidth_Bps);
  }
  require_positive("cluster.inter_node.nic_bandwidth", c.nic_bandwidth_Bps);
  require_non_negative("cluster.inter_node.latency", c.inter_latency_s);
  if (!std::isfinite(c.oversubscription) || c.oversubscription < 1)
    bad("cluster.inter_node.oversubscription", "must be >= 1, got " + std::to_string(c.oversubscription));
  if (c.nics_per_node < 1)
    bad("cluster.inter_node.nics_per_node", "must be >= 1, got " + std::to_string(c.nics_per_node));
  const int64_t g = c.gpus_per_node;
  const int64_t n = c.nics_per_node;
  if ((n < g && g % n != 0) || (n > g && n % g != 0))
    bad("cluster.inter_node.nics_per_node",
        std::to_string(n) + " NICs cannot be shared evenly by " + std::to_string(g) +
            " GPUs per node (use a divisor or a multiple of gpus_per_node)");
}

FabricPlan plan_fabric(const hardware::ClusterSpec& c) {
  validate_cluster(c);
  FabricPlan p;
  p.nodes = c.nodes;
  p.gpus_per_node = c.gpus_per_node;
  if (c.nics_per_node >= c.gpus_per_node) {
    p.gpus_per_nic = 1;
    p.rails = c.gpus_per_node;
    // Several NICs per GPU act as one port of their summed bandwidth.
    p.port_Bps = c.nic_bandwidth_per_gpu_Bps();
  } else {
    p.gpus_per_nic = c.gpus_per_node / c.nics_per_node;
    p.rails = c.nics_per_node;
    p.port_Bps = c.nic_bandwidth_Bps;
  }
  p.rail_major = c.topology == hardware::Topology::kRailOptimized;
  p.gpu_link_latency_s = c.inter_latency_s / 2;
  const bool shared = c.topology == hardware::Topology::kShared;

  if (p.gpus_per_nic > 1) {
    // A GPU alone may drive its whole NIC; the NIC's uplink (the leaf level's down link) is shared.
    p.levels.push_back({TreeLevelRole::kNic, p.gpus_per_nic, p.nodes * p.rails, c.nic_bandwidth_Bps, false});
  }

  TreeLevel leaf{TreeLevelRole::kLeaf, 1, 1, p.port_Bps, false};
  switch (c.topology) {
    case hardware::Topology::kFatTree: {
      if (c.nodes_per_leaf > 0 && (p.nodes % c.nodes_per_leaf != 0 || c.nodes_per_leaf * p.rails > 4 * kLeafPorts))
        bad("cluster.inter_node.nodes_per_leaf",
            std::to_string(c.nodes_per_leaf) + " must divide cluster.nodes = " + std::to_string(p.nodes) +
                " and fit a leaf switch (" + std::to_string(p.rails) + " ports a node, at most " + std::to_string(4 * kLeafPorts) + ")");
      const int64_t nodes_per_leaf = c.nodes_per_leaf > 0 ? c.nodes_per_leaf
                                                          : largest_divisor_at_most(p.nodes, std::max<int64_t>(1, kLeafPorts / p.rails));
      leaf.fan_in = nodes_per_leaf * p.rails;
      leaf.switches = p.nodes / nodes_per_leaf;
      break;
    }
    case hardware::Topology::kRailOptimized: {
      const int64_t nodes_per_leaf = largest_divisor_at_most(p.nodes, kLeafPorts);
      leaf.fan_in = nodes_per_leaf;
      leaf.switches = p.rails * (p.nodes / nodes_per_leaf);
      break;
    }
    case hardware::Topology::kShared:
      leaf.fan_in = p.rails;
      leaf.switches = p.nodes;
      break;
  }
  p.levels.push_back(leaf);

  const int64_t leaves = leaf.switches;
  const double leaf_uplink_Bps = static_cast<double>(leaf.fan_in) * p.port_Bps / c.oversubscription;
  if (leaves > 1) {
    const int64_t pod = leaves > kPodLeaves ? largest_divisor_at_most(leaves, kPodLeaves) : leaves;
    if (pod == leaves || pod == 1) {
      // Two levels: one spine (the aggregation layer) above every leaf.
      p.levels.push_back({TreeLevelRole::kAggregation, leaves, 1, leaf_uplink_Bps, shared});
    } else {
      p.levels.push_back({TreeLevelRole::kAggregation, pod, leaves / pod, leaf_uplink_Bps, shared});
      p.levels.push_back(
          {TreeLevelRole::kCore, leaves / pod, 1, static_cast<double>(pod) * leaf_uplink_Bps, shared});
    }
  }
  // Switch-to-switch links are bundles of port-speed cables (at least one).
  for (size_t k = 1; k < p.levels.size(); ++k)
    if (p.levels[k - 1].role != TreeLevelRole::kNic)
      p.levels[k].cables = std::max<int64_t>(1, std::llround(p.levels[k].down_link_Bps / p.port_Bps));
  p.ecmp = c.ecmp;
  p.routing_seed = c.routing_seed;
  return p;
}

int64_t FabricPlan::switch_levels() const {
  int64_t n = 0;
  for (const auto& l : levels)
    if (l.role != TreeLevelRole::kNic) ++n;
  return n;
}

int64_t FabricPlan::position(int64_t node, int64_t local) const {
  if (!rail_major) return node * gpus_per_node + local;
  const int64_t rail = local / gpus_per_nic;
  const int64_t j = local % gpus_per_nic;
  return (rail * nodes + node) * gpus_per_nic + j;
}

std::pair<int64_t, int64_t> FabricPlan::gpu_at(int64_t pos) const {
  if (!rail_major) return {pos / gpus_per_node, pos % gpus_per_node};
  const int64_t port = pos / gpus_per_nic;
  const int64_t j = pos % gpus_per_nic;
  return {port % nodes, (port / nodes) * gpus_per_nic + j};
}

std::string FabricPlan::describe() const {
  std::ostringstream o;
  o << nodes << (nodes == 1 ? " node x " : " nodes x ") << gpus_per_node << " GPUs, " << rails << " ports/node at "
    << util::format_bandwidth(port_Bps) << ", " << (rail_major ? "rail-major" : "node-major") << "; "
    << switch_levels() << " switch level" << (switch_levels() == 1 ? "" : "s") << ":";
  for (const auto& l : levels)
    o << " " << to_string(l.role) << " x" << l.switches << " (fan-in " << l.fan_in << ", "
      << util::format_bandwidth(l.down_link_Bps) << " links)";
  return o.str();
}

}  // namespace trainsim::platform
