// The component measurements every cost in model/ comes from: achieved GEMM, attention and HBM
// throughput per GPU generation, NCCL bus bandwidth against message size per fabric, NCCL's
// per-step latencies. The data lives in sim/hardware/data/: kernels.yaml (GEMM measurements as
// transcribed, read as they are), cost_tables.yaml (attention, HBM, collective curves, each entry
// citing its record in kernels.yaml / collectives.yaml), compiled into the binary, so a run never
// depends on the working directory. Pure: no SimGrid, no logging.
#pragma once

#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "hardware/gpu.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

// y(x) through measured points, linear in log(x), clamped at both ends. REQUIRES: points sorted by x.
struct Curve {
  std::vector<std::pair<double, double>> points;
  double at(double x) const;
  bool empty() const { return points.empty(); }
};

// Achieved GEMM throughput of one GPU at one precision, as a fraction of the dense peak.
struct GemmTable {
  double plateau = 0;  // the largest GEMMs ("maximum achievable matmul FLOPS")
  // Measured shapes: {m, n, k, fraction of peak}. Interpolated by inverse squared distance in
  // (log2 m, log2 n, log2 k); a shape past the largest measured ones in every dimension gets the plateau.
  std::vector<std::array<double, 4>> shapes;
  double efficiency(double m, double n, double k) const;
};

struct GpuCostData {
  std::string key;       // catalog key the data was measured on
  GemmTable gemm16;      // bf16 / fp16
  GemmTable gemm8;       // fp8 (plateau 0 when the GPU has none)
  // Fused attention kernels measured on this GPU: sequence length -> fraction of the 16-bit peak
  // (causal, head dim 128), forward and backward.
  struct Attention {
    Curve fwd, bwd;
  };
  std::string default_attention;                 // the kernel a current stack runs ("fa2", "fa3", ...)
  std::map<std::string, Attention> attention;    // by kernel name
  // The named kernel's curves, or the default's when this GPU has no measurement of that kernel.
  const Attention& attention_kernel(const std::string& name) const;
  double hbm_efficiency = 0;  // achieved / datasheet HBM bandwidth on streaming kernels
  int sms = 0;                // streaming multiprocessors (compute units)
  bool nvls = false;          // its NVSwitch reduces in the switch (NVLink SHARP): cost_tables.yaml gpus.<key>.nvls
};

// The data of a catalog GPU; an inline GPU (name "inline" or unknown) gets the generation whose
// 16-bit peak is nearest its own.
const GpuCostData& gpu_cost_data(const hardware::GpuSpec& gpu);

// kPcieBridgedPairs: a ring that crosses PCIe between NVLink-bridged pairs (half its hops NVLink).
enum class FabricKind { kNvswitchNvls, kNvswitch, kPcie, kPcieBridgedPairs };

// NCCL inside one node: bus bandwidth / per-direction link bandwidth against message size, per
// collective, measured on 8-GPU servers.
struct IntraCollectiveData {
  Curve all_reduce, all_gather, reduce_scatter, p2p;
  const Curve& curve(int kind) const;  // collectives::Kind as int (avoids a header cycle)
};

struct CollectiveCostData {
  IntraCollectiveData nvswitch_nvls, nvswitch, pcie, pcie_bridged_pairs;
  // NCCL ring, Simple protocol (src/graph/tuning.cc): base latency once per call, then one hop
  // latency per algorithm step, by link type.
  double base_latency_s = 0;
  double nvlink_hop_s = 0;
  double pcie_hop_s = 0;
  double net_hop_s = 0;
  double efa_net_hop_s = 0;  // a network step over AWS EFA (hardware::InterTransport::kEfa), measured
  // SMs the TP communication kernels hold while they overlap a GEMM (Transformer Engine userbuffers).
  double tp_overlap_sms = 0;
  // Inter-node: achieved fraction of the NIC line rate against the bytes each rank sends per call.
  Curve net_efficiency;
  // Expert-parallel all-to-all: achieved fraction of the GPU's NVLink port and of its NIC share.
  double all_to_all_nvlink = 0;
  double all_to_all_net = 0;
  const IntraCollectiveData& intra(FabricKind f) const;
};

const CollectiveCostData& collective_cost_data();

// Fused attention inside a training step as a fraction of the isolated curves (cost_tables.yaml
// attention_in_step, measured in published step profiles).
double attention_in_step_fraction();

// Megatron's unfused attention core measured as one call on one GPU (cost_tables.yaml
// unfused_attention): the shape it ran at and its forward and backward seconds against sequence
// length.
struct UnfusedAttentionData {
  std::string gpu;  // catalog key
  double batch = 0, heads = 0, head_dim = 0;
  std::vector<std::pair<double, double>> fwd_s, bwd_s;  // {sequence length, seconds}, sorted
};

const UnfusedAttentionData& unfused_attention_data();

// HBM bytes per element of element-wise kernels that depend on how the stack runs them
// (cost_tables.yaml elementwise): eager PyTorch, one kernel per operator, or fused.
struct ElementwiseCostData {
  double rmsnorm_eager = 0;  // per element of the normalised tensor
  double rope_eager = 0;     // per element of q and of k
  double rope_fused = 0;
  double swiglu_eager = 0;   // per element of the FFN width
  double attention_layout_eager = 0;  // per element of the attention output (transpose + copy)
};

const ElementwiseCostData& elementwise_cost_data();

// The host side of optimizer offload (cost_tables.yaml host): the update's throughput per GPU's
// share of the host, and NVMe read and write bandwidth per GPU when the states live on NVMe.
struct HostCostData {
  double cpu_optimizer_Bps = 0;  // optimizer-state bytes the host updates per second, per GPU
  double nvme_read_Bps = 0;
  double nvme_write_Bps = 0;
  double pcie_copy_efficiency = 0;  // a pinned host <-> GPU copy's rate / the GPU's x16 link rate
  // Catalog GPUs whose host link is not PCIe (GB200's NVLink-C2C): the copy rate measured on them
  // (host.link_copy_GBps) per byte per second of the catalog's pcie_bandwidth, in place of
  // pcie_copy_efficiency, so that a scenario or counterfactual scaling the link scales the copies.
  std::map<std::string, double> link_copy_scale;
};

const HostCostData& host_cost_data();

// The embedded YAML texts (sim/hardware/data/kernels.yaml and cost_tables.yaml, at build time).
const char* kernels_yaml();
const char* cost_tables_yaml();
const char* memory_yaml();    // sim/hardware/data/memory.yaml (model/memory_data.hpp)
const char* accuracy_yaml();  // sim/hardware/data/accuracy.yaml (model/accuracy.hpp)

}  // namespace trainsim::model
