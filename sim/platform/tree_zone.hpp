// TreeZone: the SimGrid netzone of a built platform (internal to platform/; Platform is the API).
//
// One flat zone holds every GPU host. Routes are computed, not stored: for GPUs a, b
//   - same node:            hardware/intra_node.hpp's route (NVSwitch ports, the PCIe bridge or
//                           tree, NVLink bridges), over that node's copies of its links
//   - other nodes:          up the tree from a until the lowest common switch, then down to b:
//                           [a's link _UP, switch uplinks _UP..., switch uplinks _DOWN..., b's link _DOWN]
//                           with ECMP (FabricPlan::ecmp) a switch uplink is one of its cables,
//                           chosen by a seeded hash of (a, b, level, direction)
// The tree is the FabricPlan's (fabric.hpp): element c of a level hangs under switch c / fan_in.
// Nothing is searched: a route costs O(levels), building costs O(GPUs) links and hosts. Each link's
// kernel object and latency are resolved once when it is made (s4u::Link::get_impl is a
// dynamic_cast, and routes are asked for once per flow).
// SimGrid's own fat-tree zone spent O(GPUs x leaf switches) building, and per-node NVSwitch routes
// needed GPUs x (gpus_per_node - 1) bypass routes; this zone needs neither.
#pragma once

#include <simgrid/kernel/routing/NetZoneImpl.hpp>

#include <cstdint>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/intra_node.hpp"
#include "platform/fabric.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u
namespace simgrid::kernel::resource {
class StandardLinkImpl;
}  // namespace simgrid::kernel::resource

namespace trainsim::platform {

class TreeZone : public simgrid::kernel::routing::NetZoneImpl {
 public:
  // Most levels a plan may have (nic, leaf, aggregation, core use 4).
  static constexpr size_t kMaxLevels = 8;

  // Creates the zone as the engine's root netzone with every host and link of `plan`.
  // REQUIRES: the engine has no netzone yet; `cluster` validated (plan_fabric did it).
  // Hosts get netpoint ids 0..gpus-1 in node-major order (id = node * gpus_per_node + local).
  static TreeZone* create(const hardware::ClusterSpec& cluster, const FabricPlan& plan);

  simgrid::s4u::Host* host(int64_t node, int64_t local) const {
    return hosts_[static_cast<size_t>(node * plan_.gpus_per_node + local)];
  }
  // Links of the switch levels whose TreeLevel::role is aggregation or core (both directions).
  std::vector<simgrid::s4u::Link*> fabric_links() const;
  // Those of them marked TreeLevel::shared.
  std::vector<simgrid::s4u::Link*> shared_links() const;
  // Physical cables each fabric_links() link stands for: the level's cables when one link carries
  // their sum (adaptive), 1 when each cable is its own link (ECMP).
  std::vector<int64_t> fabric_cables() const;

  void get_local_route(const simgrid::kernel::routing::NetPoint* src, const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override;

 private:
  TreeZone(const hardware::ClusterSpec& cluster, const FabricPlan& plan);
  // A link as routes use it: its kernel object and (constant) latency.
  struct Hop {
    simgrid::kernel::resource::StandardLinkImpl* impl = nullptr;
    double latency_s = 0;
  };
  static Hop hop_of(simgrid::s4u::Link* link);
  void populate();
  static void push(const Hop& hop, simgrid::kernel::routing::Route* into, double* latency);

  hardware::ClusterSpec cluster_;
  FabricPlan plan_;
  std::vector<simgrid::s4u::Host*> hosts_;         // by netpoint id
  hardware::IntraNodePlan intra_;                  // one node's links and routes (points into cluster_)
  std::vector<simgrid::s4u::Link*> intra_links_;   // node-major: node * intra_.links.size() + link
  std::vector<Hop> intra_hops_;                    // the same links as routes use them
  std::vector<std::vector<int>> intra_routes_;     // intra_.route(a, b) at [a * gpus_per_node + b]
  // up_[k][c * cables_[k] + j] / down_[...]: cable j of the link between element c below switch
  // level k and its switch (one cable unless the plan routes by ECMP).
  std::vector<std::vector<simgrid::s4u::Link*>> up_;
  std::vector<std::vector<simgrid::s4u::Link*>> down_;
  std::vector<std::vector<Hop>> up_hops_;          // up_ and down_ as routes use them
  std::vector<std::vector<Hop>> down_hops_;
  std::vector<int64_t> cables_;
  // The cable an ECMP hash gives the flow a -> b at level k, going up (dir 0) or down (dir 1).
  int64_t cable(int64_t a, int64_t b, size_t k, int dir) const;
  Hop loopback_;                                   // a GPU sending to itself
};

}  // namespace trainsim::platform
