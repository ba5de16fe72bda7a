#include "model/flops.hpp"

#include <gtest/gtest.h>

#include "model/transformer.hpp"

namespace trainsim::model {
namespace {

// GPT-3 175B dims (published_runs.yaml: megatron_sc21_t2_ptdp_174.6B_*, korthikanti22_175B_*).
ModelSpec gpt3_175b() {
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.ffn_hidden = 4 * 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.vocab = 51200;
  m.seq_len = 2048;
  m.ffn = Ffn::kGelu;
  return m;
}

TEST(Flops, LayerForwardGpt3) {
  const ModelSpec m = gpt3_175b();
  const LayerFlops l = layer_forward_flops(m, 1);
  const double s = 2048, h = 12288;
  EXPECT_DOUBLE_EQ(l.qkv, 2 * s * h * 3 * h);
  EXPECT_DOUBLE_EQ(l.attention, 4 * s * s * h);
  EXPECT_DOUBLE_EQ(l.out_proj, 2 * s * h * h);
  EXPECT_DOUBLE_EQ(l.mlp, 16 * s * h * h);
  // Megatron: 24 b s h^2 + 4 b s^2 h per layer forward.
  EXPECT_DOUBLE_EQ(l.total(), 24 * s * h * h + 4 * s * s * h);
}

TEST(Flops, MegatronEq3IsHardwareFlopsWithFullRecompute) {
  // Eq.3 96 B s l h^2 (1 + s/6h + V/16lh) = 4 forwards of the layers + 3 of the logits.
  const ModelSpec m = gpt3_175b();
  const double eq3 = megatron_eq3_flops(m, 1536);
  // Closed form evaluated by hand: 96*1536*2048*96*12288^2*(1 + 2048/73728 + 51200/18874368)
  const double by_hand = 96.0 * 1536 * 2048 * 96 * 12288.0 * 12288.0 * (1 + 2048.0 / 73728 + 51200.0 / 18874368);
  EXPECT_NEAR(eq3, by_hand, 1e-9 * by_hand);
  EXPECT_NEAR(hardware_flops_per_step(m, 1536, Recompute::kFull), eq3, 1e-9 * eq3);
}

TEST(Flops, MegatronEq3ReproducesTheDerivedStepTime) {
  // megatron_sc21_t1_1008.0B: 128 layers, h 25600, B 3072, 3072 GPUs at 163 TFLOP/s:
  // derived.step_time_s_from_eq3 = Eq.3 / (n X) = 102.63 s.
  ModelSpec m = gpt3_175b();
  m.layers = 128;
  m.hidden = 25600;
  m.ffn_hidden = 4 * 25600;
  m.heads = 160;
  m.kv_heads = 160;
  EXPECT_NEAR(megatron_eq3_flops(m, 3072) / (3072 * 163e12), 102.63, 0.01);
}

TEST(Flops, KorthikantiEq7IsModelFlops) {
  const ModelSpec m = gpt3_175b();
  const double eq7 = korthikanti_eq7_flops(m, 64);
  EXPECT_NEAR(model_flops_per_step(m, 64), eq7, 1e-9 * eq7);
  // korthikanti22_175B_seqpar_selective: 13.75 s on 64 GPUs -> 160.3 model TFLOP/s per GPU (derived).
  EXPECT_NEAR(eq7 / (64 * 13.75) / 1e12, 160.3, 0.1);
}

TEST(Flops, SelectiveRecomputeAddsTheAttentionCore) {
  const ModelSpec m = gpt3_175b();
  const double s = 2048, h = 12288;
  EXPECT_DOUBLE_EQ(layer_recompute_flops(m, 2, Recompute::kSelective), 2 * 4 * s * s * h);
  EXPECT_EQ(layer_recompute_flops(m, 2, Recompute::kNone), 0.0);
  // Per-op policy without the attention on its save list: the attention core again too.
  EXPECT_NEAR(layer_recompute_flops(m, 2, Recompute::kSelectiveOp, false) - layer_recompute_flops(m, 2, Recompute::kSelectiveOp),
              2 * 4 * s * s * h, 1e-9 * 2 * 4 * s * s * h);
  EXPECT_DOUBLE_EQ(layer_recompute_flops(m, 2, Recompute::kFull), layer_forward_flops(m, 2).total());
  // And the HFU numerator counts it in every layer: 96 layers x 4 s^2 h x 2 sequences more.
  EXPECT_NEAR(hardware_flops_per_step(m, 2, Recompute::kSelectiveOp, false) -
                  hardware_flops_per_step(m, 2, Recompute::kSelectiveOp),
              96 * 2 * 4 * s * s * h, 1e-9 * 96 * 2 * 4 * s * s * h);
}

TEST(Flops, PalmConventionPerToken) {
  // PaLM App. B: 6N + 12 L H Q T per token, N = weights of the GEMMs (layers + logits), H Q = h.
  ModelSpec m;  // Llama 3 8B (nemo2407_llama3_8b): GQA and swiglu.
  m.layers = 32;
  m.hidden = 4096;
  m.ffn_hidden = 14336;
  m.heads = 32;
  m.kv_heads = 8;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.ffn = Ffn::kSwiglu;
  const double h = 4096, kv = 1024, f = 14336;
  const double n_gemm = 32 * (2 * h * h + 2 * h * kv + 3 * h * f) + h * 128256;
  const double palm = 6 * n_gemm + 12 * 32 * h * 8192;
  EXPECT_NEAR(model_flops_per_step(m, 1) / 8192, palm, 1e-9 * palm);
  // nemo2407_llama3_8b: 697 model TFLOP/s per GPU at 12036 tokens/s/GPU -> 57.9 GFLOP per token.
  EXPECT_NEAR(model_flops_per_step(m, 1) / 8192 / 1e9, 697e12 / 12036 / 1e9, 0.1);
}

}  // namespace
}  // namespace trainsim::model
