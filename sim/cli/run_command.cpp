#include "cli/run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>

#include "cli/advice.hpp"
#include "cli/batch.hpp"
#include "cli/progress.hpp"
#include "config/limits.hpp"
#include "engine/step_engine.hpp"
#include "model/memory.hpp"
#include "model/transformer.hpp"
#include "platform/derive.hpp"
#include "platform/platform.hpp"
#include "util/error.hpp"
#include "util/output.hpp"
#include "util/units.hpp"

namespace trainsim::cli {
namespace {

// The signal that asked the run to stop (SIGINT or SIGTERM), 0 while running. The first one stops
// the engine at the next step boundary; the handler then restores the default action, so a second
// one ends the process at once (still without an output file: those are written after the run).
volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_stop_signal(int signo) {
  g_interrupted = signo;
  std::signal(signo, SIG_DFL);
}

}  // namespace

config::Fidelity parse_fidelity(const std::string& s) {
  if (s == "full") return config::Fidelity::kFull;
  if (s == "symmetric") return config::Fidelity::kSymmetric;
  return config::Fidelity::kAuto;
}

bool noisy_fabric(const config::Scenario& s) { return s.contention.has_value() || s.link_faults.has_value() || s.cluster.ecmp; }

bool noisy_gpus(const config::Scenario& s) { return s.stragglers.has_value(); }

const std::vector<std::string>& quiet_fabric_sets() {
  static const std::vector<std::string> sets = {"contention.tenants=0", "link_faults=null", "cluster.inter_node.routing=adaptive"};
  return sets;
}

const std::vector<std::string>& healthy_gpu_sets() {
  static const std::vector<std::string> sets = {"stragglers.count=0", "stragglers.jitter=0", "stragglers.episodes_per_gpu_hour=0"};
  return sets;
}

std::vector<config::Override> parse_overrides(const std::vector<std::string>& sets) {
  std::vector<config::Override> out;
  for (const auto& s : sets) out.push_back(config::parse_override(s));
  return out;
}

void check_simulable(const config::Scenario& scenario, int64_t steps, config::Fidelity fidelity) {
  config::check_simulable(scenario, steps > 0 ? steps : scenario.training.steps,
                          engine::resolve_fidelity(scenario, fidelity) == config::Fidelity::kFull);
}

Outcome simulate_scenario(const config::Scenario& scenario, const SimulateOptions& options) {
  Outcome out;
  out.scenario = scenario;
  out.scenario.cluster.routing_seed = options.seed;  // ECMP hashes differ from run to run
  const auto mem = model::memory_per_gpu(scenario.model, scenario.parallel, scenario.training, scenario.cluster);
  const double cap = model::usable_capacity_bytes(scenario.cluster.gpu);
  if (mem.total() > cap) {
    out.fits = false;
    out.infeasible_reason = "does not fit: the busiest GPU needs " + util::format_bytes(mem.total()) + " of " +
                            util::format_bytes(cap) + " (weights " + util::format_bytes(mem.weights) + ", gradients " +
                            util::format_bytes(mem.gradients) + ", optimizer " + util::format_bytes(mem.optimizer) +
                            ", activations " + util::format_bytes(mem.activations) + ", other " +
                            util::format_bytes(mem.other) + "); `trainsim memory` shows what would fit";
    out.summary.name = scenario.name;
    out.summary.gpus = scenario.cluster.gpus();
    out.summary.params = model::count_params(scenario.model).total;
    out.summary.memory = mem;
    out.summary.capacity_bytes = cap;
    return out;
  }
  const int64_t steps = options.steps > 0 ? options.steps : scenario.training.steps;
  check_simulable(scenario, steps, options.fidelity);
  // A platform file is the truth about the cluster (platform/derive.hpp): load it first and cost
  // the step on what it says; report every scenario value it replaced.
  engine::World world;
  std::vector<platform::PlatformOverride> overrides;
  if (!scenario.cluster.platform_file.empty()) {
    world = engine::make_world(scenario.cluster);
    auto derived = platform::derive_cluster(*world.platform, scenario.cluster);
    out.scenario.cluster = derived.cluster;
    overrides = std::move(derived.overrides);
  }
  const config::Scenario& sc = out.scenario;
  out.costs = model::compute_step_costs(sc.model, sc.parallel, sc.training, sc.cluster);
  engine::EngineOptions eo;
  eo.steps = steps;
  eo.seed = options.seed;
  eo.fidelity = options.fidelity;
  eo.trace_steps = options.trace_steps;
  eo.replicate = options.replicate;
  Progress progress(options.progress, "step", "steps");
  eo.on_step = [&progress](int64_t done, int64_t total) { progress.update(done, total); };
  if (options.handle_sigint) {
    g_interrupted = 0;
    std::signal(SIGINT, on_stop_signal);
    std::signal(SIGTERM, on_stop_signal);
    eo.stop = &g_interrupted;
  }
  if (options.before_engine) options.before_engine(sc);
  out.run = engine::simulate(sc, out.costs, eo, std::move(world));
  if (options.handle_sigint) {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
  out.summary = report::summarize(sc, out.costs, out.run, options.seed);
  out.summary.platform_overrides = std::move(overrides);
  return out;
}

nlohmann::json infeasible_json(const Outcome& o) {
  nlohmann::json j = report::to_json(o.summary);
  nlohmann::json out;
  for (const char* k : {"scenario", "gpus", "model", "memory"}) out[k] = j[k];
  out["feasible"] = false;
  out["infeasible_reason"] = o.infeasible_reason;
  out["bottleneck"] = "memory";
  out["bottleneck_reason"] = o.infeasible_reason;
  return out;
}

int run_command(const RunOptions& opt) {
  util::check_outputs(opt.scenario, {{"--json", opt.json_path}, {"--csv", opt.csv_path}, {"--trace", opt.trace_path}});
  const std::string text = config::read_scenario_file(opt.scenario);  // once: the advice's workers get the same bytes
  const auto scenario = config::load_scenario_text(text, opt.scenario, parse_overrides(opt.sets));
  SimulateOptions so;
  so.steps = opt.steps;
  so.seed = opt.seed;
  so.trace_steps = opt.trace_path.empty() ? 0 : opt.trace_steps;
  so.fidelity = parse_fidelity(opt.fidelity);
  so.progress = !opt.quiet;
  so.handle_sigint = true;
  so.replicate = !opt.no_replicate;
  const bool json_stdout = opt.json_path == "-";
  std::FILE* console = json_stdout ? stderr : stdout;
  // With a noisy fabric or noisy GPUs the engine-only counterfactuals (the same seed on a
  // dedicated fabric, with healthy GPUs) run even under --advice 0: the savings table and the
  // stretch split need them. They and the alternatives start before the run's own simulation and
  // use the other cores while it goes.
  std::optional<AdviceBatch> advice;
  so.before_engine = [&](const config::Scenario& simulated) {
    if ((opt.advice <= 0 && !noisy_fabric(simulated) && !noisy_gpus(simulated)) || opt.self.empty()) return;
    AdviceOptions ao;
    ao.self = opt.self;
    ao.path = opt.scenario;
    ao.text = text;
    ao.sets = opt.sets;
    ao.seed = opt.seed;
    ao.steps = opt.steps;
    ao.fidelity = opt.fidelity;
    ao.top = static_cast<size_t>(std::max<int64_t>(0, opt.advice));
    ao.progress = !opt.quiet;
    advice.emplace(ao, simulated);
  };
  Outcome out = simulate_scenario(scenario, so);
  if (!out.fits) {
    std::fprintf(stderr, "trainsim: %s: %s\n", scenario.name.c_str(), out.infeasible_reason.c_str());
    if (!opt.json_path.empty()) util::write_output(opt.json_path, infeasible_json(out).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    return 1;
  }
  if (out.run.interrupted) {
    // SIGINT (Ctrl-C) or SIGTERM: the statistics of the steps done so far, and no output files
    // (an old file at --json/--csv/--trace is left as it was). Exit 128 + the signal's number.
    // The advice's workers are stopped (AdviceBatch's destructor).
    const int signo = g_interrupted == SIGTERM ? SIGTERM : SIGINT;
    std::fprintf(stderr, "\ninterrupted after %zu of %lld steps (%s); no output files written\n", out.run.steps.size(),
                 static_cast<long long>(so.steps > 0 ? so.steps : scenario.training.steps),
                 signo == SIGTERM ? "SIGTERM" : "SIGINT");
    if (!out.run.steps.empty()) std::fputs(report::console_table(out.summary).c_str(), stderr);
    return 128 + signo;
  }
  nlohmann::json advice_runs = nlohmann::json::array();
  if (advice) {
    // SIGINT or SIGTERM while the advice simulates: stop it, and end as an interrupted run does.
    const StopOnSignal stop;
    advice->finish(out.summary, advice_runs);
    if (stop.received() != 0) {
      std::fprintf(stderr, "\ninterrupted while simulating the advice (%s); no output files written\n",
                   StopOnSignal::name(stop.received()).c_str());
      std::fputs(report::console_table(out.summary).c_str(), stderr);
      return 128 + stop.received();
    }
  }
  auto json = report::to_json(out.summary);
  // The same inputs give the same bytes: the host's wall time only with --timings (issue 21 item 8).
  if (!opt.timings) json.erase("wall_s");
  json["fidelity"] = out.run.fidelity;
  json["advice_runs"] = advice_runs;
  // The outputs land together (util::OutputSet); a signal while they are made writes none of them,
  // one while they land waits for the last and is then reported: 130/143 either way.
  const StopOnSignal stop;
  {
    util::OutputSet outputs;
    if (!opt.json_path.empty()) outputs.add(opt.json_path, json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
    if (!opt.csv_path.empty()) outputs.add(opt.csv_path, report::steps_csv(out.run));
    if (!opt.trace_path.empty()) outputs.add(opt.trace_path, report::chrome_trace(out.run));
    if (stop.received() != 0) {
      std::fprintf(stderr, "\ninterrupted while writing the outputs (%s); no output files written\n",
                   StopOnSignal::name(stop.received()).c_str());
      return 128 + stop.received();
    }
    outputs.commit();
  }
  std::fputs(report::console_table(out.summary).c_str(), console);
  if (stop.received() != 0) {
    std::fprintf(stderr, "\ninterrupted (%s) after the outputs were written\n", StopOnSignal::name(stop.received()).c_str());
    return 128 + stop.received();
  }
  // Failures faster than the run can checkpoint: the report says why; the answer is "no" (exit 1).
  if (out.summary.has_reliability && !out.summary.failures.finishes) {
    std::fprintf(stderr, "trainsim: %s: does not finish: %s\n", scenario.name.c_str(), out.summary.failures.why.c_str());
    return 1;
  }
  return 0;
}

}  // namespace trainsim::cli
