#include "report/run_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "hardware/cluster.hpp"
#include "model/accuracy.hpp"
#include "model/memory_data.hpp"
#include "model/transformer.hpp"
#include "report/memory_report.hpp"
#include "util/units.hpp"

namespace trainsim::report {

Stats stats_of(std::vector<double> v) {
  Stats s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const double n = static_cast<double>(v.size());
  double sum = 0;
  for (double x : v) sum += x;
  // Identical values have exactly that mean and no spread (sum / n can be an ulp off).
  s.mean = v.front() == v.back() ? v.front() : sum / n;
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.std = v.size() > 1 ? std::sqrt(sq / (n - 1)) : 0;
  auto pct = [&](double q) {
    const double pos = q * (n - 1);
    const auto lo = static_cast<size_t>(std::floor(pos));
    const size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
  };
  s.p10 = pct(0.10);
  s.p50 = pct(0.50);
  s.p90 = pct(0.90);
  s.p99 = pct(0.99);
  s.min = v.front();
  s.max = v.back();
  return s;
}

Projection project(const config::Scenario& sc, double tokens_per_step, double mean_step_s, double mean_sync_wait_s) {
  Projection p;
  p.total_steps = sc.training.total_tokens > 0 ? std::ceil(sc.training.total_tokens / tokens_per_step)
                                               : static_cast<double>(sc.training.steps);
  p.days = p.total_steps * mean_step_s / 86400.0;
  p.days_without_sync_wait = p.total_steps * (mean_step_s - mean_sync_wait_s) / 86400.0;
  p.stretch_days = p.days - p.days_without_sync_wait;
  p.gpu_hours = p.days * 24.0 * static_cast<double>(sc.cluster.gpus());
  p.cost = p.gpu_hours * sc.training.gpu_hour_price;
  p.days_with_failures = p.days;
  return p;
}

namespace {

std::string pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * x);
  return buf;
}

// The lightest recompute that still fits, as "selective recompute fits (60 GiB of 79 GiB)", or ""
// when only the scenario's own does.
std::string lighter_recompute_that_fits(const config::Scenario& sc, double capacity_bytes) {
  model::ParallelSpec lighter = sc.parallel;
  lighter.recompute_num_layers = -1;  // only full recompute takes a layer count
  for (model::Recompute r : {model::Recompute::kNone, model::Recompute::kSelective}) {
    if (static_cast<int>(r) >= static_cast<int>(sc.parallel.recompute)) break;
    lighter.recompute = r;
    const double bytes = model::memory_per_gpu(sc.model, lighter, sc.training, sc.cluster).total();
    if (bytes <= capacity_bytes)
      return std::string(model::to_string(r)) + " recompute fits (" + util::format_bytes(bytes) + " of " +
             util::format_bytes(capacity_bytes) + ")";
  }
  return "";
}

}  // namespace

void diagnose(const config::Scenario& sc, RunSummary& s) {
  const auto choice = model::largest_saving(s.savings);
  if (choice.klass.empty()) return;
  const double step = s.step_time.mean > 0 ? s.step_time.mean : 1;
  double base = step;  // the step the part's saving is measured against
  double part_saved = choice.saved_s;
  for (const auto& c : s.savings)
    if (c.resource == choice.part) {
      base = c.step_s + c.saved_s;
      part_saved = c.saved_s;
    }
  const std::string saves = util::format_duration(part_saved) + " of " + util::format_duration(base) + " (" +
                            pct(part_saved / std::max(base, 1e-12)) + ")";
  s.bottleneck = choice.klass;
  const std::string& k = choice.part;
  const std::string tp_cp = s.expert_parallel ? "TP/CP/EP" : "TP/CP";
  if (k == "interconnect.intra") {
    s.bottleneck_reason = tp_cp + " communication over the " + std::string(hardware::to_string(sc.cluster.intra_fabric)) +
                          " intra-node fabric is " + pct(s.tp_comm_s / step) +
                          " of the step; unlimited intra-node bandwidth saves " + saves;
  } else if (k == "interconnect.inter" && s.expert_parallel) {
    // Expert parallelism across nodes puts its all-to-alls on the NICs beside the DP and pipeline
    // traffic: say both shares.
    s.bottleneck_reason = "expert-parallel all-to-alls, DP gradient sync and pipeline transfers over the inter-node fabric: " +
                          tp_cp + " communication is " + pct(s.tp_comm_s / step) + " and exposed DP/PP communication " +
                          pct(s.exposed_comm_s / step) + " of the step; unlimited NIC bandwidth saves " + saves;
  } else if (k == "interconnect.inter") {
    s.bottleneck_reason = "DP gradient sync and pipeline transfers over the inter-node fabric: exposed communication is " +
                          pct(s.exposed_comm_s / step) + " of the step; unlimited NIC bandwidth saves " + saves;
  } else if (k == "interconnect.contention") {
    s.bottleneck_reason = "the fabric's noise (other tenants' traffic, ECMP hash collisions, faulty links, as the scenario has them): "
                          "the same seed on a dedicated, ideally balanced, healthy fabric saves " + saves;
  } else if (k == "interconnect") {
    s.bottleneck_reason = "communication inside and between nodes together: unlimited bandwidth saves " + saves;
  } else if (k == "pipeline") {
    s.bottleneck_reason = "pipeline bubble is " + pct(s.bubble_s / step) + " of the step (" + std::to_string(sc.parallel.pp) +
                          " stages, " + std::to_string(s.micro_batches) + " micro-batches per step); a perfect schedule saves " + saves;
  } else if (k == "compute.flops") {
    s.bottleneck_reason = "compute is " + pct(s.compute_s / step) + " of the step at MFU " + pct(s.mfu) +
                          "; twice the GPU's FLOPs saves " + saves;
  } else if (k == "compute.hbm") {
    s.bottleneck_reason = "memory-bound kernels (optimizer, norms, attention): unlimited HBM bandwidth saves " + saves;
  } else if (k == "compute.host") {
    s.bottleneck_reason = "the fixed per-step overhead (the wait for the slowest data-parallel replica's host, the gradient-norm all-reduce) is paid once per step; removing it saves " + saves;
  } else if (k == "compute.stragglers") {
    s.bottleneck_reason = "slow GPUs hold every other rank at each synchronisation; the same seed without stragglers saves " + saves;
  } else if (k == "memory.recompute" || k == "memory") {
    const std::string fits = lighter_recompute_that_fits(sc, s.capacity_bytes);
    s.bottleneck_reason = std::string(model::to_string(sc.parallel.recompute)) + " activation recompute" +
                          (fits.empty() ? ", needed to fit in " + util::format_bytes(s.capacity_bytes) + "," : " (not needed: " + fits + ")") +
                          " costs " + saves;
    if (sc.training.offload != model::Offload::kNone) s.bottleneck_reason += " together with the optimizer offload";
  } else if (k == "memory.offload") {
    model::TrainingSpec t = sc.training;
    t.offload = model::Offload::kNone;
    const double bytes = model::memory_per_gpu(sc.model, sc.parallel, t, sc.cluster).total();
    s.bottleneck_reason = "optimizer states offloaded to the CPU (" +
                          std::string(bytes <= s.capacity_bytes ? "not needed: without it " : "needed to fit: without it ") +
                          util::format_bytes(bytes) + " of " + util::format_bytes(s.capacity_bytes) + ") cost " + saves;
  } else {
    s.bottleneck_reason = k + " saves " + saves;
  }
  if (k != choice.klass && choice.saved_s > 1.05 * part_saved)
    s.bottleneck_reason += "; all of " + choice.klass + " idealised together saves " + util::format_duration(choice.saved_s);
}

void split_stretch(RunSummary& s, double dedicated_wait_s, double quiet_wait_s, double quiet_comm_share) {
  const double per_day = s.projection.total_steps / 86400.0;
  auto& c = s.projection.stretch_days_by_cause;
  c.contention = (s.sync_wait_s - dedicated_wait_s) * per_day;
  c.stragglers = (dedicated_wait_s - quiet_wait_s) * per_day;
  // The rest, so that the four add up to stretch_days exactly.
  const double rest = s.projection.stretch_days - c.contention - c.stragglers;
  c.communication = rest * quiet_comm_share;
  c.bubble = rest - c.communication;
}

void add_measured_saving(RunSummary& s, const std::string& key, double base_s, double saved_s) {
  saved_s = std::max(0.0, saved_s);
  s.savings.push_back({key, base_s - saved_s, saved_s, true});
  for (auto& c : s.savings)
    if (c.resource == model::class_of(key)) {
      c.saved_s += saved_s;
      c.step_s = base_s - c.saved_s;
    }
  std::stable_sort(s.savings.begin(), s.savings.end(),
                   [](const model::Counterfactual& a, const model::Counterfactual& b) { return a.saved_s > b.saved_s; });
}

RunSummary summarize(const config::Scenario& sc, const model::StepCosts& costs, const engine::RunResult& run,
                     uint64_t seed) {
  RunSummary s;
  s.name = sc.name;
  s.notes = sc.notes;
  s.savings = model::counterfactual_savings(sc.model, sc.parallel, sc.training, sc.cluster);
  s.gpus = sc.cluster.gpus();
  s.params = model::count_params(sc.model).total;
  s.expert_parallel = sc.model.is_moe() && sc.parallel.ep > 1;
  s.memory = model::memory_per_gpu(sc.model, sc.parallel, sc.training, sc.cluster);
  s.capacity_bytes = model::usable_capacity_bytes(sc.cluster.gpu);
  std::vector<double> times;
  double wait = 0;
  for (const auto& r : run.steps) {
    times.push_back(r.time_s);
    s.compute_s += r.compute_s;
    s.tp_comm_s += r.tp_comm_s;
    s.exposed_comm_s += r.exposed_comm_s;
    s.bubble_s += r.bubble_s;
    s.optimizer_s += r.optimizer_s;
    wait += r.sync_wait_s;
  }
  const double n = std::max<double>(1, static_cast<double>(run.steps.size()));
  s.compute_s /= n;
  s.tp_comm_s /= n;
  s.exposed_comm_s /= n;
  s.bubble_s /= n;
  s.optimizer_s /= n;
  wait /= n;
  s.step_time = stats_of(times);
  s.outside_coverage = model::outside_coverage(sc.model, sc.cluster);
  const double step = s.step_time.mean;
  if (step > 0) {
    s.tokens_per_s = costs.tokens_per_step / step;
    s.tflops_per_gpu = costs.model_flops_per_step / (static_cast<double>(s.gpus) * step) / 1e12;
    const double peak = sc.cluster.gpu.peak_flops(sc.training.precision);
    s.mfu = peak > 0 ? s.tflops_per_gpu * 1e12 / peak : 0;
    s.sync_wait_fraction = wait / step;
  }
  s.projection = project(sc, costs.tokens_per_step, step, wait);
  s.sync_wait_s = wait;
  {
    // Per stage, and over all GPUs the share of waiting spent on transfers.
    double comm_wait = 0, bubble_wait = 0;
    int64_t stages = 0;
    for (const auto& g : run.gpus) stages = std::max(stages, g.stage + 1);
    s.stages.resize(static_cast<size_t>(stages));
    std::vector<double> replicas(static_cast<size_t>(stages), 0);
    for (const auto& g : run.gpus) {
      auto& b = s.stages[static_cast<size_t>(g.stage)];
      b.compute_s += g.compute_s;
      b.tp_comm_s += g.tp_comm_s;
      b.comm_wait_s += g.comm_wait_s;
      b.bubble_s += g.bubble_s;
      b.optimizer_s += g.optimizer_s;
      replicas[static_cast<size_t>(g.stage)] += 1;
      comm_wait += g.comm_wait_s;
      bubble_wait += g.bubble_s;
    }
    s.sync_wait_comm_share = comm_wait + bubble_wait > 0 ? comm_wait / (comm_wait + bubble_wait) : 0;
    for (size_t i = 0; i < s.stages.size(); ++i) {
      auto& b = s.stages[i];
      b.stage = static_cast<int64_t>(i);
      const double per = std::max(1.0, replicas[i]) * n;  // totals over every step of every replica
      b.compute_s /= per;
      b.tp_comm_s /= per;
      b.comm_wait_s /= per;
      b.bubble_s /= per;
      b.optimizer_s /= per;
    }
  }
  split_stretch(s, wait, wait, s.sync_wait_comm_share);
  s.micro_batches = costs.micro_batches;
  // Share of the critical stage's compute spent on recompute.
  const auto& crit = costs.stages[static_cast<size_t>(run.critical_stage)];
  double flops = 0, re = 0;
  for (const auto& c : crit.chunks) {
    flops += c.forward_flops + c.backward_flops + c.recompute_flops;
    re += c.recompute_flops;
  }
  s.recompute_share = flops > 0 ? re / flops : 0;
  if (sc.reliability && sc.reliability->failures_per_gpu_hour > 0 && step > 0) {
    const auto& rel = *sc.reliability;
    const double compute_s = s.projection.days * 86400.0;
    s.has_reliability = true;
    s.checkpoint_interval_s = rel.checkpoint_interval_s;
    s.failures = simulate_failures(rel, s.params, s.gpus, compute_s, rel.checkpoint_interval_s, seed);
    s.checkpointing = best_checkpoint_interval(rel, s.params, s.gpus, compute_s, seed);
    s.projection.goodput = s.failures.goodput;
    s.projection.days_with_failures = s.failures.days_with_failures;
    s.projection.days_lost_to_failures = s.failures.days_lost_to_failures;
  }
  s.steps_simulated = static_cast<int64_t>(run.steps.size()) - run.steps_replicated;
  s.steps_replicated = run.steps_replicated;
  s.seed = seed;
  s.network_model = run.network_model;
  s.fidelity = run.fidelity;
  s.wall_s = run.wall_s;
  diagnose(sc, s);
  return s;
}

nlohmann::json to_json(const RunSummary& s) {
  using nlohmann::json;
  json j;
  j["scenario"] = {{"name", s.name}};
  j["gpus"] = s.gpus;
  j["model"] = {{"params", s.params}};
  j["memory"] = {{"per_gpu_bytes", s.memory.total()},
                 {"capacity_bytes", s.capacity_bytes},
                 {"fits", s.memory.total() <= s.capacity_bytes},
                 {"breakdown", memory_breakdown_json(s.memory)},
                 {"offloaded_bytes", s.memory.offloaded_bytes},
                 {"offloaded_activation_bytes", s.memory.offloaded_activation_bytes}};
  j["step_time_s"] = {{"mean", s.step_time.mean}, {"p50", s.step_time.p50}, {"p90", s.step_time.p90},
                      {"p99", s.step_time.p99},   {"min", s.step_time.min}, {"max", s.step_time.max},
                      {"std", s.step_time.std}};
  j["tokens_per_s"] = s.tokens_per_s;
  j["tflops_per_gpu"] = s.tflops_per_gpu;
  j["mfu"] = s.mfu;
  j["accuracy"] = accuracy_json(s.step_time.mean, s.projection.days, s.memory, s.capacity_bytes, s.outside_coverage);
  j["breakdown_s"] = {{"compute", s.compute_s},
                      {"tp_comm", s.tp_comm_s},
                      {"exposed_comm", s.exposed_comm_s},
                      {"bubble", s.bubble_s},
                      {"optimizer", s.optimizer_s}};
  json stages = json::array();
  for (const auto& b : s.stages)
    stages.push_back({{"stage", b.stage},
                      {"compute", b.compute_s},
                      {"tp_comm", b.tp_comm_s},
                      {"comm_wait", b.comm_wait_s},
                      {"bubble", b.bubble_s},
                      {"optimizer", b.optimizer_s}});
  j["breakdown_by_stage_s"] = stages;
  j["sync_wait"] = {{"fraction", s.sync_wait_fraction},
                    {"mean_s", s.sync_wait_s},
                    {"comm_s", s.sync_wait_s * s.sync_wait_comm_share},
                    {"bubble_s", s.sync_wait_s * (1 - s.sync_wait_comm_share)}};
  const auto& p = s.projection;
  j["projection"] = {{"total_steps", p.total_steps},
                     {"days", p.days},
                     {"days_without_sync_wait", p.days_without_sync_wait},
                     {"stretch_days", p.stretch_days},
                     {"stretch_days_by_cause",
                      {{"bubble", p.stretch_days_by_cause.bubble},
                       {"communication", p.stretch_days_by_cause.communication},
                       {"stragglers", p.stretch_days_by_cause.stragglers},
                       {"contention", p.stretch_days_by_cause.contention}}},
                     {"gpu_hours", p.gpu_hours},
                     {"cost", p.cost},
                     {"goodput", p.goodput},
                     {"days_lost_to_failures", p.days_lost_to_failures},
                     {"days_with_failures", p.days_with_failures},
                     {"finishes", !s.has_reliability || s.failures.finishes}};
  if (s.has_reliability && !s.failures.finishes) j["projection"]["does_not_finish"] = s.failures.why;
  if (s.has_reliability) {
    const auto& f = s.failures;
    j["reliability"] = {{"failures", f.failures},
                        {"failures_by_category", f.failures_by_category},
                        {"mtbf_s", f.mtbf_s},
                        {"checkpoint_write_s", f.checkpoint_write_s},
                        {"checkpoint_interval_s", s.checkpoint_interval_s},
                        {"checkpoint_days", f.checkpoint_days},
                        {"best_checkpoint_interval_s", s.checkpointing.best_interval_s},
                        {"best_goodput", s.checkpointing.best_goodput},
                        {"young_daly_interval_s", s.checkpointing.young_daly_s},
                        {"expected", f.expected}};
  }
  if (!s.platform_overrides.empty()) {
    json ov = json::array();
    for (const auto& o : s.platform_overrides)
      ov.push_back({{"field", o.field}, {"scenario", o.yaml}, {"platform_file", o.file}});
    j["platform_overrides"] = ov;
  }
  j["bottleneck"] = s.bottleneck;
  j["bottleneck_reason"] = s.bottleneck_reason;
  json savings = json::object();
  for (const auto& c : s.savings) savings[c.resource] = c.saved_s;
  j["bottleneck_savings_s"] = savings;
  j["advice"] = s.advice;
  j["steps_simulated"] = s.steps_simulated;
  j["steps_replicated"] = s.steps_replicated;
  j["seed"] = s.seed;
  j["network_model"] = s.network_model;
  j["fidelity"] = s.fidelity;
  j["micro_batches"] = s.micro_batches;
  j["wall_s"] = s.wall_s;
  return j;
}

std::string console_table(const RunSummary& s) {
  std::ostringstream o;
  char buf[256];
  auto row = [&](const char* label, const std::string& value) {
    std::snprintf(buf, sizeof buf, "  %-26s %s\n", label, value.c_str());
    o << buf;
  };
  auto fmt = [&](const char* f, double x) {
    std::snprintf(buf, sizeof buf, f, x);
    return std::string(buf);
  };
  const double step = s.step_time.mean > 0 ? s.step_time.mean : 1;
  o << "trainsim run: " << s.name << " (" << s.gpus << " GPUs, " << fmt("%.1fB", s.params / 1e9) << " parameters)\n";
  for (const std::string& n : s.notes) o << "  note: " << n << "\n";
  for (const auto& ov : s.platform_overrides) o << "  platform file overrides " << platform::describe(ov) << "\n";
  o << "\n";
  row("step time (mean)", util::format_duration(s.step_time.mean) + "   p50 " + util::format_duration(s.step_time.p50) +
                              "  p99 " + util::format_duration(s.step_time.p99));
  row("tokens/s", fmt("%.0f", s.tokens_per_s));
  row("TFLOP/s per GPU (model)", fmt("%.1f", s.tflops_per_gpu));
  row("MFU", pct(s.mfu));
  const model::Range step_band = model::step_time_band(s.step_time.mean);
  row("error band (90%)", util::format_duration(step_band.low) + " - " + util::format_duration(step_band.high) +
                              " per step  (" + model::model_accuracy().step_time.basis + ")");
  for (const std::string& what : s.outside_coverage) row("  no published run had", what);
  o << "\n  where a step goes (critical stage)\n";
  auto part = [&](const char* label, double v) {
    std::snprintf(buf, sizeof buf, "    %-24s %12s  %6s\n", label, util::format_duration(v).c_str(), pct(v / step).c_str());
    o << buf;
  };
  part("compute", s.compute_s);
  part(s.expert_parallel ? "TP/CP/EP communication" : "TP/CP communication", s.tp_comm_s);
  part("exposed DP/PP comm", s.exposed_comm_s);
  part("pipeline bubble", s.bubble_s);
  part("optimizer", s.optimizer_s);
  row("sync wait (all GPUs)", pct(s.sync_wait_fraction) + " of GPU time");
  o << "\n  memory per GPU (busiest rank)\n";
  auto mem = [&](const char* label, double v) {
    std::snprintf(buf, sizeof buf, "    %-24s %12s\n", label, util::format_bytes(v).c_str());
    o << buf;
  };
  mem("weights", s.memory.weights);
  mem("gradients", s.memory.gradients);
  mem("optimizer states", s.memory.optimizer);
  mem("activations", s.memory.activations);
  mem("other (reserve, buffers)", s.memory.other);
  std::snprintf(buf, sizeof buf, "    %-24s %12s of %s  %s\n", "total", util::format_bytes(s.memory.total()).c_str(),
                util::format_bytes(s.capacity_bytes).c_str(), s.memory.total() <= s.capacity_bytes ? "fits" : "DOES NOT FIT");
  o << buf;
  o << memory_band_line(s.memory, s.capacity_bytes, "    ", 24);
  const auto& p = s.projection;
  o << "\n  whole run (" << fmt("%.0f", p.total_steps) << " steps)\n";
  const model::Range days_band = model::step_time_band(p.days);
  row("  days", fmt("%.2f", p.days) + "   error band (90%) " + fmt("%.1f", days_band.low) + fmt(" - %.1f", days_band.high));
  row("  days without sync wait", fmt("%.2f", p.days_without_sync_wait));
  row("  stretch from sync wait", fmt("%.2f days", p.stretch_days));
  {
    const auto& c = p.stretch_days_by_cause;
    row("    pipeline bubble", fmt("%.2f days", c.bubble) + "  (a schedule choice: more micro-batches or chunks shrink it)");
    row("    communication wait", fmt("%.2f days", c.communication) + "  (the network's: DP sync and pipeline transfers)");
    if (c.stragglers != 0) row("    stragglers", fmt("%.2f days", c.stragglers) + "  (slow GPUs: same seed without them)");
    if (c.contention != 0)
      row("    contention", fmt("%.2f days", c.contention) + "  (the network's: tenants, ECMP, faults; same seed on a dedicated fabric)");
    row("    the network's share", fmt("%.2f days", c.communication + c.contention) + " of " + fmt("%.2f", p.stretch_days));
  }
  if (s.has_reliability) {
    const std::string count = !s.failures.finishes ? std::string("no end (no segment survives)")
                              : s.failures.expected ? fmt("%.3g", static_cast<double>(s.failures.failures))
                                                    : fmt("%.0f", static_cast<double>(s.failures.failures));
    row(s.failures.expected ? "  failures (expected)" : "  failures (this seed)", count + ", job MTBF " + util::format_duration(s.failures.mtbf_s));
    row("  goodput", pct(p.goodput) + " (checkpoint every " + util::format_duration(s.checkpoint_interval_s) +
                         ", write " + util::format_duration(s.failures.checkpoint_write_s) + ")");
    if (!s.failures.finishes) {
      row("  days with failures", "does not finish: " + s.failures.why);
    } else {
      row("  days lost to failures", fmt("%.2f", p.days_lost_to_failures) + " (of which checkpoint writes " +
                                         fmt("%.2f", s.failures.checkpoint_days) + ")");
      row("  days with failures", fmt("%.2f", p.days_with_failures));
    }
    row("  best checkpoint interval", util::format_duration(s.checkpointing.best_interval_s) + " -> goodput " +
                                          pct(s.checkpointing.best_goodput) + " (Young/Daly " +
                                          util::format_duration(s.checkpointing.young_daly_s) + ")");
  }
  row("  GPU-hours", fmt("%.3g", p.gpu_hours));
  if (p.cost > 0) row("  cost", fmt("%.3g", p.cost));
  if (!s.savings.empty()) {
    // Classes largest first, each followed by its parts (largest first).
    o << "\n  what idealising one resource saves (closed form";
    for (const auto& c : s.savings)
      if (c.resource == "interconnect.contention" || c.resource == "compute.stragglers") {
        o << "; contention and stragglers simulated";
        break;
      }
    o << ")\n";
    auto line = [&](const model::Counterfactual& c, int indent) {
      std::snprintf(buf, sizeof buf, "    %*s%-*s %12s  %6s%s\n", indent, "", 24 - indent, c.resource.c_str(),
                    util::format_duration(c.saved_s).c_str(), pct(c.saved_s / std::max(c.step_s + c.saved_s, 1e-12)).c_str(),
                    c.simulated ? "  (simulated: same seed without it)" : "");
      o << buf;
    };
    for (const auto& k : s.savings) {
      if (!model::is_class(k.resource)) continue;
      line(k, 0);
      for (const auto& c : s.savings)
        if (!model::is_class(c.resource) && model::class_of(c.resource) == k.resource) line(c, 2);
    }
  }
  o << "\n  bottleneck: " << s.bottleneck << " - " << s.bottleneck_reason << "\n";
  for (const auto& a : s.advice) o << "    - " << a << "\n";
  o << "\n  " << s.steps_simulated << " steps simulated";
  if (s.steps_replicated > 0) o << " + " << s.steps_replicated << " replicated from the steady state";
  o << " (" << s.fidelity << " fidelity, " << s.network_model
    << " network model, seed " << s.seed << ") in " << fmt("%.1f s", s.wall_s) << "\n";
  return o.str();
}

std::string steps_csv(const engine::RunResult& run) {
  std::ostringstream o;
  o << "step,time_s,compute_s,tp_comm_s,exposed_comm_s,bubble_s,optimizer_s,sync_wait_s,replicated\n";
  char buf[256];
  const int64_t first_replicated = static_cast<int64_t>(run.steps.size()) - run.steps_replicated;
  for (const auto& r : run.steps) {
    std::snprintf(buf, sizeof buf, "%lld,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%d\n", static_cast<long long>(r.step), r.time_s,
                  r.compute_s, r.tp_comm_s, r.exposed_comm_s, r.bubble_s, r.optimizer_s, r.sync_wait_s,
                  r.step >= first_replicated ? 1 : 0);
    o << buf;
  }
  return o.str();
}

std::string chrome_trace(const engine::RunResult& run) {
  using nlohmann::json;
  json events = json::array();
  auto pid_of = [&](int64_t track) {
    return static_cast<size_t>(track) < run.track_groups.size() ? run.track_groups[static_cast<size_t>(track)] : 0;
  };
  // Processes: the run (its step markers) and one per simulated replica; a thread per track.
  int64_t groups = 0;
  for (int64_t g : run.track_groups) groups = std::max(groups, g + 1);
  for (int64_t g = 0; g < std::max<int64_t>(groups, 1); ++g) {
    events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", g}, {"tid", 0},
                      {"args", {{"name", g == 0 ? std::string("trainsim run") : "replica " + std::to_string(g - 1)}}}});
    events.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", g}, {"tid", 0}, {"args", {{"sort_index", g}}}});
  }
  for (size_t t = 0; t < run.tracks.size(); ++t) {
    const int64_t pid = pid_of(static_cast<int64_t>(t));
    events.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", t}, {"args", {{"name", run.tracks[t]}}}});
    events.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", t}, {"args", {{"sort_index", t}}}});
  }
  for (const auto& e : run.trace) {
    json ev = {{"ph", std::string(1, e.phase)},
               {"name", e.name},
               {"cat", e.category},
               {"pid", pid_of(e.track)},
               {"tid", e.track},
               {"ts", e.start_s * 1e6}};
    switch (e.phase) {
      case 'X': ev["dur"] = e.duration_s * 1e6; break;
      case 'i': ev["s"] = "g"; break;  // global: a line across every track
      case 's': ev["id"] = e.flow; break;
      case 'f':
        ev["id"] = e.flow;
        ev["bp"] = "e";  // bind to the enclosing slice (the receive)
        break;
      default: break;
    }
    events.push_back(std::move(ev));
  }
  json j = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  return j.dump();
}

}  // namespace trainsim::report
