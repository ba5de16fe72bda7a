#include "report/reliability.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace trainsim::report {
namespace {

// Llama 3 405B (published_runs.yaml llama3_405b_reliability_54day): 419 unexpected interruptions in
// 54 days on 16,384 GPUs.
config::ReliabilitySpec llama3_like() {
  config::ReliabilitySpec r;
  r.failures_per_gpu_hour = 419.0 / (54.0 * 24.0 * 16384.0);
  r.categories = {{"gpu", r.failures_per_gpu_hour}};
  r.checkpoint_interval_s = 3600;
  r.checkpoint_write_s = 60;
  r.restart_s = 600;
  return r;
}

TEST(ReliabilityTest, NoFailuresMeansGoodputOne) {
  config::ReliabilitySpec r = llama3_like();
  r.failures_per_gpu_hour = 0;
  const auto out = simulate_failures(r, 405e9, 16384, 30 * 86400.0, 3600, 1);
  EXPECT_EQ(out.goodput, 1.0);
  EXPECT_EQ(out.days_lost_to_failures, 0.0);
  EXPECT_EQ(out.failures, 0);
}

TEST(ReliabilityTest, FailureCountMatchesTheRate) {
  // Expected failures over the wall time W: W * gpus * rate. 54 days of compute at the Llama 3 rate
  // gives ~419 failures over the compute days, more over the longer wall time.
  const auto r = llama3_like();
  const auto out = simulate_failures(r, 405e9, 16384, 54 * 86400.0, 1800, 7);
  const double expected = out.days_with_failures * 24 * 16384 * r.failures_per_gpu_hour;
  EXPECT_NEAR(static_cast<double>(out.failures), expected, 4 * std::sqrt(expected));  // Poisson: 4 sigma
  EXPECT_GT(out.failures, 419);
}

TEST(ReliabilityTest, CheckpointWriteTimeFromStorageBandwidth) {
  // 405e9 params x 14 bytes / 273 GB/s (Megatron SC21 checkpoint_1T save rate) = 20.77 s.
  config::ReliabilitySpec r;
  EXPECT_NEAR(checkpoint_write_time(r, 405e9), 405e9 * 14 / 273e9, 1e-9);
  r.storage_bandwidth_Bps = 1e12;
  EXPECT_NEAR(checkpoint_write_time(r, 405e9), 5.67, 1e-9);
  r.checkpoint_write_s = 30;
  EXPECT_EQ(checkpoint_write_time(r, 405e9), 30);
}

TEST(ReliabilityTest, SimulatedOptimumIsWithinTwentyPercentOfYoungDaly) {
  // Young/Daly: sqrt(2 * C * MTBF). C = 60 s, MTBF = 1 / (16384 * rate) = 3.09 h -> 1155 s.
  const auto r = llama3_like();
  const auto c = best_checkpoint_interval(r, 405e9, 16384, 54 * 86400.0, 1);
  const double mtbf = 1.0 / (16384 * r.failures_per_gpu_hour / 3600.0);
  EXPECT_NEAR(c.young_daly_s, std::sqrt(2 * 60 * mtbf), 1e-6);
  EXPECT_NEAR(c.best_interval_s, c.young_daly_s, 0.2 * c.young_daly_s);
}

TEST(ReliabilityTest, LlamaThreeRatesGiveAboutNinetyPercentGoodput) {
  // Llama 3 paper Sec. 3.3.4: >90% effective training time on 16K GPUs with these interruption
  // rates. With a checkpoint near the optimum (C = 60 s, restart 10 min) goodput lands near 0.9.
  const auto r = llama3_like();
  const auto c = best_checkpoint_interval(r, 405e9, 16384, 54 * 86400.0, 3);
  EXPECT_GT(c.best_goodput, 0.85);
  EXPECT_LT(c.best_goodput, 0.97);
}

TEST(ReliabilityTest, SameSeedSameHistoryOtherSeedOther) {
  const auto r = llama3_like();
  const auto a = simulate_failures(r, 405e9, 16384, 20 * 86400.0, 3600, 11);
  const auto b = simulate_failures(r, 405e9, 16384, 20 * 86400.0, 3600, 11);
  const auto c = simulate_failures(r, 405e9, 16384, 20 * 86400.0, 3600, 12);
  EXPECT_EQ(a.days_with_failures, b.days_with_failures);
  EXPECT_NE(a.days_with_failures, c.days_with_failures);
}

// The expectation the drawn histories scatter around: (1/rate + restart)(e^(rate S) - 1) a segment.
// 54 days at the Llama 3 rate, hourly checkpoints of 60 s: the mean of 64 histories' days is
// within 1% of it (their sd is about 0.6% of the mean: sqrt(failures) lost segments of half an
// hour over 54 days).
TEST(ReliabilityTest, DrawnHistoriesAverageToTheExpectation) {
  const auto r = llama3_like();
  const double work = 54 * 86400.0, rate = r.failures_per_gpu_hour * 16384 / 3600;
  const double expected = expected_run_time_s(work, 3600, 60, rate, 600);
  double sum = 0;
  for (uint64_t seed = 1; seed <= 64; ++seed) sum += simulate_failures(r, 405e9, 16384, work, 3600, seed).days_with_failures;
  EXPECT_NEAR(sum / 64 * 86400, expected, 0.01 * expected);
  // No failures: the work and every checkpoint but the last.
  EXPECT_DOUBLE_EQ(expected_run_time_s(7200, 3600, 60, 0, 600), 7260.0);
}

// Issue 21 item 6: failures every 22 s against 2-hour checkpoints never let a segment survive.
// That used to run for minutes (one loop turn per failure, 5e8 of them) and report 125,598 precise
// days; now it answers at once that the run does not finish, with the reason.
TEST(ReliabilityTest, ARunThatCannotCheckpointDoesNotFinish) {
  config::ReliabilitySpec r = llama3_like();
  r.failures_per_gpu_hour = 0.01;  // x 16,384 GPUs: a failure every 22 s
  r.restart_s = 0;
  r.checkpoint_interval_s = 7200;
  r.checkpoint_write_s = 2.8;  // 405B at 2 TB/s, as scenarios/llama3-405b-reliability.yaml
  const auto out = simulate_failures(r, 405e9, 16384, 125 * 86400.0, 7200, 1);
  EXPECT_FALSE(out.finishes);
  EXPECT_TRUE(out.expected);
  EXPECT_LT(out.goodput, kMinGoodput);
  EXPECT_NE(out.why.find("a checkpoint every 7200 s"), std::string::npos) << out.why;
  // The best interval is still found (the scan's short intervals do finish).
  const auto best = best_checkpoint_interval(r, 405e9, 16384, 125 * 86400.0, 1, 2);
  EXPECT_GT(best.best_goodput, 0.3);
  EXPECT_LT(best.best_interval_s, 60);
}

}  // namespace
}  // namespace trainsim::report
