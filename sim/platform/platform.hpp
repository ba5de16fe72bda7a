// The SimGrid platform a run lives on: built from a ClusterSpec, or loaded from a platform XML.
// Owns host naming: GPU g of node n is host "gpu-<n>-<g>" (both 0-based); the engine never
// searches by name, it asks gpu(n, g).
//
//   built-in layout (one flat zone; GPUs are the leaves, rail-major):
//
//       spine / aggregation switches      (fat-tree levels, with oversubscription)
//          |            |
//     leaf(rail 0)  leaf(rail 1) ...      a leaf switch groups GPU g of many nodes
//       |  |  |
//     NIC links (one per GPU, or shared by gpus_per_node/nics_per_node GPUs)
//       |
//     gpu-n-g  ==NVSwitch==  gpu-n-g'     intra-node: bypass routes over per-GPU NVSwitch
//                                          links (or one shared PCIe host-bridge link)
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
class Link;
}  // namespace simgrid::s4u

namespace trainsim::platform {

// Builds (or loads) the platform into `engine`. Call once, before any actor starts.
// REQUIRES: cluster validated; engine created with the CM02 network model configured
// (see configure_engine). Throws util::InputError for a platform file that breaks the naming.
class Platform {
 public:
  static std::unique_ptr<Platform> build(simgrid::s4u::Engine& engine, const hardware::ClusterSpec& cluster);

  simgrid::s4u::Host* gpu(int64_t node, int64_t local) const { return gpus_[node * gpus_per_node_ + local]; }
  int64_t nodes() const { return nodes_; }
  int64_t gpus_per_node() const { return gpus_per_node_; }
  // Links that other tenants' traffic also uses (aggregation/spine layer, or the shared link).
  const std::vector<simgrid::s4u::Link*>& shared_links() const { return shared_links_; }

 private:
  int64_t nodes_ = 0;
  int64_t gpus_per_node_ = 0;
  std::vector<simgrid::s4u::Host*> gpus_;  // node-major: index = node * gpus_per_node + local
  std::vector<simgrid::s4u::Link*> shared_links_;
  friend class PlatformBuilder;
};

// Network model every run uses (named in reports).
inline constexpr const char* kNetworkModel = "CM02";
// Creates the Engine with CM02, no cross traffic, SimGrid's own logging silenced.
// `argv0` is only used as the program name SimGrid sees.
std::unique_ptr<simgrid::s4u::Engine> make_engine(const char* argv0 = "trainsim");

}  // namespace trainsim::platform
