// Runs many scenario simulations in parallel child processes (SimGrid allows one Engine per
// process): `trainsim worker SCENARIO --set ... --seed S --out FILE` per job, at most `jobs` at once.
// The parent reads the scenario once and hands its bytes to every worker, so a scenario read from a
// pipe (/dev/stdin, `<(...)`) works and an edit during the batch cannot mix two versions.
//
// Stopping: under a StopOnSignal, SIGINT or SIGTERM stops the batch (no new worker, the running
// ones killed and reaped, the private directory removed) and the command reports what finished.
// Each worker runs in a process group of its own, so a terminal's Ctrl-C reaches the parent only,
// and dies with its parent (PR_SET_PDEATHSIG) even when the parent is killed outright.
#pragma once

#include <csignal>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace trainsim::cli {

struct WorkerOptions {
  std::string scenario;            // the user's path: named in messages; a relative cluster.platform is found beside it
  std::string scenario_text_path;  // "" = read `scenario`; else a file holding the bytes to simulate (run_jobs' copy)
  std::vector<std::string> sets;
  uint64_t seed = 1;
  int64_t steps = 0;
  bool no_replicate = false;
  std::string fidelity = "auto";
  int64_t parent = 0;              // the pid that started this worker: it stops at once if that one is gone (0 = unchecked)
  std::string out_path;
};

// The hidden `worker` subcommand: simulate, write {"job":job_key(options), "ok":..., "reason":...,
// "report":{...}, "step_times":[...]} on one line to out_path. Exit 0 when the result file was
// written (feasible or not).
int worker_command(const WorkerOptions& options);

struct Job {
  std::vector<std::string> args;  // after `trainsim worker`: scenario, --set ..., --seed ..., --steps ...
};

// The job that runs `options` (out_path is added by whoever runs it).
Job make_job(const WorkerOptions& options);

// What identifies a job's result: {"scenario", "sets", "seed", "steps"} of its options.
nlohmann::json job_key(const WorkerOptions& options);

// Worker results in a JSON-lines file (worker result files concatenated, or a --resume file),
// by job_key(...).dump(); lines without a "job" key or not JSON are skipped. No file = none.
std::map<std::string, nlohmann::json> read_job_results(const std::string& path);

struct JobResult {
  bool ran = false;       // the child wrote its result file
  int exit_code = 0;
  std::string error;      // the child's stderr tail when it failed
  nlohmann::json result;  // what the worker wrote
  int rank = 0;           // the MPI rank that ran it (0 outside MPI)
  bool stopped = false;   // not run to the end: the batch was stopped (StopOnSignal) before it finished
};

// While one is alive, SIGINT and SIGTERM do not end the process: the first one is recorded and
// run_jobs stops (its unfinished jobs come back `stopped`, on_done is not called for them), so the
// command can report and keep what finished, then exit 128 + the signal's number. That handler then
// gives the signal back its default action: a second one ends the process at once (the workers die
// with it). A signal the process started with ignored (`nohup`, a shell's background job) stays so.
// The previous actions are restored on destruction.
class StopOnSignal {
 public:
  StopOnSignal();
  ~StopOnSignal();
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

  // SIGINT or SIGTERM once one has arrived (since the last StopOnSignal was made), else 0.
  static int received();
  // "SIGINT", "SIGTERM" (else "signal N").
  static std::string name(int signo);

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

// Runs every job; `on_done(index, result)` is called in the parent as each finishes (in finish
// order). jobs <= 0 means the number of cores. Stopped by a signal (StopOnSignal), it returns at
// once with the unfinished jobs `stopped`. Whichever way it ends (done, stopped, an exception from
// on_done), no worker outlives it and its private directory (mkdtemp in $TMPDIR) is removed. `scenario_text` (the bytes the parent read from the
// jobs' scenario path) is written into the batch's private directory and every worker simulates
// that copy (`--scenario-text`), never re-reading the path; "" = the workers read their path.
std::vector<JobResult> run_jobs(const std::string& self, const std::vector<Job>& jobs, int64_t parallel,
                                const std::string& scenario_text,
                                const std::function<void(size_t, const JobResult&)>& on_done);

// The running trainsim binary (/proc/self/exe; argv0 when that cannot be read).
std::string self_exe(const char* argv0);

// Number of online cores (at least 1).
int64_t core_count();

}  // namespace trainsim::cli
