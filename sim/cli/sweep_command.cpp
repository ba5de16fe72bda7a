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
  nlohmann::json report;
};

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
  config::Scenario base;
  std::vector<Point> points;
  std::vector<WorkerOptions> work;
  std::vector<size_t> work_point;  // work[k] simulates points[work_point[k]]
};

SweepPlan plan_sweep(const SweepOptions& opt) {
  const auto nodes = parse_node_list(opt.nodes);
  SweepPlan plan{config::load_scenario(opt.scenario, parse_overrides(opt.sets)), {}, {}, {}};
  const config::Scenario& base = plan.base;
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
      check_simulable(config::load_scenario(opt.scenario, parse_overrides(sets)), opt.steps);
    } catch (const util::InputError& e) {
      pt.reason = e.message();
      continue;
    }
    WorkerOptions w;
    w.scenario = opt.scenario;
    w.sets = sets;
    w.steps = opt.steps;
    plan.work.push_back(w);
    plan.work_point.push_back(i);
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
      {"optimizer", "compute", "the fixed per-step work (optimizer step, host overhead; paid once per step however few tokens each GPU gets)"},
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
  SweepPlan plan = plan_sweep(opt);
  const config::Scenario& base = plan.base;
  std::vector<Point>& points = plan.points;

  // Results already in the --resume file are kept and not recomputed: lines carrying their job
  // (what this command appends, worker result files from a Slurm array) when the job is the same,
  // overrides and steps included; older lines without a job by node count and scaling.
  std::map<int64_t, nlohmann::json> resumed;
  std::map<std::string, nlohmann::json> resumed_jobs;
  if (!opt.resume_path.empty()) {
    std::ifstream in(opt.resume_path);
    std::string line;
    while (std::getline(in, line)) {
      auto j = nlohmann::json::parse(line, nullptr, false);
      if (!j.is_discarded() && j.is_object() && !j.contains("job") && j.contains("nodes") && j.value("scaling", "") == opt.scaling)
        resumed[j["nodes"].get<int64_t>()] = j;
    }
    resumed_jobs = read_job_results(opt.resume_path);
  }
  std::vector<Job> jobs;
  std::vector<size_t> job_point;
  for (size_t k = 0; k < plan.work.size(); ++k) {
    Point& pt = points[plan.work_point[k]];
    const nlohmann::json* done = nullptr;
    if (auto it = resumed_jobs.find(job_key(plan.work[k]).dump()); it != resumed_jobs.end())
      done = &it->second;
    else if (auto it2 = resumed.find(pt.nodes); it2 != resumed.end())
      done = &it2->second;
    if (done != nullptr) {
      pt.ok = done->value("ok", false);
      pt.reason = done->value("reason", "");
      pt.report = done->value("report", nlohmann::json::object());
      continue;
    }
    jobs.push_back(make_job(plan.work[k]));
    job_point.push_back(plan.work_point[k]);
  }

  // Results file: one JSON line per finished point, appended as it finishes (so a killed sweep
  // keeps what it finished; --resume reads them back). Under MPI only rank 0 writes it, for every
  // rank's points.
  const BatchWorld world = batch_world();
  if (world.size > 1 && world.reports() && !opt.quiet)
    std::fprintf(stderr, "  %zu points over %d MPI ranks\n", jobs.size(), world.size);
  std::ofstream resume_out;
  if (!opt.resume_path.empty() && world.reports()) resume_out.open(opt.resume_path, std::ios::app);
  size_t finished = 0;
  run_batch(self_exe(argv0), jobs, opt.jobs, [&](size_t j, const JobResult& r) {
    Point& pt = points[job_point[j]];
    if (r.ran) {
      pt.ok = r.result.value("ok", false);
      pt.reason = r.result.value("reason", "");
      pt.report = r.result["report"];
    } else {
      pt.reason = "simulation failed: " + r.error;
    }
    if (resume_out && r.ran) {
      nlohmann::json line = {{"nodes", pt.nodes}, {"scaling", opt.scaling}, {"ok", pt.ok}, {"reason", pt.reason}, {"report", pt.report}};
      if (r.result.contains("job")) line["job"] = r.result["job"];
      resume_out << line.dump() << "\n" << std::flush;
    }
    ++finished;
    if (!opt.quiet) {
      const std::string where = world.size > 1 ? " (rank " + std::to_string(r.rank) + ")" : "";
      std::fprintf(stderr, "  point %zu/%zu: %lld nodes%s %s\n", finished, jobs.size(), static_cast<long long>(pt.nodes),
                   where.c_str(), pt.ok ? "done" : ("infeasible: " + pt.reason).c_str());
    }
  });
  if (!world.reports()) return 0;  // rank 0 writes the report

  // Scaling efficiency vs the smallest feasible point: per-GPU throughput ratio.
  nlohmann::json jpoints = nlohmann::json::array();
  const Point* ref = nullptr;
  for (const auto& pt : points)
    if (pt.ok) {
      ref = &pt;
      break;
    }
  nlohmann::json knee = nullptr;
  std::string knee_reason;
  std::string table;
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %7s %7s %6s %11s %13s %9s %7s %8s %8s %8s %8s %9s  %s\n", "nodes", "GPUs", "dp", "step (s)",
                "tokens/s", "TFLOP/s", "eff", "tp comm", "comm", "bubble", "fixed", "sync", "bottleneck");
  table += buf;
  for (const auto& pt : points) {
    nlohmann::json j = {{"nodes", pt.nodes}, {"gpus", pt.nodes * base.cluster.gpus_per_server()}, {"dp", pt.dp},
                        {"global_batch", pt.global_batch}, {"feasible", pt.ok}};
    if (!pt.ok) {
      j["reason"] = pt.reason;
      std::snprintf(buf, sizeof buf, "  %7lld %7lld %6lld  infeasible: %s\n", static_cast<long long>(pt.nodes),
                    static_cast<long long>(pt.nodes * base.cluster.gpus_per_server()), static_cast<long long>(pt.dp), pt.reason.c_str());
      table += buf;
      jpoints.push_back(j);
      continue;
    }
    const auto& r = pt.report;
    const double step = r["step_time_s"]["mean"].get<double>();
    const double tps = r["tokens_per_s"].get<double>();
    const double gpus = static_cast<double>(pt.nodes * base.cluster.gpus_per_server());
    const double ref_gpus = static_cast<double>(ref->nodes * base.cluster.gpus_per_server());
    const double eff = (tps / gpus) / (ref->report["tokens_per_s"].get<double>() / ref_gpus);
    const double comm = r["breakdown_s"]["exposed_comm"].get<double>() / step;
    const double bubble = r["breakdown_s"]["bubble"].get<double>() / step;
    const double tp_comm = r["breakdown_s"]["tp_comm"].get<double>() / step;
    const double fixed = r["breakdown_s"]["optimizer"].get<double>() / step;
    j["step_time_s"] = step;
    j["tokens_per_s"] = tps;
    j["tflops_per_gpu"] = r["tflops_per_gpu"];
    j["mfu"] = r["mfu"];
    j["scaling_efficiency"] = eff;
    j["exposed_comm_share"] = comm;
    j["bubble_share"] = bubble;
    j["tp_comm_share"] = tp_comm;
    j["fixed_share"] = fixed;
    j["sync_wait_fraction"] = r["sync_wait"]["fraction"];
    j["bottleneck"] = r["bottleneck"];
    j["bottleneck_reason"] = r["bottleneck_reason"];
    j["micro_batches"] = r.value("micro_batches", 0);
    j["projection_days"] = r["projection"]["days"];
    if (knee.is_null() && eff < opt.threshold) {
      knee = pt.nodes;
      knee_reason = knee_cause(ref->report, ref_gpus, r, gpus);
    }
    std::snprintf(buf, sizeof buf, "  %7lld %7lld %6lld %11.3f %13.0f %9.1f %6.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %8.1f%%  %s\n",
                  static_cast<long long>(pt.nodes), static_cast<long long>(gpus), static_cast<long long>(pt.dp), step, tps,
                  r["tflops_per_gpu"].get<double>(), 100 * eff, 100 * tp_comm, 100 * comm, 100 * bubble, 100 * fixed,
                  100 * r["sync_wait"]["fraction"].get<double>(), r["bottleneck"].get<std::string>().c_str());
    table += buf;
    jpoints.push_back(j);
  }
  nlohmann::json out = {{"scenario", {{"name", base.name}}},
                        {"scaling", opt.scaling},
                        {"threshold", opt.threshold},
                        {"points", jpoints},
                        {"knee_nodes", knee},
                        {"knee_reason", knee_reason},
                        {"network_model", "CM02"}};
  std::FILE* console = opt.json_path == "-" ? stderr : stdout;
  std::fprintf(console, "trainsim sweep: %s (%s scaling, efficiency vs %lld nodes)\n\n%s\n", base.name.c_str(),
               opt.scaling.c_str(), ref ? static_cast<long long>(ref->nodes) : 0LL, table.c_str());
  if (knee.is_null())
    std::fprintf(console, "  scaling efficiency stays above %.0f%% over the sweep\n", 100 * opt.threshold);
  else
    std::fprintf(console, "  knee: scaling efficiency falls below %.0f%% at %lld nodes (%s)\n", 100 * opt.threshold,
                 static_cast<long long>(knee.get<int64_t>()), knee_reason.c_str());
  if (!opt.json_path.empty()) util::write_output(opt.json_path, out.dump(2) + "\n");
  if (!opt.csv_path.empty()) {
    std::string csv = "nodes,gpus,dp,feasible,step_time_s,tokens_per_s,tflops_per_gpu,scaling_efficiency,exposed_comm_share,bubble_share,sync_wait_fraction\n";
    for (const auto& j : jpoints) {
      if (!j["feasible"].get<bool>()) {
        std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,0,,,,,,,\n", j["nodes"].get<long long>(), j["gpus"].get<long long>(), j["dp"].get<long long>());
      } else {
        std::snprintf(buf, sizeof buf, "%lld,%lld,%lld,1,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g\n", j["nodes"].get<long long>(),
                      j["gpus"].get<long long>(), j["dp"].get<long long>(), j["step_time_s"].get<double>(),
                      j["tokens_per_s"].get<double>(), j["tflops_per_gpu"].get<double>(), j["scaling_efficiency"].get<double>(),
                      j["exposed_comm_share"].get<double>(), j["bubble_share"].get<double>(), j["sync_wait_fraction"].get<double>());
      }
      csv += buf;
    }
    util::write_output(opt.csv_path, csv);
  }
  return 0;
}

}  // namespace trainsim::cli
