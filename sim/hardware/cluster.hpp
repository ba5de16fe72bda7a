// The cluster a run lives on: GPUs per node, the intra-node fabric, the inter-node network.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/gpu.hpp"

namespace trainsim::hardware {

// nvswitch: a port per GPU into the switch; pcie: one host bridge shared by the node's GPUs, or a
// PCIe tree when gpus_per_pcie_switch > 0 (hardware/intra_node.hpp); nvlink_bridge: GPUs 2k and 2k+1
// joined by an NVLink bridge, other pairs over PCIe (bridge or tree as for pcie).
enum class IntraFabric { kNvswitch, kPcie, kNvlinkBridge };
enum class Topology { kFatTree, kRailOptimized, kShared };
// What NCCL's inter-node traffic runs over: RDMA NICs (InfiniBand, or RoCE through NCCL's same IB
// transport), or AWS's Elastic Fabric Adapter (SRD, through the aws-ofi-nccl plugin), whose
// per-step latency is several times InfiniBand's (model/cost_data.hpp CollectiveCostData).
enum class InterTransport { kInfiniband, kEfa };

const char* to_string(IntraFabric f);
const char* to_string(Topology t);
const char* to_string(InterTransport t);

// What a ring of n GPUs `stride` apart gets per flow inside a node (hardware/intra_node.hpp), as
// measured on a platform file's routes when they differ from every fabric the builder knows.
struct RingShareEntry {
  int64_t n = 0, stride = 1;
  double per_flow_Bps = 0;
  double latency_s = 0;
  bool nvlink_only = false;
};

struct ClusterSpec {
  GpuSpec gpu;
  int64_t nodes = 1;
  int64_t gpus_per_node = 8;
  IntraFabric intra_fabric = IntraFabric::kNvswitch;
  double intra_bandwidth_Bps = 450e9;  // per GPU, per direction (NVSwitch), or the shared host bridge (PCIe)
  double intra_latency_s = 1e-6;
  // PCIe tree inside a node (pcie with switches, and the PCIe side of nvlink_bridge): GPUs under
  // PCIe switches (gpus_per_pcie_switch each; 0 = no switches: one shared host bridge), each
  // switch's uplink to its CPU socket's root complex, and with two sockets the inter-socket link.
  int64_t gpus_per_pcie_switch = 0;
  double pcie_switch_uplink_Bps = 0;  // per direction; 0 = the GPU's own PCIe link
  int64_t sockets = 1;                // 1 or 2
  double inter_socket_Bps = 0;        // per direction (UPI / Infinity Fabric); needed with 2 sockets
  // Set from a platform file whose intra-node routes no built fabric reproduces (platform/derive):
  // they replace the fabric above for the cost model. Empty otherwise.
  std::vector<RingShareEntry> ring_shares;
  Topology topology = Topology::kFatTree;
  double nic_bandwidth_Bps = 50e9;     // per NIC, per direction
  int64_t nics_per_node = 8;
  double inter_latency_s = 5e-6;
  InterTransport transport = InterTransport::kInfiniband;
  double oversubscription = 1.0;       // >= 1; aggregation-layer oversubscription
  // How flows spread over a switch's parallel uplink cables. adaptive: ideally (one link of their
  // summed capacity, today's default: adaptive routing / packet spraying). ecmp: each flow (GPU
  // pair and direction) hashed onto one cable, so two long flows can land on one cable while others
  // idle; the hash is seeded per run (routing_seed, set from the run's seed).
  bool ecmp = false;
  // Fat-tree: nodes under each leaf switch (0 = as many as its 32 NIC-facing ports take). Set it to
  // place a job's nodes the way a scheduler did (Crux's 8 hosts under 2 ToRs: 4).
  int64_t nodes_per_leaf = 0;
  uint64_t routing_seed = 0;
  std::string platform_file;           // SimGrid XML replacing the builder; "" = build from this spec
  // NVLink domain larger than a server (GB200 NVL72: 18 trays of 4 GPUs on one NVLink switch
  // system): the loader folds the domain into one simulated node of nvlink_domain GPUs (nodes and
  // gpus_per_node then count domains and their GPUs; servers_per_domain the trays). 0 = none.
  int64_t nvlink_domain = 0;
  int64_t servers_per_domain = 1;

  int64_t gpus() const { return nodes * gpus_per_node; }
  // GPUs per server as the scenario wrote it (a folded NVLink domain counts its servers).
  int64_t gpus_per_server() const { return gpus_per_node / std::max<int64_t>(servers_per_domain, 1); }
  // Per-GPU share of the node's NIC bandwidth, per direction.
  double nic_bandwidth_per_gpu_Bps() const {
    return nic_bandwidth_Bps * static_cast<double>(nics_per_node) / static_cast<double>(gpus_per_node);
  }
};

}  // namespace trainsim::hardware
