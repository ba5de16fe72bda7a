#include "cli/plan_command.hpp"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/batch.hpp"
#include "cli/mpi_batch.hpp"
#include "cli/progress.hpp"
#include "cli/run_command.hpp"
#include "cli/sweep_command.hpp"
#include "config/scenario.hpp"
#include "config/yaml_fields.hpp"
#include "model/accuracy.hpp"
#include "model/memory.hpp"
#include "model/memory_data.hpp"
#include "model/step_estimate.hpp"
#include "util/error.hpp"
#include "util/output.hpp"
#include "util/units.hpp"

namespace trainsim::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string str(int64_t v) { return std::to_string(v); }
// "12.3%" (one decimal).
std::string str_pct(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", pct);
  return buf;
}

// One way to lay the model out on a cluster size.
struct Layout {
  int64_t tp = 1, cp = 1, pp = 1, dp = 1, mb = 1, v = 1;
  int64_t ep = 1;  // expert parallelism (mixture-of-experts models)
  // How CP exchanges K and V (parallelism.cp_comm_type); searched where cp > 1, the scenario's otherwise.
  model::CpComm cp_comm = model::CpComm::kP2p;
  model::Schedule schedule = model::Schedule::k1F1B;
  model::Recompute recompute = model::Recompute::kNone;
  int zero = 0;
  bool sp = false;
  bool offload = false;  // optimizer states on the host (training.offload: cpu)
};

Layout layout_of(const config::Scenario& sc);

// The --set changes that turn the scenario (with the user's sets) into `l` on `nodes` nodes (0:
// the scenario's own): only what differs from it.
// The scenario's hybrid sharding carries over to a layout that shards (ZeRO >= 1) over a dp x cp
// it divides; any other layout shards over its whole dp x cp.
bool keeps_shard(const Layout& l, const model::ParallelSpec& p) {
  return p.shard_degree > 0 && l.zero > 0 && (l.dp * l.cp) % p.shard_degree == 0;
}

std::vector<std::string> layout_sets(const Layout& l, const config::Scenario& base, int64_t nodes) {
  const auto& p = base.parallel;
  const Layout b = layout_of(base);
  std::vector<std::string> s;
  if (nodes > 0) s.push_back("cluster.nodes=" + str(nodes));
  if (l.tp != b.tp) s.push_back("parallelism.tp=" + str(l.tp));
  if (l.cp != b.cp) s.push_back("parallelism.cp=" + str(l.cp));
  if (l.cp_comm != b.cp_comm) s.push_back(std::string("parallelism.cp_comm_type=") + model::to_string(l.cp_comm));
  if (l.pp != b.pp) s.push_back("parallelism.pp=" + str(l.pp));
  if (l.dp != b.dp || nodes > 0) s.push_back("parallelism.dp=" + str(l.dp));
  if (l.ep != b.ep) s.push_back("parallelism.ep=" + str(l.ep));
  if (l.mb != b.mb) s.push_back("parallelism.micro_batch=" + str(l.mb));
  if (l.schedule != b.schedule || l.v != b.v) {
    s.push_back("parallelism.schedule=" + std::string(model::to_string(l.schedule)));
    s.push_back("parallelism.virtual_stages=" + str(l.v));
  }
  if (l.recompute != b.recompute) s.push_back("parallelism.recompute=" + std::string(model::to_string(l.recompute)));
  if (l.zero != b.zero) s.push_back("parallelism.zero=" + str(l.zero));
  if (l.sp != b.sp) s.push_back(std::string("parallelism.sequence_parallel=") + (l.sp ? "true" : "false"));
  if (l.offload != b.offload || base.training.offload == model::Offload::kNvme)
    s.push_back(std::string("training.offload=") + (l.offload ? "cpu" : "none"));
  // Keys of the scenario's own layout that do not carry over to another one.
  if (!p.layers_per_chunk.empty() && (l.pp != p.pp || l.v != p.virtual_stages)) s.push_back("parallelism.layers_per_stage=null");
  if (p.recompute_num_layers >= 0 && l.recompute != model::Recompute::kFull) s.push_back("parallelism.recompute_num_layers=null");
  if (p.activation_offload_layers > 0 && (l.pp > 1 || l.recompute != model::Recompute::kNone))
    s.push_back("parallelism.activation_offload_layers=0");
  if (p.shard_degree > 0 && !keeps_shard(l, p)) s.push_back("parallelism.shard_degree=0");
  return s;
}

Layout layout_of(const config::Scenario& sc) {
  const auto& p = sc.parallel;
  return {p.tp, p.cp, p.pp, p.dp, p.micro_batch, p.virtual_stages, p.ep, p.cp_comm, p.schedule, p.recompute, p.zero,
          p.sequence_parallel, sc.training.offload == model::Offload::kCpu};
}

bool same(const Layout& a, const Layout& b) {
  return a.tp == b.tp && a.cp == b.cp && a.pp == b.pp && a.dp == b.dp && a.mb == b.mb && a.v == b.v && a.ep == b.ep &&
         a.cp_comm == b.cp_comm && a.schedule == b.schedule &&
         a.recompute == b.recompute && a.zero == b.zero && a.sp == b.sp && a.offload == b.offload;
}

std::string describe(const Layout& l) {
  std::string s = "tp " + str(l.tp) + ", pp " + str(l.pp);
  if (l.schedule == model::Schedule::kInterleaved) s += " x " + str(l.v) + " chunks";
  s += ", dp " + str(l.dp);
  if (l.cp > 1) s += ", cp " + str(l.cp) + " " + model::to_string(l.cp_comm);
  if (l.ep > 1) s += ", ep " + str(l.ep);
  s += ", mb " + str(l.mb);
  if (l.pp > 1 && l.schedule != model::Schedule::kInterleaved) s += ", " + std::string(model::to_string(l.schedule));
  s += ", recompute " + std::string(model::to_string(l.recompute));
  s += ", ZeRO-" + str(l.zero);
  if (l.sp) s += ", SP";
  if (l.offload) s += ", optimizer on CPU";
  return s;
}

// What sets `l` apart from `best`, in its terms ("pp 8 (16), mb 2 (1)").
std::string difference(const Layout& l, const Layout& best) {
  std::string s;
  auto add = [&](const std::string& what, const std::string& mine, const std::string& theirs) {
    if (mine == theirs) return;
    s += (s.empty() ? "" : ", ") + what + " " + mine + " (" + theirs + ")";
  };
  add("tp", str(l.tp), str(best.tp));
  // cp with its exchange where the two exchange differently: "cp 2 p2p (2 a2a)", "cp 1 (2 a2a)", "cp 8 (4)".
  auto cp = [&](const Layout& x) {
    return x.cp > 1 && l.cp_comm != best.cp_comm ? str(x.cp) + " " + model::to_string(x.cp_comm) : str(x.cp);
  };
  add("cp", cp(l), cp(best));
  add("pp", str(l.pp), str(best.pp));
  add("chunks", str(l.v), str(best.v));
  add("dp", str(l.dp), str(best.dp));
  add("ep", str(l.ep), str(best.ep));
  add("mb", str(l.mb), str(best.mb));
  add("schedule", model::to_string(l.schedule), model::to_string(best.schedule));
  add("recompute", model::to_string(l.recompute), model::to_string(best.recompute));
  add("ZeRO", str(l.zero), str(best.zero));  // "ZeRO 2 (1)": this layout's stage, the best's in brackets
  add("SP", l.sp ? "on" : "off", best.sp ? "on" : "off");
  add("offload", l.offload ? "cpu" : "none", best.offload ? "cpu" : "none");
  return s.empty() ? "the best" : s;
}

nlohmann::json layout_json(const Layout& l) {
  return {{"tp", l.tp},
          {"cp", l.cp},
          {"cp_comm_type", model::to_string(l.cp_comm)},
          {"pp", l.pp},
          {"dp", l.dp},
          {"micro_batch", l.mb},
          {"schedule", model::to_string(l.schedule)},
          {"virtual_stages", l.v},
          {"ep", l.ep},
          {"recompute", model::to_string(l.recompute)},
          {"zero", l.zero},
          {"sequence_parallel", l.sp},
          {"offload", l.offload ? "cpu" : "none"}};
}

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> d;
  for (int64_t i = 1; i * i <= n; ++i)
    if (n % i == 0) {
      d.push_back(i);
      if (i != n / i) d.push_back(n / i);
    }
  std::sort(d.begin(), d.end());
  return d;
}

// A layout the closed form costed.
struct Costed {
  Layout layout;
  double step_s = 0;
  double memory_bytes = 0;
  bool as_written = false;
};

struct Counts {
  int64_t enumerated = 0, invalid = 0, too_large = 0, costed = 0;
};

// Every layout of `gpus` GPUs: the structure (tp, cp, pp, dp, micro-batch, schedule and chunks,
// sequence parallelism) checked by the loader itself; for each valid structure the memory-saving
// choices (recompute, ZeRO stage, optimizer offload), which the loader checks against nothing
// else, set on the loaded scenario, memory-checked and costed by the closed form.
std::vector<Costed> enumerate_and_cost(const std::string& text, const PlanOptions& opt, const config::Scenario& base,
                                       int64_t nodes, Counts& counts) {
  const auto& m = base.model;
  const int64_t gpn = base.cluster.gpus_per_node;
  // Sizes as --nodes counts them (servers, as sweep does); 0 = the scenario's cluster.
  const int64_t gpus = nodes > 0 ? nodes * base.cluster.gpus_per_server() : base.cluster.gpus();
  const int64_t gb = base.training.global_batch;
  const double capacity = model::usable_capacity_bytes(base.cluster.gpu);
  std::vector<Layout> structures;  // recompute, ZeRO and offload left at their defaults
  for (int64_t tp : divisors(gpn))
    for (int64_t cp = 1; cp <= 16; cp *= 2) {
      if (m.seq_len % cp != 0 || m.seq_len / cp < 512 || gpus % (tp * cp) != 0) continue;
      for (int64_t pp : divisors(gpus / (tp * cp))) {
        if (pp > m.layers + 2) break;
        const int64_t dp = gpus / (tp * cp * pp);
        if (gb % dp != 0) continue;
        const int64_t local = gb / dp;
        for (int64_t mb = 1; mb <= 16 && mb <= local; mb *= 2) {
          if (local % mb != 0) continue;
          std::vector<std::pair<model::Schedule, int64_t>> schedules = {{model::Schedule::k1F1B, 1}};
          if (pp > 1)
            for (int64_t v = 2; v <= 16; v *= 2) schedules.push_back({model::Schedule::kInterleaved, v});
          for (const auto& [schedule, v] : schedules)
            for (bool sp : tp > 1 ? std::vector<bool>{true, false} : std::vector<bool>{false})
              // Expert parallelism: each divisor of the experts that divides dp x cp (1 for a dense model).
              for (int64_t ep : m.is_moe() ? divisors(m.moe.experts) : std::vector<int64_t>{1}) {
                if ((dp * cp) % ep != 0) continue;
                // CP's exchange: ring (p2p), all-gather or Ulysses (a2a, where the loader finds the
                // heads split over cp); without CP the scenario's, which then costs nothing.
                for (model::CpComm comm : cp > 1 ? std::vector<model::CpComm>{model::CpComm::kP2p, model::CpComm::kAllGather,
                                                                               model::CpComm::kAllToAll}
                                                 : std::vector<model::CpComm>{base.parallel.cp_comm}) {
                  Layout l;
                  l.tp = tp, l.cp = cp, l.pp = pp, l.dp = dp, l.mb = mb, l.schedule = schedule, l.v = v, l.sp = sp, l.ep = ep;
                  l.cp_comm = comm;
                  structures.push_back(l);
                }
              }
        }
      }
    }
  const std::vector<model::Recompute> recomputes = {model::Recompute::kNone, model::Recompute::kSelective, model::Recompute::kFull};
  const Layout written = layout_of(base);
  std::vector<Costed> out;
  Progress progress(!opt.quiet, "costing layouts on " + str(gpus) + " GPUs: structure", "structures");
  int64_t done = 0;
  for (const Layout& st : structures) {
    progress.update(done++, static_cast<int64_t>(structures.size()));
    const int64_t knobs = static_cast<int64_t>(recomputes.size()) * (st.dp > 1 ? 4 : 1) * 2;
    counts.enumerated += knobs;
    config::Scenario sc;
    std::vector<std::string> sets = opt.sets;
    const auto mine = layout_sets(st, base, nodes);
    sets.insert(sets.end(), mine.begin(), mine.end());
    try {
      sc = config::load_scenario_text(text, opt.scenario, parse_overrides(sets));
    } catch (const util::InputError&) {
      counts.invalid += knobs;  // the loader's rules: heads % tp, layers vs stages, micro-batches % pp, ...
      continue;
    }
    for (model::Recompute rc : recomputes)
      for (int zero = 0; zero <= (st.dp > 1 ? 3 : 0); ++zero)
        for (bool offload : {false, true}) {
          Layout l = st;
          l.recompute = rc, l.zero = zero, l.offload = offload;
          model::ParallelSpec par = sc.parallel;
          par.recompute = rc;
          par.zero = zero;
          par.shard_degree = keeps_shard(l, base.parallel) ? base.parallel.shard_degree : 0;
          if (rc != model::Recompute::kFull) par.recompute_num_layers = -1;
          if (rc != model::Recompute::kNone || par.pp > 1) par.activation_offload_layers = 0;
          model::TrainingSpec train = sc.training;
          train.offload = offload ? model::Offload::kCpu : model::Offload::kNone;
          const double bytes = model::memory_per_gpu(sc.model, par, train, sc.cluster).total();
          if (bytes > capacity) {
            ++counts.too_large;
            continue;
          }
          ++counts.costed;
          out.push_back({l, model::estimate_step(sc.model, par, train, sc.cluster).step_s, bytes, same(l, written) && nodes == 0});
        }
  }
  progress.update(done, static_cast<int64_t>(structures.size()));
  return out;
}

// Step time against memory headroom: the layouts no other is both faster than and lighter than
// (closed form), fastest first.
std::vector<const Costed*> pareto_front(const std::vector<Costed>& costed) {
  std::vector<const Costed*> all;
  for (const auto& c : costed) all.push_back(&c);
  std::sort(all.begin(), all.end(), [](const Costed* a, const Costed* b) {
    return a->step_s != b->step_s ? a->step_s < b->step_s : a->memory_bytes < b->memory_bytes;
  });
  std::vector<const Costed*> front;
  double lightest = std::numeric_limits<double>::infinity();
  for (const Costed* c : all)
    if (c->memory_bytes < lightest) {
      front.push_back(c);
      lightest = c->memory_bytes;
    }
  return front;
}

// A simulated layout.
struct Simulated {
  Costed costed;
  int64_t nodes = 0;
  std::vector<std::string> sets;  // the layout's own (after the user's)
  bool ok = false;
  std::string reason;
  nlohmann::json report;
  double step_s = 0, days = 0, gpu_hours = 0;
};

double objective_value(const Simulated& s, const std::string& objective) {
  return objective == "cost" ? s.gpu_hours : s.step_s;
}

// Ranking order; ties (to a part in 10^9: layouts the engine cannot tell apart) go to the lighter.
bool better(const Simulated& a, const Simulated& b, const std::string& objective) {
  const double x = objective_value(a, objective), y = objective_value(b, objective);
  if (std::abs(x - y) > 1e-9 * std::max(x, y)) return x < y;
  return a.costed.memory_bytes < b.costed.memory_bytes;
}

// The winning scenario as YAML: the scenario file with the user's sets and the layout's applied,
// comments saying how it was found.
std::string best_yaml(const std::string& text, const PlanOptions& opt, const std::vector<std::string>& sets, const std::string& how) {
  YAML::Node root = YAML::Load(text);
  config::detail::Locations locs(opt.scenario);
  config::detail::apply_overrides(root, parse_overrides(sets), locs);
  YAML::Emitter e;
  e << root;
  std::string head = "# Written by `trainsim plan " + opt.scenario + "`: " + how + "\n# The layout's overrides:";
  for (const auto& s : sets) head += "\n#   --set " + s;
  return head + "\n" + e.c_str() + "\n";
}

}  // namespace

int plan_command(const PlanOptions& options, const char* argv0) {
  const auto t0 = Clock::now();
  // Over MPI ranks as sweep does (`mpirun -np K trainsim plan`): every rank enumerates the same
  // layouts, each simulates its share of the shortlist, rank 0 reports (the others are quiet).
  const BatchWorld world = batch_world();
  PlanOptions opt = options;
  opt.quiet = opt.quiet || !world.reports();
  if (world.size > 1 && !opt.quiet) std::fprintf(stderr, "  plan over %d MPI ranks\n", world.size);
  if (opt.objective == "gpus" && !(opt.deadline_s > 0))
    throw util::InputError("--objective gpus needs --deadline (the run's longest acceptable time, e.g. 30d)");
  util::check_outputs(opt.scenario, {{"--json", opt.json_path}, {"--write-best", opt.write_best}});
  const std::string text = config::read_scenario_file(opt.scenario);
  const config::Scenario base = config::load_scenario_text(text, opt.scenario, parse_overrides(opt.sets));
  check_simulable(base, opt.steps);  // steps in range, a model whose step is modelled
  if (!base.cluster.platform_file.empty())
    throw util::InputError("plan: cluster.platform (a platform file) fixes the cluster; plan lays out the built-in clusters only");
  // Cluster sizes in servers, as --nodes gives them; 0 = the scenario's own cluster.
  std::vector<int64_t> sizes = opt.nodes.empty() ? std::vector<int64_t>{0} : parse_node_list(opt.nodes);
  auto gpus_of = [&](int64_t n) { return n > 0 ? n * base.cluster.gpus_per_server() : base.cluster.gpus(); };
  auto nodes_of = [&](int64_t n) { return n > 0 ? n : base.cluster.gpus() / base.cluster.gpus_per_server(); };
  if (opt.max_gpus > 0)
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](int64_t n) { return gpus_of(n) > opt.max_gpus; }), sizes.end());
  if (sizes.empty()) throw util::InputError("--max-gpus " + str(opt.max_gpus) + ": no cluster size left to plan");
  const std::string what = opt.objective == "time" ? "step time" : opt.objective == "cost" ? "GPU-hours of the run" : "fewest GPUs within the deadline";
  if (!opt.quiet)
    std::fprintf(stderr, "trainsim plan: %s, %zu cluster size%s, ranked by %s\n", base.name.c_str(), sizes.size(),
                 sizes.size() == 1 ? "" : "s", what.c_str());

  // Enumerate and cost each size; shortlist its best `top` by the closed form (plus the layout as
  // written), each loaded with every set to be sure it runs.
  Counts counts;
  std::vector<Simulated> sims;
  std::vector<std::vector<Costed>> costed_by_size;
  for (int64_t nodes : sizes) {
    auto costed = enumerate_and_cost(text, opt, base, nodes, counts);
    std::stable_sort(costed.begin(), costed.end(), [](const Costed& a, const Costed& b) { return a.step_s < b.step_s; });
    int64_t taken = 0;
    for (const auto& c : costed) {
      if (taken >= opt.top && !c.as_written) continue;
      Simulated s;
      s.costed = c;
      s.nodes = nodes;
      s.sets = layout_sets(c.layout, base, nodes);
      std::vector<std::string> all = opt.sets;
      all.insert(all.end(), s.sets.begin(), s.sets.end());
      try {
        check_simulable(config::load_scenario_text(text, opt.scenario, parse_overrides(all)), opt.steps);
      } catch (const util::InputError&) {
        continue;  // beyond what the engine can simulate (too many flows per actor, ...)
      }
      if (!c.as_written) ++taken;
      sims.push_back(std::move(s));
    }
    costed_by_size.push_back(std::move(costed));
  }
  const double enumerate_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!opt.quiet)
    std::fprintf(stderr, "  %lld layouts enumerated: %lld break the loader's rules, %lld do not fit in memory, %lld costed "
                         "(closed form, %.1f s); simulating %zu (%lld steps each)\n",
                 static_cast<long long>(counts.enumerated), static_cast<long long>(counts.invalid),
                 static_cast<long long>(counts.too_large), static_cast<long long>(counts.costed), enumerate_s, sims.size(),
                 static_cast<long long>(opt.steps));
  if (sims.empty()) {
    std::fprintf(stderr, "trainsim plan: %s: no layout fits in memory on %s\n", base.name.c_str(),
                 sizes.size() == 1 ? (str(gpus_of(sizes.front())) + " GPUs").c_str() : "any size planned");
    return 1;
  }

  // Simulate the shortlist in worker processes.
  std::vector<Job> jobs;
  for (const auto& s : sims) {
    WorkerOptions w;
    w.scenario = opt.scenario;
    w.sets = opt.sets;
    w.sets.insert(w.sets.end(), s.sets.begin(), s.sets.end());
    w.seed = opt.seed;
    w.steps = opt.steps;
    jobs.push_back(make_job(w));
  }
  Progress simulated(!opt.quiet, "simulated layout", "layouts");
  size_t finished = 0;
  // SIGINT and SIGTERM stop the simulations: a ranking of part of the shortlist would name a wrong
  // best, so an interrupted plan reports nothing but how far it got.
  const StopOnSignal stop;
  const auto results = run_batch(self_exe(argv0), jobs, opt.jobs, text, [&](size_t, const JobResult&) {
    simulated.update(static_cast<int64_t>(++finished), static_cast<int64_t>(jobs.size()));
  });
  if (!world.reports()) return 0;
  if (std::any_of(results.begin(), results.end(), [](const JobResult& r) { return r.stopped; })) {
    std::fprintf(stderr, "\ntrainsim plan: %s: interrupted by %s after %zu of %zu layouts simulated; no output files written\n",
                 base.name.c_str(), StopOnSignal::name(stop.received()).c_str(), finished, jobs.size());
    return 128 + stop.received();
  }
  for (size_t i = 0; i < sims.size(); ++i) {
    auto& s = sims[i];
    const auto& r = results[i];
    s.ok = r.ran && r.result.value("ok", false);
    if (!s.ok) {
      s.reason = r.ran ? r.result.value("reason", "") : r.error;
      continue;
    }
    s.report = r.result["report"];
    s.step_s = s.report["step_time_s"]["mean"].get<double>();
    s.days = s.report["projection"]["days"].get<double>();
    s.gpu_hours = s.days * 24 * s.report["gpus"].get<double>();
  }

  // Each size's best by the objective (time and gpus: step time; cost: GPU-hours), then the
  // overall best.
  std::vector<const Simulated*> ranked;
  for (const auto& s : sims)
    if (s.ok) ranked.push_back(&s);
  if (ranked.empty()) {
    std::fprintf(stderr, "trainsim plan: %s: no shortlisted layout could be simulated (%s)\n", base.name.c_str(), sims.front().reason.c_str());
    return 1;
  }
  const std::string by = opt.objective == "cost" ? "cost" : "time";
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Simulated* a, const Simulated* b) { return better(*a, *b, by); });
  std::map<int64_t, const Simulated*> size_best;
  for (const Simulated* s : ranked)
    if (!size_best.count(s->nodes)) size_best[s->nodes] = s;
  const Simulated* best = ranked.front();
  const Simulated* within_error = nullptr;  // --objective gpus: meets the deadline at the band's upper end
  std::string best_why = opt.objective == "time" ? "the fastest simulated step" : "the fewest GPU-hours for the run";
  if (opt.objective == "gpus") {
    best = nullptr;
    for (const auto& [nodes, s] : size_best)
      if (s->days * 86400 <= opt.deadline_s) {
        best = s;
        break;
      }
    best_why = "the fewest GPUs whose best layout finishes within " + util::format_duration(opt.deadline_s);
    if (best == nullptr) {
      best = size_best.rbegin()->second;
      best_why = "no size meets the deadline of " + util::format_duration(opt.deadline_s) + "; the largest size's best";
    }
    // The same choice at the upper end of the error band (model/accuracy.hpp: 95% of the
    // published runs took no longer than predicted x (1 + p95)): the size to buy if the deadline
    // must hold even then.
    for (const auto& [nodes, s] : size_best)
      if (model::step_time_band(s->days).high * 86400 <= opt.deadline_s) {
        within_error = s;
        break;
      }
  }

  // Scaling across sizes: per-GPU throughput of each size's fastest layout against the smallest.
  nlohmann::json jsizes = nlohmann::json::array();
  nlohmann::json knee = nullptr;
  std::map<int64_t, const Simulated*> size_fastest;
  {
    std::vector<const Simulated*> by_time = ranked;
    std::stable_sort(by_time.begin(), by_time.end(), [&](const Simulated* a, const Simulated* b) { return better(*a, *b, "time"); });
    for (const Simulated* s : by_time)
      if (!size_fastest.count(s->nodes)) size_fastest[s->nodes] = s;
  }
  const Simulated* ref = size_fastest.empty() ? nullptr : size_fastest.begin()->second;
  for (const auto& [nodes, s] : size_fastest) {
    const double per_gpu = s->report["tokens_per_s"].get<double>() / s->report["gpus"].get<double>();
    const double ref_per_gpu = ref->report["tokens_per_s"].get<double>() / ref->report["gpus"].get<double>();
    const double eff = per_gpu / ref_per_gpu;
    if (knee.is_null() && eff < opt.threshold) knee = nodes;
    jsizes.push_back({{"nodes", nodes},
                      {"gpus", s->report["gpus"]},
                      {"best", layout_json(s->costed.layout)},
                      {"sets", s->sets},
                      {"step_time_s", s->step_s},
                      {"tokens_per_s", s->report["tokens_per_s"]},
                      {"days", s->days},
                      {"gpu_hours", s->gpu_hours},
                      {"scaling_efficiency", eff}});
  }

  // Report.
  auto entry = [&](const Simulated& s) {
    nlohmann::json j = {{"nodes", nodes_of(s.nodes)},
                        {"layout", layout_json(s.costed.layout)},
                        {"overrides", s.sets},
                        {"closed_form_step_s", s.costed.step_s},
                        {"as_written", s.costed.as_written}};
    if (!s.ok) {
      j["error"] = s.reason;
      return j;
    }
    j["step_time_s"] = s.step_s;
    j["tokens_per_s"] = s.report["tokens_per_s"];
    j["tflops_per_gpu"] = s.report["tflops_per_gpu"];
    j["mfu"] = s.report["mfu"];
    j["memory"] = {{"per_gpu_bytes", s.report["memory"]["per_gpu_bytes"]}, {"capacity_bytes", s.report["memory"]["capacity_bytes"]}};
    j["bottleneck"] = s.report["bottleneck"];
    j["days"] = s.days;
    j["gpu_hours"] = s.gpu_hours;
    j["gpus"] = s.report["gpus"];
    return j;
  };
  nlohmann::json layouts = nlohmann::json::array();
  for (const Simulated* s : ranked) {
    layouts.push_back(entry(*s));
    layouts.back()["rank"] = layouts.size();
  }
  for (const auto& s : sims)
    if (!s.ok) layouts.push_back(entry(s));
  nlohmann::json pareto = nlohmann::json::array();
  const size_t best_size = static_cast<size_t>(std::find(sizes.begin(), sizes.end(), best->nodes) - sizes.begin());
  const auto front = pareto_front(costed_by_size[best_size]);
  const double capacity = model::usable_capacity_bytes(base.cluster.gpu);
  for (const Costed* c : front)
    pareto.push_back({{"layout", layout_json(c->layout)},
                      {"overrides", layout_sets(c->layout, base, best->nodes)},
                      {"closed_form_step_s", c->step_s},
                      {"memory_headroom_bytes", capacity - c->memory_bytes}});
  const double total_s = std::chrono::duration<double>(Clock::now() - t0).count();
  nlohmann::json out = {{"scenario", {{"name", base.name}}},
                        {"objective", opt.objective},
                        {"counts",
                         {{"enumerated", counts.enumerated},
                          {"invalid", counts.invalid},
                          {"does_not_fit", counts.too_large},
                          {"costed", counts.costed},
                          {"simulated", sims.size()}}},
                        {"steps", opt.steps},
                        {"seed", opt.seed},
                        {"layouts", layouts},
                        {"best", entry(*best)},
                        {"best_reason", best_why},
                        {"pareto", pareto},
                        {"wall_s", total_s}};
  if (sizes.size() > 1) {
    out["sizes"] = jsizes;
    out["knee_nodes"] = knee;
  }
  if (opt.deadline_s > 0) out["deadline_days"] = opt.deadline_s / 86400;
  if (opt.objective == "gpus") {
    const model::ErrorBand& band = model::model_accuracy().step_time;
    out["within_error"] = within_error == nullptr ? nlohmann::json(nullptr) : entry(*within_error);
    if (within_error != nullptr) out["within_error"]["days_high"] = model::step_time_band(within_error->days).high;
    out["within_error_reason"] = "the fewest GPUs whose best layout finishes within the deadline even " +
                                 str_pct(band.p95_pct) + " slower than predicted (the " + band.basis + ": 95% took no longer)";
  }

  std::FILE* console = opt.json_path == "-" ? stderr : stdout;
  std::fprintf(console, "trainsim plan: %s (%s), ranked by %s\n", base.name.c_str(), base.cluster.gpu.name.c_str(), what.c_str());
  std::fprintf(console, "  %lld layouts enumerated, %lld break the loader's rules, %lld do not fit, %lld costed (closed form), %zu simulated "
                        "(engine, %lld steps, seed %llu)\n\n",
               static_cast<long long>(counts.enumerated), static_cast<long long>(counts.invalid),
               static_cast<long long>(counts.too_large), static_cast<long long>(counts.costed), sims.size(),
               static_cast<long long>(opt.steps), static_cast<unsigned long long>(opt.seed));
  std::fprintf(console, "  %-3s %-6s %9s %11s %6s %9s %-12s %8s %10s  %s\n", "#", "nodes", "step", "tokens/s", "MFU", "mem/GPU",
               "bottleneck", "days", "GPU-hours", "layout (what differs from the best)");
  int rank = 0;
  for (const Simulated* s : ranked) {
    ++rank;
    const std::string mark = s == best ? " *" : s->costed.as_written ? " (as written)" : "";
    std::fprintf(console, "  %-3d %-6lld %9s %11.0f %5.1f%% %9s %-12s %8.2f %10.0f  %s%s\n", rank, static_cast<long long>(nodes_of(s->nodes)),
                 util::format_duration(s->step_s).c_str(), s->report["tokens_per_s"].get<double>(),
                 100 * s->report["mfu"].get<double>(), util::format_bytes(s->report["memory"]["per_gpu_bytes"].get<double>()).c_str(),
                 s->report["bottleneck"].get<std::string>().c_str(), s->days, s->gpu_hours,
                 (s == best ? describe(s->costed.layout) : difference(s->costed.layout, best->costed.layout)).c_str(), mark.c_str());
  }
  for (const auto& s : sims)
    if (!s.ok) std::fprintf(console, "  --  %-6lld failed: %s  (%s)\n", static_cast<long long>(nodes_of(s.nodes)), s.reason.c_str(), describe(s.costed.layout).c_str());
  std::fprintf(console, "\n  best (*): %s, %s on %lld nodes: %s\n", best_why.c_str(), describe(best->costed.layout).c_str(),
               static_cast<long long>(nodes_of(best->nodes)), util::format_duration(best->step_s).c_str());
  std::string sets_line;
  for (const auto& s : best->sets) sets_line += " --set " + s;
  std::fprintf(console, "  run it:   trainsim run %s%s\n", opt.scenario.c_str(), sets_line.c_str());
  if (opt.objective == "gpus") {
    const double p95 = model::model_accuracy().step_time.p95_pct;
    if (within_error == nullptr)
      std::fprintf(console, "  within the error band: no size meets the deadline if the run is %s slower than predicted "
                            "(95%% of published runs were not)\n", str_pct(p95).c_str());
    else if (within_error == best)
      std::fprintf(console, "  within the error band: it meets the deadline even %s slower than predicted (%s; 95%% of "
                            "published runs were not slower)\n", str_pct(p95).c_str(),
                   util::format_duration(model::step_time_band(best->days).high * 86400).c_str());
    else
      std::fprintf(console, "  within the error band: %lld nodes (%s) meet the deadline even %s slower than predicted (%s); "
                            "the best above would take %s (95%% of published runs were not slower)\n",
                   static_cast<long long>(nodes_of(within_error->nodes)), describe(within_error->costed.layout).c_str(),
                   str_pct(p95).c_str(), util::format_duration(model::step_time_band(within_error->days).high * 86400).c_str(),
                   util::format_duration(model::step_time_band(best->days).high * 86400).c_str());
  }
  for (const Simulated* s : ranked)
    if (s->costed.as_written && s != best)
      std::fprintf(console, "  the layout as written: %s, %+.1f%% against the best\n", util::format_duration(s->step_s).c_str(),
                   100 * (s->step_s / best->step_s - 1));
  if (sizes.size() > 1) {
    std::fprintf(console, "\n  %-6s %-6s %9s %11s %8s %10s %6s  %s\n", "nodes", "GPUs", "step", "tokens/s", "days", "GPU-hours", "eff.",
                 "fastest layout");
    for (const auto& j : jsizes) {
      Layout l = size_fastest.at(j["nodes"].get<int64_t>())->costed.layout;
      std::fprintf(console, "  %-6lld %-6lld %9s %11.0f %8.2f %10.0f %5.1f%%  %s\n", static_cast<long long>(j["nodes"].get<int64_t>()),
                   static_cast<long long>(j["gpus"].get<int64_t>()), util::format_duration(j["step_time_s"].get<double>()).c_str(),
                   j["tokens_per_s"].get<double>(), j["days"].get<double>(), j["gpu_hours"].get<double>(),
                   100 * j["scaling_efficiency"].get<double>(), describe(l).c_str());
    }
    if (knee.is_null())
      std::fprintf(console, "  no knee: each size's fastest layout keeps %.0f%% of the smallest's throughput per GPU\n", 100 * opt.threshold);
    else
      std::fprintf(console, "  knee: from %lld nodes, the fastest layout keeps less than %.0f%% of the throughput per GPU at %lld node%s\n",
                   static_cast<long long>(knee.get<int64_t>()), 100 * opt.threshold, static_cast<long long>(sizes.front()),
                   sizes.front() == 1 ? "" : "s");
  }
  std::fprintf(console, "\n  step time vs memory headroom (closed form, %lld nodes; no layout is both faster and lighter):\n",
               static_cast<long long>(nodes_of(best->nodes)));
  const size_t show = std::min<size_t>(front.size(), 8);
  for (size_t i = 0; i < show; ++i) {
    const size_t k = show == front.size() ? i : i * (front.size() - 1) / (show - 1);
    const Costed* c = front[k];
    std::fprintf(console, "    %9s  %9s free  %s\n", util::format_duration(c->step_s).c_str(),
                 util::format_bytes(capacity - c->memory_bytes).c_str(), describe(c->layout).c_str());
  }
  std::fprintf(console, "\n  planned in %.1f s (enumerate and cost %.1f s)\n", total_s, enumerate_s);

  util::OutputSet outputs;  // --write-best and --json land together
  if (!opt.write_best.empty()) {
    std::vector<std::string> all = opt.sets;
    all.insert(all.end(), best->sets.begin(), best->sets.end());
    const std::string how = best_why + " of " + str(counts.enumerated) + " layouts enumerated, " + str(counts.costed) +
                            " costed in closed form, " + str(static_cast<int64_t>(sims.size())) + " simulated for " +
                            str(opt.steps) + " steps (seed " + std::to_string(opt.seed) + "): " +
                            util::format_duration(best->step_s) + " per step";
    outputs.add(opt.write_best, best_yaml(text, opt, all, how));
  }
  if (!opt.json_path.empty()) outputs.add(opt.json_path, out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  outputs.commit();
  return 0;
}

}  // namespace trainsim::cli
