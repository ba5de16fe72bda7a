#include "model/compute.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "hardware/intra_node.hpp"
#include "model/cost_data.hpp"
#include "model/transformer.hpp"

namespace trainsim::model {
namespace {

using collectives::Kind;

double d(int64_t v) { return static_cast<double>(v); }

// Element-wise bytes per element (16-bit activations), forward: each norm reads and writes (4);
// dropout + residual add reads two inputs, writes the output and a 1-byte mask (7); gelu reads and
// writes (4); swiglu reads two halves and writes (6); an fp8 cast reads 2 and writes 1 (3).
constexpr double kNormBytes = 4;
constexpr double kResidualBytes = 7;
constexpr double kGeluBytes = 4;
constexpr double kSwigluBytes = 6;
constexpr double kCastBytes = 3;
// The backward of element-wise ops reads the saved input and the incoming gradient and writes one.
constexpr double kBackwardMemoryFactor = 2;
// Vocab-parallel cross-entropy over fp32 logits: forward writes 16-bit logits, reads them, writes
// fp32 softmax (2 + 2 + 4 + 4); backward reads softmax and writes the 16-bit gradient (4 + 2 + 2).
constexpr double kLossForwardBytes = 12;
constexpr double kLossBackwardBytes = 8;
// Unfused attention, per element of the s x s score matrix: forward fused scale+mask+softmax (read 2,
// write 2) then dropout (read 2, write 2, 1-byte mask); backward dropout (read mask and gradient,
// write 5) and softmax (read output and gradient, write 6).
constexpr double kSoftmaxDropoutBytes = 9;
constexpr double kSoftmaxDropoutBackwardBytes = 11;

// Bytes per element of one norm's forward: RMSNorm (the SwiGLU models) in eager PyTorch runs
// one kernel per operator (cost_tables.yaml elementwise.rmsnorm_eager); a fused kernel, and
// LayerNorm (one ATen kernel even in eager mode), read and write once.
double layer_norm_bytes(const ModelSpec& model, const TrainingSpec& train) {
  return train.eager_norm && model.ffn == Ffn::kSwiglu ? elementwise_cost_data().rmsnorm_eager : kNormBytes;
}

// 16-bit precision used by the attention core and non-GEMM work: fp8 keeps attention in bf16.
Precision attention_precision(Precision p) { return p == Precision::kFp8 ? Precision::kBf16 : p; }

const GemmTable& gemm_table(const GpuCostData& data, Precision p) {
  return p == Precision::kFp8 && data.gemm8.plateau > 0 ? data.gemm8 : data.gemm16;
}

// The measured curve for a collective on the node's fabric: a ring of PCIe hops runs at the PCIe
// curve; one that joins NVLink-bridged pairs over PCIe at the curve measured on such pairs, where
// every other hop is NVLink (cost_tables.yaml pcie_bridged_pairs). The NVSwitch of a GPU whose data
// says so (gpus.<key>.nvls: Hopper's and Blackwell's, the H800's included) reduces in the switch
// (NVLS): its measured curves apply to the collectives that reduce.
FabricKind fabric_kind(const hardware::ClusterSpec& cluster, Kind kind, const hardware::RingShare& share) {
  if (!share.nvlink_only)
    return cluster.intra_fabric == hardware::IntraFabric::kNvlinkBridge ? FabricKind::kPcieBridgedPairs : FabricKind::kPcie;
  const bool reduction = kind == Kind::kAllReduce || kind == Kind::kReduceScatter;
  const bool nvls = cluster.intra_fabric == hardware::IntraFabric::kNvswitch && gpu_cost_data(cluster.gpu).nvls;
  return reduction && nvls ? FabricKind::kNvswitchNvls : FabricKind::kNvswitch;
}

// The ring share of n ranks at `stride` inside a node (hardware/intra_node.hpp), the group clamped
// to the node.
hardware::RingShare node_ring(const hardware::ClusterSpec& cluster, int64_t n, int64_t stride) {
  const int64_t g = std::max<int64_t>(cluster.gpus_per_node, 1);
  n = std::clamp<int64_t>(n, 2, std::max<int64_t>(g, 2));
  if (n > g) return {cluster.intra_bandwidth_Bps, cluster.intra_latency_s, cluster.intra_fabric != hardware::IntraFabric::kPcie};
  if (stride < 1 || n * stride > g) stride = 1;
  return hardware::ring_share(cluster, n, stride);
}

bool pcie_hops(const hardware::ClusterSpec& cluster, int64_t n) { return !node_ring(cluster, n, 1).nvlink_only; }

int kind_index(Kind k) {
  switch (k) {
    case Kind::kAllReduce: return 0;
    case Kind::kReduceScatter: return 1;
    case Kind::kAllGather: return 2;
    case Kind::kP2p: return 3;
  }
  return 3;
}

// One network step of NCCL's: its tuning constant over InfiniBand (RoCE alike), the measured one
// over AWS EFA (cost_tables.yaml collectives).
double net_hop_s(const hardware::ClusterSpec& cluster) {
  const CollectiveCostData& cd = collective_cost_data();
  return cluster.transport == hardware::InterTransport::kEfa ? cd.efa_net_hop_s : cd.net_hop_s;
}

// One message between two nodes (a p2p transfer, an expert-parallel exchange): NCCL's base latency
// and one network step.
double net_message_latency_s(const hardware::ClusterSpec& cluster) {
  return collective_cost_data().base_latency_s + net_hop_s(cluster);
}

// NCCL ring latency (src/graph/tuning.cc, Simple protocol): the base once, then a hop per step;
// the steps that cross nodes pay the network hop. AR: 2(n-1) steps of which 2(nodes-1) inter; RS/AG:
// n-1 and nodes-1.
double ring_latency_s(const hardware::ClusterSpec& cluster, Kind kind, int64_t n, int64_t nodes, bool pcie) {
  if (n <= 1) return 0;
  const CollectiveCostData& cd = collective_cost_data();
  const double mult = kind == Kind::kAllReduce ? 2 : 1;
  const double steps = mult * d(n - 1);
  const double inter = mult * d(std::max<int64_t>(nodes, 1) - 1);
  return cd.base_latency_s + (steps - inter) * (pcie ? cd.pcie_hop_s : cd.nvlink_hop_s) + inter * net_hop_s(cluster);
}

// Time of a collective over the n ranks of a model-parallel group (TP or CP): inside a node, or
// hierarchical over the nodes it spans (its ranks are consecutive, gpus_per_node per node).
double group_collective_time(const hardware::ClusterSpec& cluster, Kind kind, int64_t n, double bytes) {
  if (n <= 1) return 0;
  // Every group of the node runs the same collective at the same moment (hardware::ring_share).
  if (n <= cluster.gpus_per_node) return intra_collective_time_s(cluster, kind, n, bytes);
  return inter_collective_time_s(cluster, kind, n, cluster.gpus_per_node, bytes);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// The fitted constants: two named effects, fitted together once to the validation rows that are not
// in the held-out third (test/validation/validation_set.hpp: published_runs.yaml + more_runs.yaml),
// by a grid over their plausible ranges minimising the mean over sources of each source's mean
// |error| (every source counts once, as leave-one-source-out counts them); never tuned per row.
// test/validation/calibration_test.cpp checks that these are the fit and reports the
// leave-one-source-out errors (README "Accuracy").
const Calibration& default_calibration() {
  static const Calibration kCalibration = [] {
    Calibration c;
    c.sustained_compute = 0.80;  // range 0.70-1.00, grid step 0.01 (0.81 until TE's overlap methods, 2026-12-07; 0.80 on a 0.02 grid before)
    c.replica_jitter_s = 0.05;   // range 0-0.10 s, grid step 0.005 s (until 2026-12-07 a fixed host time per step, 0.10-0.12 s)
    return c;
  }();
  return kCalibration;
}

double gemm_time_s(const hardware::GpuSpec& gpu, Precision precision, double m, double n, double k,
                   const Calibration& c) {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  const GpuCostData& data = gpu_cost_data(gpu);
  const double peak = gpu.peak_flops(precision);
  const double e = gemm_table(data, precision).efficiency(m, n, k) * c.sustained_compute;
  // No faster than its least traffic through HBM: A and B read once, C written once (FP8: 1-byte
  // operands, a 16-bit output), at the stream bandwidth measured on the GPU (kernels.yaml hbm).
  // Binds where a dimension is small and the GPU's measured curve has no such shape (A100's is one
  // large shape; H100's XLA grid measures small ones, which sit under this bound already):
  // Megatron's unfused attention, QK^T and PV over the s x s scores with k or n = the head
  // dimension (s 1024, head dim 96: 81 FLOP/B against ~180 at A100's ridge), experts given few tokens.
  const double traffic = (m * k + k * n) * bytes_per_value(precision) + m * n * activation_bytes_per_value(precision);
  return std::max(2 * m * n * k / (peak * e), memory_time_s(gpu, traffic, c));
}

double gemm_efficiency(const hardware::GpuSpec& gpu, Precision precision, double m, double n, double k,
                       const Calibration& c) {
  const double t = gemm_time_s(gpu, precision, m, n, k, c);
  return t > 0 ? 2 * m * n * k / (gpu.peak_flops(precision) * t) : 0;
}

namespace {

struct UnfusedAttentionTime {
  double fwd_s = 0, bwd_s = 0;
};

// Unfused attention (Megatron-LM 2021/22) from its HBM traffic: batched QK^T and PV GEMMs over
// the full s x s scores (`rows` query rows of all heads against `keys` keys), then scale+mask+
// softmax and dropout as memory passes over them; the backward does both GEMMs twice.
UnfusedAttentionTime unfused_attention_traffic(const hardware::GpuSpec& gpu, Precision p, double rows, double keys,
                                               double hd, const Calibration& c) {
  const double bmm = gemm_time_s(gpu, p, rows, keys, hd, c) + gemm_time_s(gpu, p, rows, hd, keys, c);
  return {bmm + memory_time_s(gpu, kSoftmaxDropoutBytes * rows * keys, c),
          2 * bmm + memory_time_s(gpu, kSoftmaxDropoutBackwardBytes * rows * keys, c)};
}

// The ratio of the call measured on one GPU (cost_tables.yaml unfused_attention) to the traffic
// estimate at the measured shape, by sequence length, forward and backward. It depends on the data
// and the constants only: computed once per set of constants (the fit tries many), not per layer.
struct UnfusedSlowdown {
  Curve fwd, bwd;
};
const UnfusedSlowdown& unfused_slowdown(const Calibration& c) {
  thread_local std::map<Calibration, UnfusedSlowdown> known;
  if (auto it = known.find(c); it != known.end()) return it->second;
  const UnfusedAttentionData& m = unfused_attention_data();
  const hardware::GpuSpec measured_on = *hardware::find_gpu(m.gpu);
  auto ratio = [&](const std::vector<std::pair<double, double>>& measured, bool forward) {
    Curve r;
    for (const auto& [seq, s] : measured) {
      const UnfusedAttentionTime e =
          unfused_attention_traffic(measured_on, Precision::kFp16, m.batch * m.heads * seq, seq, m.head_dim, c);
      r.points.emplace_back(seq, s / (forward ? e.fwd_s : e.bwd_s));
    }
    return r;
  };
  return known[c] = {ratio(m.fwd_s, true), ratio(m.bwd_s, false)};
}

// The same at the measured speed: the traffic estimate times that ratio, linear in log(sequence)
// between the measured lengths and clamped at the ends.
UnfusedAttentionTime unfused_attention_time(const hardware::GpuSpec& gpu, Precision p, double rows, double keys, double hd,
                                            const Calibration& c) {
  const UnfusedSlowdown& r = unfused_slowdown(c);
  const UnfusedAttentionTime e = unfused_attention_traffic(gpu, p, rows, keys, hd, c);
  return {e.fwd_s * r.fwd.at(keys), e.bwd_s * r.bwd.at(keys)};
}

}  // namespace

double memory_time_s(const hardware::GpuSpec& gpu, double bytes, const Calibration& c) {
  return bytes / (gpu.hbm_bandwidth_Bps * gpu_cost_data(gpu).hbm_efficiency);
}

double intra_collective_time_s(const hardware::ClusterSpec& cluster, Kind kind, int64_t n, double bytes,
                               int64_t stride) {
  if ((n <= 1 && kind != Kind::kP2p) || bytes <= 0) return 0;
  const hardware::RingShare share = node_ring(cluster, n, stride);
  const FabricKind fabric = fabric_kind(cluster, kind, share);
  const double ratio = collective_cost_data().intra(fabric).curve(kind_index(kind)).at(bytes);
  return collectives::ring_edge_bytes(kind, n, bytes) / (ratio * share.per_flow_Bps);
}

double intra_wire_factor(const hardware::ClusterSpec& cluster, Kind kind, int64_t n, double bytes, int64_t stride) {
  if (n <= 1 || bytes <= 0) return 1;
  const hardware::RingShare share = node_ring(cluster, n, stride);
  const FabricKind fabric = fabric_kind(cluster, kind, share);
  return 1 / collective_cost_data().intra(fabric).curve(kind_index(kind)).at(bytes);
}

double inter_collective_time_s(const hardware::ClusterSpec& cluster, Kind kind, int64_t n, int64_t ranks_per_node,
                               double bytes) {
  if (n <= 1 || bytes <= 0) return 0;
  const int64_t per_node = std::clamp<int64_t>(ranks_per_node, 1, n);
  const int64_t nodes = (n + per_node - 1) / per_node;
  if (nodes == 1) return intra_collective_time_s(cluster, kind, n, bytes, cluster.gpus_per_node / std::max<int64_t>(n, 1));
  // Bandwidth: intra-node parts at the fabric's measured bus bandwidth, the inter-node ring per rail
  // at the NIC share and the efficiency measured for what each rank sends per call.
  const double per_rank = collectives::ring_edge_bytes(kind, nodes, bytes / d(per_node));
  const double nic = hardware::inter_gpu_Bps(cluster) * collective_cost_data().net_efficiency.at(per_rank);
  const collectives::LinkParams inter{0, nic};
  const double t_inter = collectives::collective_time(kind, collectives::Algorithm::kRing, nodes, bytes / d(per_node), inter);
  double t_intra = 0;
  if (per_node > 1) {
    // The node's ranks of this ring sit gpus_per_node / per_node apart (tp and cp fastest).
    const int64_t stride = std::max<int64_t>(1, cluster.gpus_per_node / per_node);
    if (kind == Kind::kAllReduce || kind == Kind::kReduceScatter)
      t_intra += intra_collective_time_s(cluster, Kind::kReduceScatter, per_node, bytes, stride);
    if (kind == Kind::kAllReduce || kind == Kind::kAllGather)
      t_intra += intra_collective_time_s(cluster, Kind::kAllGather, per_node, bytes, stride);
  }
  // NCCL pipelines a multi-node ring chunk by chunk: the NVLink and the NIC parts run at once and
  // the slower one sets the time (cost_tables.yaml collectives: 8 H100 nodes reach 320-391 GB/s
  // all-reduce bus bandwidth, the NICs' 8 x 50 GB/s; one part after the other would give ~205).
  return std::max(t_inter, t_intra) + ring_latency_s(cluster, kind, n, nodes, pcie_hops(cluster, per_node));
}

NetCallCost net_call_cost(const hardware::ClusterSpec& cluster, Kind kind, int64_t n, int64_t ranks_per_node,
                          double bytes) {
  NetCallCost cost;
  if (n <= 1) return cost;
  const int64_t per_node = std::clamp<int64_t>(ranks_per_node, 1, n);
  const int64_t nodes = (n + per_node - 1) / per_node;
  cost.latency_s = ring_latency_s(cluster, kind, n, nodes, pcie_hops(cluster, per_node));
  const double per_rank = collectives::ring_edge_bytes(kind, n, bytes);
  cost.wire_factor = 1 / collective_cost_data().net_efficiency.at(per_rank);
  return cost;
}

NetCallCost p2p_call_cost(const hardware::ClusterSpec& cluster, bool inter_node, double bytes) {
  const CollectiveCostData& cd = collective_cost_data();
  NetCallCost cost;
  if (inter_node) {
    cost.latency_s = net_message_latency_s(cluster);
    cost.wire_factor = 1 / cd.net_efficiency.at(bytes);
  } else {
    const hardware::RingShare pair = node_ring(cluster, 2, 1);
    cost.latency_s = cd.base_latency_s + (pair.nvlink_only ? cd.nvlink_hop_s : cd.pcie_hop_s);
    cost.wire_factor = 1 / collective_cost_data().intra(fabric_kind(cluster, Kind::kP2p, pair)).p2p.at(bytes);
  }
  return cost;
}

double p2p_time_s(const hardware::ClusterSpec& cluster, bool inter_node, double bytes) {
  if (bytes <= 0) return 0;
  const NetCallCost call = p2p_call_cost(cluster, inter_node, bytes);
  const double link = inter_node ? hardware::inter_gpu_Bps(cluster) : hardware::pair_Bps(cluster);
  return call.latency_s + bytes * call.wire_factor / link;
}

double grad_bytes_per_param(const TrainingSpec& train) {
  return (train.fp32_main_grads || train.grad_reduce_fp32 || train.precision == Precision::kFp32) ? 4 : 2;
}

double activation_bytes_per_value(Precision p) { return p == Precision::kFp8 ? 2 : bytes_per_value(p); }

namespace {

// One TP collective beside the GEMMs that can hide it: what it adds to the pass. Transformer
// Engine's userbuffers (NVLink/NVSwitch and tp_comm_overlap) run each collective of a layer by one
// of three methods, by default (transformer_engine/pytorch/module/base.py initialize_ub, v1.8,
// kernels.yaml te-base-v1.8: methods and add_ub defaults):
//  - ring exchange (the all-gathers before the column-parallel forward GEMMs and before the
//    row-parallel input-gradient GEMMs): the GEMM runs chunk by chunk, starting on the rank's own
//    chunk while the next arrives over the copy engines (use_ce): only the excess of the tp - 1
//    transfers over the GEMM chunks they run beside shows, and no SM is taken;
//  - pipeline (the reduce-scatters after the row-parallel forward GEMMs): the GEMM in num_splits = 4
//    chunks, each chunk's reduce-scatter beside the next chunk: the last chunk's shows, and the
//    communication kernels hold num_sm = 16 SMs (without an SM margin) while they run beside the GEMM;
//  - bulk (the column-parallel backward: the input re-gathered under the input-gradient GEMM, the
//    input gradient reduce-scattered under the weight-gradient GEMM): one collective beside one
//    independent GEMM, the excess shows, 16 SMs held;
//  - chunked (userbuffers over an all-reduce, without sequence parallelism): tp chunks, the first
//    or last shows;
//  - with Megatron's asynchronous overlap (any fabric): the excess over the GEMMs shows, and NCCL's
//    kernels take SMs from the GEMMs beside them the same way;
//  - exposed: all of it.
enum class Overlap { kRingExchange, kPipeline, kBulk, kChunked, kAsync, kNone };

inline constexpr double kPipelineSplits = 4;  // TE add_ub: num_splits = 4 for 'pipeline'

// What the compute beside `hidden_s` of communication loses to the SMs its kernels hold.
double sm_tax_s(double hidden_s, const GpuCostData& data) {
  const double comm_sms = collective_cost_data().tp_overlap_sms;
  return hidden_s * comm_sms / std::max(1.0, d(data.sms) - comm_sms);
}

// `exposed` of the collective shows on its own; the rest runs beside `beside` of GEMM time: its
// excess over them shows, and its kernels' SMs slow the GEMMs while it hides.
double shown_beside(double comm, double exposed, double beside, const GpuCostData& data) {
  return exposed + std::max(0.0, comm - exposed - beside) + sm_tax_s(std::min(comm - exposed, beside), data);
}

double tp_cost(double comm, double gemms, Overlap overlap, int64_t tp, const GpuCostData& data) {
  if (comm <= 0) return 0;
  switch (overlap) {
    case Overlap::kNone: return comm;
    case Overlap::kAsync:
    case Overlap::kBulk: return shown_beside(comm, 0, gemms, data);  // NCCL's or userbuffers' kernels
    case Overlap::kRingExchange: {
      const double beside = gemms * d(tp - 1) / d(tp);  // the GEMM chunks the transfers run beside
      return std::max(0.0, comm - beside);               // over the copy engines: no SM taken
    }
    case Overlap::kPipeline:  // the last of the GEMM's chunks' reduce-scatters
      return shown_beside(comm, comm / kPipelineSplits, gemms * (kPipelineSplits - 1) / kPipelineSplits, data);
    case Overlap::kChunked: return shown_beside(comm, comm / d(tp), gemms, data);  // the first or last chunk
  }
  return comm;
}

}  // namespace

double comm_sm_tax_s(double hidden_s, const hardware::GpuSpec& gpu) { return sm_tax_s(hidden_s, gpu_cost_data(gpu)); }

namespace {

// Members of an ep group, `stride` GPUs apart in rank order, that share a node.
int64_t ep_ranks_per_node(const hardware::ClusterSpec& cluster, int64_t ep, int64_t stride) {
  return std::clamp<int64_t>(cluster.gpus_per_node / std::max<int64_t>(stride, 1), 1, ep);
}

// An expert-parallel exchange of `intra` bytes a GPU inside its node and `inter` bytes across
// nodes, concurrently; the slower shows. Inside: over NVLink at DeepEP's measured fraction of the
// port, through PCIe as a p2p copy would go; across: over the GPU's NIC share at DeepEP's fraction.
double ep_exchange_time_s(const hardware::ClusterSpec& cluster, double intra, double inter) {
  const CollectiveCostData& cd = collective_cost_data();
  double t_intra = 0, t_inter = 0;
  if (intra > 0) {
    const hardware::RingShare pair = node_ring(cluster, 2, 1);
    t_intra = pair.nvlink_only ? cd.base_latency_s + cd.nvlink_hop_s + intra / (hardware::pair_Bps(cluster) * cd.all_to_all_nvlink)
                               : p2p_time_s(cluster, false, intra);
  }
  if (inter > 0) t_inter = net_message_latency_s(cluster) + inter / (hardware::inter_gpu_Bps(cluster) * cd.all_to_all_net);
  return std::max(t_intra, t_inter);
}

// The same exchange on the wire, for the engine (into w): `peer` payload bytes to each other rank in the
// node and `node` to each other node, inflated by the measured fraction of the link the exchange
// achieves (so that flows at the link's bandwidth take the time ep_exchange_time_s gives), and the
// latency paid once per exchange (the slower side's: the NIC's when the group spans nodes).
void ep_wire(const hardware::ClusterSpec& cluster, double peer, int64_t in_node, double node, int64_t nodes, EpLayerTraffic& w) {
  const CollectiveCostData& cd = collective_cost_data();
  if (in_node > 1 && peer > 0) {
    const hardware::RingShare pair = node_ring(cluster, 2, 1);
    const double intra = peer * d(in_node - 1);
    if (pair.nvlink_only) {
      w.peer_bytes = peer / cd.all_to_all_nvlink;
      w.latency_s = cd.base_latency_s + cd.nvlink_hop_s;
    } else {
      const NetCallCost call = p2p_call_cost(cluster, false, intra);
      w.peer_bytes = peer * call.wire_factor;
      w.latency_s = call.latency_s;
    }
  }
  if (nodes > 1 && node > 0) {
    w.node_bytes = node / cd.all_to_all_net;
    w.latency_s = net_message_latency_s(cluster);
  }
}

}  // namespace

double expected_max_normal(int64_t n) {
  if (n <= 1) return 0;
  static thread_local std::map<int64_t, double> known;
  if (auto it = known.find(n); it != known.end()) return it->second;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) dx; the integrand is smooth and negligible beyond
  // +-10 for any n this sees (Phi(10) = 1 - 8e-24): the midpoint rule at 1e-3 is exact to 1e-9.
  const double step = 1e-3, nn = d(n);
  double sum = 0;
  for (double x = -10 + step / 2; x < 10; x += step) {
    const double phi = std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * nn * phi * std::pow(cdf, nn - 1) * step;
  }
  return known[n] = sum;
}

double replica_wait_s(const ParallelSpec& par, double jitter_s) {
  return jitter_s * expected_max_normal(par.dp * par.cp);
}

double all_to_all_time_s(const hardware::ClusterSpec& cluster, int64_t ep, int64_t stride, double bytes) {
  if (ep <= 1 || bytes <= 0) return 0;
  const int64_t in_node = ep_ranks_per_node(cluster, ep, stride);
  return ep_exchange_time_s(cluster, bytes * d(in_node - 1) / d(ep), bytes * d(ep - in_node) / d(ep));
}

EpLayerTraffic all_to_all_wire(const hardware::ClusterSpec& cluster, int64_t ep, int64_t stride, double bytes) {
  EpLayerTraffic w;
  if (ep <= 1 || bytes <= 0) return w;
  const int64_t in_node = ep_ranks_per_node(cluster, ep, stride);
  ep_wire(cluster, bytes / d(ep), in_node, bytes * d(in_node) / d(ep), std::max<int64_t>(1, ep / in_node), w);
  return w;
}

LayerTime layer_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                     const hardware::ClusterSpec& cluster, const Calibration& c, bool moe) {
  const hardware::GpuSpec& gpu = cluster.gpu;
  const GpuCostData& data = gpu_cost_data(gpu);
  const Precision prec = train.precision;
  const double t = d(par.tp);
  const double tokens = d(par.micro_batch) * d(model.seq_len) / d(par.cp);  // M: tokens on this GPU
  const double h = d(model.hidden);
  const double f = d(model.ffn_hidden > 0 ? model.ffn_hidden : 4 * model.hidden);
  const bool swiglu = model.ffn == Ffn::kSwiglu;
  // Element-wise bytes per element as the stack runs the kernels (training.elementwise).
  const ElementwiseCostData& ew = elementwise_cost_data();
  const double norm_bytes = layer_norm_bytes(model, train);
  const double act_bytes = swiglu ? (train.eager_activation ? ew.swiglu_eager : kSwigluBytes) : kGeluBytes;

  // Weight GEMMs (m, n, k): QKV and MLP-up are column-parallel, out-proj and MLP-down row-parallel.
  // A mixture-of-experts layer's MLP GEMMs are its shared experts' (one MLP of shared x the expert
  // width, as Megatron-Core builds them; none without shared experts), its routed experts' below.
  const bool experts = moe && model.is_moe();
  const double mlp_width = experts ? d(model.moe.shared_experts * model.moe.expert_ffn_hidden) : f;
  const double mlp_up = swiglu ? 2 * mlp_width : mlp_width;
  // MLA: its down- and up-projections as one GEMM from the hidden state of the same FLOPs, the
  // output projection from heads x v_head_dim.
  const AttentionWidths aw = attention_widths(model);
  const double qkv_n = aw.qkv_weights / h;
  const double shapes[4][3] = {{tokens, qkv_n / t, h}, {tokens, h, aw.out / t}, {tokens, mlp_up / t, h}, {tokens, h, mlp_width / t}};
  double fwd_gemm[4] = {0, 0, 0, 0}, dgrad[4] = {0, 0, 0, 0}, wgrad[4] = {0, 0, 0, 0};
  double gemm_fwd = 0, gemm_bwd = 0;
  for (int i = 0; i < 4; ++i) {
    const auto& s = shapes[i];
    if (s[1] <= 0 || s[2] <= 0) continue;  // no shared expert
    fwd_gemm[i] = gemm_time_s(gpu, prec, s[0], s[1], s[2], c);
    dgrad[i] = gemm_time_s(gpu, prec, s[0], s[2], s[1], c);  // dX = dY W^T
    wgrad[i] = gemm_time_s(gpu, prec, s[2], s[1], s[0], c);  // dW = X^T dY
    gemm_fwd += fwd_gemm[i];
    gemm_bwd += dgrad[i] + wgrad[i];
  }
  // Routed experts (grouped GEMMs): this GPU holds experts / ep of them; the ep ranks' tokens (each
  // tp group's, gathered) reach them top_k times over, evenly (balanced routing: the auxiliary loss
  // or bias the stacks train with), so each expert multiplies top_k x tokens x ep / experts rows at
  // the expert width split over tp. With expert_tp below tp (parallel folding) each of the tp /
  // expert_tp sub-groups of a tp group routes its own share of the tokens and the width splits
  // over expert_tp: tokens x expert_tp / tp rows a GPU routes. The router is a tokens x experts
  // GEMM; the permutation of the tokens into expert order and back streams the routed copies
  // through HBM.
  double expert_fwd = 0, expert_bwd = 0, routed_mem = 0, a2a = 0;
  EpLayerTraffic wire;
  if (experts) {
    const double e_total = d(model.moe.experts), k = d(model.moe.top_k);
    const double local = e_total / d(par.ep);
    const double et = d(par.etp());
    const double routed_tokens = tokens * et / t;
    // The slowest rank gates the layer: with top_k picks of tokens x ep tokens spread at random over
    // the ep ranks, a rank's routed rows are binomial (mean top_k x tokens, sd sqrt(mean (1 - 1/ep)));
    // the most loaded of ep ranks sits expected_max_normal(ep) sd above the mean. That is the floor
    // of routing imbalance, a router whose balancing (auxiliary loss or bias) leaves it uniform; a
    // capacity factor caps it (tokens beyond are dropped).
    // The engine draws the slowest rank's load per seed instead (EpLayerTraffic::routing_*).
    double imbalance = 1;
    if (par.ep > 1) {
      const double mean = k * routed_tokens;
      wire.routing_cv = std::sqrt(mean * (1 - 1 / d(par.ep))) / mean;
      wire.routing_z = expected_max_normal(par.ep);
      wire.capacity_factor = model.moe.capacity_factor;
      imbalance = 1 + wire.routing_z * wire.routing_cv;
      if (model.moe.capacity_factor > 0) imbalance = std::min(imbalance, model.moe.capacity_factor);
    }
    const double rows = imbalance * k * routed_tokens * d(par.ep) / e_total;
    const double fe = d(model.moe.expert_ffn_hidden);
    const double eshapes[2][3] = {{rows, (swiglu ? 2 * fe : fe) / et, h}, {rows, h, fe / et}};
    for (const auto& s : eshapes) {
      expert_fwd += local * gemm_time_s(gpu, prec, s[0], s[1], s[2], c);
      expert_bwd += local * (gemm_time_s(gpu, prec, s[0], s[2], s[1], c) + gemm_time_s(gpu, prec, s[2], s[1], s[0], c));
    }
    wire.expert_forward_s = expert_fwd;  // the routed experts alone, at the slowest rank's load
    wire.expert_backward_s = expert_bwd;
    expert_fwd += gemm_time_s(gpu, prec, tokens, e_total, h, c);
    expert_bwd += gemm_time_s(gpu, prec, tokens, h, e_total, c) + gemm_time_s(gpu, prec, h, e_total, tokens, c);
    const double routed = k * routed_tokens * h * activation_bytes_per_value(prec);
    routed_mem = 2 * 2 * routed + act_bytes * k * routed_tokens * fe / et;  // permute + unpermute (read, write)
    // Dispatch and combine: each GPU's routed tokens (top_k copies of its tokens' hidden states) to
    // the ep ranks holding their experts and back, ranks tp x cp apart (Megatron-Core's order
    // tp-cp-ep-dp; expert_tp apart when folded: ParallelSpec::ep_stride): model::all_to_all_time_s. DeepEP: each token crosses to each other node holding
    // one of its experts once (the expected number of distinct nodes among top_k uniform picks over
    // the group's nodes, capped by node-limited routing), then NVLink carries its top_k copies; in
    // fp8 the dispatch is fp8, the combine bf16 (the mean of the two per all-to-all).
    const int64_t in_node = ep_ranks_per_node(cluster, par.ep, par.ep_stride());
    const int64_t nodes = std::max<int64_t>(1, par.ep / in_node);
    if (par.ep_dispatcher == EpDispatcher::kAllToAll) {
      a2a = all_to_all_time_s(cluster, par.ep, par.ep_stride(), routed);
      const EpLayerTraffic w = all_to_all_wire(cluster, par.ep, par.ep_stride(), routed);
      wire.peer_bytes = w.peer_bytes;
      wire.node_bytes = w.node_bytes;
      wire.latency_s = w.latency_s;
    } else if (par.ep > 1) {
      const double n = d(nodes);
      double distinct = n * (1 - std::pow(1 - 1 / n, k));
      if (model.moe.max_nodes_per_token > 0) distinct = std::min(distinct, d(model.moe.max_nodes_per_token));
      const double bytes = prec == Precision::kFp8 ? 1.5 : activation_bytes_per_value(prec);  // fp8 dispatch, bf16 combine
      a2a = ep_exchange_time_s(cluster, k * routed_tokens * h * bytes * d(in_node - 1) / d(in_node),
                               routed_tokens * h * bytes * distinct * (n - 1) / n);
      ep_wire(cluster, k * routed_tokens * h * bytes / d(in_node), in_node, routed_tokens * h * bytes * distinct / n, nodes, wire);
    }
  }

  // Attention core: counted 4 b s^2 h / (t cp) forward (flops.hpp convention).
  const Precision aprec = attention_precision(prec);
  const double attention_counted =
      2 * d(par.micro_batch) * d(model.seq_len) * d(model.seq_len) * (aw.q + aw.out) / (t * d(par.cp));  // 4 b s^2 h without MLA
  double attention_fwd = 0, attention_bwd = 0;
  if (train.flash_attention) {
    // Fused and causal: half of the counted work is executed (the FlashAttention papers' convention
    // for causal throughput); backward = 2.5 x the forward FLOPs (5 GEMMs against 2). Inside a
    // step at the in-step fraction measured for fused attention (cost_tables.yaml), not at the
    // GEMMs' fitted sustained factor.
    // The kernel's sequence: a CP rank's chunk, or under a2a the whole sequence (on fewer heads).
    const double seq = par.cp_comm == CpComm::kAllToAll ? d(model.seq_len) : d(model.seq_len) / d(par.cp);
    const double peak = gpu.peak_flops(aprec);
    const GpuCostData::Attention& kernel = data.attention_kernel(train.attention_kernel);
    const double in_step = attention_in_step_fraction();
    attention_fwd = 0.5 * attention_counted / (peak * kernel.fwd.at(seq) * in_step);
    attention_bwd = 2.5 * 0.5 * attention_counted / (peak * kernel.bwd.at(seq) * in_step);
  } else {
    const UnfusedAttentionTime u = unfused_attention_time(
        gpu, aprec, d(par.micro_batch) * d(model.heads) / t * d(model.seq_len) / d(par.cp), d(model.seq_len), head_dim(model), c);
    attention_fwd = u.fwd_s;
    attention_bwd = u.bwd_s;
  }

  // Memory-bound element-wise work; with sequence parallelism norms/dropout/residual are split by t.
  const double e_norm = par.sequence_parallel ? tokens * h / t : tokens * h;
  const double e_ffn = tokens * mlp_width / t;
  double mem_bytes = 2 * norm_bytes * e_norm + 2 * kResidualBytes * e_norm + act_bytes * e_ffn;
  // Rotary embedding on this GPU's queries and keys (none with learned positions; MLA's decoupled
  // rope dims are not counted).
  if (!model.learned_position_embedding && !model.is_mla())
    mem_bytes += (train.eager_elementwise ? ew.rope_eager : ew.rope_fused) * tokens * (aw.q + aw.k) / t;
  // Eager PyTorch copies the attention output back to token-major order for the output projection.
  if (train.eager_elementwise) mem_bytes += ew.attention_layout_eager * tokens * aw.out / t;
  if (prec == Precision::kFp8) mem_bytes += kCastBytes * (2 * tokens * h + tokens * h / t + e_ffn);
  mem_bytes += routed_mem;
  const double mem_fwd = memory_time_s(gpu, mem_bytes, c);
  const double mem_bwd = kBackwardMemoryFactor * mem_fwd;
  // The all-to-alls (dispatch + combine forward; their gradients backward) as the stack overlaps
  // them (ParallelSpec::ep_overlap): exposed; hidden under the shared experts' GEMMs (Megatron-Core
  // --moe-shared-expert-overlap); or under another micro-batch's layer compute (DeepSeek's
  // DualPipe), only the excess over that compute showing.
  double ep_fwd = 0, ep_bwd = 0;
  if (experts && a2a > 0) {
    const double shared_fwd = fwd_gemm[2] + fwd_gemm[3], shared_bwd = dgrad[2] + wgrad[2] + dgrad[3] + wgrad[3];
    const double own_fwd = gemm_fwd + expert_fwd, own_bwd = gemm_bwd + expert_bwd;
    switch (par.ep_overlap) {
      case EpOverlap::kNone: break;
      case EpOverlap::kSharedExperts:
        wire.window_forward_s = shared_fwd;
        wire.window_backward_s = shared_bwd;
        break;
      case EpOverlap::kMicroBatches:
        wire.window_forward_s = own_fwd;
        wire.window_backward_s = own_bwd;
        break;
    }
    ep_fwd = std::max(0.0, 2 * a2a - wire.window_forward_s);
    ep_bwd = std::max(0.0, 2 * a2a - wire.window_backward_s);
    wire.exposed_forward_s = ep_fwd;
    wire.exposed_backward_s = ep_bwd;
    // The hidden part still holds SMs the compute beside it loses (comm_sm_tax_s).
    if (par.ep_overlap != EpOverlap::kNone) {
      ep_fwd += comm_sm_tax_s(2 * a2a - ep_fwd, gpu);
      ep_bwd += comm_sm_tax_s(2 * a2a - ep_bwd, gpu);
    }
    wire.exchanges_forward = 2;
    wire.exchanges_backward = 2;
  }
  gemm_fwd += expert_fwd;
  gemm_bwd += expert_bwd;

  // TP: per layer two column-parallel GEMMs (QKV, MLP-up) and two row-parallel ones (out-proj,
  // MLP-down). Under SP the forward all-gathers before each column-parallel GEMM and
  // reduce-scatters after each row-parallel one; the backward reduce-scatters the column-parallel
  // input gradients, all-gathers the row-parallel output gradients, and all-gathers the SP input
  // again for the column-parallel weight gradients. Without SP: an all-reduce after each
  // row-parallel forward and after each column-parallel input gradient.
  double tp_fwd = 0, tp_bwd = 0;
  if (par.tp > 1) {
    const double act_bytes = tokens * h * activation_bytes_per_value(prec);
    // Userbuffer overlap needs NVLink between every member (NVSwitch, or a bridged pair).
    const bool nvlink = par.tp <= cluster.gpus_per_node && !pcie_hops(cluster, par.tp);
    const bool ub = train.tp_comm_overlap && nvlink;
    const Overlap bwd_async = train.tp_async_backward ? Overlap::kAsync : Overlap::kNone;
    const int col[2] = {0, 2}, row[2] = {1, 3};
    if (par.sequence_parallel) {
      const double ag = group_collective_time(cluster, Kind::kAllGather, par.tp, act_bytes);
      const double rs = group_collective_time(cluster, Kind::kReduceScatter, par.tp, act_bytes);
      // What splitting a GEMM into `parts` chunks of its rows costs: each chunk runs at its own,
      // smaller shape (cuBLAS's efficiency falls with m; kernels.yaml grids).
      auto split_cost = [&](double m, double n, double k, double whole, double parts) {
        if (whole <= 0) return 0.0;  // no such GEMM (a mixture-of-experts layer without shared experts)
        return parts * gemm_time_s(gpu, prec, m / parts, n, k, c) - whole;
      };
      for (int i : col) {
        const auto& s = shapes[i];
        if (ub) tp_fwd += split_cost(s[0], s[1], s[2], fwd_gemm[i], t);  // one chunk per rank's rows
        tp_fwd += tp_cost(ag, fwd_gemm[i], ub ? Overlap::kRingExchange : Overlap::kNone, par.tp, data);
        tp_bwd += tp_cost(ag, dgrad[i], ub ? Overlap::kBulk : bwd_async, par.tp, data);  // SP input re-gathered under dgrad
        tp_bwd += tp_cost(rs, wgrad[i], ub ? Overlap::kBulk : bwd_async, par.tp, data);  // input gradient under wgrad
      }
      for (int i : row) {
        const auto& s = shapes[i];
        if (ub) {
          tp_fwd += split_cost(s[0], s[1], s[2], fwd_gemm[i], kPipelineSplits);
          tp_bwd += split_cost(s[0], s[2], s[1], dgrad[i], t);
        }
        tp_fwd += tp_cost(rs, fwd_gemm[i], ub ? Overlap::kPipeline : Overlap::kNone, par.tp, data);
        // The output gradient is needed before this GEMM's backward: only userbuffers hide it.
        tp_bwd += tp_cost(ag, dgrad[i], ub ? Overlap::kRingExchange : Overlap::kNone, par.tp, data);
      }
    } else {
      const double ar = group_collective_time(cluster, Kind::kAllReduce, par.tp, act_bytes);
      for (int i : row) tp_fwd += tp_cost(ar, fwd_gemm[i], ub ? Overlap::kChunked : Overlap::kNone, par.tp, data);
      for (int i : col) tp_bwd += tp_cost(ar, wgrad[i], ub ? Overlap::kChunked : bwd_async, par.tp, data);
    }
  }

  // CP (ParallelSpec::cp_comm): ring attention (p2p) exchanges K and V of this GPU's heads with the
  // cp ranks step by step, each step under the attention of the chunk in hand: the first step and
  // any excess show. all_gather gathers K and V (a call each) before the attention, and in the
  // backward gathers them again and reduce-scatters dK and dV after it, all exposed. a2a exchanges
  // Q, K, V and the output all-to-all (a call each, tp apart), dO and dQ, dK, dV in the backward,
  // all exposed.
  double cp_fwd = 0, cp_bwd = 0;
  if (par.cp > 1) {
    const double kv_bytes = d(par.micro_batch) * d(model.seq_len) * (aw.k + aw.v) / t * activation_bytes_per_value(prec);
    const bool in_node = par.tp * par.cp <= cluster.gpus_per_node;
    auto cp_collective = [&](Kind kind, double bytes) {
      return in_node ? intra_collective_time_s(cluster, kind, par.cp, bytes, par.tp)
                     : inter_collective_time_s(cluster, kind, par.cp, 1, bytes);
    };
    if (par.cp_comm == CpComm::kAllToAll) {
      const double per_width = d(par.micro_batch) * d(model.seq_len) / d(par.cp) / t * activation_bytes_per_value(prec);
      double a2a = 0;
      for (double width : {aw.q, aw.k, aw.v, aw.out}) a2a += all_to_all_time_s(cluster, par.cp, par.tp, per_width * width);
      cp_fwd = a2a;
      cp_bwd = a2a;
    } else if (par.cp_comm == CpComm::kAllGather) {
      const double ag = 2 * cp_collective(Kind::kAllGather, kv_bytes / 2);
      cp_fwd = ag;
      cp_bwd = ag + 2 * cp_collective(Kind::kReduceScatter, kv_bytes / 2);
    } else {
      const double ag = cp_collective(Kind::kAllGather, kv_bytes);
      const double first = ag / d(par.cp - 1);
      cp_fwd = first + std::max(0.0, ag - first - attention_fwd);
      cp_bwd = 2 * first + std::max(0.0, 2 * (ag - first) - attention_bwd);  // K/V and their gradients
    }
  }

  // Recompute modules: their forward work again in the backward, every layer.
  double modules = 0;
  if (par.recompute_layernorm) modules += memory_time_s(gpu, 2 * norm_bytes * e_norm, c);
  if (par.recompute_mla_up_proj && model.is_mla()) {
    const double ql = d(model.mla.q_lora_rank), kl = d(model.mla.kv_lora_rank);
    const double up = (ql > 0 ? ql * aw.q : 0) + kl * d(model.heads) * d(model.mla.qk_nope_head_dim + model.mla.v_head_dim);
    modules += fwd_gemm[0] * up / aw.qkv_weights;
  }
  if (par.recompute_moe_act && experts)
    modules += memory_time_s(gpu, act_bytes * d(model.moe.top_k + model.moe.shared_experts) * tokens *
                                      d(model.moe.expert_ffn_hidden) / t, c);
  LayerTime lt;
  lt.attention_forward_s = attention_fwd;
  lt.forward_s = gemm_fwd + attention_fwd + mem_fwd + tp_fwd + cp_fwd + ep_fwd;
  lt.backward_s = gemm_bwd + attention_bwd + mem_bwd + tp_bwd + cp_bwd + ep_bwd + modules;
  lt.tp_comm_s = tp_fwd + tp_bwd + cp_fwd + cp_bwd + ep_fwd + ep_bwd;
  lt.ep_comm_s = ep_fwd + ep_bwd;
  if (wire.exchanges_forward > 0) lt.ep = wire;
  switch (par.recompute) {
    case Recompute::kNone: break;
    case Recompute::kSelective: lt.recompute_s = attention_fwd; break;
    case Recompute::kSelectiveOp:
      // wk (its share of the fused QKV GEMM), wo, w3 (half of the fused gate+up GEMM; gelu: fc2)
      // and every memory-bound op again (flops.cpp layer_recompute_flops).
      lt.recompute_s = fwd_gemm[0] * aw.k / (aw.q + aw.k + aw.v) + fwd_gemm[1] + (swiglu ? fwd_gemm[2] / 2 : fwd_gemm[3]) + mem_fwd;
      if (!par.sac_saves_attention) lt.recompute_s += attention_fwd;  // not kept: run again (spec.hpp)
      break;
    case Recompute::kFull:
      lt.recompute_s = lt.forward_s;
      lt.tp_comm_s += tp_fwd + cp_fwd + ep_fwd;
      lt.ep_comm_s += ep_fwd;
      // The recomputed forward exchanges again, under its own window, in the backward pass.
      if (lt.ep.exchanges_forward > 0) {
        lt.ep.exchanges_backward += lt.ep.exchanges_forward;
        lt.ep.exposed_backward_s += lt.ep.exposed_forward_s;
        lt.ep.window_backward_s += lt.ep.window_forward_s;
        lt.ep.expert_backward_s += lt.ep.expert_forward_s;
      }
      break;
  }
  return lt;
}

EndTime embedding_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                       const hardware::ClusterSpec& cluster, const Calibration& c) {
  const double tokens = d(par.micro_batch) * d(model.seq_len) / d(par.cp);
  const double bytes = tokens * d(model.hidden) * activation_bytes_per_value(train.precision);
  EndTime e;
  // Lookup writes the activations; backward scatters the gradient into the table (read + write).
  e.forward_s = memory_time_s(cluster.gpu, bytes, c);
  e.backward_s = memory_time_s(cluster.gpu, 2 * bytes, c);
  if (par.tp > 1) {
    // Vocab-parallel embedding: partial rows summed over TP (reduce-scatter under SP), with no GEMM
    // to hide under.
    const Kind kind = par.sequence_parallel ? Kind::kReduceScatter : Kind::kAllReduce;
    e.tp_comm_s = group_collective_time(cluster, kind, par.tp, bytes);
    e.forward_s += e.tp_comm_s;
  }
  return e;
}

EndTime output_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                    const hardware::ClusterSpec& cluster, const Calibration& c) {
  const hardware::GpuSpec& gpu = cluster.gpu;
  const Precision prec = train.precision;
  const double t = d(par.tp);
  const double tokens = d(par.micro_batch) * d(model.seq_len) / d(par.cp);
  const double h = d(model.hidden);
  const double v = d(model.vocab) / t;
  // The output layer stays in 16-bit even in fp8 recipes.
  const Precision gemm_prec = attention_precision(prec);
  EndTime e;
  const double dgrad = gemm_time_s(gpu, gemm_prec, tokens, h, v, c);
  const double wgrad = gemm_time_s(gpu, gemm_prec, h, v, tokens, c);
  const double norm_bytes = layer_norm_bytes(model, train) * tokens * h;  // the final norm
  e.forward_s = gemm_time_s(gpu, gemm_prec, tokens, v, h, c) + memory_time_s(gpu, kLossForwardBytes * tokens * v + norm_bytes, c);
  e.backward_s = dgrad + wgrad + memory_time_s(gpu, kLossBackwardBytes * tokens * v + kBackwardMemoryFactor * norm_bytes, c);
  if (par.tp > 1) {
    // Input of the column-parallel output layer: all-gathered under SP (exposed: the GEMM needs it),
    // its gradient reduce-scattered (all-reduced without SP) under the weight-gradient GEMM.
    const double bytes = tokens * h * activation_bytes_per_value(prec);
    const double fwd = par.sequence_parallel ? group_collective_time(cluster, Kind::kAllGather, par.tp, bytes) : 0;
    const double bwd_comm =
        group_collective_time(cluster, par.sequence_parallel ? Kind::kReduceScatter : Kind::kAllReduce, par.tp, bytes);
    const double bwd = std::max(0.0, bwd_comm - wgrad);
    e.tp_comm_s = fwd + bwd;
    e.forward_s += fwd;
    e.backward_s += bwd;
  }
  return e;
}

double host_copy_Bps(const hardware::GpuSpec& gpu) {
  const HostCostData& host = host_cost_data();
  const auto it = host.link_copy_scale.find(gpu.name);
  return gpu.pcie_bandwidth_Bps * (it != host.link_copy_scale.end() ? it->second : host.pcie_copy_efficiency);
}

double optimizer_time_s(double params, const TrainingSpec& train, const hardware::ClusterSpec& cluster,
                        const Calibration& c) {
  const double g = grad_bytes_per_param(train);
  const double copy = activation_bytes_per_value(train.precision);
  // Adam: read+write fp32 master, m, v (24), read the gradient, write the 16-bit copy.
  // SGD: read+write master and momentum (16), read the gradient, write the copy.
  const double state_bytes = train.optimizer == Optimizer::kAdam ? 24 : 16;
  if (train.offload == Offload::kNone) return memory_time_s(cluster.gpu, params * (state_bytes + g + copy), c);
  // Offloaded: the gradients down and the 16-bit weights back over PCIe, the update on the host;
  // from NVMe the states are read in (half the state bytes) and written back (the other half).
  const HostCostData& host = host_cost_data();
  const double on_host =
      params * (g + copy) / host_copy_Bps(cluster.gpu) + params * (state_bytes + g + copy) / host.cpu_optimizer_Bps;
  if (train.offload != Offload::kNvme) return on_host;
  return on_host + params * state_bytes / 2 * (1 / host.nvme_read_Bps + 1 / host.nvme_write_Bps);
}

}  // namespace trainsim::model
