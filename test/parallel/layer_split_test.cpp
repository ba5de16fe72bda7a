#include "parallel/layer_split.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace trainsim::parallel {
namespace {

using V = std::vector<int64_t>;

TEST(SplitLayers, EvenSplit) {
  // 128 layers / 16 stages = 8 each.
  EXPECT_EQ(split_layers(128, 16), V(16, 8));
  EXPECT_EQ(describe_split(128, 16), "128 layers over 16 stages: 16 x 8");
}

TEST(SplitLayers, Llama3_405bShortensFirstAndLast) {
  // published_runs.yaml llama3_405b_reliability_54day (Llama 3 paper Sec. 3.3.2): 126 layers on 16
  // stages, one layer fewer on the first and the last stage. 126 = 14 * 8 + 2 * 7.
  V expected(16, 8);
  expected.front() = 7;
  expected.back() = 7;
  EXPECT_EQ(split_layers(126, 16), expected);
  EXPECT_EQ(describe_split(126, 16), "126 layers over 16 stages: 14 x 8, 2 x 7 (first and last)");
}

TEST(SplitLayers, Llama3_405bAsMetaInterleavedIt) {
  // Issue 14: 126 layers over 16 stages x 8 chunks = 128 chunks of one layer, the model's first
  // chunk (embedding) and last chunk (output layer, loss) empty: stages 0 and 15 hold 7 layers.
  V expected(128, 1);
  expected.front() = 0;
  expected.back() = 0;
  EXPECT_EQ(split_layers(126, 16, 8), expected);
  EXPECT_EQ(describe_split(126, 16, 8), "126 layers over 128 chunks (16 stages x 8): 126 x 1, 2 x 0 (first and last)");
}

TEST(SplitLayers, OneShortChunkGoesFirst) {
  // 11 = 2 * 4 + 3: one chunk of 2, at the front (embedding).
  EXPECT_EQ(split_layers(11, 4), (V{2, 3, 3, 3}));
  EXPECT_EQ(describe_split(11, 4), "11 layers over 4 stages: 3 x 3, 1 x 2 (first)");
}

TEST(SplitLayers, ShortChunksFillFromBothEnds) {
  // 9 = 4 * 2 + 1: three chunks of 2 at positions 0, 3, 1 (first, last, second).
  EXPECT_EQ(split_layers(9, 4), (V{2, 2, 3, 2}));
  EXPECT_EQ(describe_split(9, 4), "9 layers over 4 stages: 1 x 3, 3 x 2 (first 2 and last 1)");
}

TEST(SplitLayers, InterleavedChunksInModelOrder) {
  // 80 layers over pp 4 x v 5 = 20 chunks of 4 (nemo2407_llama3_70b layout).
  EXPECT_EQ(split_layers(80, 4, 5), V(20, 4));
  EXPECT_EQ(describe_split(80, 4, 5), "80 layers over 20 chunks (4 stages x 5): 20 x 4");
  // 126 over 8 x 2 = 16 chunks: same shape as 16 stages.
  V v = split_layers(126, 8, 2);
  EXPECT_EQ(v.front(), 7);
  EXPECT_EQ(v.back(), 7);
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), int64_t{0}), 126);
}

TEST(SplitLayers, OneLayerPerChunkAndSingleStage) {
  EXPECT_EQ(split_layers(16, 16), V(16, 1));
  EXPECT_EQ(split_layers(32, 1), V{32});
  EXPECT_EQ(describe_split(32, 1), "32 layers over 1 stage: 1 x 32");
}

TEST(SplitLayers, AlwaysSumsToLayersAndDiffersByAtMostOne) {
  for (int64_t pp = 1; pp <= 12; ++pp)
    for (int64_t v = 1; v <= 3; ++v)
      for (int64_t layers = pp * v; layers <= 100; ++layers) {
        V s = split_layers(layers, pp, v);
        ASSERT_EQ(static_cast<int64_t>(s.size()), pp * v);
        EXPECT_EQ(std::accumulate(s.begin(), s.end(), int64_t{0}), layers);
        auto [lo, hi] = std::minmax_element(s.begin(), s.end());
        EXPECT_LE(*hi - *lo, 1);
        // The end chunks are never longer than a middle one.
        EXPECT_EQ(s.front(), *lo);
      }
}

}  // namespace
}  // namespace trainsim::parallel
