// model/accuracy: the validation set's error band (sim/hardware/data/accuracy.yaml) applied to a
// prediction. test/validation checks that the shipped figures are what the model gives.
#include "model/accuracy.hpp"

#include <gtest/gtest.h>

namespace trainsim::model {
namespace {

TEST(Accuracy, TheShippedBandsContainTheirPrediction) {
  // A band from the 5th to the 95th percentile of signed errors over the published runs: the
  // prediction itself (error 0) lies inside, with more than a few rows behind each figure.
  const ModelAccuracy& a = model_accuracy();
  for (const ErrorBand* b : {&a.step_time, &a.peak_memory}) {
    EXPECT_LT(b->p05_pct, 0);
    EXPECT_GT(b->p95_pct, 0);
    EXPECT_GT(b->mean_abs_pct, 0);
    EXPECT_GE(b->rows, 20);
    EXPECT_FALSE(b->basis.empty());
  }
  EXPECT_NE(a.step_time.basis.find("leave-one-source-out"), std::string::npos) << a.step_time.basis;
}

TEST(Accuracy, StepTimeBandScalesThePredictionByOnePlusTheThroughputError) {
  // A run predicted at throughput X whose measured throughput is X / (1 + e) takes (1 + e) times
  // the predicted step: 10 s -> [10 (1 + p05), 10 (1 + p95)].
  const ErrorBand& b = model_accuracy().step_time;
  const Range r = step_time_band(10.0);
  EXPECT_DOUBLE_EQ(r.low, 10.0 * (1 + b.p05_pct / 100));
  EXPECT_DOUBLE_EQ(r.high, 10.0 * (1 + b.p95_pct / 100));
  EXPECT_LT(r.low, 10.0);
  EXPECT_GT(r.high, 10.0);
}

TEST(Accuracy, MemoryBandWidensOnlyWhatTheAllocatorHolds) {
  // The published peaks are the caching allocator's: the CUDA context (0.4 GB) and NCCL's buffers
  // (0.8 GB) stay as predicted, the 50 GB the allocator holds becomes 50 / (1 + e).
  MemoryBreakdown mb;
  mb.weights = 30e9;
  mb.activations = 20e9;
  mb.reserve.cuda_context = 0.4e9;
  mb.reserve.nccl = 0.8e9;
  mb.other = 1.2e9;
  const ErrorBand& b = model_accuracy().peak_memory;
  const Range r = memory_band(mb);
  EXPECT_DOUBLE_EQ(r.low, 1.2e9 + 50e9 / (1 + b.p95_pct / 100));
  EXPECT_DOUBLE_EQ(r.high, 1.2e9 + 50e9 / (1 + b.p05_pct / 100));
}

}  // namespace
}  // namespace trainsim::model
