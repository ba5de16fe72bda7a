// Runs many scenario simulations in parallel child processes (SimGrid allows one Engine per
// process): `trainsim worker SCENARIO --set ... --seed S --out FILE` per job, at most `jobs` at once.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace trainsim::cli {

struct WorkerOptions {
  std::string scenario;
  std::vector<std::string> sets;
  uint64_t seed = 1;
  int64_t steps = 0;
  std::string out_path;
};

// The hidden `worker` subcommand: simulate, write {"ok":..., "reason":..., "report":{...},
// "step_times":[...]} to out_path. Exit 0 when the result file was written (feasible or not).
int worker_command(const WorkerOptions& options);

struct Job {
  std::vector<std::string> args;  // after `trainsim worker`: scenario, --set ..., --seed ..., --steps ...
};

struct JobResult {
  bool ran = false;       // the child wrote its result file
  int exit_code = 0;
  std::string error;      // the child's stderr tail when it failed
  nlohmann::json result;  // what the worker wrote
};

// Runs every job; `on_done(index, result)` is called in the parent as each finishes (in finish
// order). jobs <= 0 means the number of cores.
std::vector<JobResult> run_jobs(const std::string& self, const std::vector<Job>& jobs, int64_t parallel,
                                const std::function<void(size_t, const JobResult&)>& on_done);

// Number of online cores (at least 1).
int64_t core_count();

}  // namespace trainsim::cli
