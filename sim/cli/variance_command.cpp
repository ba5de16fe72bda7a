#include "cli/variance_command.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "cli/batch.hpp"
#include "cli/run_command.hpp"
#include "config/scenario.hpp"
#include "report/run_report.hpp"
#include "util/output.hpp"

namespace trainsim::cli {
namespace {

std::string self_exe(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

nlohmann::json stats_json(const report::Stats& s) {
  return {{"mean", s.mean}, {"std", s.std}, {"cv", s.mean > 0 ? s.std / s.mean : 0}, {"p10", s.p10},
          {"p50", s.p50},   {"p90", s.p90}, {"min", s.min},                         {"max", s.max}};
}

}  // namespace

int variance_command(const VarianceOptions& opt, const char* argv0) {
  const config::Scenario base = config::load_scenario(opt.scenario, parse_overrides(opt.sets));
  auto job_for = [&](uint64_t seed, bool dedicated) {
    Job job;
    job.args = {opt.scenario};
    for (const auto& s : opt.sets) {
      job.args.push_back("--set");
      job.args.push_back(s);
    }
    if (dedicated) {
      // The same run on a dedicated fabric and healthy GPUs.
      job.args.insert(job.args.end(), {"--set", "contention.tenants=0", "--set", "stragglers.count=0", "--set", "stragglers.jitter=0"});
    }
    job.args.push_back("--seed");
    job.args.push_back(std::to_string(seed));
    if (opt.steps > 0) {
      job.args.push_back("--steps");
      job.args.push_back(std::to_string(opt.steps));
    }
    return job;
  };
  std::vector<Job> jobs;
  for (int64_t i = 0; i < opt.runs; ++i) jobs.push_back(job_for(opt.seed + static_cast<uint64_t>(i), false));
  const bool has_noise = base.contention.has_value() || base.stragglers.has_value();
  if (has_noise) jobs.push_back(job_for(opt.seed, true));
  size_t done = 0;
  auto results = run_jobs(self_exe(argv0), jobs, opt.jobs, [&](size_t, const JobResult&) {
    ++done;
    if (!opt.quiet) std::fprintf(stderr, "\r  run %zu/%zu", done, jobs.size());
  });
  if (!opt.quiet) std::fprintf(stderr, "\n");

  nlohmann::json runs = nlohmann::json::array();
  std::vector<double> means, days;
  for (int64_t i = 0; i < opt.runs; ++i) {
    const auto& r = results[static_cast<size_t>(i)];
    const uint64_t seed = opt.seed + static_cast<uint64_t>(i);
    if (!r.ran) throw std::runtime_error("run with seed " + std::to_string(seed) + " failed: " + r.error);
    if (!r.result.value("ok", false)) {
      std::fprintf(stderr, "trainsim: %s: %s\n", base.name.c_str(), r.result.value("reason", "").c_str());
      if (!opt.json_path.empty()) util::write_output(opt.json_path, r.result["report"].dump(2) + "\n");
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
  const auto dd = report::stats_of(days);
  nlohmann::json out = {{"scenario", {{"name", base.name}}}, {"runs", runs}, {"network_model", "CM02"}};
  out["step_time_s"] = stats_json(st);
  out["projection"] = {{"days", stats_json(dd)}};
  double dedicated_days = 0, dedicated_step = 0;
  if (has_noise) {
    const auto& r = results.back();
    if (r.ran && r.result.value("ok", false)) {
      dedicated_step = r.result["report"]["step_time_s"]["mean"].get<double>();
      dedicated_days = r.result["report"]["projection"]["days_with_failures"].get<double>();
      out["dedicated"] = {{"step_time_s", dedicated_step}, {"days", dedicated_days}};
      out["contention_share"] = dd.mean > 0 ? (dd.mean - dedicated_days) / dd.mean : 0;
    }
  }
  std::FILE* console = opt.json_path == "-" ? stderr : stdout;
  std::fprintf(console, "trainsim variance: %s, %lld runs (seeds %llu..%llu)\n\n", base.name.c_str(),
               static_cast<long long>(opt.runs), static_cast<unsigned long long>(opt.seed),
               static_cast<unsigned long long>(opt.seed + opt.runs - 1));
  std::fprintf(console, "  %-22s %12s %12s %8s %12s %12s %12s\n", "", "mean", "std", "cv", "p10", "p50", "p90");
  std::fprintf(console, "  %-22s %12.4f %12.4f %7.2f%% %12.4f %12.4f %12.4f\n", "mean step time (s)", st.mean, st.std,
               st.mean > 0 ? 100 * st.std / st.mean : 0, st.p10, st.p50, st.p90);
  std::fprintf(console, "  %-22s %12.2f %12.2f %7.2f%% %12.2f %12.2f %12.2f\n", "projected days", dd.mean, dd.std,
               dd.mean > 0 ? 100 * dd.std / dd.mean : 0, dd.p10, dd.p50, dd.p90);
  if (has_noise && dedicated_days > 0)
    std::fprintf(console, "\n  dedicated fabric: %.4f s per step, %.2f days; shared costs %.2f days (%.1f%% of the run)\n",
                 dedicated_step, dedicated_days, dd.mean - dedicated_days, 100 * (dd.mean - dedicated_days) / dd.mean);
  if (!opt.json_path.empty()) util::write_output(opt.json_path, out.dump(2) + "\n");
  return 0;
}

}  // namespace trainsim::cli
