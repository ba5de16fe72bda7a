#include "platform/tree_zone.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <array>
#include <stdexcept>
#include <string>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;
using simgrid::kernel::routing::Route;

namespace trainsim::platform {

TreeZone::TreeZone(const hardware::ClusterSpec& cluster, const FabricPlan& plan)
    : NetZoneImpl("fabric"), cluster_(cluster), plan_(plan) {}

TreeZone* TreeZone::create(const hardware::ClusterSpec& cluster, const FabricPlan& plan) {
  if (plan.levels.empty() || plan.levels.size() > kMaxLevels || plan.levels.back().switches != 1)
    throw std::logic_error("TreeZone: a plan needs 1 to " + std::to_string(kMaxLevels) + " levels under one top switch");
  auto* zone = new TreeZone(cluster, plan);  // owned by SimGrid's engine (the root netzone)
  zone->populate();
  zone->get_iface()->seal();
  return zone;
}

void TreeZone::populate() {
  sg4::NetZone* z = get_iface();
  const int64_t gpn = plan_.gpus_per_node;
  const int64_t n_gpus = plan_.gpus();
  const auto gpu_tag = [](int64_t node, int64_t local) { return std::to_string(node) + "-" + std::to_string(local); };

  hosts_.reserve(static_cast<size_t>(n_gpus));
  for (int64_t node = 0; node < plan_.nodes; ++node) {
    for (int64_t g = 0; g < gpn; ++g) {
      sg4::Host* h = z->create_host("gpu-" + gpu_tag(node, g), cluster_.gpu.peak_bf16_flops);
      if (h->get_netpoint()->id() != hosts_.size())
        throw std::logic_error("TreeZone: host " + h->get_name() + " got netpoint id " +
                               std::to_string(h->get_netpoint()->id()) + ", expected " + std::to_string(hosts_.size()));
      hosts_.push_back(h);
    }
  }

  // Intra-node fabric: the links of hardware/intra_node.hpp, node by node.
  intra_ = hardware::plan_intra_node(cluster_);
  intra_links_.reserve(static_cast<size_t>(plan_.nodes) * intra_.links.size());
  for (int64_t node = 0; node < plan_.nodes; ++node)
    for (const hardware::IntraLink& l : intra_.links)
      intra_links_.push_back(
          z->create_link(l.name(node), l.bandwidth_Bps)->set_latency(l.latency_s));
  intra_hops_.reserve(intra_links_.size());
  for (sg4::Link* l : intra_links_) intra_hops_.push_back(hop_of(l));
  intra_routes_.resize(static_cast<size_t>(gpn * gpn));
  for (int64_t a = 0; a < gpn; ++a)
    for (int64_t b = 0; b < gpn; ++b)
      if (a != b) intra_routes_[static_cast<size_t>(a * gpn + b)] = intra_.route(a, b);

  // Inter-node tree: level k's links join each element below switch level k to its switch.
  const size_t levels = plan_.levels.size();
  up_.resize(levels);
  down_.resize(levels);
  up_hops_.resize(levels);
  down_hops_.resize(levels);
  cables_.assign(levels, 1);
  int64_t elements = n_gpus;  // elements below level 0 are the GPUs, in plan position order
  for (size_t k = 0; k < levels; ++k) {
    const TreeLevel& level = plan_.levels[k];
    up_[k].reserve(static_cast<size_t>(elements));
    down_[k].reserve(static_cast<size_t>(elements));
    for (int64_t c = 0; c < elements; ++c) {
      std::string name;
      if (k == 0) {
        const auto [node, g] = plan_.gpu_at(c);
        name = (level.role == TreeLevelRole::kNic ? "gpu-nic-" : "nic-") + gpu_tag(node, g);
      } else if (plan_.levels[k - 1].role == TreeLevelRole::kNic) {
        const int64_t node = plan_.rail_major ? c % plan_.nodes : c / plan_.rails;
        const int64_t rail = plan_.rail_major ? c / plan_.nodes : c % plan_.rails;
        name = "nic-" + gpu_tag(node, rail);
      } else {
        name = std::string(to_string(plan_.levels[k - 1].role)) + "-" + std::to_string(c) + "-uplink";
      }
      const double latency_s = k == 0 ? plan_.gpu_link_latency_s : 0.0;
      const int64_t cables = plan_.ecmp ? level.cables : 1;
      cables_[k] = cables;
      for (int64_t j = 0; j < cables; ++j) {
        const std::string cable = cables > 1 ? "-" + std::to_string(j) : "";
        const double bw = level.down_link_Bps / static_cast<double>(cables);
        up_[k].push_back(z->create_link(name + cable + "_UP", bw)->set_latency(latency_s));
        down_[k].push_back(z->create_link(name + cable + "_DOWN", bw)->set_latency(latency_s));
      }
    }
    up_hops_[k].reserve(up_[k].size());
    down_hops_[k].reserve(down_[k].size());
    for (sg4::Link* l : up_[k]) up_hops_[k].push_back(hop_of(l));
    for (sg4::Link* l : down_[k]) down_hops_[k].push_back(hop_of(l));
    elements = level.switches;
  }

  // A GPU sending to itself copies within its HBM.
  const double hbm_Bps = cluster_.gpu.hbm_bandwidth_Bps > 0 ? cluster_.gpu.hbm_bandwidth_Bps : cluster_.intra_bandwidth_Bps;
  loopback_ = hop_of(z->create_link("loopback", hbm_Bps)->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE));
}

int64_t TreeZone::cable(int64_t a, int64_t b, size_t k, int dir) const {
  if (cables_[k] <= 1) return 0;
  // splitmix64 over the flow's identity and the run's seed: a switch's hash of the flow's headers.
  uint64_t x = plan_.routing_seed ^ (static_cast<uint64_t>(a) * 0x9E3779B97F4A7C15ULL) ^
               (static_cast<uint64_t>(b) * 0xC2B2AE3D27D4EB4FULL) ^ (static_cast<uint64_t>(k) << 56) ^
               (static_cast<uint64_t>(dir) << 62);
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return static_cast<int64_t>(x % static_cast<uint64_t>(cables_[k]));
}

TreeZone::Hop TreeZone::hop_of(sg4::Link* link) { return {link->get_impl(), link->get_latency()}; }

void TreeZone::push(const Hop& hop, Route* into, double* latency) {
  into->link_list_.push_back(hop.impl);
  if (latency != nullptr) *latency += hop.latency_s;
}

void TreeZone::get_local_route(const NetPoint* src, const NetPoint* dst, Route* into, double* latency) {
  const int64_t a = static_cast<int64_t>(src->id());
  const int64_t b = static_cast<int64_t>(dst->id());
  if (a >= static_cast<int64_t>(hosts_.size()) || b >= static_cast<int64_t>(hosts_.size()))
    throw std::invalid_argument("TreeZone: no route from '" + src->get_name() + "' to '" + dst->get_name() + "'");
  // One allocation for the longest route (up and down every level, plus two PCIe hops).
  into->link_list_.reserve(into->link_list_.size() + 2 * kMaxLevels + 2);
  if (a == b) {
    push(loopback_, into, latency);
    return;
  }
  const int64_t gpn = plan_.gpus_per_node;
  const int64_t node_a = a / gpn;
  const int64_t node_b = b / gpn;
  if (node_a == node_b) {
    const size_t base = static_cast<size_t>(node_a) * intra_.links.size();
    for (int l : intra_routes_[static_cast<size_t>((a % gpn) * gpn + b % gpn)]) push(intra_hops_[base + static_cast<size_t>(l)], into, latency);
    return;
  }
  // Under a PCIe tree the NIC sits beside the GPU under its PCIe switch (GPUDirect RDMA): the
  // traffic leaves over the GPU's own PCIe link and arrives over the receiver's.
  const bool via_pcie = intra_.first_gpu_link >= 0;
  const size_t links_per_node = intra_.links.size();
  const auto gpu_link = [&](int64_t gpu, int dir) -> const Hop& {
    return intra_hops_[static_cast<size_t>(gpu / gpn) * links_per_node +
                        static_cast<size_t>(intra_.first_gpu_link + 2 * (gpu % gpn) + dir)];
  };
  if (via_pcie) push(gpu_link(a, 0), into, latency);
  // Climb from both ends until the two elements hang under the same switch; remember b's side.
  int64_t ea = plan_.position(node_a, a % gpn);
  int64_t eb = plan_.position(node_b, b % gpn);
  std::array<int64_t, kMaxLevels> eb_at{};
  size_t k = 0;
  for (;; ++k) {
    push(up_hops_[k][static_cast<size_t>(ea * cables_[k] + cable(a, b, k, 0))], into, latency);
    eb_at[k] = eb;
    ea /= plan_.levels[k].fan_in;
    eb /= plan_.levels[k].fan_in;
    if (ea == eb) break;  // always true at the top level, which has one switch
  }
  for (size_t j = k + 1; j-- > 0;)
    push(down_hops_[j][static_cast<size_t>(eb_at[j] * cables_[j] + cable(a, b, j, 1))], into, latency);
  if (via_pcie) push(gpu_link(b, 1), into, latency);
}

std::vector<sg4::Link*> TreeZone::fabric_links() const {
  std::vector<sg4::Link*> out;
  for (size_t k = 0; k < plan_.levels.size(); ++k) {
    const TreeLevelRole role = plan_.levels[k].role;
    if (role != TreeLevelRole::kAggregation && role != TreeLevelRole::kCore) continue;
    for (size_t c = 0; c < up_[k].size(); ++c) {
      out.push_back(up_[k][c]);
      out.push_back(down_[k][c]);
    }
  }
  return out;
}

std::vector<int64_t> TreeZone::fabric_cables() const {
  std::vector<int64_t> out;
  for (size_t k = 0; k < plan_.levels.size(); ++k) {
    const TreeLevelRole role = plan_.levels[k].role;
    if (role != TreeLevelRole::kAggregation && role != TreeLevelRole::kCore) continue;
    const int64_t per_link = cables_[k] > 1 ? 1 : plan_.levels[k].cables;
    out.insert(out.end(), 2 * up_[k].size(), per_link);
  }
  return out;
}

std::vector<sg4::Link*> TreeZone::shared_links() const {
  std::vector<sg4::Link*> out;
  for (size_t k = 0; k < plan_.levels.size(); ++k) {
    if (!plan_.levels[k].shared) continue;
    for (size_t c = 0; c < up_[k].size(); ++c) {
      out.push_back(up_[k][c]);
      out.push_back(down_[k][c]);
    }
  }
  return out;
}

}  // namespace trainsim::platform
