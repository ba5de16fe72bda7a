// `trainsim run` and the shared path every subcommand takes to simulate one scenario.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "engine/result.hpp"
#include "model/step_costs.hpp"
#include "report/run_report.hpp"

namespace trainsim::cli {

struct RunOptions {
  std::string scenario;
  int64_t steps = 0;             // 0 = training.steps from the scenario
  uint64_t seed = 1;
  std::vector<std::string> sets;
  std::string json_path;         // "" = none, "-" = stdout (then nothing else goes there)
  std::string csv_path;
  std::string trace_path;
  int64_t trace_steps = 2;
  std::string fidelity = "auto";
  bool quiet = false;
  bool timings = false;            // --timings: wall_s in the JSON report (else byte-identical runs)
  bool no_replicate = false;     // simulate every step (no steady-state replication)
  int64_t advice = 3;            // alternatives simulated for the advice (cli/advice.hpp); 0 = none
  std::string self;              // the trainsim binary, for the advice's worker processes
};

// Exit codes: 0 ok, 1 infeasible (does not fit: the report says why), 2 bad input, 130 SIGINT.
int run_command(const RunOptions& options);

// "full" | "symmetric" | anything else: auto.
config::Fidelity parse_fidelity(const std::string& s);

// Noise a scenario may carry, and the --set texts that take it away: the fabric's (other tenants,
// ECMP hashing, faulty links) and the GPUs' (stragglers, static or passing, and per-step jitter).
// run's advice measures each against the same seed without it; variance's dedicated baseline runs
// without both; sweep says a noisy point needs several seeds.
bool noisy_fabric(const config::Scenario& scenario);
bool noisy_gpus(const config::Scenario& scenario);
const std::vector<std::string>& quiet_fabric_sets();
const std::vector<std::string>& healthy_gpu_sets();

// Parses --set texts (throws util::InputError).
std::vector<config::Override> parse_overrides(const std::vector<std::string>& sets);

// Everything one simulated scenario produced.
struct Outcome {
  config::Scenario scenario;
  model::StepCosts costs;
  engine::RunResult run;
  report::RunSummary summary;
  bool fits = true;
  std::string infeasible_reason;  // when !fits: what does not fit and by how much
};

struct SimulateOptions {
  int64_t steps = 0;
  uint64_t seed = 1;
  int64_t trace_steps = 0;
  config::Fidelity fidelity = config::Fidelity::kAuto;
  bool progress = false;  // steps done, rate, ETA on stderr
  bool handle_sigint = false;
  bool replicate = true;  // engine::EngineOptions::replicate
  // Called with the scenario as it will be simulated (a platform file's cluster in it) just before
  // the engine starts: what may run beside the simulation starts there (the advice's workers).
  std::function<void(const config::Scenario&)> before_engine;
};

// Refuses (util::InputError, exit 2) a scenario too large to simulate for `steps` steps (0 =
// training.steps) at the fidelity `fidelity` resolves to: the limits of config/limits.hpp. Batch
// commands call it before starting workers; simulate_scenario before the engine.
void check_simulable(const config::Scenario& scenario, int64_t steps,
                     config::Fidelity fidelity = config::Fidelity::kAuto);

// Checks memory first (a scenario that does not fit is not simulated), then simulates.
Outcome simulate_scenario(const config::Scenario& scenario, const SimulateOptions& options);

// JSON for an infeasible scenario: the memory keys and the reason.
nlohmann::json infeasible_json(const Outcome& outcome);

}  // namespace trainsim::cli
