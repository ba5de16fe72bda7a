#include "model/step_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "collectives/collectives.hpp"
#include "model/compute.hpp"
#include "model/flops.hpp"

namespace trainsim::model {
namespace {

using collectives::Kind;

double d(int64_t v) { return static_cast<double>(v); }

// Replicas of one GPU's shard (dp x cp) and how many of them share a node.
struct ReplicaGroup {
  int64_t size = 1;
  int64_t per_node = 1;
  int64_t nodes = 1;
};

ReplicaGroup replica_group(const ParallelSpec& par, const hardware::ClusterSpec& cluster) {
  ReplicaGroup g;
  g.size = par.dp * par.cp;
  g.per_node = std::clamp<int64_t>(cluster.gpus_per_node / par.tp, 1, g.size);
  g.nodes = (g.size + g.per_node - 1) / g.per_node;
  return g;
}

// The NCCL calls one collective over the replicas makes: one over the whole group, or under hybrid
// sharding (ParallelSpec::shard_degree) one within the shard group (`shard_degree` consecutive
// replicas, per_node of them a node) and, for a reduce-scatter, the all-reduce of each rank's share
// across the groups on a ring of one member per group (per_node / shard_degree of them a node).
struct ReplicaCall {
  Kind kind;
  int64_t n;
  int64_t per_node;
  double bytes;
};

std::vector<ReplicaCall> replica_calls(Kind kind, double bytes, const ParallelSpec& par, const ReplicaGroup& g) {
  if (!par.hybrid_shard() || kind == Kind::kAllReduce) return {{kind, g.size, g.per_node, bytes}};
  const int64_t s = par.shard_degree;
  std::vector<ReplicaCall> calls{{kind, s, std::min(g.per_node, s), bytes}};
  if (kind == Kind::kReduceScatter) calls.push_back({Kind::kAllReduce, g.size / s, std::max<int64_t>(1, g.per_node / s), bytes / d(s)});
  return calls;
}

double replica_collective(Kind kind, double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster,
                          const Calibration& c) {
  const ReplicaGroup g = replica_group(par, cluster);
  if (g.size <= 1 || bytes <= 0) return 0;
  double t = 0;
  for (const ReplicaCall& call : replica_calls(kind, bytes, par, g))
    t += inter_collective_time_s(cluster, call.kind, call.n, call.per_node, call.bytes);
  return t;
}

}  // namespace

double dp_call_latency_s(Kind kind, double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster) {
  double t = 0;  // every call's (replica_calls)
  for (const ReplicaCall& call : replica_calls(kind, bytes, par, replica_group(par, cluster)))
    t += net_call_cost(cluster, call.kind, call.n, call.per_node, call.bytes).latency_s;
  return t;
}

Zero3Latency zero3_layer_latency(double param_bytes, double grad_bytes, const ParallelSpec& par,
                                 const hardware::ClusterSpec& cluster) {
  if (par.zero < 3 || replica_group(par, cluster).size <= 1) return {};
  const double gather = dp_call_latency_s(Kind::kAllGather, param_bytes, par, cluster);
  return {gather, gather + dp_call_latency_s(Kind::kReduceScatter, grad_bytes, par, cluster)};
}

double grad_reduce_time_s(double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster) {
  return replica_collective(par.zero == 0 ? Kind::kAllReduce : Kind::kReduceScatter, bytes, par, cluster,
                            default_calibration());
}

double dp_sync_time_s(double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster) {
  return dp_sync_time_s(bytes, par, cluster, default_calibration());
}

double dp_sync_time_s(double bytes, const ParallelSpec& par, const hardware::ClusterSpec& cluster,
                      const Calibration& c) {
  if (par.zero == 0) return replica_collective(Kind::kAllReduce, bytes, par, cluster, c);
  return replica_collective(Kind::kReduceScatter, bytes, par, cluster, c) +
         replica_collective(Kind::kAllGather, bytes, par, cluster, c);
}

StepEstimate estimate_step(const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                           const hardware::ClusterSpec& cluster) {
  return estimate_step(compute_step_costs(model, par, train, cluster), model, par, train, cluster);
}

StepEstimate estimate_step(const StepCosts& costs, const ModelSpec& model, const ParallelSpec& par,
                           const TrainingSpec& train, const hardware::ClusterSpec& cluster) {
  return estimate_step(costs, model, par, train, cluster, default_calibration());
}

StepEstimate estimate_step(const StepCosts& costs, const ModelSpec& model, const ParallelSpec& par,
                           const TrainingSpec& train, const hardware::ClusterSpec& cluster, const Calibration& c) {
  const int64_t v = par.schedule == Schedule::kInterleaved ? std::max<int64_t>(1, par.virtual_stages) : 1;
  const double m = d(costs.micro_batches);
  const double p = d(par.pp);

  double per_mb = 0, last_backward = 0, first_forward = 0, stage_forward = 0, grad_bytes = 0, param_bytes = 0, optimizer = 0, activation = 0;
  double all_stages = 0;
  for (const StageCost& stage : costs.stages) {
    double f = 0, b = 0;
    for (const ChunkCost& chunk : stage.chunks) {
      f += chunk.forward_s;
      b += chunk.backward_s;
      activation = std::max(activation, chunk.activation_bytes);
    }
    all_stages += f + b;
    if (f + b > per_mb) {
      per_mb = f + b;
      last_backward = b;
      stage_forward = f;
      first_forward = stage.chunks.empty() ? f : stage.chunks.front().forward_s;  // the step's first pass
    }
    grad_bytes = std::max(grad_bytes, stage.grad_bytes);
    param_bytes = std::max(param_bytes, stage.param_bytes);
    optimizer = std::max(optimizer, stage.optimizer_s);
  }

  StepEstimate e;
  e.compute_s = m * per_mb + costs.step_overhead_s;
  // The slowest stage waits for the others to fill and drain the pipeline: their per-micro-batch
  // time, divided by v when interleaved ((p - 1)/v (tf + tb) when all stages are equal).
  e.bubble_s = (all_stages - per_mb) / d(v);

  if (par.pp > 1) {
    // Neighbouring stages are tp*cp*dp ranks apart (stage s starts at GPU s x span): a boundary
    // crosses nodes when its two stages' first GPUs sit on different nodes. The transfers cost the
    // mean over the chunk boundaries the micro-batches cross (with interleaving, chunk p-1 -> p wraps
    // from the last stage to the first). Megatron sends and receives blocking (batch_isend_irecv,
    // then wait) between its passes.
    const int64_t span = par.tp * par.cp * par.dp;
    const int64_t chunks = par.pp * v;
    auto node_of = [&](int64_t stage) { return stage * span / cluster.gpus_per_node; };
    double sum = 0;
    for (int64_t g = 0; g + 1 < chunks; ++g) {
      const bool inter = node_of(g % par.pp) != node_of((g + 1) % par.pp);
      sum += p2p_time_s(cluster, inter, activation);
    }
    const double t = sum / d(chunks - 1);
    const double passes = m * d(v);  // forward (and backward) passes per stage
    // overlap_p2p_comm: with a steady state (more passes than the first stage's Megatron warm-up,
    // 2(p - 1) + (v - 1)p), each transfer runs under the next pass in the other direction and shows
    // only where it outlasts it; what stays on the path is the first micro-batch's forward through
    // all p v chunks and the last one's backward: 2(p v - 1) transfers (the engine's figure,
    // StepEngineTest.OverlappedPipelineTransfersHideUnderTheOtherPass). Without a steady state
    // (all passes warm-up, e.g. m = p) every forward waits for its transfer, as when blocking.
    const double warm = 2 * (p - 1) + d(v - 1) * p;
    if (v > 1 && par.overlap_p2p_comm && passes > warm) {
      const double fc = stage_forward / d(v), bc = last_backward / d(v);
      e.pp_comm_s = 2 * sum + (passes - warm) * (std::max(0.0, t - bc) + std::max(0.0, t - fc));
    } else {
      // Blocking: the slowest stage's period per micro-batch holds a transfer after its forward and
      // one after its backward, and fill and drain one per stage boundary. With two stages and no
      // interleaving no stage sends both ways (the first one's backward and the last one's forward
      // have no neighbour to send to): one transfer per micro-batch and per boundary.
      const double both_ways = (par.pp > 2 || v > 1) ? 2.0 : 1.0;
      e.pp_comm_s = both_ways * (passes + p - 1) * t;
    }
  }

  // DP sync of the step's gradients, and what repeats every micro-batch under ZeRO 2/3 (overlapping
  // the compute of the step):
  //   zero 0: all-reduce | 1: RS + AG of the weights after the optimizer | 2: as 1, plus an RS per
  //   earlier micro-batch | 3: RS per micro-batch, weights all-gathered forward and backward per
  //   micro-batch, no post-optimizer AG (weights stay sharded).
  const double rs = replica_collective(Kind::kReduceScatter, grad_bytes, par, cluster, c);
  const double ag = replica_collective(Kind::kAllGather, param_bytes, par, cluster, c);
  // ZeRO 1/2 reduce-scatter the gradients (fp32 where the stack reduces in fp32) and all-gather the
  // updated weights (in the weights' precision).
  double per_step = par.zero == 0 ? dp_sync_time_s(grad_bytes, par, cluster, c) : rs + ag;
  double overlapped_with_compute = 0;
  if (par.zero == 2) overlapped_with_compute = (m - 1) * rs;
  // ZeRO-3 / FSDP as it runs: every layer's weights are all-gathered before its forward and again
  // before its backward, and its gradients reduce-scattered after its backward, each micro-batch;
  // the next layer's gather is prefetched under this layer's compute (depth 1). What shows per pass:
  // the first layer's gather, then for each later layer its calls' NCCL ring latency and the excess
  // of their bandwidth part over the layer's compute. The latency is charged on the critical path,
  // not hidden: FSDP runs at a fixed load per GPU grow with the ranks as if each call paid it
  // (README "Accuracy against published runs", the change of 2026-12-07: llm-foundry's MPT-1B to
  // 70B on 128, 256 and 512 H100s grow 1.45 s in sum, these latencies 1.29 s, trainsim hiding them
  // 0.19 s; torchtitan's 8B from 32 to 64 H200s +26 ms, its latencies 14 ms). Why it does not
  // hide is not measured.
  double zero3_exposed = 0;
  if (par.zero >= 3 && replica_group(par, cluster).size > 1) {
    double layers = 0;
    for (const StageCost& stage : costs.stages) {
      double n = 0;
      for (const ChunkCost& chunk : stage.chunks) n += d(chunk.layers);
      layers = std::max(layers, n);
    }
    layers = std::max(layers, 1.0);
    const double ag_l = replica_collective(Kind::kAllGather, param_bytes / layers, par, cluster, c);
    const double rs_l = replica_collective(Kind::kReduceScatter, grad_bytes / layers, par, cluster, c);
    const double cf = stage_forward / layers, cb = last_backward / layers;
    const Zero3Latency lat = zero3_layer_latency(param_bytes / layers, grad_bytes / layers, par, cluster);
    const double fwd = ag_l + (layers - 1) * (lat.forward_s + std::max(0.0, ag_l - lat.forward_s - cf));
    const double bwd =
        ag_l + rs_l + (layers - 1) * (lat.backward_s + std::max(0.0, ag_l + rs_l - lat.backward_s - cb));
    zero3_exposed = m * (fwd + bwd);
    per_step = 0;
    overlapped_with_compute = m * layers * (2 * ag_l + rs_l);
  }
  // Gradients are reduced bucket by bucket (Megatron: ~40M parameters each), a NCCL call per
  // bucket: every call after the first pays the ring latency again.
  const ReplicaGroup g = replica_group(par, cluster);
  const double calls = std::ceil(grad_bytes / (grad_bucket_params(par) * grad_bytes_per_param(train)));
  double gather_latency = 0;  // the ZeRO 1/2 all-gather's share: it runs with the gather, not the reduction
  if (calls > 1 && g.size > 1 && par.zero <= 2) {
    const double b = grad_bytes / calls;
    auto lat = [&](Kind k) { return dp_call_latency_s(k, b, par, cluster); };
    if (par.zero > 0) gather_latency = (calls - 1) * lat(Kind::kAllGather);
    per_step += (calls - 1) * (par.zero == 0 ? lat(Kind::kAllReduce) : lat(Kind::kReduceScatter)) + gather_latency;
  }
  e.dp_comm_s = per_step + overlapped_with_compute;

  // With overlap: the gradient reduction (all-reduce, or reduce-scatter) runs under the last
  // micro-batch's backward and the ZeRO 1/2 weight all-gather under the next step's first forward
  // (Megatron's overlap_param_gather); each exposes at least its last bucket.
  double exposed = per_step;
  if (par.overlap_grad_reduce && per_step > 0) {
    const double bucket = std::min(1.0, grad_bucket_params(par) * grad_bytes_per_param(train) / std::max(grad_bytes, 1.0));
    const double gather = (par.zero == 1 || par.zero == 2) ? ag + gather_latency : 0;
    const double reduce = per_step - gather;
    // With a 1F1B pipeline the first stage's wait for its weights delays only what follows its
    // first forward, and the last stage runs that micro-batch's backward right after its forward:
    // it absorbs that much of the delay (interleaved warm-ups run more forwards first: not there).
    const bool absorbed = par.pp > 1 && par.schedule == Schedule::k1F1B;
    const double gather_cover = first_forward + (absorbed ? last_backward : 0.0);
    // The first bucket's reduction starts once the first bucket's share of the backward is done.
    const double gather_exposed = par.overlap_param_gather ? std::max(gather * bucket, gather - gather_cover) : gather;
    // Each model chunk's gradients are reduced once that chunk's last backward is done; a 1F1B
    // step has one chunk, whose first bucket is ready a bucket's share of the last backward before
    // its end. Interleaved, Megatron-Core's cool-down calls each chunk's grad_sync_func after the
    // chunk's last backward (the engine releases the chunk's buckets the same way): the critical
    // stage runs its last backwards in groups of p micro-batches a chunk, chunk v - 1 first, so
    // chunk j's ends j p chunk-backwards before the step's last. The reductions run one after
    // another on the DP stream; what outlasts the last backward shows, at least a bucket's worth.
    const int64_t chunks = par.pp > 1 ? v : 1;
    const double bc = last_backward / d(chunks), r = reduce / d(chunks);
    const double bj = std::min(1.0, bucket * d(chunks));  // one bucket's share of a chunk's gradients
    double end = -std::numeric_limits<double>::infinity();  // relative to the end of the last backward
    for (int64_t j = chunks - 1; j >= 0; --j) end = std::max(end, -d(j) * p * bc - bc * (1 - bj)) + r;
    const double reduce_exposed = std::max(r * bj, end);
    exposed = reduce_exposed + gather_exposed;
  }
  // Per-micro-batch ZeRO 2 traffic is prefetched under the layers' compute: only its excess shows.
  if (par.zero == 2) exposed += std::max(0.0, overlapped_with_compute - m * per_mb);
  exposed += zero3_exposed;
  // What the DP traffic hides under compute still costs the compute the SMs NCCL's kernels hold
  // meanwhile, as TP collectives do (model/compute.hpp comm_sm_tax_s).
  if (par.dp * par.cp > 1) {
    const double hidden = std::max(0.0, e.dp_comm_s - exposed);
    e.dp_overlap_tax_s = comm_sm_tax_s(std::min(hidden, m * per_mb), cluster.gpu);
    exposed += e.dp_overlap_tax_s;
  }
  e.exposed_comm_s = e.pp_comm_s + exposed;
  e.optimizer_s = optimizer;
  e.step_s = e.compute_s + e.bubble_s + e.exposed_comm_s + e.optimizer_s;

  const double gpus = d(par.gpus());
  const double peak = cluster.gpu.peak_flops(train.precision);
  e.tflops_per_gpu = costs.model_flops_per_step / (gpus * e.step_s);
  e.mfu = peak > 0 ? e.tflops_per_gpu / peak : 0;
  // Hardware FLOPs: the model's plus what the recomputing layers re-run (per GPU per micro-batch in
  // the chunks, so times micro-batches, the TP x CP ranks that split it and the replicas).
  double recompute_flops = 0;
  for (const StageCost& st : costs.stages)
    for (const ChunkCost& ch : st.chunks) recompute_flops += ch.recompute_flops;
  const double hardware_flops = costs.model_flops_per_step + recompute_flops * d(costs.micro_batches) *
                                                                 d(par.tp) * d(par.cp) * d(par.dp);
  e.hfu = peak > 0 ? hardware_flops / (gpus * e.step_s) / peak : 0;
  return e;
}

}  // namespace trainsim::model
