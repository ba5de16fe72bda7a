#include "cli/advice.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>

#include "cli/batch.hpp"
#include "model/memory.hpp"
#include "model/step_estimate.hpp"
#include "util/units.hpp"

namespace trainsim::cli {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// The changes worth trying on this scenario's layout; validity is left to the loader.
std::vector<AdviceCandidate> candidates(const config::Scenario& sc) {
  const auto& p = sc.parallel;
  const auto& t = sc.training;
  std::vector<AdviceCandidate> c;
  auto add = [&](std::string what, std::vector<std::string> sets) { c.push_back({std::move(what), std::move(sets), 0}); };
  if (p.pp > 1) {
    if (p.schedule != model::Schedule::kInterleaved) {
      for (int64_t v : {2, 4, 8})
        add("interleaved schedule, " + str(v) + " chunks per stage",
            {"parallelism.schedule=interleaved", "parallelism.virtual_stages=" + str(v)});
    } else {
      add(str(2 * p.virtual_stages) + " chunks per stage", {"parallelism.virtual_stages=" + str(2 * p.virtual_stages)});
    }
  }
  if (p.recompute != model::Recompute::kNone) {
    const std::string unset = p.recompute_num_layers >= 0 ? "parallelism.recompute_num_layers=null" : "";
    for (model::Recompute r : {model::Recompute::kNone, model::Recompute::kSelective}) {
      if (static_cast<int>(r) >= static_cast<int>(p.recompute)) break;
      std::vector<std::string> sets = {"parallelism.recompute=" + std::string(model::to_string(r))};
      if (!unset.empty()) sets.push_back(unset);
      add(r == model::Recompute::kNone ? "no activation recompute" : "selective recompute", sets);
    }
  }
  if (t.offload != model::Offload::kNone) add("no optimizer offload", {"training.offload=none"});
  if (!p.overlap_grad_reduce) add("gradient reduction overlapped with backward", {"parallelism.overlap_grad_reduce=true"});
  if ((p.zero == 1 || p.zero == 2) && p.overlap_grad_reduce && !p.overlap_param_gather)
    add("parameter all-gather overlapped with the first forward", {"parallelism.overlap_param_gather=true"});
  if (p.pp > 1 && p.schedule == model::Schedule::kInterleaved && !p.overlap_p2p_comm)
    add("pipeline transfers overlapped with the passes", {"parallelism.overlap_p2p_comm=true"});
  if (p.zero == 3) {
    add("ZeRO-2 (no parameter gathers)", {"parallelism.zero=2"});
    add("ZeRO-1", {"parallelism.zero=1"});
  }
  // Hybrid sharding: the states sharded within the node and replicated across nodes (the
  // parameters' gathers stay on NVLink), or back to sharding over every replica.
  const int64_t replicas = p.dp * p.cp, per_node = std::max<int64_t>(1, sc.cluster.gpus_per_node / p.tp);
  if (p.zero >= 1 && p.shard_degree == 0 && per_node > 1 && replicas > per_node && replicas % per_node == 0)
    add("states sharded within the node (hybrid, " + str(per_node) + " ranks a shard group)", {"parallelism.shard_degree=" + str(per_node)});
  if (p.hybrid_shard()) add("states sharded over all " + str(replicas) + " replicas", {"parallelism.shard_degree=0"});
  if (p.tp > 1 && !t.tp_comm_overlap) add("TP communication overlapped with the GEMMs", {"training.tp_comm_overlap=true"});
  if (t.eager_elementwise || t.eager_norm || t.eager_activation)
    add("fused element-wise kernels (torch.compile, or fused norm / rotary / activation kernels)",
        {"training.elementwise=fused", "training.norm_kernel=fused", "training.activation_kernel=fused"});
  if (p.tp > 1 && !p.sequence_parallel) add("sequence parallelism", {"parallelism.sequence_parallel=true"});
  // Context parallelism's other exchanges (the loader refuses a2a where the heads do not split).
  if (p.cp > 1 && p.cp_comm != model::CpComm::kP2p)
    add("ring attention for context parallelism (K and V exchanged under the attention)", {"parallelism.cp_comm_type=p2p"});
  if (p.cp > 1 && p.cp_comm != model::CpComm::kAllToAll)
    add("Ulysses context parallelism (heads exchanged all-to-all, attention over the whole sequence)",
        {"parallelism.cp_comm_type=a2a"});
  // Layout: trade a factor of two between model and data parallelism on the same GPUs.
  if (p.tp > 1) add("tp " + str(p.tp / 2) + ", dp " + str(p.dp * 2), {"parallelism.tp=" + str(p.tp / 2), "parallelism.dp=" + str(p.dp * 2)});
  if (p.dp % 2 == 0) {
    add("tp " + str(p.tp * 2) + ", dp " + str(p.dp / 2), {"parallelism.tp=" + str(p.tp * 2), "parallelism.dp=" + str(p.dp / 2)});
    add("pp " + str(p.pp * 2) + ", dp " + str(p.dp / 2), {"parallelism.pp=" + str(p.pp * 2), "parallelism.dp=" + str(p.dp / 2)});
  }
  if (p.tp > 1) add("tp " + str(p.tp / 2) + ", pp " + str(p.pp * 2), {"parallelism.tp=" + str(p.tp / 2), "parallelism.pp=" + str(p.pp * 2)});
  if (p.pp > 1) {
    add("pp " + str(p.pp / 2) + ", dp " + str(p.dp * 2), {"parallelism.pp=" + str(p.pp / 2), "parallelism.dp=" + str(p.dp * 2)});
    if (p.schedule == model::Schedule::kInterleaved && p.pp / 2 > 1)
      add("pp " + str(p.pp / 2) + ", dp " + str(p.dp * 2) + ", " + str(2 * p.virtual_stages) + " chunks per stage",
          {"parallelism.pp=" + str(p.pp / 2), "parallelism.dp=" + str(p.dp * 2),
           "parallelism.virtual_stages=" + str(2 * p.virtual_stages)});
  }
  add("micro-batch " + str(p.micro_batch * 2), {"parallelism.micro_batch=" + str(p.micro_batch * 2)});
  if (p.micro_batch > 1) add("micro-batch " + str(p.micro_batch / 2), {"parallelism.micro_batch=" + str(p.micro_batch / 2)});
  return c;
}

std::string sets_text(const std::vector<std::string>& sets) {
  std::string s;
  for (const auto& x : sets) s += (s.empty() ? "--set " : " --set ") + x;
  return s;
}

std::string signed_pct(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * x);
  return buf;
}

double mean_step(const JobResult& r) {
  if (!r.ran || !r.result.value("ok", false)) return -1;
  return r.result["report"]["step_time_s"]["mean"].get<double>();
}

}  // namespace

std::vector<AdviceCandidate> shortlist_advice(const std::string& path, const std::string& text, const std::vector<std::string>& user_sets,
                                              const config::Scenario& run_scenario, double base_estimate_s, size_t top) {
  std::vector<AdviceCandidate> out;
  if (top == 0) return out;
  for (auto& c : candidates(run_scenario)) {
    std::vector<std::string> sets = user_sets;
    sets.insert(sets.end(), c.sets.begin(), c.sets.end());
    config::Scenario sc;
    try {
      sc = config::load_scenario_text(text, path, parse_overrides(sets));
    } catch (const std::exception&) {
      continue;  // not a valid layout for this model and cluster
    }
    sc.cluster = run_scenario.cluster;  // the changes never touch the cluster; keep what a platform file said
    const auto mem = model::memory_per_gpu(sc.model, sc.parallel, sc.training, sc.cluster);
    if (mem.total() > model::usable_capacity_bytes(sc.cluster.gpu)) continue;
    c.estimate_s = model::estimate_step(sc.model, sc.parallel, sc.training, sc.cluster).step_s;
    if (c.estimate_s < 0.99 * base_estimate_s) out.push_back(std::move(c));
  }
  std::stable_sort(out.begin(), out.end(), [](const AdviceCandidate& a, const AdviceCandidate& b) { return a.estimate_s < b.estimate_s; });
  if (out.size() > top) out.resize(top);
  return out;
}

AdviceBatch::AdviceBatch(const AdviceOptions& opt, const config::Scenario& sc) : opt_(opt), sc_(sc) {
  // The closed-form step of the run's own layout: what each alternative must beat.
  const double base_estimate = model::estimate_step(sc.model, sc.parallel, sc.training, sc.cluster).step_s;
  // --advice 0: no alternatives, only the engine-only counterfactuals below.
  shortlist_ = opt.top > 0 ? shortlist_advice(opt.path, opt.text, opt.sets, sc, base_estimate, opt.top) : std::vector<AdviceCandidate>{};

  WorkerOptions w;
  w.scenario = opt.path;
  w.seed = opt.seed;
  w.steps = opt.steps;
  // Replicating the steady state gives the steps of simulating every one (to 1e-9, a test checks),
  // so the alternatives replicate whenever they can, whether the run itself did or not.
  w.no_replicate = false;
  w.fidelity = opt.fidelity;
  auto job_with = [&](const std::vector<std::string>& extra) {
    w.sets = opt.sets;
    w.sets.insert(w.sets.end(), extra.begin(), extra.end());
    jobs_.push_back(make_job(w));
    return jobs_.size() - 1;
  };
  for (const auto& c : shortlist_) job_with(c.sets);
  // The same seed on a dedicated, ideally balanced, healthy fabric; and with healthy GPUs too.
  contended_ = noisy_fabric(sc);
  straggling_ = noisy_gpus(sc);
  if (contended_) dedicated_ = job_with(quiet_fabric_sets());
  if (straggling_) {
    std::vector<std::string> sets = contended_ ? quiet_fabric_sets() : std::vector<std::string>{};
    sets.insert(sets.end(), healthy_gpu_sets().begin(), healthy_gpu_sets().end());
    quiet_ = job_with(sets);
  }
  if (jobs_.empty()) return;
  // Beside the run: one core fewer than there are, until finish().
  control_.parallel = std::max<int64_t>(1, core_count() - 1);
  thread_ = std::thread([this] {
    try {
      results_ = run_jobs(opt_.self, jobs_, 0, opt_.text, [this](size_t, const JobResult&) {
        std::lock_guard<std::mutex> lock(mutex_);
        ++done_;
        if (reporting_) std::fprintf(stderr, "  %zu/%zu done\n", done_, jobs_.size());
      }, &control_);
    } catch (...) {
      error_ = std::current_exception();
    }
  });
}

AdviceBatch::~AdviceBatch() {
  if (!thread_.joinable()) return;
  control_.cancel = true;  // not finished: the run failed or was stopped; its workers are not wanted
  thread_.join();
}

void AdviceBatch::finish(report::RunSummary& s, nlohmann::json& runs) {
  runs = nlohmann::json::array();
  const config::Scenario& sc = sc_;
  const auto& shortlist = shortlist_;
  const size_t dedicated = dedicated_, quiet = quiet_;
  if (jobs_.empty()) {
    if (opt_.top == 0) return;
    s.advice.push_back("no change of schedule, layout, recompute or offload tried on this cluster is faster by 1% or more "
                       "in the closed form; the table above shows what each resource would save");
    return;
  }
  control_.parallel = core_count();  // the run is done: every core
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (opt_.progress) {
      if (shortlist.empty())
        std::fprintf(stderr, "  simulating %zu counterfactual%s (%s)...\n", jobs_.size(), jobs_.size() == 1 ? "" : "s",
                     contended_ && straggling_ ? "dedicated fabric, no stragglers" : contended_ ? "dedicated fabric" : "no stragglers");
      else
        std::fprintf(stderr, "  simulating %zu alternatives (advice%s)...\n", jobs_.size(),
                     contended_ || straggling_ ? ", dedicated fabric, no stragglers" : "");
      // Those that finished while the run simulated, then the rest as they come.
      for (size_t i = 1; i <= done_; ++i) std::fprintf(stderr, "  %zu/%zu done\n", i, jobs_.size());
      reporting_ = true;
    }
  }
  thread_.join();
  if (error_) std::rethrow_exception(error_);
  const std::vector<JobResult>& results = results_;

  const double base = s.step_time.mean;
  struct Measured {
    const AdviceCandidate* c;
    double step_s;
  };
  std::vector<Measured> measured;
  for (size_t i = 0; i < shortlist.size(); ++i) {
    const double t = mean_step(results[i]);
    nlohmann::json r = {{"what", shortlist[i].what}, {"sets", shortlist[i].sets}, {"closed_form_step_s", shortlist[i].estimate_s}};
    if (t > 0) {
      r["step_time_s"] = t;
      r["change"] = t / base - 1;
      measured.push_back({&shortlist[i], t});
    } else {
      r["error"] = results[i].ran ? results[i].result.value("reason", "") : results[i].error;
    }
    runs.push_back(r);
  }
  std::stable_sort(measured.begin(), measured.end(), [](const Measured& a, const Measured& b) { return a.step_s < b.step_s; });
  for (const auto& m : measured) {
    if (m.step_s >= base) continue;
    s.advice.push_back(m.c->what + ": " + util::format_duration(base) + " -> " + util::format_duration(m.step_s) + " (" +
                       signed_pct(m.step_s / base - 1) + ")  " + sets_text(m.c->sets));
  }
  if (s.advice.empty() && !shortlist.empty())
    s.advice.push_back("none of the " + std::to_string(shortlist.size()) +
                       " changes the closed form shortlisted is faster when simulated; the table above shows what each resource would save");

  // Engine-only counterfactuals: contention and stragglers, for the savings and the stretch split.
  double dedicated_wait = s.sync_wait_s, quiet_wait = s.sync_wait_s, quiet_share = s.sync_wait_comm_share;
  double dedicated_step = base;
  auto wait_of = [&](size_t i, double& wait, double& share) {
    const auto& j = results[i].result["report"]["sync_wait"];
    wait = j["mean_s"].get<double>();
    const double total = j["comm_s"].get<double>() + j["bubble_s"].get<double>();
    share = total > 0 ? j["comm_s"].get<double>() / total : 0;
  };
  if (dedicated != SIZE_MAX && mean_step(results[dedicated]) > 0) {
    dedicated_step = mean_step(results[dedicated]);
    double share = 0;
    wait_of(dedicated, dedicated_wait, share);
    quiet_wait = dedicated_wait;
    quiet_share = share;
    report::add_measured_saving(s, "interconnect.contention", base, base - dedicated_step);
  }
  if (quiet != SIZE_MAX && mean_step(results[quiet]) > 0) {
    const double t = mean_step(results[quiet]);
    wait_of(quiet, quiet_wait, quiet_share);
    report::add_measured_saving(s, "compute.stragglers", base, dedicated_step - t);
  }
  report::split_stretch(s, dedicated_wait, quiet_wait, quiet_share);
  report::diagnose(sc, s);
}

}  // namespace trainsim::cli
