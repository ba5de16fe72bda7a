// report/series.hpp: step-level statistics and the whole run's days from a few simulated windows.
#include "report/series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "report/run_report.hpp"

namespace trainsim::report {
namespace {

// R series of n steps (plus the warm-up step) from a generator.
template <class F>
std::vector<std::vector<double>> make(int r, int n, F&& f) {
  std::vector<std::vector<double>> out(static_cast<size_t>(r));
  for (int i = 0; i < r; ++i) {
    out[static_cast<size_t>(i)].push_back(-100);  // warm-up, dropped
    for (int t = 0; t < n; ++t) out[static_cast<size_t>(i)].push_back(f(i, t));
  }
  return out;
}

// Independent steps: one sample per step (tau ~ 1), no seed-to-seed component, and the whole run's
// mean step has sd = sd_step / sqrt(N).
TEST(SeriesTest, IndependentStepsAverageOutOverTheRun) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> noise(2.0, 0.2);
  const auto s = analyse_series(make(12, 500, [&](int, int) { return noise(rng); }));
  EXPECT_EQ(s.steps, 6000);
  EXPECT_EQ(s.window, 500);
  EXPECT_NEAR(s.mean, 2.0, 0.01);
  EXPECT_NEAR(s.sd, 0.2, 0.01);
  EXPECT_NEAR(s.tau_steps, 1.0, 0.3);
  EXPECT_EQ(s.between_sd, 0.0);
  EXPECT_NEAR(s.within_sd, s.sd, 0.01 * s.sd);  // no seed offsets: within = total
  EXPECT_NEAR(run_mean_sd(s, 1e6), s.within_sd * std::sqrt(s.tau_steps / 1e6), 1e-12);
  EXPECT_NEAR(s.p50, 2.0, 0.02);
  EXPECT_NEAR(s.p99, 2.0 + 2.326 * 0.2, 0.05);  // normal 99th percentile
}

// AR(1) steps x_t = phi x_{t-1} + e: integrated autocorrelation time (1 + phi) / (1 - phi) = 9 at phi = 0.8.
TEST(SeriesTest, AutocorrelationTimeOfAnAr1Series) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> e(0, 0.1);
  std::vector<double> state(8, 0);
  const auto s = analyse_series(make(8, 4000, [&](int i, int) {
    state[static_cast<size_t>(i)] = 0.8 * state[static_cast<size_t>(i)] + e(rng);
    return 3.0 + state[static_cast<size_t>(i)];
  }));
  EXPECT_NEAR(s.tau_steps, 9.0, 2.0);
  EXPECT_EQ(s.between_sd, 0.0);
}

// Each seed carries an offset for its whole window (a job mix drawn per seed): the windows spread far
// beyond their own noise, the excess persists for the run, and the run's days keep that spread.
TEST(SeriesTest, APersistentSeedComponentSurvivesTheWholeRun) {
  const std::vector<double> offset = {-0.3, 0.25, 0.1, -0.05, 0.4, -0.2, 0.0, -0.15};
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.05);
  const auto s = analyse_series(make(8, 200, [&](int i, int) { return 2.0 + offset[static_cast<size_t>(i)] + noise(rng); }));
  double m = 0, v = 0;
  for (double o : offset) m += o / 8;
  for (double o : offset) v += (o - m) * (o - m) / 7;
  EXPECT_NEAR(s.between_sd, std::sqrt(v), 0.02);
  const double total = 1e6;
  const auto q = stats_of(run_level_days(s, total, {}));
  // Days p10..p90 ~ +-1.28 between_sd of the mean step: not shrunk by the run's length.
  EXPECT_NEAR((q.p90 - q.p10) / 2, 1.2816 * s.between_sd * total / 86400, 0.05 * (q.p90 - q.p10));
}

// A slow process the scenario defines (tenant jobs of hours, windows of minutes): each window sees
// one frozen state, so the windows' excess spread is that process, not a persistent component. Over
// a run T long it averages with the process's autocorrelation time: sd_slow^2 x tau_slow / T. The
// mean's standard error is then at least the R window means' own.
TEST(SeriesTest, ASlowProcessAveragesOverTheRunWithItsOwnTimeScale) {
  const std::vector<double> state = {0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 1.0};  // a tenant present or not
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0, 0.05);
  const auto series = make(8, 100, [&](int i, int) { return 2.0 + 0.5 * state[static_cast<size_t>(i)] + noise(rng); });
  const double tau_slow = 3600;  // 1 h
  const auto s = analyse_series(series, tau_slow);
  EXPECT_EQ(s.between_sd, 0.0);
  EXPECT_NEAR(s.slow_sd, 0.5 * std::sqrt(8.0 / 7 / 4), 0.02);  // sd of 0/0.5 in equal halves: 0.267
  const double total = 1e6;  // 1e6 steps of ~2.25 s: 625 h
  const double run_s = total * s.mean;
  EXPECT_NEAR(run_mean_sd(s, total),
              std::sqrt(s.within_sd * s.within_sd * s.tau_steps / total + s.slow_sd * s.slow_sd * tau_slow / run_s), 1e-12);
  EXPECT_LT(run_mean_sd(s, total), 0.1 * s.slow_sd);  // averaged away over 625 h
  EXPECT_GE(mean_step_se(s, 8), s.window_means_sd / std::sqrt(8.0) - 1e-12);
}

// A deterministic run: every step the same; the run's days are exact and the failure stretch of
// each seed multiplies them.
TEST(SeriesTest, ConstantStepsGiveExactDaysTimesEachSeedsFailureStretch) {
  const auto s = analyse_series(make(3, 10, [](int, int) { return 1.5; }));
  EXPECT_EQ(s.sd, 0.0);
  EXPECT_EQ(s.between_sd, 0.0);
  EXPECT_EQ(mean_step_se(s, 3), 0.0);
  const auto d = run_level_days(s, 86400, {1.0, 1.1});
  const auto q = stats_of(d);
  EXPECT_DOUBLE_EQ(q.min, 1.5);  // 86,400 steps of 1.5 s = 1.5 days
  EXPECT_DOUBLE_EQ(q.max, 1.5 * 1.1);
}

// A planted daily cycle (contention.diurnal_amplitude): steps of ~600 s over 4 windows that start 6
// hours apart, each step m + a cos(h) + b sin(h) at its own start hour h (the clock advancing by the
// steps themselves). The fit recovers a and b and leaves every step at m.
TEST(SeriesTest, ADailyCycleIsFittedAndTakenOut) {
  const double m = 600, a = 120, b = -50;
  const std::vector<double> hours = {0, 6, 12, 18};
  std::vector<std::vector<double>> series(hours.size());
  for (size_t i = 0; i < hours.size(); ++i) {
    double clock = 0;
    for (int t = 0; t < 21; ++t) {
      const double h = 2 * M_PI * (hours[i] + clock / 3600) / 24;
      series[i].push_back(m + a * std::cos(h) + b * std::sin(h));
      clock += series[i].back();
    }
  }
  const DailyCycle d = remove_daily_cycle(series, hours);
  ASSERT_TRUE(d.fitted);
  EXPECT_NEAR(d.a, a, 1e-6);
  EXPECT_NEAR(d.b, b, 1e-6);
  EXPECT_NEAR(d.sd(), std::sqrt((a * a + b * b) / 2), 1e-6);
  for (const auto& x : series)
    for (double v : x) EXPECT_NEAR(v, m, 1e-6);
  // A run averages the cycle over its days: whole days leave nothing of it, half a day leaves
  // sinc(1/2) = 2 / pi of its sd (the run starting at a random hour).
  SeriesStats s;
  s.mean = 1.0;
  s.diurnal_sd = d.sd();
  EXPECT_NEAR(run_mean_sd(s, 86400), 0.0, 1e-9 * d.sd());
  EXPECT_NEAR(run_mean_sd(s, 43200), d.sd() * 2 / M_PI, 1e-9);
}

// Windows that all see the same hour cannot tell a cycle from a level: nothing is fitted and the
// series is left as it was.
TEST(SeriesTest, ADailyCycleIsNotFittedFromOneTimeOfDay) {
  auto series = make(4, 50, [](int i, int t) { return 2.0 + 0.01 * i + 0.001 * t; });
  const auto before = series;
  const DailyCycle d = remove_daily_cycle(series, {9, 9, 9, 9});
  EXPECT_FALSE(d.fitted);
  EXPECT_EQ(d.sd(), 0.0);
  EXPECT_EQ(series, before);
}

}  // namespace
}  // namespace trainsim::report
