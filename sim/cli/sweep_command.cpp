#include "cli/sweep_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/batch.hpp"
#include "cli/mpi_batch.hpp"
#include "cli/run_command.hpp"
#include "config/scenario.hpp"
#include "report/run_report.hpp"
#include "util/error.hpp"
#include "util/output.hpp"

namespace trainsim::cli {
namespace {

int64_t parse_count(const std::string& s, const std::string& whole) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || s.empty() || v < 1 || v > (1 << 20))
    throw util::InputError("--nodes: '" + s + "' in '" + whole + "' is not a node count (1 to 1048576)");
  return v;
}

struct Point {
  int64_t nodes = 0;
  int64_t dp = 0;
  int64_t global_batch = 0;
  bool ok = false;
  std::string reason;
  nlohmann::json report;                // the first seed's (bottleneck, shares)
  std::vector<nlohmann::json> reports;  // every seed's, in seed order (--runs)
  int64_t runs_done = 0;                // seeds with a result, resumed or simulated
};

// Two-sided 95% Student t quantile for `df` degrees of freedom (tables; 1.96 beyond 120).
double t975(int64_t df) {
  static const double kT[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                              2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                              2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
  if (df <= 0) return 0;
  if (df <= 30) return kT[df];
  if (df <= 60) return 2.042 + (2.000 - 2.042) * static_cast<double>(df - 30) / 30.0;
  if (df <= 120) return 2.000 + (1.980 - 2.000) * static_cast<double>(df - 60) / 60.0;
  return 1.96;
}

// Mean and half-width of its 95% confidence interval (0 with one value).
std::pair<double, double> mean_ci(const std::vector<double>& v) {
  const report::Stats st = report::stats_of(v);
  const auto n = static_cast<int64_t>(v.size());
  return {st.mean, n < 2 ? 0.0 : t975(n - 1) * st.std / std::sqrt(static_cast<double>(n))};
}

}  // namespace

std::vector<int64_t> parse_node_list(const std::string& text) {
  std::vector<int64_t> out;
  const auto dots = text.find("..");
  if (dots != std::string::npos) {
    const int64_t lo = parse_count(text.substr(0, dots), text);
    const int64_t hi = parse_count(text.substr(dots + 2), text);
    if (lo > hi) throw util::InputError("--nodes: empty range '" + text + "' (the first count is larger than the last)");
    for (int64_t n = 1; n <= hi; n *= 2)
      if (n >= lo) out.push_back(n);
    if (out.empty() || out.front() != lo) out.insert(out.begin(), lo);
    if (out.back() != hi) out.push_back(hi);
  } else {
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(parse_count(item, text));
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  if (out.empty()) throw util::InputError("--nodes: no node counts in '" + text + "'");
  return out;
}

namespace {

// The sweep's points, with the worker job of each point that needs simulating (points found
// invalid here carry their reason and no job).
struct SweepPlan {
  std::string text;  // the scenario's bytes, read once: every point is loaded from them, the workers get them
  config::Scenario base;
  std::vector<Point> points;
  std::vector<WorkerOptions> work;
  std::vector<size_t> work_point;  // work[k] simulates points[work_point[k]], seed opt.seed + work_run[k]
  std::vector<int64_t> work_run;
};

SweepPlan plan_sweep(const SweepOptions& opt) {
  const auto nodes = parse_node_list(opt.nodes);
  SweepPlan plan;
  plan.text = config::read_scenario_file(opt.scenario);
  plan.base = config::load_scenario_text(plan.text, opt.scenario, parse_overrides(opt.sets));
  const config::Scenario& base = plan.base;
  const std::string hash = scenario_hash(plan.text, base);
  const auto& par = base.parallel;
  const int64_t per_replica = par.tp * par.pp * par.cp;
  const bool weak = opt.scaling == "weak";

  // Build each point's scenario overrides and validate them here, so a point that is invalid
  // (batch not divisible, replicas do not fill the nodes) is reported as infeasible, not dropped.
  plan.points.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    Point& pt = plan.points[i];
    pt.nodes = nodes[i];
    const int64_t gpus = nodes[i] * base.cluster.gpus_per_server();
    if (gpus % per_replica != 0) {
      pt.reason = std::to_string(gpus) + " GPUs do not hold whole replicas of tp*pp*cp = " + std::to_string(per_replica);
      continue;
    }
    pt.dp = gpus / per_replica;
    pt.global_batch = weak ? base.training.global_batch / par.dp * pt.dp : base.training.global_batch;
    if (weak && base.training.global_batch % par.dp != 0) {
      pt.reason = "weak scaling needs global_batch divisible by the scenario's dp";
      continue;
    }
    std::vector<std::string> sets = opt.sets;
    sets.push_back("cluster.nodes=" + std::to_string(pt.nodes));
    sets.push_back("parallelism.dp=" + std::to_string(pt.dp));
    sets.push_back("training.global_batch=" + std::to_string(pt.global_batch));
    try {
      // Invalid or too large to simulate: an infeasible point with the reason, before any worker.
      check_simulable(config::load_scenario_text(plan.text, opt.scenario, parse_overrides(sets)), opt.steps);
    } catch (const util::InputError& e) {
      pt.reason = e.message();
      continue;
    }
    for (int64_t r = 0; r < opt.runs; ++r) {
      WorkerOptions w;
      w.scenario = opt.scenario;
      w.scenario_hash = hash;
      w.sets = sets;
      w.steps = opt.steps;
      w.seed = opt.seed + static_cast<uint64_t>(r);
      plan.work.push_back(w);
      plan.work_point.push_back(i);
      plan.work_run.push_back(r);
    }
    pt.reports.assign(static_cast<size_t>(opt.runs), nlohmann::json());
  }
  return plan;
}

std::string number_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// Why efficiency fell at the knee: the part of the step whose GPU-seconds per token grew the most
// against the reference point (strong or weak scaling alike: perfect scaling keeps every part's
// GPU-seconds per token constant), as "class: what grew, from x% to y% of the step".
std::string knee_cause(const nlohmann::json& ref, double ref_gpus, const nlohmann::json& knee, double gpus) {
  struct Part {
    const char* key;
    const char* klass;
    const char* what;
  };
  static const Part kParts[] = {
      {"compute", "compute", "compute per token (smaller micro-batches, more recompute)"},
      {"tp_comm", "interconnect", "exposed TP/CP communication"},
      {"exposed_comm", "interconnect", "exposed DP/PP communication"},
      {"bubble", "pipeline", "the pipeline bubble"},
      {"optimizer", "compute", "the fixed per-step work (optimizer step, the wait for the slowest replica; paid once per step however few tokens each GPU gets)"},
  };
  auto per_token = [](const nlohmann::json& r, double g, const char* key) {
    return g * r["breakdown_s"][key].get<double>() / (r["tokens_per_s"].get<double>() * r["step_time_s"]["mean"].get<double>());
  };
  const Part* best = nullptr;
  double grew = 0, lost = 0;
  for (const auto& p : kParts) {
    const double d = per_token(knee, gpus, p.key) - per_token(ref, ref_gpus, p.key);
    lost += d;
    if (best == nullptr || d > grew) {
      best = &p;
      grew = d;
    }
  }
  auto share = [](const nlohmann::json& r, const char* key) {
    char b[16];
    std::snprintf(b, sizeof b, "%.1f%%", 100 * r["breakdown_s"][key].get<double>() / r["step_time_s"]["mean"].get<double>());
    return std::string(b);
  };
  char b[64];
  std::snprintf(b, sizeof b, "%.0f%%", lost > 0 ? 100 * grew / lost : 0.0);
  return std::string(best->klass) + ": " + best->what + " went from " + share(ref, best->key) + " to " +
         share(knee, best->key) + " of the step (" + b + " of the GPU time per token lost)";
}

}  // namespace

int emit_sweep_slurm(const SweepOptions& opt, const std::string& script_path, const std::string& trainsim_path) {
  require_scenario_file(opt.scenario);
  const SweepPlan plan = plan_sweep(opt);
  SlurmBatch batch;
  batch.command = "sweep";
  batch.self = std::filesystem::absolute(trainsim_path).string();
  batch.workdir = std::filesystem::current_path().string();
  for (const auto& w : plan.work) batch.jobs.push_back(make_job(w));
  batch.merge_args = {"sweep", opt.scenario, "--nodes", opt.nodes, "--scaling", opt.scaling, "--threshold", number_text(opt.threshold),
                      "--jobs", "1"};
  for (const auto& s : opt.sets) batch.merge_args.insert(batch.merge_args.end(), {"--set", s});
  if (opt.steps > 0) batch.merge_args.insert(batch.merge_args.end(), {"--steps", std::to_string(opt.steps)});
  if (opt.runs > 1) batch.merge_args.insert(batch.merge_args.end(), {"--runs", std::to_string(opt.runs)});
  if (opt.seed != 1) batch.merge_args.insert(batch.merge_args.end(), {"--seed", std::to_string(opt.seed)});
  if (!opt.json_path.empty()) batch.merge_args.insert(batch.merge_args.end(), {"--json", opt.json_path});
  if (!opt.csv_path.empty()) batch.merge_args.insert(batch.merge_args.end(), {"--csv", opt.csv_path});
  if (opt.quiet) batch.merge_args.push_back("--quiet");
  const std::string results = write_slurm_script(batch, script_path);
  std::fprintf(stderr,
               "trainsim sweep: wrote %s: a Slurm array of %zu points (results in %s)\n"
               "  jobid=$(sbatch --parsable %s) && sbatch --dependency=afterany:$jobid --array=0 %s merge\n",
               script_path.c_str(), batch.jobs.size(), results.c_str(), script_path.c_str(), script_path.c_str());
  return 0;
}

int sweep_command(const SweepOptions& opt, const char* argv0) {
  util::check_outputs(opt.scenario, {{"--json", opt.json_path}, {"--csv", opt.csv_path}, {"--resume", opt.resume_path}});
  SweepPlan plan = plan_sweep(opt);
  const config::Scenario& base = plan.base;
  std::vector<Point>& points = plan.points;

  // Results already in the --resume file are kept and not recomputed (what this command appends,
  // worker result files from a Slurm array): those of the same job, i.e. the same scenario bytes,
  // overrides, seed and steps. Each line is checked first (a bad one: exit 2 naming FILE:LINE).
  const BatchWorld world = batch_world();
  const ResumeFile resumed = opt.resume_path.empty() ? ResumeFile{} : read_resume_file(opt.resume_path);
  if (world.reports()) say_what_resumes(opt.resume_path, resumed, plan.work);
  std::vector<Job> jobs;
  std::vector<size_t> job_work;
  // A seed's result: the point is feasible when every seed's run was.
  auto record = [&](size_t k, bool ok, const std::string& reason, const nlohmann::json& report) {
    Point& pt = points[plan.work_point[k]];
    const auto r = static_cast<size_t>(plan.work_run[k]);
    if (!ok && pt.reason.empty()) pt.reason = reason;
    pt.reports[r] = ok ? report : nlohmann::json();
    ++pt.runs_done;
  };
  for (size_t k = 0; k < plan.work.size(); ++k) {
    if (auto it = resumed.results.find(job_key(plan.work[k]).dump()); it != resumed.results.end()) {
      const nlohmann::json& done = it->second;
      record(k, done["ok"].get<bool>(), done.value("reason", ""), done["report"]);
      continue;
    }
    jobs.push_back(make_job(plan.work[k]));
    job_work.push_back(k);
  }

  // Results file: one JSON line per finished point (the worker's result, with the point's nodes and
  // scaling), appended as it finishes (so a killed sweep keeps what it finished; --resume reads
  // them back). Under MPI only rank 0 writes it, for every rank's points.
  if (world.size > 1 && world.reports() && !opt.quiet)
    std::fprintf(stderr, "  %zu points over %d MPI ranks\n", jobs.size(), world.size);
  ResumeWriter resume_out(world.reports() ? opt.resume_path : "", resumed);
  size_t finished = 0;
  // From here SIGINT and SIGTERM stop the batch: the finished points are reported (and already in
  // the --resume file), the command exits 128 + the signal's number.
  const StopOnSignal stop;
  const auto results = run_batch(self_exe(argv0), jobs, opt.jobs, plan.text, [&](size_t j, const JobResult& r) {
    const size_t k = job_work[j];
    Point& pt = points[plan.work_point[k]];
    const bool ok = r.ran && r.result.value("ok", false);
    record(k, ok, r.ran ? r.result.value("reason", "") : "simulation failed: " + r.error,
           r.ran ? r.result["report"] : nlohmann::json());
    if (r.ran) {
      nlohmann::json line = r.result;
      line["nodes"] = pt.nodes;
      line["scaling"] = opt.scaling;
      resume_out.append(line);
    }
    ++finished;
    if (!opt.quiet) {
      const std::string where = world.size > 1 ? " (rank " + std::to_string(r.rank) + ")" : "";
      const std::string seed = opt.runs > 1 ? " seed " + std::to_string(plan.work[k].seed) : "";
      std::fprintf(stderr, "  run %zu/%zu: %lld nodes%s%s %s\n", finished, jobs.size(), static_cast<long long>(pt.nodes),
                   seed.c_str(), where.c_str(), ok ? "done" : ("infeasible: " + pt.reason).c_str());
    }
  });
  if (!world.reports()) return 0;  // rank 0 writes the report
  const bool interrupted = std::any_of(results.begin(), results.end(), [](const JobResult& r) { return r.stopped; });
  auto finished_point = [&](const Point& pt) { return !pt.reason.empty() || pt.runs_done == opt.runs; };
  for (auto& pt : points) {
    pt.ok = !pt.reports.empty() && pt.reason.empty() &&
            std::all_of(pt.reports.begin(), pt.reports.end(), [](const nlohmann::json& j) { return j.is_object(); });
    if (pt.ok) pt.report = pt.reports.front();
  }

  // Scaling efficiency vs the smallest feasible point: per-GPU throughput ratio.
  nlohmann::json jpoints = nlohmann::json::array();
  const Point* ref = nullptr;
  for (const auto& pt : points)
    if (pt.ok) {
      ref = &pt;
      break;
    }
  nlohmann::json knee = nullptr;
  nlohmann::json knee_earliest = nullptr, knee_latest = nullptr;  // 95% interval of the knee (--runs > 1)
  std::string knee_reason;
  std::string table;
  char buf[512];
  const bool many = opt.runs > 1;
  std::snprintf(buf, sizeof buf, "  %7s %7s %6s %11s %13s %9s %7s%s %8s %8s %8s %8s %9s  %s\n", "nodes", "GPUs", "dp", "step (s)",
                "tokens/s", "TFLOP/s", "eff", many ? "   ±95%" : "", "tp comm", "comm", "bubble", "fixed", "sync", "bottleneck");
  table += buf;
  // Per point, over its seeds: tokens/s, step time and every share are means; efficiency is each
  // seed's throughput per GPU against the reference point's mean, with a 95% t-interval that also
  // carries the reference's own uncertainty (relative half-widths added in quadrature).
  auto over_seeds = [](const Point& pt, auto&& f) {
    std::vector<double> v;
    for (const auto& r : pt.reports) v.push_back(f(r));
    return v;
  };
  const double gpus_per_node = static_cast<double>(base.cluster.gpus_per_server());
  const auto ref_tps = ref ? mean_ci(over_seeds(*ref, [](const nlohmann::json& r) { return r["tokens_per_s"].get<double>(); }))
                           : std::pair<double, double>{0, 0};
  for (const auto& pt : points) {
    nlohmann::json j = {{"nodes", pt.nodes}, {"gpus", pt.nodes * base.cluster.gpus_per_server()}, {"dp", pt.dp},
                        {"global_batch", pt.global_batch}, {"feasible", pt.ok}};
    if (!finished_point(pt)) {
      std::snprintf(buf, sizeof buf, "  %7lld %7lld %6lld  not finished (interrupted)\n", static_cast<long long>(pt.nodes),
                    static_cast<long long>(pt.nodes * base.cluster.gpus_per_server()), static_cast<long long>(pt.dp));
      table += buf;
      continue;
    }
    if (!pt.ok) {
      j["reason"] = pt.reason;
      std::snprintf(buf, sizeof buf, "  %7lld %7lld %6lld  infeasible: %s\n", static_cast<long long>(pt.nodes),
                    static_cast<long long>(pt.nodes * base.cluster.gpus_per_server()), static_cast<long long>(pt.dp), pt.reason.c_str());
      table += buf;
      jpoints.push_back(j);
      continue;
    }
    const auto& r = pt.report;
    const double gpus = static_cast<double>(pt.nodes) * gpus_per_node;
    const double ref_gpus = static_cast<double>(ref->nodes) * gpus_per_node;
    const auto step = mean_ci(over_seeds(pt, [](const nlohmann::json& x) { return x["step_time_s"]["mean"].get<double>(); }));
    const auto tps = mean_ci(over_seeds(pt, [](const nlohmann::json& x) { return x["tokens_per_s"].get<double>(); }));
    auto share = [&](const char* key) {
      return mean_ci(over_seeds(pt, [&](const nlohmann::json& x) {
               return x["breakdown_s"][key].get<double>() / x["step_time_s"]["mean"].get<double>();
             })).first;
    };
    const double eff = (tps.first / gpus) / (ref_tps.first / ref_gpus);
    const double eff_ci = &pt == ref ? 0.0
                                     : eff * std::hypot(tps.second / std::max(tps.first, 1e-300),
                                                        ref_tps.second / std::max(ref_tps.first, 1e-300));
    const double comm = share("exposed_comm"), bubble = share("bubble"), tp_comm = share("tp_comm"), fixed = share("optimizer");
    const double sync = mean_ci(over_seeds(pt, [](const nlohmann::json& x) { return x["sync_wait"]["fraction"].get<double>(); })).first;
    j["step_time_s"] = step.first;
    j["tokens_per_s"] = tps.first;
    j["tflops_per_gpu"] = r["tflops_per_gpu"].get<double>() * r["step_time_s"]["mean"].get<double>() / step.first;
    j["mfu"] = r["mfu"].get<double>() * r["step_time_s"]["mean"].get<double>() / step.first;
    j["scaling_efficiency"] = eff;
    j["exposed_comm_share"] = comm;
    j["bubble_share"] = bubble;
    j["tp_comm_share"] = tp_comm;
    j["fixed_share"] = fixed;
    j["sync_wait_fraction"] = sync;
    j["bottleneck"] = r["bottleneck"];
    j["bottleneck_reason"] = r["bottleneck_reason"];
    j["micro_batches"] = r.value("micro_batches", 0);
    j["projection_days"] = r["projection"]["days"].get<double>() * step.first / r["step_time_s"]["mean"].get<double>();
    if (many) {
      j["runs"] = opt.runs;
      j["step_time_s_ci95"] = step.second;
      j["tokens_per_s_ci95"] = tps.second;
      j["scaling_efficiency_ci95"] = {eff - eff_ci, eff + eff_ci};
      j["step_time_s_runs"] = over_seeds(pt, [](const nlohmann::json& x) { return x["step_time_s"]["mean"].get<double>(); });
    }
    if (knee.is_null() && eff < opt.threshold) {
      knee = pt.nodes;
      knee_reason = knee_cause(ref->report, ref_gpus, r, gpus);
    }
    if (knee_earliest.is_null() && eff - eff_ci < opt.threshold) knee_earliest = pt.nodes;
    if (knee_latest.is_null() && eff + eff_ci < opt.threshold) knee_latest = pt.nodes;
    char ci[16] = "";
    if (many) std::snprintf(ci, sizeof ci, " %5.1f", 100 * eff_ci);
    std::snprintf(buf, sizeof buf, "  %7lld %7lld %6lld %11.3f %13.0f %9.1f %6.1f%%%s %7.1f%% %7.1f%% %7.1f%% %7.1f%% %8.1f%%  %s\n",
                  static_cast<long long>(pt.nodes), static_cast<long long>(gpus), static_cast<long long>(pt.dp), step.first, tps.first,
                  j["tflops_per_gpu"].get<double>(), 100 * eff, ci, 100 * tp_comm, 100 * comm, 100 * bubble, 100 * fixed,
                  100 * sync, r["bottleneck"].get<std::string>().c_str());
    table += buf;
    jpoints.push_back(j);
  }
  if (interrupted) {
    // Like an interrupted run: the table so far on standard error, no output file (an old --json or
    // --csv is left as it was); what finished is in the --resume file already.
    const auto done = std::count_if(points.begin(), points.end(), finished_point);
    const std::string keep = opt.resume_path.empty() ? "--resume FILE keeps finished points for the next run"
                                                     : "the finished points are kept in " + opt.resume_path +
                                                           ": the same command computes only the others";
    std::fprintf(stderr, "\ntrainsim sweep: %s (%s scaling, efficiency vs %lld nodes), interrupted by %s\n\n%s\n", base.name.c_str(),
                 opt.scaling.c_str(), ref ? static_cast<long long>(ref->nodes) : 0LL, StopOnSignal::name(stop.received()).c_str(),
                 table.c_str());
    std::fprintf(stderr, "  %lld of %zu points finished; no output files written; %s\n", static_cast<long long>(done), points.size(),
                 keep.c_str());
    return 128 + stop.received();
  }
  nlohmann::json out = {{"scenario", {{"name", base.name}}},
                        {"scaling", opt.scaling},
                        {"threshold", opt.threshold},
                        {"points", jpoints},
                        {"knee_nodes", knee},
                        {"knee_reason", knee_reason},
                        {"runs", opt.runs},
                        {"network_model", "CM02"}};
  std::FILE* console = opt.json_path == "-" ? stderr : stdout;
  std::fprintf(console, "trainsim sweep: %s (%s scaling, efficiency vs %lld nodes)\n\n%s\n", base.name.c_str(),
               opt.scaling.c_str(), ref ? static_cast<long long>(ref->nodes) : 0LL, table.c_str());
  if ((noisy_fabric(base) || noisy_gpus(base)) && !many)
    std::fprintf(console, "  note: the fabric or the GPUs are noisy in this scenario and each point is one seed: efficiencies\n"
                          "  differ from seed to seed; --runs 8 gives each point's mean and 95%% interval\n");
  if (many) {
    out["knee_nodes_ci95"] = {knee_earliest, knee_latest};
    std::fprintf(console, "  %lld seeds per point (seeds %llu..%llu); eff ±95%%: half-width of the 95%% confidence interval\n",
                 static_cast<long long>(opt.runs), static_cast<unsigned long long>(opt.seed),
                 static_cast<unsigned long long>(opt.seed + static_cast<uint64_t>(opt.runs) - 1));
  }
  if (knee.is_null())
    std::fprintf(console, "  scaling efficiency stays above %.0f%% over the sweep\n", 100 * opt.threshold);
  else
    std::fprintf(console, "  knee: scaling efficiency falls below %.0f%% at %lld nodes (%s)\n", 100 * opt.threshold,
                 static_cast<long long>(knee.get<int64_t>()), knee_reason.c_str());
  if (many && !knee_earliest.is_null()) {
    const std::string latest = knee_latest.is_null() ? "not surely within the sweep" : "surely by " + std::to_string(knee_latest.get<int64_t>()) + " nodes";
    std::fprintf(console, "  the knee with 95%% confidence: possibly from %lld nodes, %s\n",
                 static_cast<long long>(knee_earliest.get<int64_t>()), latest.c_str());
  }
  util::OutputSet outputs;  // --json and --csv land together
  if (!opt.json_path.empty()) outputs.add(opt.json_path, out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  if (!opt.csv_path.empty()) {
    std::string csv = "nodes,gpus,dp,feasible,step_time_s,tokens_per_s,tflops_per_gpu,scaling_efficiency,exposed_comm_share,bubble_share,sync_wait_fraction,"
                      "scaling_efficiency_lo,scaling_efficiency_hi\n";
    for (const auto& j : jpoints) {
      if (!j["feasible"].get<bool>()) {
        std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,0,,,,,,,,,\n", j["nodes"].get<long long>(), j["gpus"].get<long long>(), j["dp"].get<long long>());
      } else {
        const double eff = j["scaling_efficiency"].get<double>();
        const double lo = j.contains("scaling_efficiency_ci95") ? j["scaling_efficiency_ci95"][0].get<double>() : eff;
        const double hi = j.contains("scaling_efficiency_ci95") ? j["scaling_efficiency_ci95"][1].get<double>() : eff;
        std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,1,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", j["nodes"].get<long long>(),
                      j["gpus"].get<long long>(), j["dp"].get<long long>(), j["step_time_s"].get<double>(),
                      j["tokens_per_s"].get<double>(), j["tflops_per_gpu"].get<double>(), eff,
                      j["exposed_comm_share"].get<double>(), j["bubble_share"].get<double>(), j["sync_wait_fraction"].get<double>(), lo, hi);
      }
      csv += buf;
    }
    outputs.add(opt.csv_path, csv);
  }
  outputs.commit();
  return 0;
}

}  // namespace trainsim::cli
