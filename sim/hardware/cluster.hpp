// The cluster a run lives on: GPUs per node, the intra-node fabric, the inter-node network.
#pragma once

#include <cstdint>
#include <string>

#include "hardware/gpu.hpp"

namespace trainsim::hardware {

enum class IntraFabric { kNvswitch, kPcie };
enum class Topology { kFatTree, kRailOptimized, kShared };

const char* to_string(IntraFabric f);
const char* to_string(Topology t);

struct ClusterSpec {
  GpuSpec gpu;
  int64_t nodes = 1;
  int64_t gpus_per_node = 8;
  IntraFabric intra_fabric = IntraFabric::kNvswitch;
  double intra_bandwidth_Bps = 450e9;  // per GPU, per direction (NVSwitch), or the shared host bridge (PCIe)
  double intra_latency_s = 1e-6;
  Topology topology = Topology::kFatTree;
  double nic_bandwidth_Bps = 50e9;     // per NIC, per direction
  int64_t nics_per_node = 8;
  double inter_latency_s = 5e-6;
  double oversubscription = 1.0;       // >= 1; aggregation-layer oversubscription
  std::string platform_file;           // SimGrid XML replacing the builder; "" = build from this spec

  int64_t gpus() const { return nodes * gpus_per_node; }
  // Per-GPU share of the node's NIC bandwidth, per direction.
  double nic_bandwidth_per_gpu_Bps() const {
    return nic_bandwidth_Bps * static_cast<double>(nics_per_node) / static_cast<double>(gpus_per_node);
  }
};

}  // namespace trainsim::hardware
