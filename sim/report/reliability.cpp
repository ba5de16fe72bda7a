#include "report/reliability.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cstdio>
#include <random>
#include <vector>

namespace trainsim::report {

double checkpoint_write_time(const config::ReliabilitySpec& spec, double params) {
  if (spec.checkpoint_write_s > 0) return spec.checkpoint_write_s;
  const double bw = spec.storage_bandwidth_Bps > 0 ? spec.storage_bandwidth_Bps : kDefaultStorageBandwidthBps;
  return params * kCheckpointBytesPerParam / bw;
}

double young_daly_interval(double checkpoint_s, double mtbf_s) { return std::sqrt(2.0 * checkpoint_s * mtbf_s); }

double expected_run_time_s(double work_s, double interval_s, double checkpoint_s, double rate, double restart_s,
                           double* failures) {
  if (failures != nullptr) *failures = 0;
  if (work_s <= 0) return 0;
  if (rate <= 0) return work_s + std::max(0.0, std::ceil(work_s / interval_s) - 1) * checkpoint_s;
  const double full = std::floor(work_s / interval_s);
  double last = work_s - full * interval_s;
  double segments = full;  // segments of interval + checkpoint
  if (last <= 0) {  // the last full interval is the last segment: no write after it
    segments -= 1;
    last = interval_s;
  }
  const double retries = segments * std::expm1(rate * (interval_s + checkpoint_s)) + std::expm1(rate * last);
  if (failures != nullptr) *failures = retries;
  return (1 / rate + restart_s) * retries;
}

FailureOutcome simulate_failures(const config::ReliabilitySpec& spec, double params, int64_t gpus, double compute_s,
                                 double interval_s, uint64_t seed) {
  FailureOutcome out;
  out.checkpoint_write_s = checkpoint_write_time(spec, params);
  const double rate = spec.failures_per_gpu_hour * static_cast<double>(gpus) / 3600.0;  // per second
  out.mtbf_s = rate > 0 ? 1.0 / rate : 0;
  const double work_total = compute_s;
  if (rate <= 0 || work_total <= 0) {
    out.days_with_failures = work_total / 86400.0;
    return out;
  }
  interval_s = std::max(interval_s, 1.0);
  // The expectation first: it bounds the work below and says when there is no finishing.
  double expected_failures = 0;
  const double expected_s =
      expected_run_time_s(work_total, interval_s, out.checkpoint_write_s, rate, spec.restart_s, &expected_failures);
  if (!(work_total / expected_s >= kMinGoodput) || !(expected_failures <= kMaxDrawnFailures)) {
    out.expected = true;
    out.failures = std::isfinite(expected_failures) && expected_failures < 9e18 ? static_cast<int64_t>(std::llround(expected_failures))
                                                                               : std::numeric_limits<int64_t>::max();
    out.days_with_failures = expected_s / 86400.0;
    out.days_lost_to_failures = (expected_s - work_total) / 86400.0;
    out.checkpoint_days = std::max(0.0, std::ceil(work_total / interval_s) - 1) * out.checkpoint_write_s / 86400.0;
    out.goodput = std::isfinite(expected_s) ? work_total / expected_s : 0;
    if (!(out.goodput >= kMinGoodput)) {
      out.finishes = false;
      char buf[320];
      std::snprintf(buf, sizeof buf,
                    "a checkpoint every %.0f s (plus a %.1f s write) against a job MTBF of %.1f s: a segment survives "
                    "with probability %.2g, expected goodput %.2g%%, under %.0f%%",
                    interval_s, out.checkpoint_write_s, out.mtbf_s, std::exp(-rate * (interval_s + out.checkpoint_write_s)),
                    100 * out.goodput, 100 * kMinGoodput);
      out.why = buf;
    }
    return out;
  }
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> next_failure(rate);
  // Category of each failure, in proportion to its rate.
  std::vector<std::string> names;
  std::vector<double> weights;
  for (const auto& [name, r] : spec.categories) {
    names.push_back(name);
    weights.push_back(r);
  }
  std::discrete_distribution<size_t> category(weights.begin(), weights.end());

  double t = 0;     // wall clock
  double done = 0;  // work safely checkpointed
  double writing = 0;
  double failure_at = next_failure(rng);
  // Bounded: each loop either completes a segment or consumes a failure; a run whose failures
  // come faster than it can checkpoint is cut off at 1000x its failure-free length.
  while (done < work_total && t < 1000.0 * work_total) {
    const double work = std::min(interval_s, work_total - done);
    const bool last = done + work >= work_total;
    const double segment = work + (last ? 0.0 : out.checkpoint_write_s);
    if (t + segment <= failure_at) {
      t += segment;
      done += work;
      if (!last) writing += out.checkpoint_write_s;
      continue;
    }
    // A failure mid-segment: the segment's work is lost; restart from the last checkpoint.
    ++out.failures;
    if (!names.empty()) ++out.failures_by_category[names[category(rng)]];
    t = failure_at + spec.restart_s;
    failure_at = t + next_failure(rng);
  }
  out.days_with_failures = t / 86400.0;
  out.days_lost_to_failures = (t - work_total) / 86400.0;
  out.checkpoint_days = writing / 86400.0;
  out.goodput = t > 0 ? work_total / t : 1;
  return out;
}

IntervalChoice best_checkpoint_interval(const config::ReliabilitySpec& spec, double params, int64_t gpus,
                                        double compute_s, uint64_t seed, int replications) {
  IntervalChoice c;
  const double ckpt = checkpoint_write_time(spec, params);
  const double rate = spec.failures_per_gpu_hour * static_cast<double>(gpus) / 3600.0;
  if (rate <= 0) return c;
  c.young_daly_s = young_daly_interval(ckpt, 1.0 / rate);
  // 41 intervals from YD/8 to YD*8, log-spaced; the same seeds for every interval.
  for (int k = -20; k <= 20; ++k) {
    const double interval = c.young_daly_s * std::pow(8.0, k / 20.0);
    double sum = 0;
    for (int r = 0; r < replications; ++r)
      sum += simulate_failures(spec, params, gpus, compute_s, interval, seed + static_cast<uint64_t>(r)).goodput;
    const double mean = sum / replications;
    if (mean > c.best_goodput) {
      c.best_goodput = mean;
      c.best_interval_s = interval;
    }
  }
  return c;
}

}  // namespace trainsim::report
