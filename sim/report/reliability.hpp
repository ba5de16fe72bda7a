// Failures, checkpoints and goodput over a whole run (issue 8). Failures arrive as a Poisson
// process (rate = GPUs x failures per GPU-hour); each costs the work since the last checkpoint
// plus the restart. Drawn per seed over the projected run, so variance runs see different
// failure histories. Pure: no SimGrid.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "config/scenario.hpp"

namespace trainsim::report {

// Megatron SC21 (published_runs.yaml reference_formulas.megatron_sc21.checkpoint_1T): a 1T-parameter
// checkpoint of 13.8 TB saved at 273 GB/s. Used when the scenario gives neither a write time nor
// a storage bandwidth.
inline constexpr double kDefaultStorageBandwidthBps = 273e9;
// Checkpoint bytes per parameter: 16-bit weights + fp32 master weights and two Adam moments
// (2 + 12); the same paper's 13.8 TB for 1T parameters is 13.8 bytes per parameter.
inline constexpr double kCheckpointBytesPerParam = 14;

struct FailureOutcome {
  double goodput = 1;                 // compute time / wall time with failures and checkpoints
  double days_with_failures = 0;
  double days_lost_to_failures = 0;   // days_with_failures - compute days (lost work, restarts, checkpoint writes)
  double checkpoint_days = 0;         // of which: writing checkpoints
  int64_t failures = 0;
  std::map<std::string, int64_t> failures_by_category;
  double checkpoint_write_s = 0;
  double mtbf_s = 0;                  // of the whole job
  // Expected goodput below kMinGoodput: failures come faster than the run can checkpoint; the
  // figures above are the (astronomical) expectation, `why` says so.
  bool finishes = true;
  std::string why;
  // The figures are the expectation (expected_run_time_s), not one drawn history: more than
  // kMaxDrawnFailures failures were expected.
  bool expected = false;
};

// Below this expected goodput a run is reported as not finishing (exit 1) rather than with a
// precise-looking number of days.
inline constexpr double kMinGoodput = 0.01;
// At most this many failures are drawn one by one per history; beyond, the expectation is used.
inline constexpr double kMaxDrawnFailures = 1e5;

// Expected wall time of `work_s` of failure-free work checkpointed every `interval_s` (a write of
// `checkpoint_s` after each full interval, none after the last), under failures at `rate` per
// second, each followed by `restart_s`: a segment of S seconds takes (1/rate + restart)(e^(rate S) - 1)
// on average (the classic result for exponential failures: Daly, FGCS 22:303, 2006, Sec. 3).
// `failures`, when given, receives the expected number of failures, sum of (e^(rate S) - 1).
double expected_run_time_s(double work_s, double interval_s, double checkpoint_s, double rate, double restart_s,
                           double* failures = nullptr);

// Time to write one checkpoint of `params` parameters under `spec`.
double checkpoint_write_time(const config::ReliabilitySpec& spec, double params);

// One failure history of a run needing `compute_s` of failure-free wall time on `gpus` GPUs,
// checkpointing every `interval_s` of work.
FailureOutcome simulate_failures(const config::ReliabilitySpec& spec, double params, int64_t gpus, double compute_s,
                                 double interval_s, uint64_t seed);

// Young/Daly first-order optimum: sqrt(2 * checkpoint_time * MTBF).
double young_daly_interval(double checkpoint_s, double mtbf_s);

struct IntervalChoice {
  double best_interval_s = 0;   // simulated optimum (mean goodput over `replications` histories)
  double best_goodput = 0;
  double young_daly_s = 0;
};

// Scans checkpoint intervals (log-spaced around Young/Daly) with common random numbers and picks
// the one with the highest mean goodput.
IntervalChoice best_checkpoint_interval(const config::ReliabilitySpec& spec, double params, int64_t gpus,
                                        double compute_s, uint64_t seed, int replications = 16);

}  // namespace trainsim::report
