// Mixture-of-experts models (issue 19): parameters total and active, FLOPs from the active
// parameters, memory with the routed experts split over expert parallelism.
#include <gtest/gtest.h>

#include "clusters.hpp"
#include "hardware/gpu.hpp"
#include "model/compute.hpp"
#include "model/flops.hpp"
#include "model/step_costs.hpp"
#include "model/memory.hpp"
#include "model/presets.hpp"
#include "model/transformer.hpp"

namespace trainsim::model {
namespace {

// Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts", Table 1; the model's config.json): 32
// layers, hidden 4096, 32 heads, 8 KV heads, 8 experts of SwiGLU width 14336, top 2, vocabulary
// 32000, untied output layer, every layer mixture-of-experts. The paper: "47B parameters" total,
// "13B active parameters" per token.
ModelSpec mixtral_8x7b() {
  ModelSpec m;
  m.layers = 32;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.heads = 32;
  m.kv_heads = 8;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.ffn = Ffn::kSwiglu;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 14336;
  return m;
}

// Per layer: attention 2 h^2 + 2 h (8 x 128) = 41,943,040; an expert 3 x 4096 x 14336 =
// 176,160,768; router 4096 x 8; norms 2 x 4096. Embedding and output 2 x 32000 x 4096, final norm
// 4096. Total 46,702,792,704 (Mixtral's published 46.7B); active with 2 experts 12,879,925,248
// (the published 12.9B).
TEST(Moe, MixtralParameterCountsAreThePublishedOnes) {
  const ParamCounts c = count_params(mixtral_8x7b());
  EXPECT_DOUBLE_EQ(c.expert, 3.0 * 4096 * 14336);
  EXPECT_DOUBLE_EQ(c.router, 4096.0 * 8);
  EXPECT_DOUBLE_EQ(c.total, 46702792704.0);
  EXPECT_DOUBLE_EQ(c.active, 12879925248.0);
}

// top_k = 1 with experts as wide as the dense FFN and no shared expert: the FLOPs are the dense
// model's plus the router's, 3 (forward + backward) x layers x 2 B s h E.
TEST(Moe, OneExpertPerTokenCostsTheDenseModelPlusTheRouter) {
  ModelSpec moe = mixtral_8x7b();
  moe.moe.top_k = 1;
  ModelSpec dense = moe;
  dense.moe = MoeSpec{};
  const int64_t batch = 4;
  const double router = 3.0 * 32 * 2 * batch * 4096 * 4096 * 8;
  EXPECT_DOUBLE_EQ(model_flops_per_step(moe, batch), model_flops_per_step(dense, batch) + router);
  // A dense first layer (DeepSeek-style first_dense_layers) costs the dense FFN there.
  moe.moe.first_dense_layers = 1;
  EXPECT_DOUBLE_EQ(model_flops_per_step(moe, batch), model_flops_per_step(dense, batch) + router * 31 / 32);
}

// Expert parallelism splits the routed experts: with ep = 8 each GPU holds 1 of the 8 experts of
// every layer, so the weights shrink by 7/8 of the experts' 2 bytes per parameter; the rest
// (attention, norms, router, embeddings) stays. Without ZeRO the optimizer states shrink alike.
TEST(Moe, ExpertParallelismSplitsTheExpertsStates) {
  const ModelSpec m = mixtral_8x7b();
  ParallelSpec par;
  par.dp = 8;
  TrainingSpec train;
  train.global_batch = 8;
  const MemoryBreakdown one = memory_per_gpu(m, par, train);
  par.ep = 8;
  const MemoryBreakdown eight = memory_per_gpu(m, par, train);
  const double experts = 32.0 * 8 * 3 * 4096 * 14336;
  EXPECT_DOUBLE_EQ(one.weights - eight.weights, 2 * experts * 7 / 8);
  EXPECT_DOUBLE_EQ(one.optimizer - eight.optimizer, 12 * experts * 7 / 8);  // fp32 master + 2 moments
  EXPECT_DOUBLE_EQ(one.params, count_params(m).total);
  // Under ZeRO-1 the experts' optimizer states shard over dp / ep = 1 rank, the rest over 8.
  par.zero = 1;
  const double rest = count_params(m).total - experts;
  EXPECT_NEAR(memory_per_gpu(m, par, train).optimizer, 12 * (rest / 8 + experts / 8), 1);
}

// The activations of a mixture-of-experts layer grow with top_k (each token's FFN activations
// once per expert it goes through) and the routed copies of its input.
TEST(Moe, ActivationsGrowWithTheExpertsATokenGoesThrough) {
  ModelSpec m = mixtral_8x7b();
  ParallelSpec par;
  TrainingSpec train;
  const double two = layer_activation_bytes(m, par, train, true);
  m.moe.top_k = 1;
  const double one = layer_activation_bytes(m, par, train, true);
  // One more expert: 3 x 2 bytes x s h_e (SwiGLU's gate/up output and down input) + its 2-byte
  // input copy, s h (micro-batch 1, s = 4096).
  EXPECT_DOUBLE_EQ(two - one, 3 * 2 * 4096.0 * 14336 + 2 * 4096.0 * 4096);
  // top_k 1 vs the dense layer: the routed input copy and the router's fp32 probabilities more.
  EXPECT_DOUBLE_EQ(one - layer_activation_bytes(m, par, train), 2 * 4096.0 * 4096 + 4 * 4096.0 * 8);
}

using testing::dgx_h100;

// The all-to-all against its alpha-beta estimate. Each GPU sends 256 MB spread over the group.
//  - NVSwitch, ep 8 in one node: 7/8 of it leaves the GPU through its 450 GB/s port; NCCL reaches
//    about 370 GB/s of bus bandwidth on H100 NVLink and DeepEP 153-158 GB/s on H800 (whose NVLink
//    is 400 GB/s both ways together: 200 a direction, 77-79% of it) (test/validation/moe_runs_draft.md).
//    Expected: between 70% and 100% of the port.
//  - InfiniBand, ep 16 over 2 nodes: half leaves the node, through the GPU's 50 GB/s NIC share;
//    DeepEP measured 43-58 GB/s per GPU over RDMA at EP16-64 on 400 Gb/s NICs, nccl-tests users
//    46-49 GB/s. Expected: between 80% and 100% of the NIC.
// And the fabric gap: the cross-node all-to-all takes over 3x the intra-node one.
TEST(Moe, AllToAllAgainstItsAlphaBetaEstimate) {
  const double bytes = 256e6;
  const double t8 = all_to_all_time_s(dgx_h100(1), 8, 1, bytes);
  const double nvlink_Bps = bytes * 7 / 8 / t8;
  EXPECT_GT(nvlink_Bps, 0.70 * 450e9);
  EXPECT_LE(nvlink_Bps, 450e9);
  const double t16 = all_to_all_time_s(dgx_h100(2), 16, 1, bytes);
  const double ib_Bps = bytes * 8 / 16 / t16;
  EXPECT_GT(ib_Bps, 0.80 * 50e9);
  EXPECT_LE(ib_Bps, 50e9);
  EXPECT_GT(t16, 3 * t8);
  // Ranks tp apart: with tp 2, only 4 members of an ep-8 group share a node.
  // Half of the bytes leave the node, at the NIC rate the ep-16 case achieved.
  EXPECT_NEAR(all_to_all_time_s(dgx_h100(2), 8, 2, bytes), bytes * 4 / 8 / ib_Bps, 0.01 * bytes * 4 / 8 / ib_Bps);
  EXPECT_EQ(all_to_all_time_s(dgx_h100(1), 1, 1, bytes), 0.0);
}

// A layer with experts costs its all-to-alls: exposed without overlap, hidden under another
// micro-batch's compute (DualPipe) as long as they are shorter; EP inside a node vs across nodes
// shows the fabric gap in the layer's time.
TEST(Moe, ExpertParallelLayerCostsItsAllToAlls) {
  const ModelSpec m = mixtral_8x7b();
  TrainingSpec train;
  ParallelSpec par;
  par.dp = 16;
  par.ep = 8;
  const auto cluster = dgx_h100(2);
  const LayerTime exposed = layer_time(m, par, train, cluster, default_calibration(), true);
  const double routed = 2.0 * 4096 * 4096 * 2;  // top 2 x tokens x hidden x 2 bytes
  EXPECT_NEAR(exposed.ep_comm_s, 4 * all_to_all_time_s(cluster, 8, 1, routed), 1e-12);  // dispatch + combine, twice
  par.ep_overlap = EpOverlap::kMicroBatches;
  const LayerTime hidden = layer_time(m, par, train, cluster, default_calibration(), true);
  // NVLink all-to-alls are shorter than the layer's GEMMs: all hidden, but the communication
  // kernels' SMs slow the compute beside them (comm_sm_tax_s).
  const double a2a = all_to_all_time_s(cluster, 8, 1, routed);
  EXPECT_NEAR(hidden.ep_comm_s, 2 * comm_sm_tax_s(2 * a2a, cluster.gpu), 1e-12);
  EXPECT_GT(hidden.ep_comm_s, 0.0);
  EXPECT_NEAR(exposed.forward_s - hidden.forward_s, 2 * a2a - comm_sm_tax_s(2 * a2a, cluster.gpu), 1e-12);
  par.ep_overlap = EpOverlap::kNone;
  par.ep = 16;
  const LayerTime across = layer_time(m, par, train, cluster, default_calibration(), true);
  EXPECT_GT(across.ep_comm_s, 3 * exposed.ep_comm_s);
  // The dense layer has none.
  EXPECT_EQ(layer_time(m, par, train, cluster).ep_comm_s, 0.0);
}

// The step's FLOPs are the model's: the chunks' forward FLOPs add up to model_flops_per_step / 3
// over the GPUs, with the experts' layers at their active FLOPs.
TEST(Moe, StepCostsCountTheActiveFlops) {
  ModelSpec m = mixtral_8x7b();
  m.moe.first_dense_layers = 2;
  ParallelSpec par;
  par.pp = 4;
  par.dp = 4;
  par.ep = 4;
  TrainingSpec train;
  train.global_batch = 16;
  const StepCosts costs = compute_step_costs(m, par, train, dgx_h100(2));
  double fwd = 0;
  for (const auto& st : costs.stages)
    for (const auto& ch : st.chunks) fwd += ch.forward_flops;
  // Per micro-batch of 1 over one pipeline: the model's FLOPs for one sequence, forward.
  EXPECT_NEAR(fwd, model_flops_per_step(m, 1) / 3, 1e-6 * fwd);
}

// The presets against their publishers' totals: Mixtral 8x7B 46.7B / 12.9B (the paper's 47B /
// 13B), 8x22B 141B / 39B (Mistral), DeepSeek-V3 671B total and 37B active (report, abstract; the
// main model without its multi-token-prediction module), Qwen3-235B-A22B 235B and 22B (Qwen3
// report, Table 2), within 1%.
TEST(Moe, PresetsHaveThePublishedSizes) {
  const struct {
    const char* name;
    double total, active;
  } rows[] = {{"mixtral-8x7b", 46.7e9, 12.9e9},
              {"mixtral-8x22b", 141e9, 39e9},
              {"deepseek-v3", 671e9, 37e9},
              {"qwen3-235b-a22b", 235e9, 22e9}};
  for (const auto& r : rows) {
    SCOPED_TRACE(r.name);
    const auto m = find_model_preset(r.name);
    ASSERT_TRUE(m.has_value());
    const ParamCounts c = count_params(*m);
    EXPECT_NEAR(c.total, r.total, 0.01 * r.total);
    EXPECT_NEAR(c.active, r.active, 0.015 * r.active);
  }
}

// DeepSeek-V3's latent attention per layer: 7168 x 1536 + 1536 x 128 x 192 (queries), 7168 x
// (512 + 64) + 512 x 128 x 256 (keys and values), 128 x 128 x 7168 (output), the two latent norms.
TEST(Moe, LatentAttentionParameters) {
  const auto m = find_model_preset("deepseek-v3");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(count_params(*m).attention,
                   7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168 + 1536 + 512);
  // The attention core: scores over 128 x 192 and values over 128 x 128, 2 s each per token.
  const LayerFlops l = layer_forward_flops(*m, 1, true);
  EXPECT_DOUBLE_EQ(l.attention, 2.0 * 4096 * 4096 * (128 * 192 + 128 * 128));
}

// DeepEP's dispatch (ParallelSpec::ep_dispatcher) sends a token over InfiniBand once per other node
// holding one of its experts, at most max_nodes_per_token of them: with top 8 of experts over 8
// nodes and node-limited routing to 4, at most 4 x 7/8 copies cross the NIC where NCCL's all-to-all
// sends 8 x 7/8; the layer's exposed all-to-all shrinks accordingly (by more than half).
TEST(Moe, DeepEpSendsATokenOncePerNode) {
  ModelSpec m = mixtral_8x7b();
  m.moe.experts = 64;
  m.moe.top_k = 8;
  m.moe.max_nodes_per_token = 4;
  TrainingSpec train;
  ParallelSpec par;
  par.dp = 64;
  par.ep = 64;
  const auto cluster = dgx_h100(8);
  const double nccl = layer_time(m, par, train, cluster, default_calibration(), true).ep_comm_s;
  par.ep_dispatcher = EpDispatcher::kDeepEp;
  const double deepep = layer_time(m, par, train, cluster, default_calibration(), true).ep_comm_s;
  EXPECT_LT(deepep, 0.55 * nccl);
  EXPECT_GT(deepep, 0.40 * nccl);  // 4 of 8 copies, plus latency and the NVLink forwarding beside it
}

// Routing imbalance: the slowest of the ep ranks gates the layer. With uniform random routing its
// load is about sqrt(2 ln ep) binomial sd above the mean: for Mixtral's top 2 of 4096 tokens over
// ep 8, 1 + 2.04 x sqrt(8192 x 7/8) / 8192 = +2.1% rows for the expert GEMMs. A capacity factor of
// 1 drops what exceeds the even share: the layer gets faster, by less than the experts' +2.1%.
TEST(Moe, TheSlowestExpertRankGatesTheLayerUnlessACapacityCapsIt) {
  ModelSpec m = mixtral_8x7b();
  ParallelSpec par;
  par.dp = 8;
  par.ep = 8;
  TrainingSpec train;
  const auto cluster = dgx_h100(1);
  const double dropless = layer_time(m, par, train, cluster, default_calibration(), true).forward_s;
  m.moe.capacity_factor = 1.0;
  const double capped = layer_time(m, par, train, cluster, default_calibration(), true).forward_s;
  EXPECT_LT(capped, dropless);
  EXPECT_GT(dropless / capped - 1, 0.002);
  EXPECT_LT(dropless / capped - 1, 0.021);
  // Without expert parallelism every rank computes its own tokens: nothing to wait for.
  par.ep = 1;
  const double alone = layer_time(m, par, train, cluster, default_calibration(), true).forward_s;
  m.moe.capacity_factor = 0;
  EXPECT_DOUBLE_EQ(layer_time(m, par, train, cluster, default_calibration(), true).forward_s, alone);
}

// A head width apart from hidden / heads (Qwen3: 64 heads of 128 on a 4096 hidden size): queries
// and the output projection are 8192 wide, keys and values 4 x 128. Per layer 4096 x (8192 + 2 x
// 512) + 8192 x 4096 attention weights, and 4 s^2 b x 8192 attention FLOPs forward (the scores over
// the query width, the values over theirs) against 4 s^2 b x 4096 without head_dim.
TEST(Moe, HeadWidthApartFromHiddenOverHeads) {
  const auto m = find_model_preset("qwen3-235b-a22b");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->head_dim, 128);
  EXPECT_DOUBLE_EQ(count_params(*m).attention, 4096.0 * (8192 + 2 * 512) + 8192.0 * 4096);
  ModelSpec plain = *m;
  plain.head_dim = 0;
  const double s = 4096;
  EXPECT_DOUBLE_EQ(layer_forward_flops(*m, 1).attention, 4 * s * s * 8192);
  EXPECT_DOUBLE_EQ(layer_forward_flops(plain, 1).attention, 4 * s * s * 4096);
  EXPECT_DOUBLE_EQ(layer_forward_flops(*m, 1).qkv, 2 * s * 4096 * (8192 + 2 * 512));
}

// Parallel folding (expert_tp): with tp 2 the tp-cp-ep-dp order puts an ep group of 8 two ranks
// apart, over two nodes; expert_tp 1 lays the expert layers out on their own, 8 consecutive ranks,
// one node. Each GPU then routes half the TP group's tokens (the other TP rank routes the rest) at
// the experts' whole width: the same expert FLOPs, all-to-alls of half the bytes on NVLink only
// (all_to_all_time_s at stride 1), and the experts' states held once per tp x dp / (ep x 1) ranks.
TEST(Moe, FoldingKeepsTheExpertGroupInTheNode) {
  const ModelSpec m = mixtral_8x7b();
  TrainingSpec train;
  train.global_batch = 8;
  ParallelSpec par;
  par.tp = 2;
  par.sequence_parallel = true;
  par.dp = 8;
  par.ep = 8;
  const auto cluster = dgx_h100(2);
  const double routed = 2.0 * 4096 * 4096 * 2;  // top 2 x the TP group's tokens x hidden x 2 bytes
  const LayerTime spread = layer_time(m, par, train, cluster, default_calibration(), true);
  EXPECT_NEAR(spread.ep_comm_s, 4 * all_to_all_time_s(cluster, 8, 2, routed), 1e-12);
  ParallelSpec folded = par;
  folded.expert_tp = 1;
  EXPECT_EQ(folded.ep_stride(), 1);
  EXPECT_EQ(folded.expert_dp(), 2);  // 2 x 8 / (8 x 1)
  const LayerTime in_node = layer_time(m, folded, train, cluster, default_calibration(), true);
  EXPECT_NEAR(in_node.ep_comm_s, 4 * all_to_all_time_s(cluster, 8, 1, routed / 2), 1e-12);
  EXPECT_LT(in_node.ep_comm_s, spread.ep_comm_s / 4);
  // Same FLOPs either way.
  auto flops = [&](const ParallelSpec& p) {
    double f = 0;
    for (const auto& st : compute_step_costs(m, p, train, cluster).stages)
      for (const auto& ch : st.chunks) f += ch.forward_flops;
    return f;
  };
  EXPECT_DOUBLE_EQ(flops(folded), flops(par));
}

}  // namespace
}  // namespace trainsim::model
