// The defaults published_runs.hpp applies per source (which entries are complete, how missing
// fields are filled). The accuracy over these rows and more_runs.yaml: calibration_test.cpp.
#include "published_runs.hpp"

#include <gtest/gtest.h>

#include <filesystem>

namespace trainsim::validation {
namespace {

// The shared reference data when present, else the snapshot kept beside this test (so a clean
// checkout validates too).
const std::string kPath = std::filesystem::exists(std::string(TRAINSIM_SOURCE_DIR) + "/../shared/reference/published_runs.yaml")
                              ? std::string(TRAINSIM_SOURCE_DIR) + "/../shared/reference/published_runs.yaml"
                              : std::string(TRAINSIM_SOURCE_DIR) + "/test/validation/published_runs.yaml";

TEST(PublishedRuns, DefaultsFollowTheSourceRules) {
  if (!std::filesystem::exists(kPath)) GTEST_SKIP() << "reference data not found: " << kPath;
  const std::vector<PublishedRun> runs = load_published_runs(kPath);
  int seen = 0;
  for (const PublishedRun& r : runs) {
    if (r.id == "megatron_sc21_t1_1008.0B") {
      // 128 layers over 64 stages = 2 per stage: interleaved with 2 chunks; full recompute (Eq.3).
      EXPECT_EQ(r.par.schedule, model::Schedule::kInterleaved);
      EXPECT_EQ(r.par.virtual_stages, 2);
      EXPECT_EQ(r.par.recompute, model::Recompute::kFull);
      EXPECT_EQ(r.metric, Metric::kHardwareTflops);
      ++seen;
    }
    if (r.id == "nemo2407_llama2_70b") {
      // Llama 2 70B: GQA 8, swiglu ffn 28672, vocab 32000; FP8, SP with tp 4, distributed optimizer.
      EXPECT_EQ(r.model.ffn, model::Ffn::kSwiglu);
      EXPECT_EQ(r.model.ffn_hidden, 28672);
      EXPECT_EQ(r.model.vocab, 32000);
      EXPECT_EQ(r.model.kv_heads, 8);
      EXPECT_EQ(r.train.precision, model::Precision::kFp8);
      EXPECT_TRUE(r.par.sequence_parallel);
      EXPECT_EQ(r.par.zero, 1);
      EXPECT_EQ(r.par.virtual_stages, 20);
      ++seen;
    }
    if (r.id == "korthikanti22_175B_seqpar_selective") {
      // Derived in the yaml: 160.3 model TFLOP/s per GPU from the 13.75 s iteration (Eq.7).
      EXPECT_NEAR(r.measured_tflops, 160.3, 0.1);
      EXPECT_EQ(r.par.recompute, model::Recompute::kSelective);
      EXPECT_EQ(r.par.virtual_stages, 3);
      ++seen;
    }
  }
  EXPECT_EQ(seen, 3);
}

}  // namespace
}  // namespace trainsim::validation
