// From a simulated run to what a user reads: step-time statistics, throughput, MFU, where the
// time goes, the whole-run projection, the bottleneck; as a console table, the contract's JSON,
// a per-step CSV and a Chrome/Perfetto trace. Pure functions of their inputs.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "engine/result.hpp"
#include "model/counterfactual.hpp"
#include "model/memory.hpp"
#include "model/step_costs.hpp"
#include "platform/derive.hpp"
#include "report/reliability.hpp"

namespace trainsim::report {

struct Stats {
  double mean = 0, std = 0, p10 = 0, p50 = 0, p90 = 0, p99 = 0, min = 0, max = 0;
};
// Percentiles by linear interpolation between order statistics. Empty input: all zero.
Stats stats_of(std::vector<double> values);

// GPU waiting over the whole run, by cause (days; they add up to Projection::stretch_days):
//   contention     the run's waiting - the same seed's on a dedicated fabric (contention: removed)
//   stragglers     the dedicated run's waiting - the same without stragglers
//   bubble         of what remains, GPUs waiting on another rank (pipeline fill and drain, step end)
//   communication  of what remains, GPUs waiting on a transfer (DP sync, pipeline sends)
// Without contention or stragglers in the scenario those two are 0 and the run is split itself.
struct StretchByCause {
  double bubble = 0, communication = 0, stragglers = 0, contention = 0;
};

struct Projection {
  double total_steps = 0;
  double days = 0;
  double days_without_sync_wait = 0;  // every GPU's waiting removed from the mean step
  double stretch_days = 0;            // days - days_without_sync_wait
  StretchByCause stretch_days_by_cause;
  double gpu_hours = 0;
  double cost = 0;                    // gpu_hours * training.gpu_hour_price (0 when no price)
  double goodput = 1;                 // useful fraction of wall time with failures (1 without)
  double days_lost_to_failures = 0;
  double days_with_failures = 0;      // days / goodput
};

// Where each pipeline stage's step goes, mean per step over the simulated replicas of that stage
// (seconds; a stage's parts add up to the step up to the time it is idle after its last work).
struct StageBreakdown {
  int64_t stage = 0;
  double compute_s = 0, tp_comm_s = 0, comm_wait_s = 0, bubble_s = 0, optimizer_s = 0;
};

struct RunSummary {
  std::string name;
  int64_t gpus = 0;
  double params = 0;
  bool expert_parallel = false;  // a mixture-of-experts model split over ep > 1: tp_comm_s holds its all-to-alls too
  model::MemoryBreakdown memory;
  double capacity_bytes = 0;
  Stats step_time;
  std::vector<std::string> outside_coverage;  // model::outside_coverage: where the error band has no published run
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  // model FLOPs, no recompute
  double mfu = 0;
  double compute_s = 0, tp_comm_s = 0, exposed_comm_s = 0, bubble_s = 0, optimizer_s = 0;  // means per step
  double sync_wait_fraction = 0;
  double sync_wait_s = 0;          // mean per step over GPUs: waiting on transfers and on other ranks
  double sync_wait_comm_share = 0; // the part of it waiting on transfers (engine GpuTotals)
  std::vector<StageBreakdown> stages;  // JSON breakdown_by_stage_s
  Projection projection;
  std::string bottleneck;  // compute | memory | interconnect | pipeline
  std::string bottleneck_reason;
  std::vector<std::string> advice;  // filled by the run command (cli/advice.hpp): simulated alternatives
  int64_t steps_simulated = 0;
  int64_t steps_replicated = 0;  // steps copied from the steady state (engine/step_engine.hpp)
  uint64_t seed = 0;
  std::string network_model;
  std::string fidelity;
  double wall_s = 0;
  int64_t micro_batches = 0;
  double recompute_share = 0;  // share of compute time spent re-running forwards
  bool has_reliability = false;
  FailureOutcome failures;      // this seed's failure history over the projected run
  IntervalChoice checkpointing; // simulated best checkpoint interval and Young/Daly's
  double checkpoint_interval_s = 0;
  std::vector<std::string> notes;  // what the loader decided for the user (config::Scenario::notes)
  // What idealising each resource saves, closed form, largest first (model/counterfactual.hpp).
  std::vector<model::Counterfactual> savings;
  // Scenario values a platform file replaced (platform/derive.hpp); empty without a file.
  std::vector<platform::PlatformOverride> platform_overrides;
};

// Projection of the whole run (training.total_tokens, or `steps` when it is 0) from a mean step
// and a mean per-GPU sync wait.
Projection project(const config::Scenario& sc, double tokens_per_step, double mean_step_s, double mean_sync_wait_s);

// The bottleneck is the contract class whose idealisation saves the most (s.savings), its reason the
// part of that class that saves the most, with the figures behind it. summarize() calls it; call it
// again after add_measured_saving().
RunSummary summarize(const config::Scenario& sc, const model::StepCosts& costs, const engine::RunResult& run,
                     uint64_t seed);
void diagnose(const config::Scenario& sc, RunSummary& s);
// The stretch split with what the same seed measured on a dedicated fabric (dedicated_wait_s: mean
// per-step sync wait; the run's own when the scenario has no contention) and without stragglers as
// well (quiet_wait_s, quiet_comm_share: the share of that waiting spent on transfers).
void split_stretch(RunSummary& s, double dedicated_wait_s, double quiet_wait_s, double quiet_comm_share);
// A saving only the engine measures (interconnect.contention, compute.stragglers) against the run's
// mean step `base_s`; its class's saving grows by the same amount and is then read against base_s
// too (the closed form knows neither effect); re-sorted.
void add_measured_saving(RunSummary& s, const std::string& key, double base_s, double saved_s);

nlohmann::json to_json(const RunSummary& s);
std::string console_table(const RunSummary& s);
// One row per simulated step: step,time_s,compute_s,tp_comm_s,exposed_comm_s,bubble_s,optimizer_s,sync_wait_s
std::string steps_csv(const engine::RunResult& run);
// Chrome trace-event JSON (opens in ui.perfetto.dev): a track per simulated GPU and its DP stream.
std::string chrome_trace(const engine::RunResult& run);

}  // namespace trainsim::report
