// What a few simulated windows of a run say about the whole run (issue 17): step-level variability
// (what a dashboard shows minute to minute) and run-level uncertainty (the distribution of the whole
// run's days), kept apart because the second shrinks with the run's length and the first does not.
//
// Method. The step series of R seeds (warm-up step dropped): each about its own mean, the within-run
// noise sd_w and its integrated autocorrelation time tau = 1 + 2 sum_k rho_k (Sokal's automatic
// window: the smallest M with M >= 5 tau(M); or, when larger, the batch-means estimate over quarters
// of each window), how many steps one independent sample is worth. A
// window of n steps then has a mean whose variance from within-run noise is sd_w^2 tau / n; when the
// R window means spread more than that (chi-square test, 99%; only for windows of at least
// kSeparableTaus autocorrelation times), the excess is a component that
// persists for the whole run (the job mix a seed draws), `between_sd`. The whole run's mean step is
// then normal with variance between_sd^2 + sd_w^2 tau / N (N its steps); its days are that times
// N / 86400, times each seed's failure stretch when the scenario has failures.
#pragma once

#include <cstdint>
#include <vector>

namespace trainsim::report {

// Windows shorter than this many autocorrelation times cannot tell a persistent seed component from
// fluctuations slower than the window (the autocorrelation estimate is itself biased low there): the
// component is then not claimed, and `separable` says so.
inline constexpr double kSeparableTaus = 100;

struct SeriesStats {
  double mean = 0, sd = 0;       // over every pooled step (about the grand mean: what a dashboard sees)
  double within_sd = 0;          // about each seed's own mean: the noise within a run
  double p50 = 0, p99 = 0;       // step-time percentiles over every pooled step
  double tau_steps = 1;          // integrated autocorrelation time, steps
  int64_t steps = 0;             // pooled steps (R x window, warm-up dropped)
  int64_t window = 0;            // steps per seed used
  double window_means_sd = 0;    // sd of the R window means
  double between_sd = 0;         // persistent seed-to-seed sd of the mean step (0 when not significant)
  bool separable = false;        // window >= kSeparableTaus x tau: between_sd was tested
  // With a known slow process (tenant jobs that come and go, slow_tau_s > 0) the windows' excess
  // spread is that process seen frozen in each window, not a persistent component: its sd, which
  // averages over the run with the process's own autocorrelation time.
  double slow_sd = 0;
  double slow_tau_s = 0;
  // A daily cycle of the step removed before the analysis (remove_daily_cycle): the sd of that
  // cycle over the day. A run averages it over its own length (run_mean_sd).
  double diurnal_sd = 0;
};

// A daily cycle in the step series (contention.diurnal_amplitude). Step t of seed i starts at hour
// start_hours[i] + (the sum of the steps before it) / 3600; every pooled step (warm-up dropped) is
// fit by least squares to m + a cos(2 pi h / 24) + b sin(2 pi h / 24), and the cycle is subtracted
// from the series, leaving each step about the daily average m. Not fitted (series unchanged) when
// the steps' hours do not cover enough of the day to tell the cycle from a level: the normal
// equations' smallest pivot under 1e-3 of the step count.
struct DailyCycle {
  double a = 0, b = 0;  // seconds of step time
  bool fitted = false;
  double sd() const;    // sqrt((a^2 + b^2) / 2): the cycle's sd over the day
};
DailyCycle remove_daily_cycle(std::vector<std::vector<double>>& series, const std::vector<double>& start_hours);

// REQUIRES: every series has the same length >= 2 (the first step of each is dropped as warm-up).
// `slow_tau_s`: the integrated autocorrelation time, in seconds, of a slow process the scenario
// defines (0: none); see SeriesStats::slow_sd.
SeriesStats analyse_series(const std::vector<std::vector<double>>& series, double slow_tau_s = 0);

// Standard deviation of the mean step over a run of `total_steps` steps: between_sd^2 +
// sd_w^2 tau / N + slow_sd^2 x min(1, slow_tau_s / (N x mean step)) + diurnal_sd^2 x sinc^2(run
// days), the last the spread of a daily cycle's average over a run that starts at a random hour
// (sinc x = sin(pi x) / (pi x): 0 for whole days).
double run_mean_sd(const SeriesStats& s, double total_steps);

// Standard error of s.mean itself, from how much was simulated: sd^2 tau / steps pooled, plus the
// persistent component over the R seeds, and never less than the R window means' own standard
// error (independent replications). The 95% interval of the projected mean is +-1.96 of it.
double mean_step_se(const SeriesStats& s, int64_t seeds);

// Quantiles of the whole run's days: mean step ~ N(s.mean, run_mean_sd), days = mean step x
// total_steps / 86400 x stretch[i] for each seed's failure stretch (days with failures / days; 1
// without failures), the mixture evaluated at 40 normal quantiles per seed.
std::vector<double> run_level_days(const SeriesStats& s, double total_steps, const std::vector<double>& stretch);

}  // namespace trainsim::report
