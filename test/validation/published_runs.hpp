// Scenarios built from ../shared/reference/published_runs.yaml and the prediction the simulator's
// closed form makes for each, in the metric the source printed. Shared by published_runs_test.cpp
// (and by calibration searches, which pass their own constants).
//
// Which entries are used (COMPLETE): no `kind` (estimates and reliability statistics are not runs);
// model.layers, hidden, heads, seq_len numbers; a known GPU and a count; parallelism tp, pp, dp
// numbers (cp 1 when absent) whose product with cp is the count; global_batch_seqs a number; a
// measured figure: tflops_per_gpu (Megatron SC21), model_tflops_per_gpu (NeMo) or step_time_s
// (Korthikanti). This leaves out the SC21 Table 2 ZeRO-3 rows (tp/pp "n/a": DeepSpeed, model-parallel
// column ambiguous; printed for information only), GPT-3 5B/20B NeMo rows (no dims), GPT-NeoX
// (throughput unverified), the Korthikanti 530B dp8 row (batch unverified). The Nemotron-4 340B row
// is used although the file marks its dims "unverified".
//
// Defaults for what an entry leaves out, one rule per source, never per row:
//  - Architecture: arch "Llama ..." = swiglu with the public Llama 2/3 ffn sizes and vocab (32000 for
//    Llama 2, 128256 for Llama 3); "Nemotron" = squared-ReLU MLP (2 GEMMs, like gelu), ffn 4h, vocab
//    256000; otherwise GPT: gelu, ffn 4h, vocab 51200, learned positions. kv_heads = heads when absent.
//  - Cluster: 8 GPUs per node on NVSwitch; A100: 300 GB/s per direction, 8 x HDR 200 Gb/s per node
//    (Selene); H100: 450 GB/s, 8 x NDR 400 Gb/s (DGX H100). Latencies 1 us intra, 5 us inter.
//  - micro_batch 1 when absent.
//  - Megatron SC21 and Korthikanti (A100, Megatron-LM 2021/22): 16-bit; full recompute (SC21 Eq.3
//    assumes it) unless the entry says selective; sequence parallel only where the entry says so;
//    plain DDP (zero 0) whose gradient all-reduce runs after the backward (Megatron's local DDP,
//    forced with PP); no flash attention. Korthikanti: Megatron's asynchronous backward TP
//    all-reduce under the weight-gradient GEMM (its Megatron-LM of 2022), no other TP overlap;
//    interleaved with 3 chunks per device for 175B and 530B (Sec. 6), 1F1B otherwise. SC21 Table 1:
//    as its authors' replication script runs it (run_table_1.sh, sc21_table1 below: micro-batch,
//    chunks, PyTorch DDP overlapping the backward for the pp = 1 rows); SC21 Table 2 (no script):
//    micro-batch 1, 3 chunks per device when layers/pp allows it, else 2, else 1F1B
//    (interleaving needs m % pp == 0). SC21: every TP all-reduce synchronous (Megatron-LM at
//    6985e58: the asynchronous one came on 2021-08-30, cf7efd4f5a). Both: pipeline transfers
//    blocking (overlap_p2p_comm off: Megatron-LM gained the overlap on 2023-05-31, f9283c5a).
//  - NeMo 24.07: pipeline transfers overlapped with interleaving (overlap_p2p_comm, the default;
//    the launcher's recipes set it, batch_p2p_comm off).
//  - NeMo 24.07's 512-GPU GPT-3 row is left out: its figure links to MLPerf Training results.
//  - NeMo 24.07 (H100): FP8, no recompute, sequence parallel when tp > 1, distributed optimizer
//    (zero 1) with overlapped gradient reduce, interleaved when virtual_pp > 1.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/gpu.hpp"
#include "model/compute.hpp"
#include "model/flops.hpp"
#include "model/spec.hpp"
#include "model/step_costs.hpp"
#include "model/step_estimate.hpp"

namespace trainsim::validation {

enum class Metric {
  kHardwareTflops,  // Megatron SC21: Eq.3 FLOPs (with full recompute) / (n * step)
  kModelTflops,     // NeMo: model FLOPs / (n * step)
  kStepTime,        // Korthikanti: iteration time; compared as model FLOPs / (n * step)
};

struct PublishedRun {
  std::string id;
  model::ModelSpec model;
  model::ParallelSpec par;
  model::TrainingSpec train;
  hardware::ClusterSpec cluster;
  Metric metric = Metric::kModelTflops;
  double measured_tflops = 0;  // per GPU, in the source's definition (step time converted for kStepTime)
};

namespace detail {

inline std::optional<double> number(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return std::nullopt;
  try {
    return n.as<double>();
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

inline std::string text(const YAML::Node& n) { return n && n.IsScalar() ? n.as<std::string>() : ""; }

inline bool contains(const std::string& s, const char* what) { return s.find(what) != std::string::npos; }

// Public model-card facts for the Llama rows that do not list them.
inline void fill_llama(model::ModelSpec& m, const std::string& arch) {
  m.ffn = model::Ffn::kSwiglu;
  const bool llama3 = contains(arch, "Llama 3");
  if (m.vocab == 0) m.vocab = llama3 ? 128256 : 32000;
  if (m.ffn_hidden == 0) {
    if (m.hidden == 4096) m.ffn_hidden = llama3 ? 14336 : 11008;
    if (m.hidden == 5120) m.ffn_hidden = 13824;
    if (m.hidden == 8192) m.ffn_hidden = 28672;
  }
}

// Megatron SC21 Table 1 as its authors' replication script runs it (examples/sc21/run_table_1.sh
// at Megatron-LM 6985e58938d4, the commit the scripts' README names; its GPU counts and global
// batches are Table 1's): micro-batch (MBS), chunks per stage (num layers per stage /
// --num-layers-per-virtual-pipeline-stage; none = 1F1B) and --DDP-impl (torch: PyTorch DDP, its
// bucketed all-reduce overlapping the backward; local: after the backward).
struct Sc21Table1 {
  const char* size;
  int64_t micro_batch, chunks;
  bool torch_ddp;
};
inline const Sc21Table1* sc21_table1(const std::string& id) {
  static const Sc21Table1 kRows[] = {
      {"1.7B", 16, 1, true},  {"3.6B", 16, 1, true},   {"7.5B", 16, 1, true},    {"18.4B", 8, 1, true},
      {"39.1B", 4, 1, false}, {"76.1B", 2, 3, false},  {"145.6B", 2, 2, false},  {"310.1B", 1, 2, false},
      {"529.6B", 1, 3, false}, {"1008.0B", 1, 1, false}};
  for (const auto& r : kRows)
    if (id == std::string("megatron_sc21_t1_") + r.size) return &r;
  return nullptr;
}

inline int64_t interleave_chunks(const model::ModelSpec& m, const model::ParallelSpec& p, int64_t micro_batches) {
  if (p.pp <= 1 || micro_batches % p.pp != 0) return 1;
  for (int64_t v : {3, 2})
    if ((m.layers / p.pp) % v == 0 && m.layers % p.pp == 0) return v;
  return 1;
}

}  // namespace detail

// The complete entries of the file, as scenarios. Throws YAML::Exception if the file is unreadable.
// With `zero3_only`, instead: the SC21 Table 2 ZeRO-3 (DeepSpeed) rows, read as tp = pp = 1, dp =
// count, ZeRO 3, full recompute: reported for information, not part of the check.
inline std::vector<PublishedRun> load_published_runs(const std::string& path, bool zero3_only = false) {
  using detail::number;
  using detail::text;
  std::vector<PublishedRun> out;
  const YAML::Node root = YAML::LoadFile(path);
  for (const YAML::Node& e : root["runs"]) {
    if (e["kind"]) continue;
    const YAML::Node m = e["model"], hw = e["hardware"], par = e["parallelism"], meas = e["measured"];
    if (!m || !hw || !par || !meas) continue;
    const auto layers = number(m["layers"]), hidden = number(m["hidden"]), heads = number(m["heads"]),
               seq = number(m["seq_len"]);
    const auto count = number(hw["count"]);
    const bool zero3 = detail::contains(text(par["zero_fsdp"]), "ZeRO-3");
    if (zero3 != zero3_only) continue;
    const auto tp = zero3 ? std::optional<double>(1) : number(par["tp"]);
    const auto pp = zero3 ? std::optional<double>(1) : number(par["pp"]);
    const auto dp = number(par["dp"]);
    const auto gb = number(par["global_batch_seqs"]);
    if (!layers || !hidden || !heads || !seq || !count || !tp || !pp || !dp || !gb) continue;

    PublishedRun r;
    r.id = text(e["id"]);
    // NeMo 24.07's 512-GPU GPT-3 figure links to MLPerf Training results (the table's "842" is a
    // link to mlcommons.org/benchmarks/training), a source kept out of fitting and validation.
    if (r.id == "nemo2407_gpt3_175b_512") continue;
    const std::string gpu = text(hw["gpu"]);
    std::optional<hardware::GpuSpec> spec;
    if (detail::contains(gpu, "A100") && detail::contains(gpu, "80")) spec = hardware::find_gpu("a100-80gb");
    if (detail::contains(gpu, "H100")) spec = hardware::find_gpu("h100-sxm");
    if (!spec) continue;

    const std::string source = text(e["source"]["primary"]);
    const bool nemo = detail::contains(source, "NeMo");
    const bool korthikanti = detail::contains(source, "Korthikanti");
    const bool megatron = detail::contains(source, "Narayanan");

    // Measured figure and its definition.
    if (megatron && number(meas["tflops_per_gpu"])) {
      r.metric = Metric::kHardwareTflops;
      r.measured_tflops = *number(meas["tflops_per_gpu"]);
    } else if (nemo && number(meas["model_tflops_per_gpu"])) {
      r.metric = Metric::kModelTflops;
      r.measured_tflops = *number(meas["model_tflops_per_gpu"]);
    } else if (korthikanti && number(meas["step_time_s"])) {
      r.metric = Metric::kStepTime;
    } else {
      continue;
    }

    // Model.
    const std::string arch = text(m["arch"]);
    r.model.layers = static_cast<int64_t>(*layers);
    r.model.hidden = static_cast<int64_t>(*hidden);
    r.model.heads = static_cast<int64_t>(*heads);
    r.model.kv_heads = static_cast<int64_t>(number(m["kv_heads"]).value_or(*heads));
    r.model.seq_len = static_cast<int64_t>(*seq);
    r.model.vocab = static_cast<int64_t>(number(m["vocab"]).value_or(0));
    r.model.ffn_hidden = static_cast<int64_t>(number(m["ffn_hidden"]).value_or(0));
    if (detail::contains(arch, "Llama")) {
      detail::fill_llama(r.model, arch);
    } else if (detail::contains(arch, "Nemotron")) {
      r.model.ffn = model::Ffn::kGelu;  // squared ReLU: a plain (non-gated) MLP
      r.model.dropout = false;          // Nemotron-4 15B report (arXiv 2402.16819) Sec. 2: "dropout rate of zero"
      if (r.model.vocab == 0) r.model.vocab = 256000;
    } else {
      r.model.ffn = model::Ffn::kGelu;
      r.model.learned_position_embedding = true;
      if (r.model.vocab == 0) r.model.vocab = 51200;
    }
    if (r.model.ffn_hidden == 0) r.model.ffn_hidden = 4 * r.model.hidden;

    // Cluster.
    r.cluster.gpu = *spec;
    r.cluster.gpus_per_node = 8;
    r.cluster.nics_per_node = 8;
    r.cluster.intra_fabric = hardware::IntraFabric::kNvswitch;
    r.cluster.intra_bandwidth_Bps = spec->nvlink_bandwidth_Bps;  // 300 (A100) / 450 (H100) GB/s
    r.cluster.nic_bandwidth_Bps = spec->name == "h100-sxm" ? 400e9 / 8 : 200e9 / 8;
    r.cluster.intra_latency_s = 1e-6;
    r.cluster.inter_latency_s = 5e-6;
    r.cluster.nodes = std::max<int64_t>(1, static_cast<int64_t>(*count) / 8);

    // Parallelism and training.
    r.par.tp = static_cast<int64_t>(*tp);
    r.par.pp = static_cast<int64_t>(*pp);
    r.par.dp = static_cast<int64_t>(*dp);
    r.par.cp = static_cast<int64_t>(number(par["cp"]).value_or(1));
    if (r.par.gpus() != static_cast<int64_t>(*count)) continue;
    r.par.micro_batch = static_cast<int64_t>(number(par["microbatch"]).value_or(1));
    r.train.global_batch = static_cast<int64_t>(*gb);
    const int64_t micro_batches = r.train.micro_batches(r.par);
    if (nemo) {
      r.train.precision = model::Precision::kFp8;
      r.par.recompute = model::Recompute::kNone;
      r.par.sequence_parallel = r.par.tp > 1;
      r.par.zero = 1;
      r.par.overlap_grad_reduce = true;
      const int64_t v = static_cast<int64_t>(number(par["virtual_pp"]).value_or(1));
      r.par.schedule = v > 1 ? model::Schedule::kInterleaved : model::Schedule::k1F1B;
      r.par.virtual_stages = v;
    } else {
      r.train.precision = model::Precision::kBf16;
      r.par.recompute = detail::contains(text(par["recompute"]), "selective") ? model::Recompute::kSelective
                                                                               : model::Recompute::kFull;
      r.par.sequence_parallel = par["sequence_parallel"] && par["sequence_parallel"].as<bool>();
      r.par.zero = zero3 ? 3 : 0;
      r.par.overlap_grad_reduce = zero3;
      r.train.flash_attention = false;
      r.train.tp_comm_overlap = false;
      int64_t v = detail::interleave_chunks(r.model, r.par, micro_batches);
      // Korthikanti Sec. 6: "three interleaving stages ... for the 175B and 530B models" only.
      if (korthikanti && !detail::contains(r.id, "175B") && !detail::contains(r.id, "530B")) v = 1;
      if (megatron) {
        // Synchronous TP all-reduces: the asynchronous one came after the paper's commit.
        r.train.tp_async_backward = false;
        if (const detail::Sc21Table1* t = detail::sc21_table1(r.id)) {
          r.par.micro_batch = t->micro_batch;
          v = t->chunks;
          r.par.overlap_grad_reduce = t->torch_ddp;
        }
      }
      r.par.schedule = v > 1 ? model::Schedule::kInterleaved : model::Schedule::k1F1B;
      r.par.virtual_stages = v;
      // Blocking pipeline transfers: Megatron-LM overlapped them only from 2023-05-31 (f9283c5a).
      r.par.overlap_p2p_comm = false;
    }
    if (r.metric == Metric::kStepTime)
      r.measured_tflops = model::model_flops_per_step(r.model, r.train.global_batch) /
                          (static_cast<double>(*count) * *number(meas["step_time_s"])) / 1e12;
    out.push_back(r);
  }
  return out;
}

// Predicted TFLOP/s per GPU in the run's own definition.
// The same from the run's costs already computed with `c`.
inline double predict_tflops(const PublishedRun& r, const model::StepCosts& costs, const model::Calibration& c) {
  const model::StepEstimate e = model::estimate_step(costs, r.model, r.par, r.train, r.cluster, c);
  const double gpus = static_cast<double>(r.par.gpus());
  if (r.metric == Metric::kHardwareTflops)
    return model::megatron_eq3_flops(r.model, r.train.global_batch) / (gpus * e.step_s) / 1e12;
  return e.tflops_per_gpu / 1e12;
}

inline double predict_tflops(const PublishedRun& r, const model::Calibration& c = model::default_calibration()) {
  return predict_tflops(r, model::compute_step_costs(r.model, r.par, r.train, r.cluster, c), c);
}

}  // namespace trainsim::validation
