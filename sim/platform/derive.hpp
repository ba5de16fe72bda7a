// The platform is the truth: what a loaded platform file says about the GPUs and the links between
// them replaces the scenario's cluster numbers before any cost is computed, so that the closed-form
// costs (TP/CP collectives folded into compute, the DP overlap tax) and the SimGrid flows see the
// same cluster. Built platforms follow the ClusterSpec by construction and are left alone.
//
// Read from the file (every GPU host of the scenario must exist; Platform::build checked routes):
//   - GPU speed: the slowest GPU host's speed. It stands for the dense bf16 peak (the host-speed
//     contract of platform.hpp); every peak of the GPU (fp32, fp16, bf16, fp8) scales by
//     speed / catalog bf16 peak, and the GPU keeps its catalog kernel tables (an H100 at half
//     clock runs its GEMMs at the same fraction of its peak). HBM is not in a platform file.
//   - intra-node fabric: node 0's GPUs all send to their ring neighbour at once (g -> g+1 mod G,
//     what a TP/CP ring or the intra-node phase of a DP collective does, with every group of the
//     node busy). Each flow gets the least, over the links of its route, of the link's bandwidth
//     over the ring flows crossing it (FATPIPE links are not shared). When some link carries two
//     or more of the flows the fabric is shared (`pcie`, bandwidth = per-flow share x G, which
//     the cost model divides by the G GPUs again); otherwise `nvswitch` at the per-flow share.
//     Latency: the longest of the ring routes.
//   - inter-node network (nodes > 1): every GPU g of node 0 sends to GPU g of node 1 at once (the
//     rails of a DP ring); per-GPU share the same way, latency the longest route. It becomes one
//     NIC per GPU at that share (nics_per_node = gpus_per_node), unless the YAML already gives the
//     same per-GPU share.
// A value the file changes is listed as an override (reported, not silently replaced).
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster.hpp"

namespace trainsim::platform {

class Platform;

struct PlatformOverride {
  std::string field;  // scenario key, e.g. "cluster.intra_node.bandwidth"
  std::string yaml;   // what the scenario said (or implied by its defaults)
  std::string file;   // what the platform file gives
};

struct DerivedCluster {
  hardware::ClusterSpec cluster;             // the scenario's cluster with the file's values
  std::vector<PlatformOverride> overrides;   // every value that changed
};

// REQUIRES: `p` was loaded from cluster.platform_file (or built from `cluster`: then nothing
// changes unless the builder and the cost model disagree) and its engine is sealed.
DerivedCluster derive_cluster(const Platform& p, const hardware::ClusterSpec& cluster);

// "cluster.gpu speed: 989.4 TFLOP/s (scenario) -> 100 TFLOP/s (platform file)" style lines.
std::string describe(const PlatformOverride& o);

}  // namespace trainsim::platform
