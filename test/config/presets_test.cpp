#include "model/presets.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "config/scenario.hpp"
#include "model/transformer.hpp"
#include "util/units.hpp"

namespace trainsim {
namespace {

double params(const char* name) {
  auto m = model::find_model_preset(name);
  EXPECT_TRUE(m.has_value()) << name;
  return m ? model::count_params(*m).total : 0;
}

// Megatron SC21 Eq.2: P = 12lh^2 (1 + 13/(12h) + (V+s)/(12lh)). count_params adds the final
// LayerNorm (2h), which Eq.2 leaves out.
double eq2(double l, double h, double V, double s) { return 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h)); }

TEST(ModelPresets, Llama3_405bParams) {
  // Llama 3 paper: 405B; with its Table 3 dims (126 x 16384, ffn 53248, 8 KV heads, vocab 128256,
  // untied output) the count is 405.8e9.
  EXPECT_NEAR(params("llama3-405b"), 405.8e9, 0.005 * 405.8e9);
}

TEST(ModelPresets, Llama2_7bParams) {
  // Released Llama 2 7B checkpoint: 6,738,415,616 parameters (32 x (4h^2 + 3*h*11008 + 2h) + 2*32000*h + h).
  EXPECT_DOUBLE_EQ(params("llama2-7b"), 6738415616.0);
}

TEST(ModelPresets, MegatronTable1MatchesEq2) {
  // published_runs.yaml megatron_sc21_t1_1.7B: l 24, h 2304, V 51200, s 2048 -> 1.7B by Eq.2.
  EXPECT_NEAR(params("megatron-1.7b"), eq2(24, 2304, 51200, 2048) + 2 * 2304, 1.0);
  EXPECT_NEAR(params("megatron-1.7b") / 1e9, 1.7, 0.05);
  // megatron_sc21_t1_1008.0B: l 128, h 25600, 160 heads.
  EXPECT_NEAR(params("megatron-1008b"), eq2(128, 25600, 51200, 2048) + 2 * 25600, 1.0);
  EXPECT_NEAR(params("megatron-1008b") / 1e9, 1008.0, 0.5);
  // megatron_sc21_t1_145.6B.
  EXPECT_NEAR(params("megatron-145.6b") / 1e9, 145.6, 0.05);
}

TEST(ModelPresets, Gpt3_175bIsMegatrons174_6B) {
  // Eq.2 with l 96, h 12288, V 51200 (padded), s 2048 = 174.6B (megatron_sc21_t2_ptdp_174.6B_384gpu).
  EXPECT_NEAR(params("gpt3-175b") / 1e9, 174.6, 0.05);
}

TEST(ModelPresets, ShapesAndConventions) {
  auto l70 = model::find_model_preset("llama2-70b");
  ASSERT_TRUE(l70);
  EXPECT_EQ(l70->kv_heads, 8);
  EXPECT_EQ(l70->vocab, 32000);
  EXPECT_EQ(l70->seq_len, 4096);
  EXPECT_EQ(l70->ffn, model::Ffn::kSwiglu);
  EXPECT_FALSE(l70->tied_embeddings);
  EXPECT_EQ(l70->preset, "llama2-70b");
  auto m = model::find_model_preset("megatron-18.4b");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->ffn_hidden, 4 * m->hidden);
  EXPECT_TRUE(m->tied_embeddings);
  EXPECT_TRUE(m->learned_position_embedding);
  EXPECT_FALSE(model::find_model_preset("llama3-406b"));
  EXPECT_EQ(model::model_preset_names().size(), 21u);  // 17 dense, 4 mixture-of-experts (test/model/moe_test.cpp)
  EXPECT_FALSE(m->is_moe());
  EXPECT_TRUE(model::find_model_preset("deepseek-v3")->is_moe());
}

TEST(FailurePreset, Llama3RatesFromTable5) {
  // llama3_405b_reliability_54day: 419 unexpected interruptions in 54 days on 16,384 GPUs.
  auto rates = config::find_failure_preset("llama3");
  ASSERT_TRUE(rates);
  double sum = 0;
  for (const auto& [name, r] : *rates) sum += r;
  EXPECT_NEAR(sum, 419.0 / (54 * 24 * 16384.0), 1e-15);
  EXPECT_NEAR(rates->at("faulty_gpu"), 148.0 / (54 * 24 * 16384.0), 1e-15);
  EXPECT_FALSE(config::find_failure_preset("opt"));
}

TEST(ParseFlops, SimGridSpeedSyntax) {
  EXPECT_DOUBLE_EQ(util::parse_flops("989.4Tf"), 989.4e12);
  EXPECT_DOUBLE_EQ(util::parse_flops("1.5Gflops"), 1.5e9);
  EXPECT_DOUBLE_EQ(util::parse_flops("100f"), 100);
  EXPECT_THROW(util::parse_flops("989.4"), util::UnitError);
  EXPECT_THROW(util::parse_flops("989.4TFLOPS"), util::UnitError);
  EXPECT_THROW(util::parse_flops("1Tif"), util::UnitError);
  EXPECT_THROW(util::parse_flops("0Tf"), util::UnitError);
  EXPECT_THROW(util::parse_flops("1e400Tf"), util::UnitError);
  try {
    util::parse_flops("989.4");
  } catch (const util::UnitError& e) {
    EXPECT_STREQ(e.what(), "'989.4' has no unit");
  }
}

}  // namespace
}  // namespace trainsim
