// What one training step costs on one GPU, phase by phase: the bridge between the analytic
// models (FLOPs, GEMM efficiency, memory-bound ops, folded TP/CP collectives) and the engine,
// which places these phases on a SimGrid timeline. Pure: no SimGrid, no logging.
#pragma once

#include <cstdint>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

struct Calibration;  // model/compute.hpp

// Expert-parallel exchanges of a mixture-of-experts layer (or, summed, of a chunk's MoE layers) as
// the engine puts them on the network, one micro-batch, one GPU. The closed form folds them into
// the pass times; the engine takes the folded part out and sends the bytes as flows instead.
// Counts and times add over layers; bytes, latency and routing are per exchange (alike in a chunk).
struct EpLayerTraffic {
  int64_t exchanges_forward = 0;   // all-to-alls in the forward: dispatch and combine
  int64_t exchanges_backward = 0;  // in the backward: their gradients (and the recomputed forward's)
  double peer_bytes = 0;   // per exchange, on the wire to each other ep rank in the node
  double node_bytes = 0;   // per exchange, on the wire to each other node of the group, to its GPU of
                           // the same local index (DeepEP, and NCCL's PXN: the NIC on the rail)
  double latency_s = 0;    // per exchange, before its bytes (the slower side's: NIC when there is one)
  double exposed_forward_s = 0;   // the all-to-all time folded into forward_s (without the SM tax)
  double exposed_backward_s = 0;  // into backward_s + recompute_s
  double window_forward_s = 0;    // compute of the pass they hide under (ParallelSpec::ep_overlap)
  double window_backward_s = 0;
  double expert_forward_s = 0;    // routed-expert GEMMs of the pass at the slowest rank's expected load
  double expert_backward_s = 0;   // (and of the recomputed forward under full recompute)
  double routing_cv = 0;          // sd / mean of one ep rank's routed rows (uniform routing)
  double routing_z = 0;           // how many sd above the mean the slowest rank is taken to be
  double capacity_factor = 0;     // the cap on a rank's load over the mean (0: dropless)
};

// Cost of one model chunk (a run of consecutive layers on one pipeline rank) for ONE micro-batch.
// With interleaving a pipeline rank holds `virtual_stages` chunks; otherwise one.
struct ChunkCost {
  int64_t first_layer = 0;     // global index of its first transformer layer
  int64_t layers = 0;          // transformer layers in the chunk
  bool has_embedding = false;  // first chunk of the model
  bool has_output = false;     // last chunk: final norm, output projection, loss
  double forward_s = 0;        // forward compute incl. folded TP/CP collectives
  double backward_s = 0;       // backward compute incl. recompute and folded TP/CP collectives
  double forward_flops = 0;    // model FLOPs (no recompute) of the forward, per GPU
  double backward_flops = 0;   // model FLOPs of the backward (2x forward), per GPU
  double recompute_flops = 0;  // extra FLOPs re-run in backward, per GPU
  double offload_s = 0;        // exposed activation offload copies (in forward_s + backward_s), per micro-batch
  double tp_comm_s = 0;        // of which folded TP/CP collective time (forward + backward)
  double activation_bytes = 0; // bytes sent to the next chunk per micro-batch (forward); same back
  double param_count = 0;      // parameters held by one GPU for this chunk (after TP split)
  EpLayerTraffic ep;           // its MoE layers' expert-parallel exchanges (folded in the times above)
};

// Cost of the whole step for one pipeline rank (stage).
struct StageCost {
  std::vector<ChunkCost> chunks;   // in model order; size = virtual_stages (interleaved) or 1
  double grad_bytes = 0;           // gradient bytes one GPU of this stage reduces over DP per step
  double param_bytes = 0;          // 16-bit parameter bytes one GPU holds (ZeRO-3 all-gathers these)
  double optimizer_s = 0;          // optimizer step time on one GPU (HBM-bound; offload adds PCIe)
};

struct StepCosts {
  std::vector<StageCost> stages;  // size = pp
  int64_t micro_batches = 0;      // per pipeline per step = global_batch / (dp * micro_batch)
  double model_flops_per_step = 0;  // whole model, whole global batch, no recompute (MFU numerator)
  double tokens_per_step = 0;       // global_batch * seq_len
  double step_overhead_s = 0;       // fixed cost once per step (the wait for the slowest replica, the
                                    // gradient-norm all-reduce); counted as compute, on every stage,
                                    // before the first forward
};

// REQUIRES: the spec is validated (config/ guarantees divisibility and ranges).
StepCosts compute_step_costs(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                             const hardware::ClusterSpec& cluster);
// Same with explicit constants instead of default_calibration() (calibration searches, tests).
StepCosts compute_step_costs(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                             const hardware::ClusterSpec& cluster, const Calibration& calibration);

}  // namespace trainsim::model
