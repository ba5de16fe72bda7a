// The links inside one node and the route between two of its GPUs, as plain numbers: the platform
// builder (platform/tree_zone.cpp) creates exactly these links and follows these routes, and the
// cost model (model/compute.cpp) takes a collective's bandwidth from the same routes, so the
// simulated flows and the closed-form costs cannot disagree about the fabric.
//
//   nvswitch       gpu g: nvlink-<n>-<g>_UP / _DOWN (the GPU's port, per direction,
//                  intra_bandwidth, half the latency each); a -> b = [a UP, b DOWN]
//   pcie           no switches: pcie-<n>, ONE link for both directions (the host bridge,
//                  intra_bandwidth, the whole latency); a -> b = [pcie-<n>]
//                  with switches (gpus_per_pcie_switch = k): pcie-<n>-<g>_UP/_DOWN (the GPU's x16
//                  link, intra_bandwidth, half the latency each), pcie-switch-<n>-<s>_UP/_DOWN (switch
//                  s = g / k to its socket's root complex, pcie_switch_uplink), with two sockets
//                  socket-link-<n>_UP (socket 0 -> 1) / _DOWN (1 -> 0) (inter_socket);
//                  a -> b = [a UP, (sw(a) UP, (socket link), sw(b) DOWN when the switches differ), b DOWN]
//   nvlink_bridge  GPUs 2p, 2p+1: nvlink-bridge-<n>-<p>_UP (2p -> 2p+1) / _DOWN (intra_bandwidth,
//                  the whole latency); other pairs over PCIe as above at the GPU's catalog PCIe
//                  bandwidth (a shared pcie-<n> bridge at that bandwidth without switches)
// The root complex itself is not a link (no public measurement of its P2P limit was found).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hardware/cluster.hpp"

namespace trainsim::hardware {

struct IntraLink {
  const char* stem = "";     // SimGrid name: stem-<node>[-<index>][_<dir>], e.g. nvlink-0-3_UP
  int64_t index = -1;        // -1: none (pcie-<node>, socket-link-<node>_UP)
  const char* dir = nullptr; // "UP", "DOWN" or none
  double bandwidth_Bps = 0;
  double latency_s = 0;
  bool nvlink = false;       // an NVLink (NVSwitch port or bridge)
  std::string name(int64_t node) const;
};

struct IntraNodePlan {
  std::vector<IntraLink> links;  // the same for every node
  // Link indices of the route from local GPU a to local GPU b (a != b), in order.
  std::vector<int> route(int64_t a, int64_t b) const;

  const ClusterSpec* cluster = nullptr;
  int64_t gpus = 0;
  int64_t switches = 0;  // PCIe switches (0 = none)
  int first_gpu_link = -1, first_switch_link = -1, socket_link = -1, first_bridge = -1, host_bridge = -1,
      first_port = -1;
};

// REQUIRES: cluster validated (platform::validate_cluster / the scenario loader).
IntraNodePlan plan_intra_node(const ClusterSpec& cluster);

// What a ring collective over groups of n GPUs of one node gets per flow: every group of the node
// runs it at the same moment (the node's GPUs fall into groups of n at stride `stride`: GPU
// base + i * stride, as the tp-fastest rank layout places TP, CP and DP groups), every member sending
// to the next; a link carrying k of those flows gives each 1/k of its bandwidth, and a flow gets the
// least over its route. REQUIRES: n >= 2, n * stride <= gpus_per_node.
struct RingShare {
  double per_flow_Bps = 0;
  double latency_s = 0;      // the longest route's
  bool nvlink_only = true;   // every flow stays on NVLink (NVSwitch ports or bridges)
};
RingShare ring_share(const ClusterSpec& cluster, int64_t n, int64_t stride = 1);

// The flows of that pattern, as (sender, receiver) local GPU indices: every whole group of n GPUs at
// `stride` in a node of `gpus`, each member to the next. ring_share counts them on the plan's
// routes; platform/derive counts them on a platform file's.
std::vector<std::pair<int64_t, int64_t>> ring_flows(int64_t gpus, int64_t n, int64_t stride);

// One transfer alone between GPUs 0 and 1 of a node (a pipeline send): its route's narrowest link.
// A single-GPU node: intra_bandwidth.
double pair_Bps(const ClusterSpec& cluster);

// What one GPU's inter-node traffic gets and waits: its NIC share, and under a PCIe tree (the NIC
// beside the GPU under its switch, GPUDirect RDMA) also the GPU's own PCIe link at each end, which
// adds its latency (intra_latency / 2 per end) to inter_latency.
double inter_gpu_Bps(const ClusterSpec& cluster);
double inter_path_latency_s(const ClusterSpec& cluster);

}  // namespace trainsim::hardware
