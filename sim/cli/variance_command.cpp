#include "cli/variance_command.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "cli/batch.hpp"
#include "cli/mpi_batch.hpp"
#include "cli/run_command.hpp"
#include "config/scenario.hpp"
#include "model/accuracy.hpp"
#include "report/run_report.hpp"
#include "report/series.hpp"
#include "util/output.hpp"

namespace trainsim::cli {
namespace {

nlohmann::json stats_json(const report::Stats& s) {
  return {{"mean", s.mean}, {"std", s.std}, {"cv", s.mean > 0 ? s.std / s.mean : 0}, {"p10", s.p10},
          {"p50", s.p50},   {"p90", s.p90}, {"min", s.min},                         {"max", s.max}};
}


// The variance batch: runs seed, seed+1, ..., then (when the fabric or the GPUs are noisy) the first
// seed on a dedicated fabric with healthy GPUs (quiet_fabric_sets, healthy_gpu_sets).
std::vector<WorkerOptions> variance_work(const VarianceOptions& opt, bool with_dedicated) {
  auto work_for = [&](uint64_t seed, bool dedicated) {
    WorkerOptions w;
    w.scenario = opt.scenario;
    w.sets = opt.sets;
    if (dedicated) {
      w.sets.insert(w.sets.end(), quiet_fabric_sets().begin(), quiet_fabric_sets().end());
      w.sets.insert(w.sets.end(), healthy_gpu_sets().begin(), healthy_gpu_sets().end());
    }
    w.seed = seed;
    w.steps = opt.steps;
    w.no_replicate = opt.no_replicate;
    return w;
  };
  std::vector<WorkerOptions> work;
  for (int64_t i = 0; i < opt.runs; ++i) work.push_back(work_for(opt.seed + static_cast<uint64_t>(i), false));
  if (with_dedicated) work.push_back(work_for(opt.seed, true));
  return work;
}

bool has_noise(const config::Scenario& s) { return noisy_fabric(s) || noisy_gpus(s); }

}  // namespace

int emit_variance_slurm(const VarianceOptions& opt, const std::string& script_path, const std::string& trainsim_path) {
  require_scenario_file(opt.scenario);
  const config::Scenario base = config::load_scenario(opt.scenario, parse_overrides(opt.sets));
  check_simulable(base, opt.steps);
  SlurmBatch batch;
  batch.command = "variance";
  batch.self = std::filesystem::absolute(trainsim_path).string();
  batch.workdir = std::filesystem::current_path().string();
  for (const auto& w : variance_work(opt, has_noise(base))) batch.jobs.push_back(make_job(w));
  batch.merge_args = {"variance", opt.scenario, "--runs", std::to_string(opt.runs), "--seed", std::to_string(opt.seed), "--jobs", "1"};
  for (const auto& s : opt.sets) batch.merge_args.insert(batch.merge_args.end(), {"--set", s});
  if (opt.steps > 0) batch.merge_args.insert(batch.merge_args.end(), {"--steps", std::to_string(opt.steps)});
  if (opt.no_replicate) batch.merge_args.push_back("--no-replicate");  // part of each job's key
  if (!opt.json_path.empty()) batch.merge_args.insert(batch.merge_args.end(), {"--json", opt.json_path});
  if (opt.quiet) batch.merge_args.push_back("--quiet");
  const std::string results = write_slurm_script(batch, script_path);
  std::fprintf(stderr,
               "trainsim variance: wrote %s: a Slurm array of %zu runs (results in %s)\n"
               "  jobid=$(sbatch --parsable %s) && sbatch --dependency=afterany:$jobid --array=0 %s merge\n",
               script_path.c_str(), batch.jobs.size(), results.c_str(), script_path.c_str(), script_path.c_str());
  return 0;
}

int variance_command(const VarianceOptions& opt, const char* argv0) { return variance_command(opt, argv0, ""); }

int variance_command(const VarianceOptions& opt, const char* argv0, const std::string& resume_path) {
  util::check_outputs(opt.scenario, {{"--json", opt.json_path}, {"--resume", resume_path}});
  // Read once: the workers simulate these bytes, whatever happens to the file meanwhile.
  const std::string text = config::read_scenario_file(opt.scenario);
  const config::Scenario base = config::load_scenario_text(text, opt.scenario, parse_overrides(opt.sets));
  check_simulable(base, opt.steps);  // exit 2 before any worker starts
  const bool noisy = has_noise(base);
  auto work = variance_work(opt, noisy);
  const std::string hash = scenario_hash(text, base);
  for (auto& w : work) w.scenario_hash = hash;

  // Runs found in the results file (the same job: scenario bytes, overrides, seed, steps) are kept;
  // the others are simulated (split across MPI ranks when launched by mpirun) and, on the reporting
  // rank, appended to it as they finish. Each line is checked first (a bad one: exit 2, FILE:LINE).
  const BatchWorld world = batch_world();
  std::vector<JobResult> results(work.size());
  std::vector<Job> jobs;
  std::vector<size_t> job_run;
  const ResumeFile resumed = resume_path.empty() ? ResumeFile{} : read_resume_file(resume_path);
  if (world.reports()) say_what_resumes(resume_path, resumed, work);
  for (size_t k = 0; k < work.size(); ++k) {
    if (auto it = resumed.results.find(job_key(work[k]).dump()); it != resumed.results.end()) {
      results[k].ran = true;
      results[k].result = it->second;
      continue;
    }
    jobs.push_back(make_job(work[k]));
    job_run.push_back(k);
  }
  if (world.size > 1 && world.reports() && !opt.quiet)
    std::fprintf(stderr, "  %zu runs over %d MPI ranks\n", jobs.size(), world.size);
  ResumeWriter resume_out(world.reports() ? resume_path : "", resumed);
  size_t done = 0;
  // From here SIGINT and SIGTERM stop the batch: the finished runs are reported (and already in the
  // --resume file), the command exits 128 + the signal's number.
  const StopOnSignal stop;
  const auto batch = run_batch(self_exe(argv0), jobs, opt.jobs, text, [&](size_t j, const JobResult& r) {
    results[job_run[j]] = r;
    if (r.ran) resume_out.append(r.result);
    ++done;
    if (!opt.quiet) {
      if (!r.ran) std::fprintf(stderr, "\n  run with seed %llu failed%s: %s\n", static_cast<unsigned long long>(work[job_run[j]].seed),
                               world.size > 1 ? (" on rank " + std::to_string(r.rank)).c_str() : "", r.error.c_str());
      std::fprintf(stderr, "\r  run %zu/%zu", done, jobs.size());
    }
  });
  if (!opt.quiet && !jobs.empty()) std::fprintf(stderr, "\n");
  if (!world.reports()) return 0;  // rank 0 writes the report
  if (std::any_of(batch.begin(), batch.end(), [](const JobResult& r) { return r.stopped; })) {
    // Like an interrupted run: the runs that finished on standard error, no output file (an old
    // --json is left as it was); they are in the --resume file already.
    std::fprintf(stderr, "\ntrainsim variance: %s, interrupted by %s\n\n  %-26s %14s %13s\n", base.name.c_str(),
                 StopOnSignal::name(stop.received()).c_str(), "", "mean step (s)", "tokens/s");
    size_t finished = 0;
    for (size_t k = 0; k < work.size(); ++k) {
      const auto& r = results[k];
      if (!r.ran) continue;  // not finished (or failed: said as it happened)
      ++finished;
      const std::string label = "seed " + std::to_string(work[k].seed) + (k < static_cast<size_t>(opt.runs) ? "" : ", dedicated fabric");
      if (r.result.value("ok", false)) {
        const auto& rep = r.result["report"];
        std::fprintf(stderr, "  %-26s %14.4f %13.0f\n", label.c_str(), rep["step_time_s"]["mean"].get<double>(),
                     rep["tokens_per_s"].get<double>());
      } else {
        std::fprintf(stderr, "  %-26s infeasible: %s\n", label.c_str(), r.result.value("reason", "").c_str());
      }
    }
    const std::string keep = resume_path.empty() ? "--resume FILE keeps finished runs for the next run"
                                                 : "the finished runs are kept in " + resume_path + ": the same command computes only the others";
    std::fprintf(stderr, "\n  %zu of %zu runs finished; no output files written; %s\n", finished, work.size(), keep.c_str());
    return 128 + stop.received();
  }

  nlohmann::json runs = nlohmann::json::array();
  std::vector<double> means, days;
  for (int64_t i = 0; i < opt.runs; ++i) {
    const auto& r = results[static_cast<size_t>(i)];
    const uint64_t seed = opt.seed + static_cast<uint64_t>(i);
    if (!r.ran) throw std::runtime_error("run with seed " + std::to_string(seed) + " failed: " + r.error);
    if (!r.result.value("ok", false)) {
      std::fprintf(stderr, "trainsim: %s: %s\n", base.name.c_str(), r.result.value("reason", "").c_str());
      if (!opt.json_path.empty()) util::write_output(opt.json_path, r.result["report"].dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
      return 1;
    }
    const auto& rep = r.result["report"];
    const double mean = rep["step_time_s"]["mean"].get<double>();
    const double d = rep["projection"]["days_with_failures"].get<double>();
    means.push_back(mean);
    days.push_back(d);
    runs.push_back({{"seed", seed},
                    {"step_time_s", rep["step_time_s"]},
                    {"tokens_per_s", rep["tokens_per_s"]},
                    {"sync_wait_fraction", rep["sync_wait"]["fraction"]},
                    {"days", d},
                    {"goodput", rep["projection"]["goodput"]},
                    {"step_times", r.result["step_times"]}});
  }
  const auto st = report::stats_of(means);
  const auto window_days = report::stats_of(days);
  // Step level and run level (report/series.hpp): the pooled step series of the seeds, and the
  // whole run's days from it, each seed's failure stretch applied.
  std::vector<std::vector<double>> series;
  std::vector<double> stretch;
  double total_steps = 0;
  for (int64_t i = 0; i < opt.runs; ++i) {
    const auto& res = results[static_cast<size_t>(i)].result;
    auto steps = res["step_times"].get<std::vector<double>>();
    // A run that reached its steady state and replicated it has nothing random in it (engine:
    // can_replicate): its steady step is the whole run's, the warm-up transient none of it.
    if (res["report"].value("steps_replicated", 0) > 0 && !steps.empty()) std::fill(steps.begin() + 1, steps.end(), steps.back());
    series.push_back(std::move(steps));
    const auto& p = res["report"]["projection"];
    total_steps = p["total_steps"].get<double>();
    const double plain = p["days"].get<double>();
    stretch.push_back(plain > 0 ? p["days_with_failures"].get<double>() / plain : 1.0);
  }
  const bool analysable = !series.empty() && series.front().size() >= 3;
  // Tenant jobs that come and go are a slow on/off process per tenant slot: its integrated
  // autocorrelation time is 2 / (1 / duration + 1 / gap) (exponential durations).
  double slow_tau_s = 0;
  if (base.contention && base.contention->job_duration_s > 0)
    slow_tau_s = 2 / (1 / base.contention->job_duration_s + 1 / base.contention->job_gap_s);
  // Load that changes over the day: each seed's window starts at its own hour (seeds spread over
  // the day unless contention.start_hour pins it); the daily cycle is fitted over the pooled steps
  // and taken out, so the windows' means are compared at the daily average and a run averages the
  // cycle over its own length.
  report::DailyCycle cycle;
  const bool diurnal = base.contention && base.contention->tenants > 0 && base.contention->diurnal_amplitude > 0;
  if (analysable && diurnal) {
    std::vector<double> hours;
    for (int64_t i = 0; i < opt.runs; ++i) hours.push_back(config::diurnal_start_hour(*base.contention, opt.seed + static_cast<uint64_t>(i)));
    cycle = report::remove_daily_cycle(series, hours);
  }
  report::SeriesStats ss = analysable ? report::analyse_series(series, slow_tau_s) : report::SeriesStats{};
  ss.diurnal_sd = cycle.sd();
  const auto dd = analysable ? report::stats_of(report::run_level_days(ss, total_steps, stretch)) : window_days;
  const double step_s = ss.mean > 0 ? ss.mean : st.mean;
  nlohmann::json out = {{"scenario", {{"name", base.name}}}, {"runs", runs}, {"network_model", "CM02"}};
  out["step_time_s"] = stats_json(st);
  out["projection"] = {{"days", stats_json(dd)}};
  // trainsim's own error on published runs (model/accuracy.hpp), beside the run-to-run spread:
  // systematic, not something another seed samples.
  const model::Range error_days = model::step_time_band(dd.mean);
  out["accuracy"] = {{"basis", model::model_accuracy().step_time.basis},
                     {"days", {{"low", error_days.low}, {"high", error_days.high}}}};
  out["window_days"] = stats_json(window_days);
  const double simulated_s = static_cast<double>(ss.steps) * step_s;
  double mean_stretch = 0;
  for (double f : stretch) mean_stretch += f;
  mean_stretch = stretch.empty() ? 1 : mean_stretch / static_cast<double>(stretch.size());
  // How well the simulated time pins the mean down: the 95% interval of the projected mean days.
  const double mean_days_ci = 1.96 * report::mean_step_se(ss, opt.runs) * total_steps / 86400 * mean_stretch;
  if (analysable) {
    out["step_level"] = {{"mean_s", ss.mean},
                         {"cv", ss.mean > 0 ? ss.sd / ss.mean : 0},
                         {"p50_s", ss.p50},
                         {"p99_s", ss.p99},
                         {"p99_over_p50", ss.p50 > 0 ? ss.p99 / ss.p50 : 0},
                         {"autocorrelation_steps", ss.tau_steps},
                         {"simulated_steps", ss.steps},
                         {"simulated_hours", simulated_s / 3600}};
    out["run_level"] = {{"total_steps", total_steps},
                        {"mean_days_ci95", mean_days_ci},
                        {"run_hours", total_steps * step_s / 3600},
                        {"mean_step_sd_s", report::run_mean_sd(ss, total_steps)},
                        {"between_seed_sd_s", ss.between_sd},
                        {"between_seed_tested", ss.separable},
                        {"slow_process_sd_s", ss.slow_sd},
                        {"slow_process_tau_s", ss.slow_tau_s},
                        {"window_means_sd_s", ss.window_means_sd},
                        {"diurnal_sd_s", ss.diurnal_sd},
                        {"diurnal_fitted", cycle.fitted},
                        {"method",
                         "pooled step series (warm-up step dropped), integrated autocorrelation time (Sokal window); "
                         "whole-run mean step normal with variance between_seed_sd^2 + sd^2 tau / total_steps"}};
  }
  double dedicated_days = 0, dedicated_step = 0;
  if (noisy) {
    const auto& r = results.back();
    if (r.ran && r.result.value("ok", false)) {
      // Measured as the shared runs are: warm-up step dropped, the whole run's steps.
      const auto t = r.result["step_times"].get<std::vector<double>>();
      dedicated_step = r.result["report"]["step_time_s"]["mean"].get<double>();
      if (analysable && t.size() >= 2) {
        double m = 0;
        for (size_t k = 1; k < t.size(); ++k) m += t[k];
        dedicated_step = m / static_cast<double>(t.size() - 1);
      }
      dedicated_days = dedicated_step * total_steps / 86400 * mean_stretch;
      out["dedicated"] = {{"step_time_s", dedicated_step}, {"days", dedicated_days}};
      out["contention_share"] = dd.mean > 0 ? (dd.mean - dedicated_days) / dd.mean : 0;
    }
  }
  std::FILE* console = opt.json_path == "-" ? stderr : stdout;
  std::fprintf(console, "trainsim variance: %s, %lld runs (seeds %llu..%llu)\n\n", base.name.c_str(),
               static_cast<long long>(opt.runs), static_cast<unsigned long long>(opt.seed),
               static_cast<unsigned long long>(opt.seed + opt.runs - 1));
  if (analysable) {
    std::fprintf(console, "  step level (what a dashboard shows step to step, %lld steps pooled)\n", static_cast<long long>(ss.steps));
    std::fprintf(console, "    step time                mean %.4f s, cv %.1f%%, p50 %.4f s, p99 %.4f s (p99/p50 %.2f)\n", ss.mean,
                 ss.mean > 0 ? 100 * ss.sd / ss.mean : 0, ss.p50, ss.p99, ss.p50 > 0 ? ss.p99 / ss.p50 : 0);
    std::fprintf(console, "    autocorrelation time     %.1f steps (one independent sample per %.1f steps)\n", ss.tau_steps, ss.tau_steps);
    std::fprintf(console, "\n  run level (the whole run: %.0f steps, %.0f hours)\n", total_steps, total_steps * step_s / 3600);
    std::fprintf(console, "    projected days           mean %.2f +- %.2f (95%% CI of the estimate), p10 %.2f, p50 %.2f, p90 %.2f\n", dd.mean,
                 mean_days_ci, dd.p10, dd.p50, dd.p90);
    std::fprintf(console, "    model error band (90%%)   %.2f - %.2f days: trainsim's own error, the same for every seed (%s)\n",
                 error_days.low, error_days.high, model::model_accuracy().step_time.basis.c_str());
    char what[256];
    if (ss.slow_tau_s > 0)
      std::snprintf(what, sizeof what,
                    "tenant jobs come and go (autocorrelation %.1f h): the windows' spread from them, %.3f s per step, "
                    "averages over the run",
                    ss.slow_tau_s / 3600, ss.slow_sd);
    else if (ss.between_sd > 0)
      std::snprintf(what, sizeof what, "a seed-to-seed component of %.4f s per step persists for the whole run", ss.between_sd);
    else if (ss.separable)
      std::snprintf(what, sizeof what, "the seeds' windows differ no more than their own noise explains");
    else
      std::snprintf(what, sizeof what, "windows shorter than %.0f autocorrelation times cannot show a seed-to-seed component (--steps %lld can)",
                    report::kSeparableTaus, static_cast<long long>(std::ceil(report::kSeparableTaus * ss.tau_steps)) + 1);
    std::fprintf(console, "    behind it                %lld x %lld simulated steps = %.2f hours of the run's %.0f; %s\n",
                 static_cast<long long>(opt.runs), static_cast<long long>(ss.window), simulated_s / 3600, total_steps * step_s / 3600, what);
    if (diurnal && cycle.fitted)
      std::fprintf(console, "    load over the day        the windows start at hours spread over the day; the step's daily cycle, sd %.4f s "
                            "(amplitude %.4f s), is taken out: a run averages it over its own days\n",
                   ss.diurnal_sd, std::sqrt(cycle.a * cycle.a + cycle.b * cycle.b));
    else if (diurnal)
      std::fprintf(console, "    load over the day        every window sees about the same hours (contention.start_hour, or --runs too few): "
                            "these figures are for that time of day, not the daily average\n");
    std::fprintf(console, "\n  simulated windows (%lld steps each; their spread shrinks as windows grow: not the run's)\n",
                 static_cast<long long>(ss.window + 1));
  }
  std::fprintf(console, "  %-22s %12s %12s %8s %12s %12s %12s\n", "", "mean", "std", "cv", "p10", "p50", "p90");
  std::fprintf(console, "  %-22s %12.4f %12.4f %7.2f%% %12.4f %12.4f %12.4f\n", "mean step time (s)", st.mean, st.std,
               st.mean > 0 ? 100 * st.std / st.mean : 0, st.p10, st.p50, st.p90);
  std::fprintf(console, "  %-22s %12.2f %12.2f %7.2f%% %12.2f %12.2f %12.2f\n", "projected days", window_days.mean, window_days.std,
               window_days.mean > 0 ? 100 * window_days.std / window_days.mean : 0, window_days.p10, window_days.p50, window_days.p90);
  if (noisy && dedicated_days > 0)
    std::fprintf(console, "\n  dedicated fabric: %.4f s per step, %.2f days; shared costs %.2f days (%.1f%% of the run)\n",
                 dedicated_step, dedicated_days, dd.mean - dedicated_days, 100 * (dd.mean - dedicated_days) / dd.mean);
  if (!opt.json_path.empty()) util::write_output(opt.json_path, out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  return 0;
}

}  // namespace trainsim::cli
