// Mixture-of-experts models (issue 19): parameters total and active, FLOPs from the active
// parameters, memory with the routed experts split over expert parallelism.
#include <gtest/gtest.h>

#include "model/flops.hpp"
#include "model/memory.hpp"
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

}  // namespace
}  // namespace trainsim::model
