// The SimGrid platform a run lives on: built from a ClusterSpec, or loaded from a platform XML.
// Owns host naming: GPU g of node n is host "gpu-<n>-<g>" (both 0-based); the engine never
// searches by name, it asks gpu(n, g).
//
//   built-in layout (one flat SimGrid fat-tree zone; GPUs are its leaves):
//
//       core / aggregation switches       (aggregation uplinks carry / oversubscription)
//          |            |
//     leaf switch   leaf switch ...       fat-tree: whole nodes per leaf; rail-optimized: GPU g
//       |  |  |                           of many nodes (rail g); shared: one node per leaf
//     NIC links (one per GPU, or shared by gpus_per_node/nics_per_node GPUs)
//       |
//     gpu-n-g  ==NVSwitch==  gpu-n-g'     intra-node: bypass routes over per-GPU NVSwitch
//                                          links (or one shared PCIe host-bridge link)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "platform/fabric.hpp"

namespace simgrid::s4u {
class Engine;
class Host;
class Link;
}  // namespace simgrid::s4u

namespace trainsim::platform {

// Builds (or loads) the platform into `engine` and seals it (routes are ready, so maestro may start
// transfers before run(); Link::set_bandwidth keeps working). Call once, before any actor starts.
// REQUIRES: engine made by make_engine() and still empty (one platform per Engine, one Engine per
// process). Throws util::InputError for a cluster value SimGrid would abort on (naming the field),
// and for a platform file that is unreadable, rejected by SimGrid, or breaks the host naming.
//
// Built platforms (cluster.platform_file empty): one netzone "fabric" (tree_zone.hpp) computing
// routes over the tree of fabric.hpp:
//   - GPU host speed = cluster.gpu.peak_bf16_flops (one core; the engine's passes are timed waits).
//   - nvswitch: links nvlink-<n>-<g>_UP / _DOWN of intra_bandwidth_Bps, intra_latency_s / 2 each;
//     gpu a -> gpu b crosses a's _UP and b's _DOWN (a GPU's sends share its own _UP).
//   - pcie: one SHARED link pcie-<n> of intra_bandwidth_Bps and intra_latency_s carries every
//     intra-node transfer of node n, in both directions.
//   - inter-node: the GPU's own link, nic-<n>-<g>_UP/_DOWN (or gpu-nic-<n>-<g> into a NIC shared
//     with other GPUs, then nic-<n>-<k>), with inter_latency_s / 2 each way, then switch uplinks
//     <level>-<i>-uplink_UP/_DOWN (latency 0): every inter-node path takes inter_latency_s.
//   - a GPU sending to itself: one FATPIPE "loopback" link at the GPU's HBM bandwidth.
// Loaded platforms (cluster.platform_file set): the file must define hosts gpu-<n>-<g> for every
// n < cluster.nodes, g < cluster.gpus_per_node; links carrying <prop id="shared" value="yes"/> are
// the shared (and fabric) links. Everything else in the file is SimGrid's business.
class Platform {
 public:
  static std::unique_ptr<Platform> build(simgrid::s4u::Engine& engine, const hardware::ClusterSpec& cluster);

  // "gpu-<node>-<local>", both 0-based: the host naming contract of built and loaded platforms.
  static std::string host_name(int64_t node, int64_t local);

  simgrid::s4u::Host* gpu(int64_t node, int64_t local) const { return gpus_[node * gpus_per_node_ + local]; }
  int64_t nodes() const { return nodes_; }
  int64_t gpus_per_node() const { return gpus_per_node_; }
  // Links that other tenants' traffic also uses (aggregation/spine layer, or the shared link).
  // Built: the aggregation/spine links (both directions) when topology is kShared, else empty.
  // Loaded: the links marked shared. Sealed, but Link::set_bandwidth works on them at any time
  // (only bandwidth *profiles* need unsealed links).
  const std::vector<simgrid::s4u::Link*>& shared_links() const { return shared_links_; }
  // Every inter-switch link (leaf uplinks and above, both directions) whatever the topology, for
  // contention on a dedicated fabric; loaded platforms: the shared links.
  const std::vector<simgrid::s4u::Link*>& fabric_links() const { return fabric_links_; }
  // Physical cables each fabric link stands for (same order; 1 for loaded platforms and ECMP).
  const std::vector<int64_t>& fabric_cables() const { return fabric_cables_; }
  // Throws util::InputError naming the platform file when no route joins GPU host a to b (a file
  // may forget one: SimGrid would abort on the first transfer). Built platforms always route.
  void require_route(const simgrid::s4u::Host* a, const simgrid::s4u::Host* b) const;
  // The platform file this was loaded from, or "" when built.
  const std::string& platform_file() const { return platform_file_; }
  // The plan a built platform follows; nullptr when loaded from a file.
  const FabricPlan* plan() const { return plan_ ? &*plan_ : nullptr; }
  // One line for logs and reports: what was built or loaded.
  std::string describe() const;

 private:
  int64_t nodes_ = 0;
  int64_t gpus_per_node_ = 0;
  std::vector<simgrid::s4u::Host*> gpus_;  // node-major: index = node * gpus_per_node + local
  std::vector<simgrid::s4u::Link*> shared_links_;
  std::vector<simgrid::s4u::Link*> fabric_links_;
  std::vector<int64_t> fabric_cables_;
  std::string platform_file_;
  std::string intra_;          // "nvswitch 450 GB/s" etc. (built only)
  std::optional<FabricPlan> plan_;  // set when built
  friend class PlatformBuilder;
};

// Network model every run uses (named in reports).
inline constexpr const char* kNetworkModel = "CM02";
// Creates the Engine with --cfg=network/model:CM02 (bandwidth/latency factors 1),
// network/crosstraffic:0 (no reverse ACK traffic) and network/TCP-gamma:0 (no TCP window cap on
// rate: RDMA fabrics have none, and the cap would be gamma / (2 x latency)), cpu/optim:TI, and
// SimGrid's own logging raised to warnings (trainsim logs through spdlog).
// cpu/optim:TI: the engine only waits on a host's CPU (a pass is a timed wait, step_engine.cpp),
// never executes on it; Cas01's default "Lazy" gives every wait a variable in the CPU's max-min
// system, TI keeps it in a list (same end instants; 8% fewer instructions a flagship tenant step).
// `argv0` is only used as the program name SimGrid sees; `extra_args` are passed on after ours
// (e.g. "--cfg=contexts/stack-size:64"; a later --cfg of the same key wins). Throws
// std::logic_error when an Engine already exists in this process (a second one would keep the
// first one's clock). The process's SIGINT disposition is kept (SimGrid would replace it with one
// that prints every actor and exits 1).
std::unique_ptr<simgrid::s4u::Engine> make_engine(const char* argv0 = "trainsim",
                                                  const std::vector<std::string>& extra_args = {});

}  // namespace trainsim::platform
