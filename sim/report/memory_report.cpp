#include "report/memory_report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "hardware/gpu.hpp"
#include "model/accuracy.hpp"
#include "model/compute.hpp"
#include "model/memory_data.hpp"
#include "model/transformer.hpp"
#include "util/units.hpp"

namespace trainsim::report {
namespace {

constexpr double kGB = 1e9;

struct WeightsPrecision {
  const char* name;
  double bytes_per_param;
};
constexpr WeightsPrecision kWeightPrecisions[] = {{"bf16", 2}, {"fp16", 2}, {"int8", 1}, {"fp8", 1}};

std::string gb(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", bytes / kGB);
  return buf;
}

// "1 micro-batch", "15 micro-batches", "11.5 micro-batches".
std::string micro_batches(double n) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.4g micro-batch%s", n, n == 1 ? "" : "es");
  return buf;
}

// Busiest GPU's bytes on the scenario's cluster (the runtime reserve built for this layout).
double total_bytes(const hardware::ClusterSpec& c, const model::ModelSpec& m, const model::ParallelSpec& p,
                   const model::TrainingSpec& t) {
  return model::memory_per_gpu(m, p, t, c).total();
}

// A layout change at the same GPU count: multiply one factor by `factor`, taking it from dp.
// False when dp does not allow it (then no suggestion: pasted, it would not load).
bool regroup(model::ParallelSpec& p, int64_t factor) {
  if (p.dp % factor != 0) return false;
  if ((p.dp / factor * p.cp) % std::max<int64_t>(p.ep, 1) != 0) return false;  // expert parallelism lives in dp x cp
  p.dp /= factor;
  return true;
}

bool interleave_ok(const model::ParallelSpec& p, const model::TrainingSpec& t) {
  if (p.schedule != model::Schedule::kInterleaved) return true;
  const int64_t m = t.micro_batches(p);
  return m >= 1 && m % p.pp == 0;
}

std::vector<MemorySuggestion> suggest(const MemoryPlan& plan, const config::Scenario& sc) {
  std::vector<MemorySuggestion> out;
  const model::ModelSpec& m = plan.model;
  const model::ParallelSpec& par = plan.parallel;
  const model::TrainingSpec& train = plan.training;
  const double cap = plan.capacity_bytes;
  auto add = [&](std::string text, std::vector<std::string> set, double bytes, double capacity) {
    out.push_back({std::move(text), std::move(set), bytes, capacity});
  };

  // Smaller micro-batch.
  if (par.micro_batch > 1 && plan.largest_micro_batch >= 1) {
    model::ParallelSpec p = par;
    p.micro_batch = plan.largest_micro_batch;
    add("micro-batch " + std::to_string(p.micro_batch) + " is the largest that fits",
        {"parallelism.micro_batch=" + std::to_string(p.micro_batch)}, total_bytes(sc.cluster, m, p, train), cap);
  }

  // Megatron offloads activations only without recompute and pipeline: a suggestion that adds
  // either drops the offload.
  auto without_offload = [&](model::ParallelSpec& p, std::vector<std::string>& set) {
    if (p.activation_offload_layers == 0) return;
    p.activation_offload_layers = 0;
    set.push_back("parallelism.activation_offload_layers=0");
  };

  // More recomputation: the lightest that fits.
  for (model::Recompute r : {model::Recompute::kSelective, model::Recompute::kFull}) {
    if (static_cast<int>(r) <= static_cast<int>(par.recompute)) continue;
    model::ParallelSpec p = par;
    p.recompute = r;
    std::vector<std::string> set = {std::string("parallelism.recompute=") + model::to_string(r)};
    without_offload(p, set);
    const double bytes = total_bytes(sc.cluster, m, p, train);
    // Under flash attention selective recompute drops only the logsumexp: no suggestion that
    // changes nothing.
    if (bytes > 0.99 * plan.breakdown.total()) continue;
    if (bytes <= cap) {
      add(std::string(model::to_string(r)) + " recompute would fit", std::move(set), bytes, cap);
      break;
    }
  }

  // A layer count from `from` up to `to` (inclusive): the smallest that fits, as one suggestion.
  auto fewest_layers = [&](int64_t from, int64_t to, int64_t model::ParallelSpec::*field, const std::string& key,
                           const std::string& before, const std::string& after) {
    for (int64_t k = from; k <= to; ++k) {
      model::ParallelSpec p = par;
      p.*field = k;
      const double bytes = total_bytes(sc.cluster, m, p, train);
      if (bytes <= cap) {
        add(before + std::to_string(k) + after, {key + "=" + std::to_string(k)}, bytes, cap);
        return;
      }
    }
  };
  // Full recompute of only some layers per chunk: the fewest more that fit.
  if (par.recompute == model::Recompute::kFull && par.recompute_num_layers >= 0) {
    int64_t most = 0;
    for (int64_t c : model::chunk_layers(m, par)) most = std::max(most, c);
    fewest_layers(par.recompute_num_layers + 1, most, &model::ParallelSpec::recompute_num_layers,
                  "parallelism.recompute_num_layers", "full recompute of ", " layers per pipeline chunk would fit");
  }
  // CPU activation offload (Megatron: no pipeline, no recompute): the fewest layers that fit.
  if (par.pp == 1 && par.recompute == model::Recompute::kNone)
    fewest_layers(par.activation_offload_layers + 1, m.layers - 1, &model::ParallelSpec::activation_offload_layers,
                  "parallelism.activation_offload_layers", "offloading ", " layers' activations to host memory would fit");

  // Sequence parallelism.
  if (par.tp > 1 && !par.sequence_parallel) {
    model::ParallelSpec p = par;
    p.sequence_parallel = true;
    const double bytes = total_bytes(sc.cluster, m, p, train);
    if (bytes <= cap) add("sequence parallelism would fit", {"parallelism.sequence_parallel=true"}, bytes, cap);
  }

  // A higher ZeRO stage: the lowest that fits.
  if (par.dp * par.cp > 1) {
    for (int z = par.zero + 1; z <= 3; ++z) {
      model::ParallelSpec p = par;
      p.zero = z;
      const double bytes = total_bytes(sc.cluster, m, p, train);
      if (bytes <= cap) {
        add("ZeRO-" + std::to_string(z) + " would fit", {"parallelism.zero=" + std::to_string(z)}, bytes, cap);
        break;
      }
    }
  }

  // Optimizer offload.
  if (train.offload == model::Offload::kNone && plan.breakdown.optimizer > 0) {
    model::TrainingSpec t = train;
    t.offload = model::Offload::kCpu;
    const double bytes = total_bytes(sc.cluster, m, par, t);
    if (bytes <= cap) add("optimizer offload to cpu would fit", {"training.offload=cpu"}, bytes, cap);
  }

  // More pipeline stages: the fewest that fit.
  const int64_t v = par.schedule == model::Schedule::kInterleaved ? std::max<int64_t>(par.virtual_stages, 1) : 1;
  for (int64_t factor = 2; par.pp * factor * v - 2 <= m.layers; factor *= 2) {
    model::ParallelSpec p = par;
    p.pp *= factor;
    p.layers_per_chunk.clear();  // an explicit layout is for the old pp: the even split instead
    if (!regroup(p, factor)) break;
    const std::string note = "dp=" + std::to_string(p.dp) + ", same " + std::to_string(p.gpus()) + " GPUs";
    if (!interleave_ok(p, train)) continue;
    std::vector<std::string> set = {"parallelism.pp=" + std::to_string(p.pp), "parallelism.dp=" + std::to_string(p.dp)};
    without_offload(p, set);
    const double bytes = total_bytes(sc.cluster, m, p, train);
    if (bytes <= cap) {
      if (!par.layers_per_chunk.empty()) set.push_back("parallelism.layers_per_stage=null");
      add("pp=" + std::to_string(p.pp) + " would fit (" + note + ")", std::move(set), bytes, cap);
      break;
    }
  }

  // More tensor parallelism, inside a node: the least that fits.
  const int64_t kv = m.kv_heads > 0 ? m.kv_heads : m.heads;
  for (int64_t factor = 2; par.tp * factor <= sc.cluster.gpus_per_node; factor *= 2) {
    model::ParallelSpec p = par;
    p.tp *= factor;
    if (m.heads % p.tp != 0 || kv % p.tp != 0 || m.hidden % p.tp != 0 || m.ffn_hidden % p.tp != 0) break;
    if (m.is_moe() && m.moe.expert_ffn_hidden % p.tp != 0) break;
    if (!regroup(p, factor)) break;
    const std::string note = "dp=" + std::to_string(p.dp) + ", same " + std::to_string(p.gpus()) + " GPUs";
    if (!interleave_ok(p, train)) continue;
    const double bytes = total_bytes(sc.cluster, m, p, train);
    if (bytes <= cap) {
      add("tp=" + std::to_string(p.tp) + " would fit (" + note + ")",
          {"parallelism.tp=" + std::to_string(p.tp), "parallelism.dp=" + std::to_string(p.dp)}, bytes, cap);
      break;
    }
  }

  // A catalog GPU with more HBM: the smallest that fits (its own usable capacity and reserve).
  std::vector<hardware::GpuSpec> bigger;
  for (const std::string& key : hardware::gpu_keys()) {
    const auto g = hardware::find_gpu(key);
    if (g && model::usable_capacity_bytes(*g) > cap) bigger.push_back(*g);
  }
  std::stable_sort(bigger.begin(), bigger.end(), [](const hardware::GpuSpec& a, const hardware::GpuSpec& b) {
    return model::usable_capacity_bytes(a) < model::usable_capacity_bytes(b);
  });
  for (const hardware::GpuSpec& g : bigger) {
    if (train.precision == model::Precision::kFp8 && g.peak_fp8_flops <= 0) continue;
    hardware::ClusterSpec c = sc.cluster;
    c.gpu = g;
    const double bytes = total_bytes(c, m, par, train);
    const double usable = model::usable_capacity_bytes(g);
    if (bytes <= usable) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.0f", g.hbm_bytes / kGB);
      add(g.name + " (" + buf + " GB) would fit", {"cluster.gpu=" + g.name}, bytes, usable);
      break;
    }
  }

  // Nothing fits on its own (the micro-batch line alone does not count: it needs b >= 1 to fit,
  // and then it is a real fix).
  if (out.empty()) {
    model::ParallelSpec p = par;
    model::TrainingSpec t = train;
    std::vector<std::string> set;
    std::vector<std::string> what;
    if (p.micro_batch > 1) {
      p.micro_batch = 1;
      set.push_back("parallelism.micro_batch=1");
      what.push_back("micro-batch 1");
    }
    if (p.recompute != model::Recompute::kFull) {
      p.recompute = model::Recompute::kFull;
      set.push_back("parallelism.recompute=full");
      what.push_back("full recompute");
      without_offload(p, set);
    }
    if (p.dp * p.cp > 1 && p.zero < 3) {
      p.zero = 3;
      set.push_back("parallelism.zero=3");
      what.push_back("ZeRO-3");
    }
    if (t.offload == model::Offload::kNone) {
      t.offload = model::Offload::kCpu;
      set.push_back("training.offload=cpu");
      what.push_back("optimizer offload to cpu");
    }
    const double bytes = total_bytes(sc.cluster, m, p, t);
    if (!what.empty() && bytes <= cap) {
      add("no single change fits; " + util::join(what, " + ") + " together would fit", set, bytes, cap);
    } else {
      add("no single change fits" + (what.empty() ? std::string() : ", nor " + util::join(what, " + ") + " together") +
              "; the weights alone need " + std::to_string(plan.weights_only.front().gpus_with_reserve) + " GPUs of " +
              gb(plan.datasheet_bytes) + " GB at bf16",
          {}, bytes, cap);
    }
  }
  return out;
}

}  // namespace

MemoryPlan plan_memory(const config::Scenario& sc) {
  MemoryPlan plan;
  plan.scenario_name = sc.name;
  plan.notes = sc.notes;
  plan.gpu_name = sc.cluster.gpu.name;
  plan.model = sc.model;
  plan.parallel = sc.parallel;
  plan.training = sc.training;
  plan.gpus = sc.parallel.gpus();
  plan.params = model::count_params(sc.model).total;
  plan.breakdown = model::memory_per_gpu(sc.model, sc.parallel, sc.training, sc.cluster);
  plan.capacity_bytes = model::usable_capacity_bytes(sc.cluster.gpu);
  plan.datasheet_bytes = sc.cluster.gpu.hbm_bytes;
  plan.fits = plan.breakdown.total() <= plan.capacity_bytes;
  plan.largest_micro_batch =
      model::largest_micro_batch(sc.model, sc.parallel, sc.training, sc.cluster, plan.capacity_bytes);
  // Weights alone, the back-of-envelope count on the datasheet's HBM (CONTRACT.md: 405B needs 11
  // at bf16 on 80 GB), and with this layout's runtime reserve kept free on each GPU.
  for (const WeightsPrecision& w : kWeightPrecisions) {
    plan.weights_only.push_back(
        {w.name, w.bytes_per_param, model::min_gpus_for_weights(plan.params, w.bytes_per_param, plan.datasheet_bytes, 0),
         model::min_gpus_for_weights(plan.params, w.bytes_per_param, plan.datasheet_bytes,
                                     plan.breakdown.reserve_bytes)});
  }
  if (!plan.fits) plan.suggestions = suggest(plan, sc);
  return plan;
}

std::string render_memory_table(const MemoryPlan& plan) {
  const model::MemoryBreakdown& mb = plan.breakdown;
  const model::ModelSpec& m = plan.model;
  const model::ParallelSpec& p = plan.parallel;
  const model::TrainingSpec& t = plan.training;
  std::ostringstream os;
  char line[256];

  os << "trainsim memory: " << (plan.scenario_name.empty() ? "(unnamed scenario)" : plan.scenario_name) << "\n";
  std::snprintf(line, sizeof line, "  model     %.1f B parameters (%s, %lld layers, hidden %lld, seq %lld)\n",
                plan.params / 1e9, model::to_string(m.ffn), static_cast<long long>(m.layers),
                static_cast<long long>(m.hidden), static_cast<long long>(m.seq_len));
  os << line;
  if (m.is_moe()) {
    std::snprintf(line, sizeof line,
                  "  experts   %lld routed (top %lld) + %lld shared, width %lld, from layer %lld; %.1f B active parameters "
                  "a token; ep=%lld: %lld experts a GPU\n",
                  static_cast<long long>(m.moe.experts), static_cast<long long>(m.moe.top_k),
                  static_cast<long long>(m.moe.shared_experts), static_cast<long long>(m.moe.expert_ffn_hidden),
                  static_cast<long long>(m.moe.first_dense_layers), model::count_params(m).active / 1e9,
                  static_cast<long long>(p.ep), static_cast<long long>(m.moe.experts / std::max<int64_t>(p.ep, 1)));
    os << line;
  }
  std::string sched = model::to_string(p.schedule);
  if (p.schedule == model::Schedule::kInterleaved) sched += " v=" + std::to_string(p.virtual_stages);
  const std::string hybrid = p.hybrid_shard() ? " (hybrid, shard groups of " + std::to_string(p.shard_degree) + ")" : "";
  std::snprintf(line, sizeof line,
                "  layout    %lld x %s: tp=%lld pp=%lld dp=%lld cp=%lld, micro-batch %lld, %s, ZeRO-%d%s, recompute %s, "
                "SP %s\n",
                static_cast<long long>(plan.gpus), plan.gpu_name.c_str(), static_cast<long long>(p.tp),
                static_cast<long long>(p.pp), static_cast<long long>(p.dp), static_cast<long long>(p.cp),
                static_cast<long long>(p.micro_batch), sched.c_str(), p.zero, hybrid.c_str(), model::to_string(p.recompute),
                p.sequence_parallel ? "on" : "off");
  os << line;
  std::snprintf(line, sizeof line, "  training  %s, %s%s, offload %s\n", model::to_string(t.precision),
                model::to_string(t.optimizer), t.fp32_main_grads ? " (fp32 main grads)" : "",
                model::to_string(t.offload));
  os << line;
  for (const std::string& n : plan.notes) os << "  note      " << n << "\n";
  os << "\n";

  std::snprintf(line, sizeof line, "Busiest GPU: pipeline stage %lld of %lld (%lld layers%s%s, %s in flight)\n",
                static_cast<long long>(mb.stage), static_cast<long long>(p.pp), static_cast<long long>(mb.layers),
                mb.has_embedding ? ", embedding" : "", mb.has_output ? ", output layer" : "",
                micro_batches(mb.in_flight_micro_batches).c_str());
  os << line;
  const double total = mb.total();
  auto row = [&](const char* name, double bytes, const std::string& note) {
    std::snprintf(line, sizeof line, "  %-12s %9s GB %6.1f%%%s%s\n", name, gb(bytes).c_str(),
                  total > 0 ? 100 * bytes / total : 0.0, note.empty() ? "" : "   ", note.c_str());
    os << line;
  };
  const model::StateBytesPerParam sb = model::state_bytes_per_param(t);
  // Hybrid sharding shards the dense states over its shard group; the routed experts' shard over
  // the expert-data-parallel ranks as before.
  const int64_t shard = std::max<int64_t>(p.shard_ranks(), 1);
  const int64_t expert_shard = std::max<int64_t>(p.dp * p.cp / std::max<int64_t>(plan.parallel.ep, 1), 1);
  auto sharded = [&](bool is) {
    if (!is) return std::string();
    std::string t = ", sharded over " + std::to_string(shard) + " ranks";
    if (plan.model.is_moe() && expert_shard != shard) t += " (the routed experts' over " + std::to_string(expert_shard) + ")";
    return t;
  };
  char note[160];
  std::snprintf(note, sizeof note, "%.1f B params x %.0f B", mb.params / 1e9, sb.weights);
  const bool fp8_copies = model::keeps_fp8_weight_copies(p, t);
  const bool deferred = model::defers_grad_reduce(p, t);
  row("weights", mb.weights,
      note + sharded(p.zero >= 3 && !deferred) + (fp8_copies ? " + fp8 copy and transpose of the layer weights" : ""));
  std::snprintf(note, sizeof note, "x %.0f B", sb.gradients);
  row("gradients", mb.gradients,
      note + sharded(p.zero >= 2) +
          (deferred ? " + unsharded " + std::string(model::grad_bytes_per_param(t) > 2 ? "fp32" : "16-bit") +
                          " accumulators until the last backward (defer_grad_reduce)"
                    : ""));
  if (mb.offloaded_bytes > 0) {
    row("optimizer", mb.optimizer, gb(mb.offloaded_bytes) + " GB offloaded to " + model::to_string(mb.offload_to));
  } else {
    std::snprintf(note, sizeof note, "x %.0f B", sb.optimizer);
    row("optimizer", mb.optimizer, note + sharded(p.zero >= 1));
  }
  const bool partial = p.recompute == model::Recompute::kFull && mb.recomputed_layers < mb.layers;
  const double kept_whole = static_cast<double>(partial ? mb.layers - mb.recomputed_layers : 0);
  const double in_layers =
      mb.in_flight_micro_batches * ((static_cast<double>(mb.layers) - kept_whole) * mb.layer_activation_bytes +
                                    kept_whole * mb.full_layer_activation_bytes);
  if (partial) {
    std::snprintf(note, sizeof note, "%s x (%lld recomputed layers x %.3f GB + %lld kept whole x %.3f GB)",
                  micro_batches(mb.in_flight_micro_batches).c_str(), static_cast<long long>(mb.recomputed_layers),
                  mb.layer_activation_bytes / kGB, static_cast<long long>(kept_whole), mb.full_layer_activation_bytes / kGB);
  } else {
    std::snprintf(note, sizeof note, "%lld layers x %s x %.3f GB per layer", static_cast<long long>(mb.layers),
                  micro_batches(mb.in_flight_micro_batches).c_str(), mb.layer_activation_bytes / kGB);
  }
  std::string act_note = note;
  // The rest: full recompute's one-layer working set, embedding dropout masks, output logits and
  // the loss, torch.distributed.pipelining's kept stage outputs; named by what this rank has.
  std::string kinds;
  auto part = [&](bool has, const char* what) {
    if (has) kinds += (kinds.empty() ? "" : ", ") + std::string(what);
  };
  part(mb.has_output, "logits and loss");
  part(p.recompute == model::Recompute::kFull && mb.recomputed_layers > 0, "recompute working set");
  part(p.pp_microbatch_buffers && p.pp > 1, "kept stage outputs");
  const std::string other = kinds.empty() ? " GB other" : " GB other (" + kinds + ")";
  if (mb.offloaded_activation_bytes > 0) {
    // in_layers counts every layer on the GPU; the offloaded ones leave two layers' buffer.
    const double off = mb.offloaded_activation_bytes;
    act_note = note + std::string(", ") + std::to_string(p.activation_offload_layers) + " layers' " + gb(off) +
               " GB on the host (double buffer on the GPU)";
    const double rest = mb.activations - (in_layers - off + std::min<double>(static_cast<double>(p.activation_offload_layers), 2.0) *
                                                                  mb.layer_activation_bytes);
    if (rest >= 0.05 * kGB) act_note += " + " + gb(rest) + other;
  } else if (mb.activations - in_layers >= 0.05 * kGB) {
    act_note += " + " + gb(mb.activations - in_layers) + other;
  }
  row("activations", mb.activations, act_note);
  const model::RuntimeReserve& rr = mb.reserve;
  std::string other_note = "runtime reserve " + gb(mb.reserve_bytes) + " GB";
  if (rr.fixed < 0) {
    char parts[200];
    std::snprintf(parts, sizeof parts, " (CUDA context %.2f, workspaces %.2f, NCCL %.2f in %d communicators, fragmentation %.2f)",
                  rr.cuda_context / kGB, rr.workspaces / kGB, rr.nccl / kGB, rr.communicators, rr.fragmentation / kGB);
    other_note += parts;
  } else {
    other_note += " (training.runtime_reserve)";
  }
  if (mb.buffer_bytes > 0) other_note += " + communication buffers " + gb(mb.buffer_bytes) + " GB";
  row("other", mb.other, other_note);
  std::snprintf(line, sizeof line, "  %-12s %9s GB\n", "total", gb(total).c_str());
  os << line;
  std::snprintf(line, sizeof line, "  %-12s %9s GB   %s, as the driver reports it (datasheet %s GB)\n", "capacity",
                gb(plan.capacity_bytes).c_str(), plan.gpu_name.c_str(), gb(plan.datasheet_bytes).c_str());
  os << line;
  if (plan.fits) {
    os << "  fits: " << gb(plan.capacity_bytes - total) << " GB free\n";
  } else {
    os << "  DOES NOT FIT: " << gb(total - plan.capacity_bytes) << " GB over capacity\n";
  }
  os << memory_band_line(mb, plan.capacity_bytes, "  ", 12);
  if (plan.largest_micro_batch > 0)
    os << "  largest micro-batch that fits: " << plan.largest_micro_batch << "\n";
  else
    os << "  no micro-batch fits (not even 1)\n";
  os << "\n";

  std::string reserve = gb(mb.reserve_bytes);
  os << "Weights alone: fewest " << plan.gpu_name << " GPUs (" << gb(plan.datasheet_bytes) << " GB each, datasheet)\n";
  std::snprintf(line, sizeof line, "  %-10s %6s   %s\n", "precision", "GPUs", ("with " + reserve + " GB reserve").c_str());
  os << line;
  for (const WeightsOnly& w : plan.weights_only) {
    std::snprintf(line, sizeof line, "  %-10s %6lld   %6lld\n", w.precision.c_str(), static_cast<long long>(w.gpus),
                  static_cast<long long>(w.gpus_with_reserve));
    os << line;
  }

  if (!plan.suggestions.empty()) {
    os << "\nWhat would fit (one change each unless stated):\n";
    size_t width = 0;
    for (const MemorySuggestion& s : plan.suggestions) width = std::max(width, s.text.size());
    for (const MemorySuggestion& s : plan.suggestions) {
      std::string set;
      for (const std::string& kv : s.set) set += (set.empty() ? "--set " : " --set ") + kv;
      std::snprintf(line, sizeof line, "%7s GB of %s", gb(s.per_gpu_bytes).c_str(), gb(s.capacity_bytes).c_str());
      os << "  - " << s.text << std::string(width - s.text.size() + 2, ' ') << line << (set.empty() ? "" : "   ")
         << set << "\n";
    }
  }
  return os.str();
}

nlohmann::json memory_breakdown_json(const model::MemoryBreakdown& mb) {
  nlohmann::json b = {{"weights", mb.weights},
                      {"gradients", mb.gradients},
                      {"optimizer", mb.optimizer},
                      {"activations", mb.activations},
                      {"other", mb.other}};
  // The parts of `other` (CONTRACT.md memory.breakdown.other_*): they add up to it.
  const model::RuntimeReserve& r = mb.reserve;
  if (r.fixed >= 0) {
    b["other_runtime_reserve"] = r.fixed;
  } else {
    b["other_cuda_context"] = r.cuda_context;
    b["other_workspaces"] = r.workspaces;
    b["other_nccl"] = r.nccl;
    b["other_fragmentation"] = r.fragmentation;
  }
  b["other_communication_buffers"] = mb.buffer_bytes;
  return b;
}

nlohmann::json accuracy_json(double step_s, double days, const model::MemoryBreakdown& mb, double capacity_bytes,
                             const std::vector<std::string>& outside) {
  const model::ModelAccuracy& a = model::model_accuracy();
  auto band = [](const model::ErrorBand& b) {
    return nlohmann::json{{"basis", b.basis},
                          {"runs", b.rows},
                          {"mean_abs_error_pct", b.mean_abs_pct},
                          {"p05_error_pct", b.p05_pct},
                          {"p95_error_pct", b.p95_pct}};
  };
  nlohmann::json j;
  if (step_s > 0) {
    const model::Range r = model::step_time_band(step_s);
    j["step_time"] = band(a.step_time);
    j["step_time"]["low_s"] = r.low;
    j["step_time"]["high_s"] = r.high;
    j["step_time"]["outside"] = outside;
    if (days > 0) {
      const model::Range d = model::step_time_band(days);
      j["days"] = {{"low", d.low}, {"high", d.high}};
    }
  }
  const model::Range m = model::memory_band(mb);
  j["memory"] = band(a.peak_memory);
  j["memory"]["low_bytes"] = m.low;
  j["memory"]["high_bytes"] = m.high;
  j["memory"]["capacity_inside"] = m.contains(capacity_bytes);
  return j;
}

std::string memory_band_line(const model::MemoryBreakdown& mb, double capacity_bytes, const std::string& indent,
                             int label_width) {
  const model::Range m = model::memory_band(mb);
  char head[96];
  std::snprintf(head, sizeof head, "%-*s ", label_width, "error band (90%)");
  std::string line = indent + head + gb(m.low) + " - " + gb(m.high) + " GB  (" +
                     model::model_accuracy().peak_memory.basis + ")\n";
  if (m.contains(capacity_bytes))
    line += indent + "the capacity lies inside the band: " +
            (mb.total() <= capacity_bytes ? std::string("fits, but by less than the model's error")
                                          : std::string("does not fit, but by less than the model's error")) +
            "\n";
  return line;
}

nlohmann::json memory_json(const MemoryPlan& plan) {
  const model::MemoryBreakdown& mb = plan.breakdown;
  nlohmann::json j;
  j["scenario"]["name"] = plan.scenario_name;
  j["gpus"] = plan.gpus;
  j["gpu"] = plan.gpu_name;
  j["model"]["params"] = plan.params;
  if (plan.model.is_moe()) {
    j["model"]["active_params"] = model::count_params(plan.model).active;
    j["model"]["moe"] = {{"experts", plan.model.moe.experts},
                         {"top_k", plan.model.moe.top_k},
                         {"expert_ffn_hidden", plan.model.moe.expert_ffn_hidden},
                         {"shared_experts", plan.model.moe.shared_experts},
                         {"first_dense_layers", plan.model.moe.first_dense_layers}};
    j["parallelism"]["ep"] = plan.parallel.ep;
  }
  nlohmann::json& mem = j["memory"];
  mem["per_gpu_bytes"] = mb.total();
  mem["capacity_bytes"] = plan.capacity_bytes;
  mem["fits"] = plan.fits;
  mem["breakdown"] = memory_breakdown_json(mb);
  mem["nccl_communicators"] = mb.reserve.communicators;
  mem["busiest_stage"] = mb.stage;
  mem["stage_layers"] = mb.layers;
  mem["in_flight_micro_batches"] = mb.in_flight_micro_batches;
  mem["layer_activation_bytes"] = mb.layer_activation_bytes;
  mem["reserve_bytes"] = mb.reserve_bytes;
  mem["buffer_bytes"] = mb.buffer_bytes;
  mem["offloaded_bytes"] = mb.offloaded_bytes;
  mem["offload_to"] = model::to_string(mb.offload_to);
  mem["offloaded_activation_bytes"] = mb.offloaded_activation_bytes;
  mem["largest_micro_batch"] = plan.largest_micro_batch;
  j["accuracy"] = accuracy_json(0, 0, mb, plan.capacity_bytes);
  for (const WeightsOnly& w : plan.weights_only) {
    j["min_gpus_for_weights"][w.precision] = w.gpus;
    j["min_gpus_for_weights_with_reserve"][w.precision] = w.gpus_with_reserve;
  }
  j["suggestions"] = nlohmann::json::array();
  for (const MemorySuggestion& s : plan.suggestions)
    j["suggestions"].push_back(
        {{"text", s.text}, {"set", s.set}, {"per_gpu_bytes", s.per_gpu_bytes}, {"capacity_bytes", s.capacity_bytes}});
  return j;
}

}  // namespace trainsim::report
