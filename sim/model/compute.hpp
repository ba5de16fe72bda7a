// How long each piece of a transformer layer takes on one GPU: the calibrated part of the model.
//
//  - GEMMs: roofline with a per-kernel overhead,
//        t = max(2mnk / (peak(precision) * e_gemm), bytes(m,n,k) / (HBM * e_hbm)) + t_kernel
//    so the efficiency 2mnk/peak/t saturates towards e_gemm for large GEMMs and falls for small or
//    skinny ones (after TP splitting), and falls faster on a faster GPU (t_kernel is fixed).
//    fp8 GEMMs run at the fp8 peak with e_gemm * fp8_gemm_factor and pay casts (memory-bound).
//  - Attention core: with flash_attention (fused, causal: half of the counted s^2 work is executed)
//    at the 16-bit peak with its own efficiency, backward = 2.5 x forward (it recomputes the scores);
//    without, batched QK^T / PV GEMMs plus softmax and dropout passes over the s x s scores.
//  - Memory-bound ops (norms, activation, dropout + residual, fp8 casts, loss, optimizer): bytes /
//    (HBM * e_hbm).
//  - TP collectives (Megatron: 2 all-reduces forward + 2 backward per layer; with sequence parallelism
//    2 all-gathers + 2 reduce-scatters each way, same volume) at the NVSwitch/PCIe achieved bus
//    bandwidth. With tp_comm_overlap a calibrated fraction stays exposed; without, the forward ones
//    are exposed and the backward ones hide under the weight-gradient GEMM of their layer.
//  - CP: K/V all-gather forward and reduce-scatter of their gradients backward over the cp ranks,
//    overlapped with the attention core (ring attention): only the excess is exposed.
// Pure: no SimGrid, no logging.
#pragma once

#include <cstdint>

#include "collectives/collectives.hpp"
#include "hardware/cluster.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

// The calibrated constants (values and how they were fitted: compute.cpp).
struct Calibration {
  double gemm_efficiency = 0;        // e_gemm: fraction of the dense peak a large 16-bit GEMM sustains
  double gemm_kernel_s = 0;          // t_kernel: fixed cost per GEMM (launch, wave-quantisation tail)
  double fp8_gemm_factor = 0;        // fp8 GEMM efficiency relative to 16-bit
  double attention_efficiency = 0;   // flash-attention forward, fraction of the 16-bit peak
  double attention_backward_factor = 0;  // attention backward time / forward time
  double hbm_efficiency = 0;         // e_hbm: achieved fraction of HBM bandwidth
  double tp_comm_exposed = 0;        // with tp_comm_overlap: fraction of TP collective time not hidden
  double intra_busbw_factor_nvls = 0;  // achieved bus bandwidth / link (NVSwitch with in-switch reduction)
  double intra_busbw_factor = 0;       // achieved bus bandwidth / link (NVSwitch without, or PCIe)
  double collective_call_s = 0;      // fixed cost per NCCL call
  double inter_efficiency = 0;       // achieved fraction of the NIC bandwidth inter-node
  double step_overhead_s = 0;        // per-step fixed cost (data loading, logging, launch of the step)
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

// Achieved link parameters of a collective inside a node (NVSwitch or PCIe) and across nodes (per GPU
// NIC share). Latency includes the per-call cost once per algorithm step.
collectives::LinkParams intra_link(const hardware::ClusterSpec& cluster, collectives::Kind kind,
                                   const Calibration& c = default_calibration());
collectives::LinkParams inter_link(const hardware::ClusterSpec& cluster, const Calibration& c = default_calibration());
// One collective over n ranks of one node, ring at the achieved bus bandwidth, plus the per-call cost.
double intra_collective_time_s(const hardware::ClusterSpec& cluster, collectives::Kind kind, int64_t n, double bytes,
                               const Calibration& c = default_calibration());

// Per-GPU cost of one transformer layer for one micro-batch.
struct LayerTime {
  double forward_s = 0;     // GEMMs + attention + memory-bound + exposed TP/CP comm
  double backward_s = 0;    // same for the backward, without recompute
  double recompute_s = 0;   // extra backward time re-running forward work (full or selective)
  double tp_comm_s = 0;     // exposed TP/CP collective time, forward + backward (+ recompute)
  double attention_forward_s = 0;  // attention core alone (what selective recompute re-runs)
};
LayerTime layer_time(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                     const hardware::ClusterSpec& cluster, const Calibration& c = default_calibration());

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

// Optimizer step over `params` parameters on one GPU: HBM-bound over its states (Adam: fp32 master,
// m, v, gradient, 16-bit copy; SGD: master, momentum, gradient, copy); with offload the gradients go
// to the host and the 16-bit weights come back over PCIe, and the host update runs at
// kHostOptimizerBps.
double optimizer_time_s(double params, const TrainingSpec& train, const hardware::ClusterSpec& cluster,
                        const Calibration& c = default_calibration());

// Bytes per gradient element reduced over DP: 4 with fp32 main grads or fp32 training, else 2.
double grad_bytes_per_param(const TrainingSpec& train);
// Bytes per value of activations exchanged between stages and of the 16-bit weight copy (fp8 trains
// with bf16 activations and weights).
double activation_bytes_per_value(Precision p);

}  // namespace trainsim::model
