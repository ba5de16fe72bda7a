#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/batch.hpp"
#include "cli/memory_command.hpp"
#include "cli/mpi_batch.hpp"
#include "cli/plan_command.hpp"
#include "cli/run_command.hpp"
#include "cli/sweep_command.hpp"
#include "cli/variance_command.hpp"
#include "config/scenario.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace trainsim::cli {

// An output file flag given an empty name (`--json ''`) is refused at parse time (exit 2) rather
// than taken as "not given" (issue 21, item 2).
const CLI::Validator kOutputPath(
    [](std::string& path) { return path.empty() ? std::string("empty file name (use - for standard output)") : std::string(); },
    "PATH");

// Counts and seeds: no sign (CLI11 would wrap "-1" into an unsigned seed), no NaN thresholds.
const CLI::Validator kSeed(
    [](std::string& v) { return !v.empty() && v[0] == '-' ? std::string("a seed is a non-negative integer") : std::string(); },
    "SEED");
const CLI::Validator kFinite(
    [](std::string& v) {
      const double x = std::strtod(v.c_str(), nullptr);
      return std::isfinite(x) ? std::string() : std::string("must be a finite number");
    },
    "NUMBER");

int main(int argc, char** argv) {
  CLI::App app{"trainsim: discrete-event simulator of LLM training runs on GPU clusters (SimGrid)", "trainsim"};
  app.set_version_flag("--version", std::string("trainsim ") + TRAINSIM_VERSION);
  app.require_subcommand(1);

  RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "simulate training steps and project the whole run");
  run_cmd->add_option("scenario", run.scenario, "scenario YAML")->required();
  run_cmd->add_option("--steps", run.steps, "steps to simulate (default: training.steps)")->check(CLI::Range(int64_t{1}, config::kMaxSteps));
  run_cmd->add_option("--seed", run.seed, "random seed (contention, stragglers)")->check(kSeed);
  run_cmd->add_option("--set", run.sets, "override a scenario key: --set model.layers=80 (repeatable)");
  run_cmd->add_option("--json", run.json_path, "write the JSON report (- = standard output)")->check(kOutputPath);
  run_cmd->add_option("--csv", run.csv_path, "write one CSV row per simulated step")->check(kOutputPath);
  run_cmd->add_option("--trace", run.trace_path, "write a Chrome/Perfetto trace of the first steps")->check(kOutputPath);
  run_cmd->add_option("--trace-steps", run.trace_steps, "steps recorded in --trace (default 2)")->check(CLI::Range(int64_t{1}, int64_t{1000}));
  run_cmd->add_option("--fidelity", run.fidelity, "auto | full | symmetric")->check(CLI::IsMember({"auto", "full", "symmetric"}));
  run_cmd->add_flag("--quiet", run.quiet, "no progress on standard error");
  run_cmd->add_flag("--timings", run.timings, "put the host's wall time (wall_s) in the JSON report");
  run_cmd->add_flag("--no-replicate", run.no_replicate, "simulate every step (default: once steady, the rest are copies)");
  run_cmd->add_option("--advice", run.advice, "alternatives (--set changes) simulated for the advice (default 3, 0 = none)")->check(CLI::Range(int64_t{0}, int64_t{20}));

  SweepOptions sweep;
  auto* sweep_cmd = app.add_subcommand("sweep", "re-run the scenario at several node counts and find where scaling goes sublinear");
  sweep_cmd->add_option("scenario", sweep.scenario, "scenario YAML")->required();
  sweep_cmd->add_option("--nodes", sweep.nodes, "node counts: 8,16,32 or a range 8..2048 (powers of two)")->required();
  sweep_cmd->add_option("--jobs", sweep.jobs, "points run in parallel processes (default: number of cores)")->check(CLI::Range(1, 4096));
  sweep_cmd->add_option("--json", sweep.json_path, "write the JSON report (- = standard output)")->check(kOutputPath);
  sweep_cmd->add_option("--csv", sweep.csv_path, "write one CSV row per point")->check(kOutputPath);
  sweep_cmd->add_option("--set", sweep.sets, "override a scenario key (repeatable)");
  sweep_cmd->add_option("--scaling", sweep.scaling, "strong (keep global batch) | weak (keep batch per replica)")->check(CLI::IsMember({"strong", "weak"}));
  sweep_cmd->add_option("--threshold", sweep.threshold, "scaling efficiency below which the knee is reported (default 0.9)")->check(kFinite & CLI::Range(0.0, 1.0));
  sweep_cmd->add_option("--steps", sweep.steps, "steps simulated per point (default: training.steps)")->check(CLI::Range(int64_t{1}, config::kMaxSteps));
  sweep_cmd->add_option("--resume", sweep.resume_path, "results file: finished points are kept and not recomputed")->check(kOutputPath);
  sweep_cmd->add_flag("--quiet", sweep.quiet, "no progress on standard error");
  sweep_cmd->add_option("--runs", sweep.runs, "seeds per point: mean and 95% confidence interval per point (default 1)")->check(CLI::Range(int64_t{1}, int64_t{1000}));
  sweep_cmd->add_option("--seed", sweep.seed, "first seed (default 1)")->check(kSeed);
  std::string sweep_slurm;
  sweep_cmd->add_option("--emit-slurm", sweep_slurm, "write a Slurm job-array script for this sweep (and its merge step); simulate nothing");

  VarianceOptions variance;
  auto* var_cmd = app.add_subcommand("variance", "run independent seeds and report the run-to-run distribution");
  var_cmd->add_option("scenario", variance.scenario, "scenario YAML")->required();
  var_cmd->add_option("--runs", variance.runs, "independent runs (seeds)")->required()->check(CLI::Range(int64_t{1}, int64_t{100000}));
  var_cmd->add_option("--seed", variance.seed, "first seed (runs use seed, seed+1, ...)")->check(kSeed);
  var_cmd->add_option("--jobs", variance.jobs, "runs in parallel processes (default: number of cores)")->check(CLI::Range(1, 4096));
  var_cmd->add_option("--json", variance.json_path, "write the JSON report (- = standard output)")->check(kOutputPath);
  var_cmd->add_option("--set", variance.sets, "override a scenario key (repeatable)");
  var_cmd->add_option("--steps", variance.steps, "steps simulated per run (default: training.steps)")->check(CLI::Range(int64_t{1}, config::kMaxSteps));
  var_cmd->add_flag("--quiet", variance.quiet, "no progress on standard error");
  var_cmd->add_flag("--no-replicate", variance.no_replicate, "simulate every step of every run");
  std::string var_resume, var_slurm;
  var_cmd->add_option("--resume", var_resume, "results file: finished runs are kept and not recomputed")->check(kOutputPath);
  var_cmd->add_option("--emit-slurm", var_slurm, "write a Slurm job-array script for these runs (and its merge step); simulate nothing");

  PlanOptions plan;
  std::string plan_deadline;
  auto* plan_cmd = app.add_subcommand("plan", "find the best parallel layout for this model, cluster and batch (and cluster size)");
  plan_cmd->add_option("scenario", plan.scenario, "scenario YAML")->required();
  plan_cmd->add_option("--top", plan.top, "layouts simulated per cluster size (default 8)")->check(CLI::Range(int64_t{1}, int64_t{1000000}));
  plan_cmd->add_option("--jobs", plan.jobs, "simulations in parallel processes (default: number of cores)")->check(CLI::Range(1, 4096));
  plan_cmd->add_option("--json", plan.json_path, "write the JSON report (- = standard output)")->check(kOutputPath);
  plan_cmd->add_option("--write-best", plan.write_best, "write the winning scenario as YAML")->check(kOutputPath);
  plan_cmd->add_option("--objective", plan.objective, "time (fastest step) | cost (fewest GPU-hours) | gpus (fewest GPUs within --deadline)")
      ->check(CLI::IsMember({"time", "cost", "gpus"}));
  plan_cmd->add_option("--deadline", plan_deadline, "the run's longest acceptable time, e.g. 30d (objective gpus)");
  plan_cmd->add_option("--max-gpus", plan.max_gpus, "skip cluster sizes above this many GPUs")->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  plan_cmd->add_option("--nodes", plan.nodes, "cluster sizes: 256,512 or a range 256..2048 (powers of two); default the scenario's");
  plan_cmd->add_option("--steps", plan.steps, "steps simulated per layout (default 50)")->check(CLI::Range(int64_t{1}, config::kMaxSteps));
  plan_cmd->add_option("--seed", plan.seed, "random seed of the simulations")->check(kSeed);
  plan_cmd->add_option("--threshold", plan.threshold, "scaling efficiency below which the sizes' knee is reported (default 0.9)")
      ->check(kFinite & CLI::Range(0.0, 1.0));
  plan_cmd->add_option("--set", plan.sets, "override a scenario key (repeatable)");
  plan_cmd->add_flag("--quiet", plan.quiet, "no progress on standard error");

  std::string mem_scenario, mem_json;
  std::vector<std::string> mem_sets;
  auto* mem_cmd = app.add_subcommand("memory", "does it fit: memory per GPU, what takes it, what to change");
  mem_cmd->add_option("scenario", mem_scenario, "scenario YAML")->required();
  mem_cmd->add_option("--set", mem_sets, "override a scenario key (repeatable)");
  mem_cmd->add_option("--json", mem_json, "write the JSON report (- = standard output)")->check(kOutputPath);

  // Internal: one sweep point / variance run in a child process (the parent passes the scenario's
  // path, for messages, and a private copy of its bytes).
  WorkerOptions worker;
  auto* worker_cmd = app.add_subcommand("worker", "")->group("");
  worker_cmd->add_option("scenario", worker.scenario)->required();
  worker_cmd->add_option("--scenario-text", worker.scenario_text_path);
  worker_cmd->add_option("--set", worker.sets);
  worker_cmd->add_option("--seed", worker.seed)->check(kSeed);
  worker_cmd->add_option("--steps", worker.steps);
  worker_cmd->add_flag("--no-replicate", worker.no_replicate);
  worker_cmd->add_option("--fidelity", worker.fidelity);
  worker_cmd->add_option("--parent", worker.parent);
  worker_cmd->add_option("--out", worker.out_path)->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  spdlog::set_pattern("%v");
  try {
    if (*run_cmd) {
      run.self = self_exe(argv[0]);
      return run_command(run);
    }
    if (*sweep_cmd)
      return sweep_slurm.empty() ? sweep_command(sweep, argv[0]) : emit_sweep_slurm(sweep, sweep_slurm, self_exe(argv[0]));
    if (*var_cmd)
      return var_slurm.empty() ? variance_command(variance, argv[0], var_resume)
                               : emit_variance_slurm(variance, var_slurm, self_exe(argv[0]));
    if (*worker_cmd) return worker_command(worker);
    if (*plan_cmd) {
      if (!plan_deadline.empty()) {
        try {
          plan.deadline_s = util::parse_time(plan_deadline);
        } catch (const util::UnitError& e) {
          throw util::InputError("--deadline " + plan_deadline + ": " + e.what());
        }
        if (!(plan.deadline_s > 0)) throw util::InputError("--deadline " + plan_deadline + ": must be more than 0");
      }
      return plan_command(plan, argv[0]);
    }
    if (*mem_cmd) {
      const auto scenario = config::load_scenario(mem_scenario, parse_overrides(mem_sets));
      return run_memory_command(scenario, mem_json);
    }
  } catch (const util::InputError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  } catch (const util::InfeasibleError& e) {
    std::fprintf(stderr, "trainsim: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    // Not the user's input: a bug or a resource problem. Distinct from 1 and 2 on purpose.
    std::fprintf(stderr, "trainsim: internal error: %s\n", e.what());
    return 3;
  }
  return 2;
}

}  // namespace trainsim::cli
