#include "model/step_costs.hpp"

#include "model/memory.hpp"

#include <algorithm>

#include "model/compute.hpp"
#include "model/flops.hpp"
#include "model/transformer.hpp"

namespace trainsim::model {
namespace {

double d(int64_t v) { return static_cast<double>(v); }

// Adds `forward` layers' forward exchanges and `backward` layers' backward exchanges of `layer` to
// a chunk's sum (the per-exchange bytes, latency and routing are the same for every MoE layer).
void add_ep(EpLayerTraffic& sum, const EpLayerTraffic& layer, int64_t forward, int64_t backward) {
  if (layer.exchanges_forward == 0 || (forward == 0 && backward == 0)) return;
  sum.exchanges_forward += forward * layer.exchanges_forward;
  sum.exchanges_backward += backward * layer.exchanges_backward;
  sum.peer_bytes = layer.peer_bytes;
  sum.node_bytes = layer.node_bytes;
  sum.latency_s = layer.latency_s;
  sum.exposed_forward_s += d(forward) * layer.exposed_forward_s;
  sum.exposed_backward_s += d(backward) * layer.exposed_backward_s;
  sum.window_forward_s += d(forward) * layer.window_forward_s;
  sum.window_backward_s += d(backward) * layer.window_backward_s;
  sum.expert_forward_s += d(forward) * layer.expert_forward_s;
  sum.expert_backward_s += d(backward) * layer.expert_backward_s;
  sum.routing_cv = layer.routing_cv;
  sum.routing_z = layer.routing_z;
  sum.capacity_factor = layer.capacity_factor;
}

}  // namespace

StepCosts compute_step_costs(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                             const hardware::ClusterSpec& cluster) {
  return compute_step_costs(model, par, train, cluster, default_calibration());
}

StepCosts compute_step_costs(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                             const hardware::ClusterSpec& cluster, const Calibration& cal) {
  const int64_t v = par.schedule == Schedule::kInterleaved ? std::max<int64_t>(1, par.virtual_stages) : 1;
  const int64_t chunks = par.pp * v;
  // The one layer split every module uses (model/memory.hpp): short chunks at the two ends.
  const std::vector<int64_t> split = chunk_layers(model, par);

  const LayerTime layer = layer_time(model, par, train, cluster, cal);
  // Mixture-of-experts layers (model.moe, from moe.first_dense_layers on) cost their own.
  const bool moe = model.is_moe();
  const LayerTime moe_layer = moe ? layer_time(model, par, train, cluster, cal, true) : layer;
  // A layer that does not recompute (recompute_num_layers below the chunk's layers): the same
  // layer without the recompute pass and its TP collectives.
  ParallelSpec whole = par;
  whole.recompute = Recompute::kNone;
  const LayerTime kept = par.recompute == Recompute::kNone ? layer : layer_time(model, whole, train, cluster, cal);
  const LayerTime moe_kept = !moe ? kept : par.recompute == Recompute::kNone ? moe_layer : layer_time(model, whole, train, cluster, cal, true);
  // CPU activation offload: each offloaded layer's activations cross the GPU's PCIe link to the
  // host under the next layer's forward, and back under the previous layer's backward; what the
  // layer's compute cannot cover shows, per offloaded layer. The copies run at what a pinned copy
  // achieves of the catalog's x16 rate (cost_tables.yaml host.pcie_copy_efficiency, measured).
  double offload_fwd = 0, offload_bwd = 0;
  if (par.activation_offload_layers > 0 && cluster.gpu.pcie_bandwidth_Bps > 0) {
    const double copy = layer_activation_bytes(model, par, train) / host_copy_Bps(cluster.gpu);
    offload_fwd = std::max(0.0, copy - layer.forward_s);
    offload_bwd = std::max(0.0, copy - layer.backward_s);
  }
  const EndTime embedding = embedding_time(model, par, train, cluster, cal);
  const EndTime output = output_time(model, par, train, cluster, cal);
  const ParamCounts params = count_params(model);
  const LayerFlops layer_flops = layer_forward_flops(model, par.micro_batch);
  const double per_gpu = d(par.tp) * d(par.cp);  // FLOPs of one micro-batch split over TP and CP
  const double layer_fwd_flops = layer_flops.total() / per_gpu;
  const double moe_fwd_flops = moe ? layer_forward_flops(model, par.micro_batch, true).total() / per_gpu : layer_fwd_flops;
  // A mixture-of-experts layer's parameters on one GPU: attention, norms, router and shared
  // experts (tp-split) and experts / ep of the routed ones.
  const double moe_layer_params = moe ? params.attention / d(par.tp) + params.norms + params.router +
                                            d(model.moe.shared_experts) * params.expert / d(par.tp) +
                                            d(model.moe.experts) / d(par.ep) * params.expert / d(par.etp())
                                      : 0;
  const double layer_recompute = layer_recompute_flops(model, par.micro_batch, par.recompute, par.sac_saves_attention) / per_gpu;
  const double logits_fwd_flops = logits_forward_flops(model, par.micro_batch) / per_gpu;
  // Scatter-gather (Megatron SC21): each TP rank sends 1/t of the boundary activations (with sequence
  // parallelism they are already split). Context parallelism splits the sequence.
  const double activation_bytes = d(par.micro_batch) * d(model.seq_len) * d(model.hidden) *
                                  activation_bytes_per_value(train.precision) / d(par.tp) / d(par.cp);

  StepCosts costs;
  costs.micro_batches = train.micro_batches(par);
  costs.model_flops_per_step = model_flops_per_step(model, train.global_batch);
  costs.tokens_per_step = d(train.global_batch) * d(model.seq_len);
  // Per-step fixed costs from their parts: the wait for the slowest data-parallel replica at the
  // gradient synchronisation (the replicas' fitted jitter times the expected maximum of dp x cp
  // normal draws, compute.hpp) and the gradient-norm all-reduce of one value over the
  // model-parallel group (tp x cp x pp ranks, after the DP reduction), latency-bound. The optimizer
  // kernels are StageCost::optimizer_s.
  const int64_t mp = par.tp * par.cp * par.pp;
  costs.step_overhead_s = replica_wait_s(par, cal.replica_jitter_s) +
                          inter_collective_time_s(cluster, collectives::Kind::kAllReduce, mp,
                                                  std::min<int64_t>(par.tp * par.cp, cluster.gpus_per_node), 4.0);
  costs.stages.resize(static_cast<size_t>(par.pp));

  int64_t first_layer = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    ChunkCost chunk;
    chunk.first_layer = first_layer;
    chunk.layers = split[static_cast<size_t>(c)];
    first_layer += chunk.layers;
    chunk.has_embedding = c == 0;
    chunk.has_output = c == chunks - 1;
    const double n = d(chunk.layers);
    const double rn = d(recomputed_layers(par, chunk.layers));  // the rest keep their activations
    // Of the chunk's layers, those with experts (global indices from moe.first_dense_layers on); the
    // recomputing ones are the chunk's first rn.
    const int64_t moe_from = std::clamp<int64_t>(model.moe.first_dense_layers - chunk.first_layer, 0, chunk.layers);
    const double nm = moe ? d(chunk.layers - moe_from) : 0;
    const double rm = moe ? std::max(0.0, rn - d(moe_from)) : 0;  // recomputing layers with experts
    const double nd = n - nm, rd = rn - rm;
    chunk.forward_s = nd * layer.forward_s + nm * moe_layer.forward_s;
    chunk.backward_s = rd * (layer.backward_s + layer.recompute_s) + (nd - rd) * kept.backward_s +
                       rm * (moe_layer.backward_s + moe_layer.recompute_s) + (nm - rm) * moe_kept.backward_s;
    chunk.tp_comm_s = rd * layer.tp_comm_s + (nd - rd) * kept.tp_comm_s + rm * moe_layer.tp_comm_s + (nm - rm) * moe_kept.tp_comm_s;
    add_ep(chunk.ep, moe_layer.ep, static_cast<int64_t>(nm), static_cast<int64_t>(rm));
    add_ep(chunk.ep, moe_kept.ep, 0, static_cast<int64_t>(nm - rm));
    const double offloaded = d(std::min<int64_t>(par.activation_offload_layers, chunk.layers));
    chunk.forward_s += offloaded * offload_fwd;
    chunk.backward_s += offloaded * offload_bwd;
    chunk.offload_s = offloaded * (offload_fwd + offload_bwd);
    chunk.forward_flops = nd * layer_fwd_flops + nm * moe_fwd_flops;
    chunk.backward_flops = 2 * chunk.forward_flops;
    chunk.recompute_flops = rd * layer_recompute + (par.recompute == Recompute::kFull ? rm * moe_fwd_flops : rm * layer_recompute);
    chunk.param_count = nd * params.per_layer / d(par.tp) + nm * moe_layer_params;
    if (chunk.has_embedding) {
      chunk.forward_s += embedding.forward_s;
      chunk.backward_s += embedding.backward_s;
      chunk.tp_comm_s += embedding.tp_comm_s;
      chunk.param_count += (params.embedding + params.position) / d(par.tp);
    }
    if (chunk.has_output) {
      chunk.forward_s += output.forward_s;
      chunk.backward_s += output.backward_s;
      chunk.tp_comm_s += output.tp_comm_s;
      chunk.forward_flops += logits_fwd_flops;
      chunk.backward_flops += 2 * logits_fwd_flops;
      // Untied: the output projection. Tied with pp > 1: the last stage keeps its own copy of the
      // embedding (Megatron), synchronised with the first.
      const double out = model.tied_embeddings ? (chunks > 1 ? params.embedding : 0) : params.output;
      chunk.param_count += (out + params.final_norm) / d(par.tp);
      // Multi-token prediction: per module one more layer (with experts when the model has them),
      // its 2h x h projection, and the output head and loss again.
      if (model.mtp_modules > 0) {
        const double k = d(model.mtp_modules);
        const LayerTime& l = moe ? moe_layer : layer;
        const double tokens = d(par.micro_batch) * d(model.seq_len) / d(par.cp);
        const double proj = gemm_time_s(cluster.gpu, train.precision, tokens, d(model.hidden), 2 * d(model.hidden) / d(par.tp), cal);
        chunk.forward_s += k * (l.forward_s + proj + output.forward_s);
        chunk.backward_s += k * (l.backward_s + 2 * proj + output.backward_s);
        chunk.tp_comm_s += k * (l.tp_comm_s + output.tp_comm_s);
        add_ep(chunk.ep, l.ep, model.mtp_modules, 0);
        add_ep(chunk.ep, (moe ? moe_kept : kept).ep, 0, model.mtp_modules);  // backward_s above has no recompute
        chunk.param_count += k * ((moe ? moe_layer_params : params.per_layer / d(par.tp)) + 2 * d(model.hidden) * d(model.hidden) / d(par.tp));
      }
    }
    chunk.activation_bytes = chunk.has_output ? 0 : activation_bytes;
    costs.stages[static_cast<size_t>(c % par.pp)].chunks.push_back(chunk);
  }

  // Optimizer states are sharded over the data-parallel replicas (dp x cp hold the same weights)
  // under ZeRO >= 1.
  const double shards = par.zero >= 1 ? d(par.dp) * d(par.cp) : 1;
  for (StageCost& stage : costs.stages) {
    double held = 0;
    for (const ChunkCost& chunk : stage.chunks) held += chunk.param_count;
    stage.grad_bytes = held * grad_bytes_per_param(train);
    stage.param_bytes = held * activation_bytes_per_value(train.precision);
    stage.optimizer_s = optimizer_time_s(held / shards, train, cluster, cal);
  }
  return costs;
}

}  // namespace trainsim::model
