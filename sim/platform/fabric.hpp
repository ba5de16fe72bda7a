// The inter-node fabric the builder makes, planned as plain numbers before SimGrid sees any of it
// (tests check the plan without an Engine; tree_zone.hpp turns it into one SimGrid netzone).
//
// The fabric is a tree. Its leaves are the GPUs; above them, bottom-up:
//
//   core         [ core ]                     only when the leaf switches do not fit in one pod
//                /      \  .                  (links carry everything below them: no oversubscription)
//   aggregation [agg 0] [agg 1] ...           one per pod of up to kPodLeaves leaf switches
//                / | \  .
//   leaf       [leaf][leaf] ...               up to kLeafPorts ports each; the leaf's uplink carries
//               / | \  .                      (its ports x port bandwidth) / oversubscription
//   nic        [nic]...                       only when GPUs share a NIC (nics_per_node < gpus_per_node)
//              /   \  .                       the NIC's uplink is shared by the GPUs under it
//   GPUs    gpu-n-g gpu-n-g'
//
// Which ports a leaf switch groups depends on the topology:
//   fat-tree        node-major: the ports of kLeafPorts / ports_per_node whole nodes per leaf;
//   rail-optimized  rail-major: port (rail) r of up to kLeafPorts nodes per leaf, one set of leaves per rail;
//   shared          one leaf per node, so every inter-node byte crosses the shared aggregation layer.
// Group sizes are the largest divisor of the count that fits, so every switch of a level has the
// same fan-in (routes find a switch by integer division).
//
// Each switch has ONE uplink per direction whose capacity is the sum of its parallel cables: ideal
// load balancing over the cables (no ECMP hash collisions). Latency sits on the GPU's own link
// (half of inter_latency_s up, half down), so every inter-node path takes exactly inter_latency_s
// whatever the number of switch hops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"

namespace trainsim::platform {

// Ports of one leaf switch facing the NICs (a 64-port switch with half its ports up).
inline constexpr int64_t kLeafPorts = 32;
// Leaf switches per pod under one aggregation switch; more leaves than this add a core level.
inline constexpr int64_t kPodLeaves = 32;
// Largest cluster the builder accepts (a sanity bound: ~8 KB of SimGrid objects per GPU).
inline constexpr int64_t kMaxGpus = int64_t{1} << 22;

enum class TreeLevelRole { kNic, kLeaf, kAggregation, kCore };
const char* to_string(TreeLevelRole r);

// One switch level of the tree, bottom-up.
struct TreeLevel {
  TreeLevelRole role = TreeLevelRole::kLeaf;
  int64_t fan_in = 1;               // children per switch of this level
  int64_t switches = 1;             // switches at this level
  double down_link_Bps = 0;         // per direction, of the link from each child up to this level
  bool shared = false;              // other tenants' traffic crosses these links (kShared topology)
  // Parallel cables making up each such link when the children are switches (their uplink ports:
  // the link's capacity over the port bandwidth); with ECMP each is its own link, else one link
  // carries their sum.
  int64_t cables = 1;
};

struct FabricPlan {
  int64_t nodes = 0;
  int64_t gpus_per_node = 0;
  int64_t gpus_per_nic = 1;         // > 1: GPUs share a NIC (a kNic level exists)
  int64_t rails = 0;                // ports per node: min(gpus_per_node, nics_per_node)
  double port_Bps = 0;              // one port (NIC or GPU-to-leaf link), per direction
  bool rail_major = false;          // leaf order: rail-major (rail-optimized) or node-major
  std::vector<TreeLevel> levels;    // bottom-up; levels[0] holds the GPUs' own links
  double gpu_link_latency_s = 0;    // on each GPU's link, each direction (= inter_latency_s / 2)
  bool ecmp = false;                // switch uplinks as separate cables, a flow hashed onto one
  uint64_t routing_seed = 0;

  int64_t gpus() const { return nodes * gpus_per_node; }
  // Switch levels above the NICs (1 = one leaf switch, 2 = leaf + spine, 3 = leaf + aggregation + core).
  int64_t switch_levels() const;
  // Position of GPU (node, local) among the tree's leaves (SimGrid fat-tree element id).
  int64_t position(int64_t node, int64_t local) const;
  // Inverse of position(): {node, local}.
  std::pair<int64_t, int64_t> gpu_at(int64_t position) const;
  // "3 levels: nic x2, leaf x32, aggregation x32, core x16" style summary.
  std::string describe() const;
};

// Plans the fabric for `cluster`. Throws util::InputError naming the bad field when a value cannot
// be built (e.g. nics_per_node not a divisor or multiple of gpus_per_node, a bandwidth <= 0).
FabricPlan plan_fabric(const hardware::ClusterSpec& cluster);

// Checks every ClusterSpec value the builder hands to SimGrid (which aborts on a bad one).
// Throws util::InputError naming the first bad field.
void validate_cluster(const hardware::ClusterSpec& cluster);

// Largest divisor of n that is <= limit (>= 1). REQUIRES: n >= 1, limit >= 1.
int64_t largest_divisor_at_most(int64_t n, int64_t limit);

}  // namespace trainsim::platform
