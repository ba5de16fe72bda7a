// Batches across machines: `mpirun -np K trainsim sweep|variance` splits the jobs across MPI ranks
// (each rank still runs every job in its own `trainsim worker` process: one SimGrid Engine per
// process), and `--emit-slurm FILE` writes the same batch as a Slurm job array.
//
// MPI is initialised only by run_batch/batch_world (sweep and variance), never by run or memory,
// and only when the launcher says there is more than one rank; any other launch runs exactly as
// run_jobs does.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "cli/batch.hpp"
#include "cli/sweep_command.hpp"
#include "cli/variance_command.hpp"

namespace trainsim::cli {

struct BatchWorld {
  int rank = 0;
  int size = 1;
  bool reports() const { return rank == 0; }  // the rank that writes the report (stdout, --json, --csv, --resume)
};

// Ranks announced by the launcher's environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE), without
// initialising MPI; 1 when not launched by an MPI launcher.
int launcher_world_size();

// On first call with launcher_world_size() > 1 and MPI built in: MPI_Init (MPI_Finalize runs at
// exit). Returns this process's rank and the world size; {0, 1} otherwise.
BatchWorld batch_world();

// Runs `jobs` over the batch world. One rank: exactly run_jobs(self, jobs, parallel, scenario_text,
// on_done) (every rank hands its workers the scenario bytes it read itself).
// K ranks: job i runs on rank i % K, each rank running its share with run_jobs and `parallel` local
// processes (<= 0 means 1 under MPI); every result is sent to rank 0, which calls on_done(i, result)
// for each job as results arrive and returns all of them (indexed like `jobs`). Other ranks call
// nothing and return an empty vector. A job that fails stays a failed JobResult (with its error
// text and rank): the other jobs' results are kept. A rank stopped by a signal (StopOnSignal)
// sends its unfinished jobs as `stopped` (on_done is not called for them).
std::vector<JobResult> run_batch(const std::string& self, const std::vector<Job>& jobs, int64_t parallel,
                                 const std::string& scenario_text,
                                 const std::function<void(size_t, const JobResult&)>& on_done);

// A batch as a Slurm job array: task i runs `self worker <jobs[i].args> --out RESULTS/i.json`;
// `bash FILE merge` (or the same script submitted with --array=0 after the array) concatenates the
// result files into RESULTS/all.jsonl and runs `self <merge_args> --resume RESULTS/all.jsonl`,
// which reuses every result found there and simulates only the missing ones.
struct SlurmBatch {
  std::string command;                  // "sweep" or "variance": job name and comments
  std::string self;                     // absolute path of the trainsim binary
  std::string workdir;                  // the tasks run here (relative paths in the jobs resolve as now)
  std::vector<Job> jobs;
  std::vector<std::string> merge_args;  // after `trainsim`, without --resume
};

// The script text (`script_path` is named in its instructions); results go to `results_dir`.
std::string slurm_script(const SlurmBatch& batch, const std::string& script_path, const std::string& results_dir);

// Writes slurm_script to `script_path` (executable) with results in "<script path minus its
// extension>-results/" (created, so Slurm can open the tasks' output files there). Returns the
// results directory. Throws std::runtime_error when it cannot be written, util::InputError when
// the batch has no job.
std::string write_slurm_script(const SlurmBatch& batch, const std::string& script_path);

// --emit-slurm's tasks read the scenario themselves, later and elsewhere: it must be a regular file
// (not /dev/stdin or a pipe). Throws util::InputError("--emit-slurm: ...") otherwise.
void require_scenario_file(const std::string& path);

// Quotes `word` for a POSIX shell (single quotes).
std::string shell_quote(const std::string& word);

// `--emit-slurm FILE` for sweep and variance: writes the job-array script for this batch (its
// tasks run `trainsim_path`, normally self_exe(argv[0])), prints how to submit it on standard
// error, simulates nothing. Returns 0. (Defined beside the commands.)
int emit_sweep_slurm(const SweepOptions& options, const std::string& script_path, const std::string& trainsim_path);
int emit_variance_slurm(const VarianceOptions& options, const std::string& script_path, const std::string& trainsim_path);

// `trainsim variance` with a results file (`--resume FILE`, "" = none): runs whose result line
// (a worker result with the same job) is in it are not recomputed; runs finished now are appended.
int variance_command(const VarianceOptions& options, const char* argv0, const std::string& resume_path);

}  // namespace trainsim::cli
