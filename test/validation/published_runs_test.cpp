// Predicted vs measured throughput for every complete entry of published_runs.yaml (rules for which
// entries are complete and how missing fields are defaulted: published_runs.hpp). One set of
// constants (model/compute.cpp) for all rows.
#include "published_runs.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

namespace trainsim::validation {
namespace {

// The shared reference data when present, else the snapshot kept beside this test (so a clean
// checkout validates too).
const std::string kPath = std::filesystem::exists(std::string(TRAINSIM_SOURCE_DIR) + "/../shared/reference/published_runs.yaml")
                              ? std::string(TRAINSIM_SOURCE_DIR) + "/../shared/reference/published_runs.yaml"
                              : std::string(TRAINSIM_SOURCE_DIR) + "/test/validation/published_runs.yaml";

const char* metric_name(Metric m) {
  switch (m) {
    case Metric::kHardwareTflops: return "hw TF (Eq.3)";
    case Metric::kModelTflops: return "model TF";
    case Metric::kStepTime: return "model TF (step)";
  }
  return "?";
}

TEST(PublishedRuns, PredictedThroughputMatchesMeasured) {
  if (!std::filesystem::exists(kPath)) GTEST_SKIP() << "reference data not found: " << kPath;
  const std::vector<PublishedRun> runs = load_published_runs(kPath);
  // 16 Megatron SC21 (Tables 1-2 PTD-P), 8 Korthikanti 2022, 8 NeMo 24.07 rows at the time of writing.
  ASSERT_GE(runs.size(), 32u);

  double sum_fit = 0, sum_held = 0, max_err = 0;
  int n_fit = 0, n_held = 0;
  std::printf("%-40s %-16s %9s %9s %8s\n", "id", "metric", "measured", "predicted", "error");
  for (const PublishedRun& r : runs) {
    const double predicted = predict_tflops(r);
    const double err = (predicted - r.measured_tflops) / r.measured_tflops * 100;
    const bool held = held_out(r.id);
    std::printf("%-40s %-16s %9.1f %9.1f %+7.1f%%%s\n", r.id.c_str(), metric_name(r.metric), r.measured_tflops, predicted,
                err, held ? "  (held out)" : "");
    EXPECT_LE(std::fabs(err), 20.0) << r.id;
    max_err = std::max(max_err, std::fabs(err));
    (held ? sum_held : sum_fit) += std::fabs(err);
    ++(held ? n_held : n_fit);
  }
  const double mean_all = (sum_fit + sum_held) / static_cast<double>(n_fit + n_held);
  std::printf("rows %d: mean |error| %.2f%%, max %.2f%%; fitted rows %d: %.2f%%; held-out rows %d: %.2f%%\n",
              n_fit + n_held, mean_all, max_err, n_fit, sum_fit / std::max(n_fit, 1), n_held,
              sum_held / std::max(n_held, 1));
  EXPECT_LE(mean_all, 10.0);
  EXPECT_EQ(n_held, 3);

  // For information (not checked): SC21 Table 2 ZeRO-3 rows (DeepSpeed), outside the complete set.
  for (const PublishedRun& r : load_published_runs(kPath, true)) {
    const double predicted = predict_tflops(r);
    std::printf("%-40s %-16s %9.1f %9.1f %+7.1f%%  (ZeRO-3, information only)\n", r.id.c_str(), metric_name(r.metric),
                r.measured_tflops, predicted, (predicted - r.measured_tflops) / r.measured_tflops * 100);
  }
}

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
