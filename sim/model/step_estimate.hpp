// Closed-form step time: the same decomposition the engine plays on a SimGrid timeline, so the
// engine can be checked against it.
//
//   step = compute + bubble + exposed_comm + optimizer (+ fixed per-step overhead, in compute)
//   compute = m (tf + tb)                       tf, tb: forward / backward (incl. recompute) of one
//   bubble  = (p - 1) (tf + tb)   1F1B/GPipe     micro-batch on the slowest stage, summed over its
//           = (p - 1)/v (tf + tb) interleaved    chunks (Megatron SC21 Eq.1 and Sec. 2.2)
//   pp_comm = 2 (m v + p - 1) t_p2p: blocking boundary sends on the critical path (each micro-batch
//             slot sends its activations forward and its gradient back), t_p2p the mean over the
//             chunk boundaries crossed (intra- or inter-node), 0 when p = 1
//   dp_comm = gradient sync of the slowest stage over the dp x cp replicas (they hold the same weights):
//             ring all-reduce (ZeRO 0) or reduce-scatter + all-gather (ZeRO 1/2, same volume), over the
//             NIC share per GPU, hierarchical when several replicas share a node (layout: tp fastest,
//             then cp, dp, pp), every bucket call paying NCCL's ring latency (model/compute.hpp).
//             Hybrid sharding (ParallelSpec::shard_degree): reduce-scatters and gathers within the
//             shard group, each rank's reduced share then all-reduced across the groups.
//             ZeRO 2 reduce-scatters every micro-batch. ZeRO 3 gathers each layer's weights before its
//             forward and its backward and reduce-scatters its gradients after the backward, every
//             micro-batch, one layer prefetched: exposed are the first layer's gather and, for each
//             later layer, its calls' NCCL latency and their bandwidth part's excess over its compute
//             (zero3_layer_latency). Aggregation oversubscription is not modelled here.
//   exposed = with overlap_grad_reduce: only what does not fit under the last micro-batch's backward
//             (the reduction) or under the step's first forward pass (the ZeRO 1/2 weight
//             all-gather, Megatron's overlap_param_gather; with a 1F1B pipeline also under the
//             last stage's first backward, which follows its first forward and absorbs the first
//             stage's wait), and at least the last bucket of each
//             (grad_bucket_params, Megatron-Core's default); without: all of it.
//   tax     = what DP traffic hides under compute still takes the SMs its NCCL kernels hold:
//             min(hidden, compute) x comm_sms / (sms - comm_sms), as for TP (model/compute.cpp),
//             counted in exposed_comm; the engine adds the same figure (one cost interface).
//   tflops_per_gpu = model FLOPs (no recompute) / (gpus step); mfu against the dense peak of the
//   precision; hfu with recompute FLOPs.
#pragma once

#include <algorithm>

#include "collectives/collectives.hpp"
#include "hardware/cluster.hpp"
#include "model/spec.hpp"
#include "model/step_costs.hpp"

namespace trainsim::model {

struct StepEstimate {
  double step_s = 0;
  double compute_s = 0;         // m (tf + tb) on the slowest stage, + per-step overhead
  double bubble_s = 0;
  double exposed_comm_s = 0;    // pp_comm_s + exposed part of dp_comm_s
  double optimizer_s = 0;
  double pp_comm_s = 0;
  double dp_comm_s = 0;         // whole DP sync time (exposed or not)
  double dp_overlap_tax_s = 0;  // compute lost to the SMs NCCL holds while DP traffic hides under it (in exposed_comm_s)
  double tflops_per_gpu = 0;    // model FLOP/s per GPU (SI, despite the name): model FLOPs / (gpus * step_s)
  double mfu = 0;
  double hfu = 0;
};

// Megatron's default gradient bucket, in parameters: 40M, grown with the data-parallel size to
// max(40M, 1M x dp x cp) so that collectives do not become latency-bound (Megatron-Core
// DistributedDataParallelConfig.bucket_size default).
inline constexpr double kGradBucketParams = 40e6;
inline double grad_bucket_params(const ParallelSpec& par) {
  return std::max(kGradBucketParams, 1e6 * static_cast<double>(par.dp * par.cp));
}

// REQUIRES: the spec is validated (divisibility, ranges).
StepEstimate estimate_step(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                           const hardware::ClusterSpec& cluster);
// Same from costs already computed (with the constants they were computed with).
StepEstimate estimate_step(const StepCosts& costs, const ModelSpec& model, const ParallelSpec& par,
                           const TrainingSpec& train, const hardware::ClusterSpec& cluster);
StepEstimate estimate_step(const StepCosts& costs, const ModelSpec& model, const ParallelSpec& par,
                           const TrainingSpec& train, const hardware::ClusterSpec& cluster,
                           const Calibration& calibration);

// Time of one gradient reduction call over the replicas: an all-reduce (ZeRO 0) or a
// reduce-scatter (ZeRO 1-3) of `bytes` per GPU, with NCCL's latency.
double grad_reduce_time_s(double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster);

// NCCL's ring latency of one DP call of `kind` (all-reduce, reduce-scatter, all-gather) of `bytes`
// per GPU over the replicas: under hybrid sharding a reduce-scatter pays the shard group's and
// the cross-group all-reduce's.
double dp_call_latency_s(collectives::Kind kind, double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster);

// ZeRO-3 / FSDP: the NCCL latency one layer's collectives put on the critical path, each layer after
// a pass's first (the bandwidth part hides under the previous layer's compute; model/step_estimate.cpp
// says why the latency is charged): forward, its weights' all-gather; backward, the all-gather and
// its gradients' reduce-scatter. `param_bytes` and `grad_bytes`: one layer's, per GPU.
struct Zero3Latency {
  double forward_s = 0;
  double backward_s = 0;
};
Zero3Latency zero3_layer_latency(double param_bytes, double grad_bytes, const ParallelSpec& par,
                                 const hardware::ClusterSpec& cluster);

// Time of the DP gradient sync (one all-reduce or RS + AG) of `bytes` per GPU over the replicas.
double dp_sync_time_s(double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster);
double dp_sync_time_s(double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster,
                      const Calibration& calibration);

}  // namespace trainsim::model
