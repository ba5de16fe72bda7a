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

#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/scenario.hpp"

namespace trainsim::cli {

struct WorkerOptions {
  std::string scenario;            // the user's path: named in messages; a relative cluster.platform is found beside it
  std::string scenario_text_path;  // "" = read `scenario`; else a file holding the bytes to simulate (run_jobs' copy)
  std::vector<std::string> sets;
  uint64_t seed = 1;
  int64_t steps = 0;
  bool no_replicate = false;
  std::string fidelity = "auto";
  std::string scenario_hash;       // scenario_hash() of the bytes simulated, for job_key (a worker computes its own)
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

// "fnv1a64:<16 hex digits>" of the scenario's bytes `text` and, when `scenario` (loaded from them)
// names a platform file, of that file's bytes too: what a result was computed from.
std::string scenario_hash(const std::string& text, const config::Scenario& scenario);

// What identifies a job's result: {"scenario" (path), "scenario_hash", "sets", "seed", "steps"} of
// its options, plus "fidelity" and "no_replicate" when not the defaults (auto, false).
nlohmann::json job_key(const WorkerOptions& options);

// A --resume file (what sweep and variance append, or a Slurm array's worker results joined): one
// result per line, each with the job it is the result of. Every line is checked as it is read: not
// JSON, not an object, no "job", or a result sweep and variance could not use (a missing field, a
// time that is not finite and > 0, a share outside its range, ...) throws util::InputError
// "FILE:LINE: what is wrong" (exit 2). Only an incomplete last line (no '\n' and not JSON: a write
// cut short, kill -9) is dropped, with a warning. A line whose job has no scenario_hash (written by
// an older trainsim) is checked no further: it never matches a job now. No file: nothing read.
struct ResumeFile {
  std::map<std::string, nlohmann::json> results;  // by job_key(...).dump(); a later line replaces an earlier one
  std::vector<std::string> warnings;              // "FILE:LINE: warning: ..."
  std::optional<uint64_t> cut_at;                 // where the incomplete last line starts (ResumeWriter cuts it off)
  bool newline_missing = false;                   // the last line is whole but has no '\n'
};
ResumeFile read_resume_file(const std::string& path);

// How many of `work`'s jobs have no result in `file` but one for the same job computed from other
// scenario bytes (another scenario_hash, or none): stale results, computed again.
size_t stale_results(const ResumeFile& file, const std::vector<WorkerOptions>& work);

// On standard error: `file`'s warnings, and how many of `work`'s results in it are stale, e.g.
// "r.jsonl: skipped 3 stale results (the scenario changed since they were computed): computing them again".
void say_what_resumes(const std::string& path, const ResumeFile& file, const std::vector<WorkerOptions>& work);

// Appends result lines to a --resume file, each in one write(2) (so a killed process leaves whole
// lines or an incomplete last one). The file is opened at the first line, after every MPI rank has
// read it (run_batch's barrier); the incomplete last line read_resume_file dropped is cut off
// first, and a whole last line without its '\n' gets one. Throws util::InputError
// ("FILE: cannot write: reason") when it cannot write.
class ResumeWriter {
 public:
  // `path` "" = write nothing; `read` is what read_resume_file found in it.
  ResumeWriter(std::string path, const ResumeFile& read);
  ~ResumeWriter();
  ResumeWriter(const ResumeWriter&) = delete;
  ResumeWriter& operator=(const ResumeWriter&) = delete;

  void append(const nlohmann::json& line);

 private:
  std::string path_;
  std::optional<uint64_t> cut_at_;
  bool newline_missing_ = false;
  int fd_ = -1;
};

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
//
// `control` (optional) is read from another thread while the batch runs: `cancel` stops it as a
// signal would (its unfinished jobs come back `stopped`); `parallel` > 0 replaces `parallel` from
// then on (a batch started beside a simulation takes one core fewer until the simulation is done).
struct BatchControl {
  std::atomic<bool> cancel{false};
  std::atomic<int64_t> parallel{0};
};
std::vector<JobResult> run_jobs(const std::string& self, const std::vector<Job>& jobs, int64_t parallel,
                                const std::string& scenario_text,
                                const std::function<void(size_t, const JobResult&)>& on_done,
                                const BatchControl* control = nullptr);

// The running trainsim binary (/proc/self/exe; argv0 when that cannot be read).
std::string self_exe(const char* argv0);

// Number of online cores (at least 1).
int64_t core_count();

}  // namespace trainsim::cli
