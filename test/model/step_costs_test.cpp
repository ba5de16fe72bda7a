#include "model/step_costs.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "hardware/gpu.hpp"
#include "model/compute.hpp"
#include "model/flops.hpp"
#include "model/memory.hpp"
#include "model/presets.hpp"
#include "model/transformer.hpp"
#include "clusters.hpp"

namespace trainsim::model {
namespace {

// Llama 3 405B dims (CONTRACT.md example scenario).
ModelSpec llama3_405b() {
  ModelSpec m;
  m.layers = 126;
  m.hidden = 16384;
  m.ffn_hidden = 53248;
  m.heads = 128;
  m.kv_heads = 8;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.ffn = Ffn::kSwiglu;
  return m;
}

hardware::ClusterSpec h100(int64_t nodes) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  return c;
}

TEST(StepCosts, LayerSplitFewerOnFirstAndLast) {
  ParallelSpec p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 4;
  TrainingSpec t;
  t.global_batch = 64;
  const StepCosts c = compute_step_costs(llama3_405b(), p, t, h100(64));
  ASSERT_EQ(c.stages.size(), 16u);
  int64_t next = 0;
  for (size_t s = 0; s < 16; ++s) {
    ASSERT_EQ(c.stages[s].chunks.size(), 1u);
    const ChunkCost& ch = c.stages[s].chunks[0];
    // 126 over 16 = [7, 8 x 14, 7]
    EXPECT_EQ(ch.layers, (s == 0 || s == 15) ? 7 : 8) << s;
    EXPECT_EQ(ch.first_layer, next);
    next += ch.layers;
    EXPECT_EQ(ch.has_embedding, s == 0);
    EXPECT_EQ(ch.has_output, s == 15);
  }
  EXPECT_EQ(next, 126);
  EXPECT_EQ(c.micro_batches, 16);  // 64 / (4 * 1)
  EXPECT_DOUBLE_EQ(c.tokens_per_step, 64.0 * 8192);
}

TEST(StepCosts, RecomputeNumLayersRecomputesOnlyTheFirstLayersOfEachChunk) {
  // Megatron's block method: of a stage's 8 layers (7 on the two end stages), the first 3
  // recompute; the others run the plain backward. FLOPs and TP traffic follow.
  ParallelSpec p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 4;
  p.sequence_parallel = true;
  p.recompute = Recompute::kFull;
  TrainingSpec t;
  t.global_batch = 64;
  const hardware::ClusterSpec c = h100(64);
  const ModelSpec m = llama3_405b();
  const LayerTime full = layer_time(m, p, t, c, default_calibration());
  ParallelSpec none = p;
  none.recompute = Recompute::kNone;
  const LayerTime plain = layer_time(m, none, t, c, default_calibration());
  const double recompute_flops = layer_recompute_flops(m, 1, Recompute::kFull) / 8;
  p.recompute_num_layers = 3;
  const StepCosts partial = compute_step_costs(m, p, t, c);
  const ChunkCost& mid = partial.stages[5].chunks[0];  // 8 layers
  EXPECT_NEAR(mid.backward_s, 3 * (full.backward_s + full.recompute_s) + 5 * plain.backward_s, 1e-12);
  EXPECT_NEAR(mid.tp_comm_s, 3 * full.tp_comm_s + 5 * plain.tp_comm_s, 1e-12);
  EXPECT_NEAR(mid.recompute_flops, 3 * recompute_flops, 1e-3 * recompute_flops);
  EXPECT_GT(full.tp_comm_s, plain.tp_comm_s);  // the recompute pass gathers its inputs again
  // recompute_num_layers at or above the chunk's layers = every layer; 0 = none.
  p.recompute_num_layers = 8;
  const StepCosts every = compute_step_costs(m, p, t, c);
  const ChunkCost& all = every.stages[5].chunks[0];
  EXPECT_NEAR(all.backward_s, 8 * (full.backward_s + full.recompute_s), 1e-12);
  p.recompute_num_layers = 0;
  const StepCosts zero = compute_step_costs(m, p, t, c);
  EXPECT_NEAR(zero.stages[5].chunks[0].backward_s, 8 * plain.backward_s, 1e-12);
  EXPECT_EQ(zero.stages[5].chunks[0].recompute_flops, 0);
}

TEST(StepCosts, ActivationOffloadShowsWhatTheLayerCannotCover) {
  // Llama 3 8B-sized layers on one H100 at micro-batch 4, seq 8192: each offloaded layer's
  // activations cross PCIe under the next layer's forward and the previous layer's backward.
  ModelSpec m = llama3_405b();
  m.layers = 32;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.heads = 32;
  m.kv_heads = 8;
  ParallelSpec p;
  p.dp = 8;
  p.micro_batch = 4;
  TrainingSpec t;
  t.global_batch = 64;
  const hardware::ClusterSpec c = h100(1);
  const LayerTime lt = layer_time(m, p, t, c, default_calibration());
  const StepCosts plain = compute_step_costs(m, p, t, c);
  p.activation_offload_layers = 25;
  const StepCosts off = compute_step_costs(m, p, t, c);
  // At a pinned copy's measured 0.87 of the link (cost_tables.yaml host.pcie_copy_efficiency).
  const double copy = layer_activation_bytes(m, p, t) / (c.gpu.pcie_bandwidth_Bps * 0.87);
  const double exposed = 25 * (std::max(0.0, copy - lt.forward_s) + std::max(0.0, copy - lt.backward_s));
  EXPECT_GT(copy, lt.forward_s);  // 4.6 GB per layer over a 64 GB/s link: the copy outlasts the forward
  const ChunkCost& a = plain.stages[0].chunks[0];
  const ChunkCost& b = off.stages[0].chunks[0];
  EXPECT_NEAR(b.forward_s + b.backward_s - a.forward_s - a.backward_s, exposed, 1e-12);
  EXPECT_NEAR(b.offload_s, exposed, 1e-12);
}

TEST(StepCosts, ExplicitLayersPerChunkAreCosted) {
  // parallelism.layers_per_stage [6, 8 x 15]: stage 0 runs 6 layers, stage 15 runs 8 and the
  // output layer; chunk times are layers x the one layer time, so stage 15's forward is 8/6 of
  // stage 0's layer part.
  ParallelSpec p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 4;
  p.layers_per_chunk = std::vector<int64_t>(16, 8);
  p.layers_per_chunk[0] = 6;
  TrainingSpec t;
  t.global_batch = 64;
  const StepCosts c = compute_step_costs(llama3_405b(), p, t, h100(64));
  EXPECT_EQ(c.stages[0].chunks[0].layers, 6);
  EXPECT_EQ(c.stages[1].chunks[0].first_layer, 6);
  EXPECT_EQ(c.stages[15].chunks[0].layers, 8);
  EXPECT_EQ(c.stages[15].chunks[0].first_layer, 118);
  // Middle stages (no embedding, no output): 8 layers each, the same time as the even split's.
  const double per_layer = c.stages[1].chunks[0].forward_s / 8;
  EXPECT_GT(c.stages[15].chunks[0].forward_s, 8 * per_layer);  // + output layer
  p.layers_per_chunk.clear();
  const StepCosts even = compute_step_costs(llama3_405b(), p, t, h100(64));
  EXPECT_DOUBLE_EQ(even.stages[1].chunks[0].forward_s, c.stages[1].chunks[0].forward_s);
  EXPECT_NEAR(c.stages[15].chunks[0].forward_s - even.stages[15].chunks[0].forward_s, per_layer, 1e-12);
}

TEST(StepCosts, InterleavedChunksRoundRobin) {
  ModelSpec m = llama3_405b();
  m.layers = 32;
  ParallelSpec p;
  p.tp = 8;
  p.pp = 4;
  p.schedule = Schedule::kInterleaved;
  p.virtual_stages = 2;
  TrainingSpec t;
  t.global_batch = 8;
  const StepCosts c = compute_step_costs(m, p, t, h100(4));
  ASSERT_EQ(c.stages[0].chunks.size(), 2u);
  // 8 chunks of 4 layers; rank r holds chunks r and r + 4.
  EXPECT_EQ(c.stages[0].chunks[0].first_layer, 0);
  EXPECT_EQ(c.stages[0].chunks[1].first_layer, 16);
  EXPECT_EQ(c.stages[3].chunks[1].first_layer, 28);
  EXPECT_TRUE(c.stages[0].chunks[0].has_embedding);
  EXPECT_FALSE(c.stages[0].chunks[1].has_embedding);
  EXPECT_TRUE(c.stages[3].chunks[1].has_output);
  EXPECT_FALSE(c.stages[3].chunks[0].has_output);
}

TEST(StepCosts, FlopsAddUpToTheModel) {
  ParallelSpec p;
  p.tp = 4;
  p.pp = 8;
  p.dp = 2;
  p.cp = 2;
  p.micro_batch = 2;
  p.recompute = Recompute::kFull;
  TrainingSpec t;
  t.global_batch = 32;
  const ModelSpec m = llama3_405b();
  const StepCosts c = compute_step_costs(m, p, t, h100(64));
  double per_mb = 0, recompute = 0;
  for (const auto& s : c.stages)
    for (const auto& ch : s.chunks) {
      per_mb += ch.forward_flops + ch.backward_flops;
      recompute += ch.recompute_flops;
      EXPECT_DOUBLE_EQ(ch.backward_flops, 2 * ch.forward_flops);
    }
  // Each GPU does 1/(tp cp) of a micro-batch; m micro-batches per pipeline; dp pipelines.
  const double scale = 4.0 * 2 * 2 * 8;  // tp * cp * dp * micro_batches (32 / (2 * 2))
  EXPECT_NEAR(per_mb * scale, model_flops_per_step(m, 32), 1e-9 * c.model_flops_per_step);
  EXPECT_DOUBLE_EQ(c.model_flops_per_step, model_flops_per_step(m, 32));
  EXPECT_NEAR(recompute * scale, hardware_flops_per_step(m, 32, Recompute::kFull) - model_flops_per_step(m, 32),
              1e-9 * c.model_flops_per_step);
}

TEST(StepCosts, BytesAndParameters) {
  ParallelSpec p;
  p.tp = 8;
  p.pp = 4;
  p.dp = 8;
  p.cp = 2;
  p.sequence_parallel = true;
  TrainingSpec t;
  t.global_batch = 64;
  const ModelSpec m = llama3_405b();
  const StepCosts c = compute_step_costs(m, p, t, h100(64));
  // b s h * 2 bytes / tp / cp = 8192 * 16384 * 2 / 16
  EXPECT_DOUBLE_EQ(c.stages[0].chunks[0].activation_bytes, 8192.0 * 16384 * 2 / 16);
  EXPECT_EQ(c.stages[3].chunks[0].activation_bytes, 0.0);  // the last chunk sends nothing forward
  double params = 0;
  for (const auto& s : c.stages) {
    double held = 0;
    for (const auto& ch : s.chunks) held += ch.param_count;
    EXPECT_DOUBLE_EQ(s.grad_bytes, 2 * held);   // bf16 gradients
    EXPECT_DOUBLE_EQ(s.param_bytes, 2 * held);  // bf16 weights
    params += held;
  }
  EXPECT_NEAR(params * 8, count_params(m).total, 1e-9 * count_params(m).total);  // x tp
  // fp32 main grads double the gradient bytes; ZeRO-1 shards the optimizer over dp x cp = 16.
  t.fp32_main_grads = true;
  const StepCosts c32 = compute_step_costs(m, p, t, h100(64));
  EXPECT_DOUBLE_EQ(c32.stages[1].grad_bytes, 2 * c.stages[1].grad_bytes);
  p.zero = 1;
  const StepCosts z1 = compute_step_costs(m, p, t, h100(64));
  EXPECT_NEAR(z1.stages[1].optimizer_s * 16, c32.stages[1].optimizer_s, 1e-12);
}

TEST(StepCosts, ChunkTimesComeFromLayerTimes) {
  ParallelSpec p;
  p.tp = 8;
  p.pp = 16;
  p.dp = 4;
  p.recompute = Recompute::kSelective;
  TrainingSpec t;
  t.global_batch = 64;
  const ModelSpec m = llama3_405b();
  const auto cl = h100(64);
  const StepCosts c = compute_step_costs(m, p, t, cl);
  const LayerTime lt = layer_time(m, p, t, cl);
  const ChunkCost& mid = c.stages[5].chunks[0];
  EXPECT_DOUBLE_EQ(mid.forward_s, 8 * lt.forward_s);
  EXPECT_DOUBLE_EQ(mid.backward_s, 8 * (lt.backward_s + lt.recompute_s));
  EXPECT_DOUBLE_EQ(c.stages[0].chunks[0].forward_s, 7 * lt.forward_s + embedding_time(m, p, t, cl).forward_s);
  EXPECT_DOUBLE_EQ(c.stages[15].chunks[0].backward_s, 7 * (lt.backward_s + lt.recompute_s) + output_time(m, p, t, cl).backward_s);
}

// The per-step fixed cost waits for the slowest of the dp x cp replicas that join the step's
// gradient reduction: the fitted jitter (compute.hpp, 0-0.10 s) times the expected maximum of that
// many standard normals (tabulated: 0 for 1, 0.5642 for 2 = 1/sqrt(pi), 1.4236 for 8, 2.5946 for
// 128, 3.2482 for 1,024), plus the gradient-norm all-reduce. One replica waits for nobody.
TEST(StepCosts, TheStepWaitsForTheSlowestReplica) {
  EXPECT_EQ(expected_max_normal(1), 0.0);
  EXPECT_NEAR(expected_max_normal(2), 1 / std::sqrt(M_PI), 1e-6);
  EXPECT_NEAR(expected_max_normal(8), 1.4236, 1e-4);
  EXPECT_NEAR(expected_max_normal(128), 2.5946, 1e-4);
  EXPECT_NEAR(expected_max_normal(1024), 3.2482, 1e-4);

  const ModelSpec m = *find_model_preset("llama2-7b");
  TrainingSpec t;
  t.global_batch = 64;
  Calibration c = default_calibration();
  auto overhead = [&](int64_t dp, int64_t cp, double jitter) {
    ParallelSpec p;
    p.tp = 1;
    p.dp = dp;
    p.cp = cp;
    p.micro_batch = 1;
    c.replica_jitter_s = jitter;
    return compute_step_costs(m, p, t, testing::dgx_h100(8), c).step_overhead_s;
  };
  // The jitter's share: the difference between two jitters, so the all-reduce cancels.
  EXPECT_NEAR(overhead(64, 1, 0.1) - overhead(64, 1, 0), 0.1 * expected_max_normal(64), 1e-12);
  EXPECT_NEAR(overhead(32, 2, 0.1) - overhead(32, 2, 0), 0.1 * expected_max_normal(64), 1e-12);
  EXPECT_NEAR(overhead(1, 1, 0.1), overhead(1, 1, 0), 1e-15);
}

}  // namespace
}  // namespace trainsim::model
