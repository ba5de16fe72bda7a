// How long each piece of a transformer layer takes on one GPU, from component measurements
// (model/cost_data.hpp: sim/hardware/data/*.yaml), with at most three constants fitted end to end.
//
//  - GEMMs: 2mnk / (peak(precision) * e(m, n, k) * sustained), e measured per GPU generation and
//    precision (XLA's GEMM tables, the "maximum achievable matmul FLOPS" plateau). Measured kernel
//    times, so small and skinny GEMMs carry their own launch and wave-quantisation losses.
//  - Attention core: fused flash attention at the measured forward / backward throughput of the
//    kernel the generation runs (FA2 on A100, FA3 / cuDNN on Hopper), against sequence length; causal
//    (half the counted s^2 work executed, the papers' convention). Unfused: batched GEMMs from the
//    table plus softmax/dropout passes over the s x s scores.
//  - Memory-bound ops (norms, activation, rotary embedding, dropout + residual, fp8 casts, loss,
//    optimizer): bytes / (HBM * measured streaming efficiency), the bytes of one fused kernel per op
//    or, in eager PyTorch (TrainingSpec::eager_elementwise), of one kernel per operator
//    (cost_tables.yaml elementwise).
//  - TP/SP communication is its own term (LayerTime::tp_comm_s, breakdown_s.tp_comm): each
//    collective at the NCCL bus bandwidth measured on the node's fabric for its message size; on a
//    PCIe bridge every GPU of the node shares it at the same moment. Overlap as the stacks do it:
//    with tp_comm_overlap on NVLink/NVSwitch (TE userbuffers), each collective is split into tp
//    chunks pipelined with its GEMM: one chunk and any excess over the GEMM stay exposed, and the
//    GEMM runs slower while the communication kernels hold SMs. On PCIe, or without the overlap,
//    Megatron's asynchronous TP: backward collectives overlap the GEMM beside them, forward ones are
//    exposed.
//  - CP: K/V ring exchange overlapped with the attention chunks: the first step and the excess show.
// Pure: no SimGrid, no logging.
#pragma once

#include <cstdint>

#include "collectives/collectives.hpp"
#include "hardware/cluster.hpp"
#include "model/spec.hpp"
#include "model/step_costs.hpp"

namespace trainsim::model {

// The constants fitted to end-to-end rows: two (the rules allow three), each a named physical effect
// with its plausible range (values and how they were fitted: compute.cpp). Two others were tried and
// fitted to 0, and dropped rather than kept at a value that makes the effect vanish: per-layer host
// dispatch gaps (0-150 us), and, until 2026-12-07, a fixed host time once per step (0.01-0.30 s,
// fitted 0.10-0.12 s while it stood alone; 0 beside the replica jitter below, and Zero Bubble's
// single pipelines of 2 to 16 micro-batches, validation only, leave none: their steps are the
// measured bubble plus their micro-batches). A per-pass host gap in pipelines (0-1.5 ms) fits to 0
// on the fitted sources too, though Zero Bubble's interleaved rows measure ~0.3 ms per extra pass.
struct Calibration {
  // GEMM throughput sustained inside a training step relative to the isolated "maximum achievable"
  // benchmark: power and thermal clock limits under sustained load, L2/HBM contention with the
  // communication kernels running beside the GEMMs, the framework's kernel gaps. Plausible 0.70-1.00.
  // Fused attention has its own measured in-step fraction (cost_tables.yaml attention_in_step).
  double sustained_compute = 0;
  // The data-parallel replicas' step-time jitter, seconds (one standard deviation): each replica's
  // hosts run the step's Python, data loading, kernel launches and collectives' set-up with
  // independent delays, and the step's gradient reduction, which joins the dp x cp ranks holding the
  // same weights, waits for the slowest: the expected maximum of dp x cp normal draws
  // (model::replica_wait_s; 1.42 sd for 8, 2.34 for 64, 3.25 for 1,024), once per step. That
  // stragglers other than failed hardware stall synchronous LLM training is what ByteDance's
  // five-month trace shows (Lin et al., "Understanding Stragglers in Large Model Training Using
  // What-if Analysis", OSDI '25, arXiv 2505.05713); no public measurement gives the per-step spread
  // of the eager PyTorch stacks of the validation set, so it is fitted. Absolute, not a fraction of
  // the step: a share of the step (0-10%) fits far worse (mean over sources 5.6% against 3.7%).
  // Plausible 0-0.10 s. Fitted on steps of 0.3 s and more: stacks that run a step without per-step
  // Python (CUDA graphs, as MLPerf's) keep far less.
  double replica_jitter_s = 0;

  auto operator<=>(const Calibration&) const = default;
};

// The one set of constants every scenario uses.
const Calibration& default_calibration();

// Time of one GEMM C[m x n] = A[m x k] B[k x n] on one GPU.
double gemm_time_s(const hardware::GpuSpec& gpu, Precision precision, double m, double n, double k,
                   const Calibration& c = default_calibration());
// 2mnk / (peak * time): the efficiency the model gives this shape.
double gemm_efficiency(const hardware::GpuSpec& gpu, Precision precision, double m, double n, double k,
                       const Calibration& c = default_calibration());
// Time to move `bytes` through HBM.
double memory_time_s(const hardware::GpuSpec& gpu, double bytes, const Calibration& c = default_calibration());

// Time of one NCCL collective over n ranks of one node, `stride` GPUs apart (S = the nccl-tests
// buffer size): the ring volume at the bus-bandwidth ratio measured on the fabric for that size, of
// what each ring flow gets over its route while every group of the node runs the same collective
// (hardware::ring_share: the links the platform builder makes).
double intra_collective_time_s(const hardware::ClusterSpec& cluster, collectives::Kind kind, int64_t n, double bytes,
                               int64_t stride = 1);
// What the engine multiplies a ring edge's bytes by inside a node so that its flows, at the
// platform's link rates, take intra_collective_time_s: 1 / the measured bus-bandwidth ratio.
double intra_wire_factor(const hardware::ClusterSpec& cluster, collectives::Kind kind, int64_t n, double bytes,
                         int64_t stride = 1);
// The same over n ranks spread one per node over `nodes` nodes (or hierarchical when several ranks
// share a node): NCCL's ring latency (base + one hop per step) and the NIC share at the efficiency
// measured for the bytes each rank sends.
double inter_collective_time_s(const hardware::ClusterSpec& cluster, collectives::Kind kind, int64_t n,
                               int64_t ranks_per_node, double bytes);
// What a ring collective adds to its flows on the network, for the engine: the latency to wait
// before them, and the factor by which NCCL's protocol overhead inflates the bytes on the wire.
struct NetCallCost {
  double latency_s = 0;
  double wire_factor = 1;  // >= 1: bytes on the wire / payload
};
NetCallCost net_call_cost(const hardware::ClusterSpec& cluster, collectives::Kind kind, int64_t n, int64_t ranks_per_node,
                          double bytes);
// One point-to-point message (pipeline activations) inside a node or across nodes, and what it adds
// to its flow in the engine (p2p_time_s = its latency + wire bytes over the link).
double p2p_time_s(const hardware::ClusterSpec& cluster, bool inter_node, double bytes);
NetCallCost p2p_call_cost(const hardware::ClusterSpec& cluster, bool inter_node, double bytes);

// The expected largest of n independent standard normal draws (0 for n <= 1): 1/sqrt(pi) for 2,
// 1.4236 for 8, 1.5388 for 10 (Harter's tables, Biometrika 48:151, 1961), 2.3437 for 64.
double expected_max_normal(int64_t n);

// The step's wait for the slowest replica at its gradient reduction: the replicas' step-time
// jitter (Calibration::replica_jitter_s) times the expected maximum of the dp x cp draws of the
// ranks that reduction joins. The one place that says which ranks those are.
double replica_wait_s(const ParallelSpec& par, double jitter_s);

// Per-GPU cost of one transformer layer for one micro-batch.
struct LayerTime {
  double forward_s = 0;     // GEMMs + attention + memory-bound + exposed TP/CP comm
  double backward_s = 0;    // same for the backward, without recompute
  double recompute_s = 0;   // extra backward time re-running forward work (full or selective)
  double tp_comm_s = 0;     // of which exposed TP/CP communication (and the SM share it takes from
                            // overlapped GEMMs), forward + backward + recompute
  double attention_forward_s = 0;  // attention core alone (what selective recompute re-runs)
  double ep_comm_s = 0;     // of tp_comm_s, the exposed expert-parallel all-to-alls (MoE layers)
  EpLayerTraffic ep;        // the same exchanges for the engine (empty without ep > 1)
};
// `moe`: the model's mixture-of-experts layer (ModelSpec::moe) instead of its dense one.
LayerTime layer_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                     const hardware::ClusterSpec& cluster, const Calibration& c = default_calibration(), bool moe = false);

// One all-to-all over `ep` ranks `stride` GPUs apart in rank order, each sending `bytes` spread
// evenly over the group (its own share stays): the part to ranks in its node over the NVLink /
// PCIe pair route, the part to other nodes over the GPU's NIC share, concurrently; the slower
// shows (p2p_time_s each: latency once, the measured p2p efficiency for the size).
double all_to_all_time_s(const hardware::ClusterSpec& cluster, int64_t ep, int64_t stride, double bytes);
// The same all-to-all on the wire for the engine: payload / the achieved fraction to each in-node
// member and, per other node, to its member on the GPU's rail; the latency once.
EpLayerTraffic all_to_all_wire(const hardware::ClusterSpec& cluster, int64_t ep, int64_t stride, double bytes);

// Per-GPU cost of the embedding lookup (forward, backward) and of final norm + logits + loss.
struct EndTime {
  double forward_s = 0;
  double backward_s = 0;
  double tp_comm_s = 0;
};
EndTime embedding_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                       const hardware::ClusterSpec& cluster, const Calibration& c = default_calibration());
EndTime output_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                    const hardware::ClusterSpec& cluster, const Calibration& c = default_calibration());

// What a pinned copy between the host and this GPU moves per second, per direction: its x16 link
// at cost_tables.yaml host.pcie_copy_efficiency, or the rate measured on a GPU whose host link is not
// PCIe (host.link_copy_GBps: GB200's NVLink-C2C) (optimizer and activation offload).
double host_copy_Bps(const hardware::GpuSpec& gpu);

// Optimizer step over `params` parameters on one GPU: HBM-bound over its states (Adam: fp32 master,
// m, v, gradient, 16-bit copy; SGD: master, momentum, gradient, copy); with offload the gradients go
// to the host and the 16-bit weights come back over PCIe, and the host update runs at
// cost_tables.yaml host.cpu_optimizer_GBps.
double optimizer_time_s(double params, const TrainingSpec& train, const hardware::ClusterSpec& cluster,
                        const Calibration& c = default_calibration());

// Bytes per gradient element reduced over DP: 4 with fp32 main grads or fp32 training, else 2.
// Time the compute beside `hidden_s` of hidden communication loses while the NCCL kernels hold SMs
// (one per channel): hidden x comm_sms / (sms - comm_sms), comm_sms = cost_tables.yaml
// tp_overlap_sms. TP collectives (layer_time) and hidden DP traffic (step_estimate) alike.
double comm_sm_tax_s(double hidden_s, const hardware::GpuSpec& gpu);

double grad_bytes_per_param(const TrainingSpec& train);
// Bytes per value of activations exchanged between stages and of the 16-bit weight copy (fp8 trains
// with bf16 activations and weights).
double activation_bytes_per_value(Precision p);

}  // namespace trainsim::model
