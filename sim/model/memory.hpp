// Memory per GPU during training: model states (weights, gradients, optimizer states),
// activations held between forward and backward, and the runtime reserve plus temporary buffers.
// Pure: no logging, no SimGrid. All sizes in bytes (1 GB = 1e9 B).
//
// Accounting (the choices, with their sources; derivations are in memory.cpp):
//  - Model states follow the ZeRO paper (Rajbhandari et al. SC20, published_runs.yaml
//    reference_formulas.zero_sc20): mixed-precision Adam = 2 (16-bit weights) + 2 (16-bit
//    gradients) + 12 (fp32 master weights, momentum, variance) bytes per parameter.
//    training.fp32_main_grads: Megatron's fp32 main gradients, 4 bytes in place of the 16-bit 2
//    (Megatron-LM dist_optimizer.md: bf16 parameters with fp32 gradients = 18 bytes, 6 + 12/d).
//    fp32 training: 4 + 4 + 8 (Adam moments, no master copy). fp8 is accounted like bf16 (16-bit
//    weights, gradients and activations; Transformer Engine's fp8 weight casts are transient).
//    SGD: no momentum; mixed precision keeps the 4-byte fp32 master copy, fp32 training keeps nothing.
//  - ZeRO shards over the dp * cp ranks that hold the same weights (Megatron's distributed
//    optimizer shards over DP x CP): stage 1 optimizer states, 2 also gradients, 3 also weights.
//    CP ranks hold the full weights of their stage. Offload (cpu | nvme) moves the optimizer states
//    off the GPU: they count 0 here and are reported in `offloaded_bytes`.
//  - Parameters: transformer layers split over pp (see stage_layer_counts), weights of linear
//    layers and the vocabulary-parallel embedding divided by tp; norms and the learned position
//    table replicated. The embedding lives on the first stage; the final norm and the output layer
//    on the last. Tied embeddings: when pp > 1 the last stage holds its own copy of the embedding
//    for the output projection (as Megatron does); with pp = 1 the one copy serves both.
//  - Activations: Korthikanti et al. 2022 (reference_formulas.korthikanti22), generalized to GQA
//    and SwiGLU; models with ffn = swiglu follow the Llama convention of transformer.hpp and also
//    have no dropout (no dropout masks, no attention-dropout tensors).
//  - other = the runtime reserve (CUDA context, library workspaces, NCCL buffers of each
//    communicator, caching-allocator fragmentation as a fraction of what is allocated; parts and
//    sources in model/memory_data.hpp and sim/hardware/data/memory.yaml, or the lump
//    training.runtime_reserve) + temporary communication buffers (ZeRO-2 gradient bucket, ZeRO-3
//    all-gather/reduce-scatter buffers).
#pragma once

#include <cstdint>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/memory_data.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

// Bytes per GPU, for one pipeline rank (by default the busiest one).
struct MemoryBreakdown {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double other = 0;  // = reserve_bytes + buffer_bytes

  // Detail (for reports; not part of total()).
  int64_t stage = 0;                  // pipeline rank these bytes are for
  int64_t layers = 0;                 // transformer layers on that rank
  bool has_embedding = false;         // first stage
  bool has_output = false;            // last stage
  double params = 0;                  // parameters one GPU of the rank holds before ZeRO sharding
  double in_flight_micro_batches = 0; // micro-batches whose activations the rank holds at its peak
  int64_t recomputed_layers = 0;      // of `layers`, those that recompute (all unless recompute_num_layers)
  double full_layer_activation_bytes = 0;  // what a layer that does not recompute keeps, per micro-batch
                                      // (interleaved: chunk-micro-batches divided by v)
  double layer_activation_bytes = 0;  // kept per layer per micro-batch (layer_activation_bytes())
  double reserve_bytes = 0;           // runtime reserve: reserve.total()
  RuntimeReserve reserve;             // its parts (with a cluster; else the fixed lump or 0)
  double buffer_bytes = 0;            // temporary communication buffers
  double offloaded_bytes = 0;         // optimizer states moved to `offload_to` (0 when none)
  double offloaded_activation_bytes = 0;  // activations in host memory at the peak (activation_offload_layers)
  Offload offload_to = Offload::kNone;

  double model_states() const { return weights + gradients + optimizer; }
  double total() const { return weights + gradients + optimizer + activations + other; }
};

// Bytes per parameter of each model state before any sharding (see the header comment).
struct StateBytesPerParam {
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double total() const { return weights + gradients + optimizer; }
};
StateBytesPerParam state_bytes_per_param(const TrainingSpec& train);

// Model states of `params` parameters with ZeRO `zero` over `shard_ranks` ranks (ZeRO paper
// Sec. 5: stage 1 Pos, 2 Pos+g, 3 Pos+g+p). Only weights/gradients/optimizer/offloaded_bytes are
// set. REQUIRES: shard_ranks >= 1, 0 <= zero <= 3.
MemoryBreakdown model_states(double params, const TrainingSpec& train, int zero, int64_t shard_ranks);

// Transformer layers per pipeline rank: the layers are split over pp * v model chunks as evenly
// as possible, the leftover shortfall taken one layer at a time from the first chunk, the last,
// the second, the second to last, ... (126 over 16 = [7, 8 x 14, 7]); rank r holds chunks
// r, r + pp, ... (Megatron's interleaved placement). Must agree with parallel/'s split_layers.
// REQUIRES: pp >= 1, v >= 1, layers >= 0.
std::vector<int64_t> chunk_layer_counts(int64_t layers, int64_t chunks);
std::vector<int64_t> stage_layer_counts(int64_t layers, int64_t pp, int64_t v);
// The layout a run uses: par.layers_per_chunk when given (explicit, e.g. Meta's), else the even
// split above over pp * v chunks (v = 1 unless interleaved). Every module asks this one.
std::vector<int64_t> chunk_layers(const ModelSpec& m, const ParallelSpec& par);
std::vector<int64_t> stage_layers(const ModelSpec& m, const ParallelSpec& par);

// fp8 through Transformer Engine (TrainingSpec::fp8_torchao false): Linear inputs kept as fp8
// casts; and, below ZeRO-3, the fp8 copy and transpose TE keeps of every layer weight.
bool transformer_engine_fp8(const TrainingSpec& train);
bool keeps_fp8_weight_copies(const ParallelSpec& par, const TrainingSpec& train);

// Layers of a chunk of `chunk_layers` that recompute (ParallelSpec::recompute_num_layers): all of
// them unless the count is limited, none without recompute.
int64_t recomputed_layers(const ParallelSpec& par, int64_t chunk_layers);

// ParallelSpec::defer_grad_reduce in effect: ZeRO-2/3 and more than one micro-batch per step.
bool defers_grad_reduce(const ParallelSpec& par, const TrainingSpec& train);

// Bytes one transformer layer keeps from its forward to its backward for ONE micro-batch on one
// GPU, with the configured TP, SP, CP, recompute and precision. Full recompute: the layer input
// only. Korthikanti et al. 2022 Eqs 1, 2, 4, 6 for GPT layers.
// `moe`: the model's mixture-of-experts layer instead of its dense one.
double layer_activation_bytes(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train, bool moe = false);
// Bytes of one layer's whole forward working set for one micro-batch (as with recompute none):
// what full recompute rematerializes, one layer at a time, during the backward.
double layer_full_activation_bytes(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train, bool moe = false);
// Mixture-of-experts layers each pipeline rank holds (0s for a dense model).
std::vector<int64_t> stage_moe_layers(const ModelSpec& m, const ParallelSpec& par);

// Forward passes rank `rank` runs before its first backward in the interleaved schedule (v > 1):
// Megatron's (p - rank - 1) * 2 + (v - 1) * p, capped at the m v there are, and every one of them
// when m == p (Megatron-LM schedules.py get_pp_rank_microbatches: all_warmup_microbatches).
// `torch_pipelining`: torch.distributed.pipelining's ScheduleInterleaved1F1B has the same warm-up
// (schedules.py get_rank_warmup_ops at torch 2.6.0) without the all-forwards-first case.
// parallel::build_schedule runs Megatron's; this is its one formula.
int64_t interleaved_warmup(int64_t p, int64_t m, int64_t v, int64_t rank, bool torch_pipelining = false);

// Micro-batches (interleaved: chunk-micro-batches) whose activations pipeline rank `rank` holds at
// its peak: GPipe m; 1F1B min(p - rank, m); interleaved the warm-up + 1, capped at m v
// (interleaved_warmup), i.e. min(2(p - rank - 1) + (v - 1)p + 1, m v). For rank 0 that is
// L(1 + (p-1)/(p v)) layers' worth: Korthikanti's interleaved correction.
double in_flight_micro_batches(Schedule schedule, int64_t rank, int64_t p, int64_t m, int64_t v,
                               bool torch_pipelining = false);

// Memory of every pipeline rank (index = rank). With the cluster, the runtime reserve is built
// from its parts (model/memory_data.hpp) unless training.runtime_reserve_bytes >= 0 gives a lump;
// without it, only that lump (or nothing) is counted.
std::vector<MemoryBreakdown> memory_per_stage(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train);
std::vector<MemoryBreakdown> memory_per_stage(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                                              const hardware::ClusterSpec& cluster);
// Memory of the busiest rank (largest total()).
MemoryBreakdown memory_per_gpu(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train);
MemoryBreakdown memory_per_gpu(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                               const hardware::ClusterSpec& cluster);

// Largest micro-batch b that fits in `capacity_bytes`, among the b that divide the per-replica
// batch global_batch / dp (all other settings as given); 0 when even b = 1 does not fit.
int64_t largest_micro_batch(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                            double capacity_bytes);
int64_t largest_micro_batch(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                            const hardware::ClusterSpec& cluster, double capacity_bytes);
int64_t largest_micro_batch(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                            const hardware::ClusterSpec* cluster, double capacity_bytes);

// Fewest GPUs whose memory (capacity - reserve each) holds params * bytes_per_param: the weights
// alone, nothing else. 0 when reserve >= capacity (no number of GPUs will do).
int64_t min_gpus_for_weights(double params, double bytes_per_param, double capacity_bytes, double reserve_bytes);

}  // namespace trainsim::model
