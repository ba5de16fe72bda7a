// Scenario loader: YAML version 1 (CONTRACT.md) plus the extensions below, --set overrides,
// presets, defaults and validation. Every complaint is a util::InputError at the key or value it
// is about ("FILE:LINE:COL: message", or "--set:N:COL: message" for the N-th override).
//
// Extensions to the contract's keys (all optional):
//   model.tied_embeddings, model.learned_position_embedding  bool (default false, or the preset's)
//   model.dropout             bool (default: true for gelu models, false for swiglu; memory keeps
//                             the 1-byte masks when true)
//   cluster.gpu as a map: base (catalog key to start from), name, hbm, hbm_bandwidth, peak_bf16,
//       peak_fp16 (default = peak_bf16), peak_fp8, peak_fp32, nvlink_bandwidth, pcie_bandwidth
//       ("989.4Tf" = SimGrid speed syntax); without `base`, hbm, hbm_bandwidth and peak_bf16 are required
//   parallelism.dp may be left out: then dp = GPUs / (tp * cp * pp)
//   parallelism.layers_per_stage  list: pp entries (layers per stage; interleaved: dealt to the
//       stage's chunks) or pp * virtual_stages entries (per chunk, model order); they add up to
//       model.layers and only the model's first and last chunk may be empty (default: even split)
//   training.steps            at most kMaxSteps (10^6)
//   training.gpu_hour_price   number >= 0 (currency per GPU-hour; default 0 = no cost line)
//   training.fp32_main_grads  bool (default false)
//   training.cross_entropy    fused | torch | chunked (default fused): what the loss holds (TrainingSpec::cross_entropy)
//   training.elementwise      fused | eager (default fused): element-wise kernels one per operator in
//                             eager PyTorch, or fused (TrainingSpec::eager_elementwise)
//   training.norm_kernel      fused | eager (default: as training.elementwise): RMSNorm the same way
//   training.activation_kernel  fused | eager (default: as training.elementwise): SwiGLU the same way
//   parallelism.defer_grad_reduce  bool (default false): ZeRO-2/3 gradients accumulated unsharded
//       over the micro-batches and reduced after the last (torch.distributed.pipelining + FSDP2;
//       model/spec.hpp ParallelSpec::defer_grad_reduce)
//   parallelism.pp_microbatch_buffers  bool (default false): torch.distributed.pipelining's receive
//       buffers, kept outputs and input gradients per micro-batch, and its interleaved warm-up
//       (model/spec.hpp ParallelSpec::pp_microbatch_buffers)
//   parallelism.recompute_num_layers  integer >= 0, with recompute: full only: the first N layers
//       of every pipeline chunk are recomputed, the others keep their activations (Megatron's
//       block method; default: every layer)
//   parallelism.activation_offload_layers  integer >= 0 (default 0): activations of the first N
//       layers offloaded to host memory (Megatron's CPU offloading: N < layers, pp 1, no recompute)
//   parallelism.overlap_param_gather  bool (default true): ZeRO-1/2 with overlap_grad_reduce, the
//       parameter all-gather after the optimizer runs under the next step's first forward
//       (model/spec.hpp ParallelSpec::overlap_param_gather); false: the next step waits for it
//   parallelism.shard_degree  integer >= 1 dividing dp * cp, with zero >= 1; 0 (the default) = all
//       of dp * cp: hybrid sharding, ZeRO's states sharded within groups of that many DP ranks and
//       replicated across them (model/spec.hpp ParallelSpec::shard_degree)
//   parallelism.overlap_p2p_comm  bool (default true): with the interleaved schedule, pipeline
//       transfers run under the next pass in the other direction (Megatron-Core's default since
//       2023; model/spec.hpp ParallelSpec::overlap_p2p_comm); no effect on other schedules
//   parallelism.sac_saves_attention  bool (default true): under recompute selective-op the
//                             attention's output is kept (false: recomputed; model/spec.hpp)
//   parallelism.cp_comm_type  p2p | all_gather | a2a (default p2p): how context parallelism
//       exchanges K and V, Megatron-Core's names (model/spec.hpp ParallelSpec::cp_comm); a2a needs
//       the query and key-value heads of a TP rank to divide by cp
//   parallelism.sp_save_gathered  bool (default false): under SP the column-parallel linears keep
//       their all-gathered input (DTensor / torchtitan) instead of re-gathering it (Megatron)
//   parallelism.recompute     also selective-op (torchtitan's per-op policy, model/spec.hpp)
//   training.fp8_stack        transformer-engine | torchao (default transformer-engine): what fp8
//                             keeps in memory (model/spec.hpp TrainingSpec::fp8_torchao)
//   training.grad_reduce_fp32 bool (default false: gradients reduced in 16 bits)
//   training.runtime_reserve  size per GPU (default: built from its parts, model/memory.hpp)
//   training.optimizer_state_precision  fp32 | bf16 (Adam moments; default fp32)
//   training.flash_attention  bool (default true: fused attention, no s^2 scores kept)
//   training.tp_comm_overlap  bool (default true: TP collectives overlapped with the GEMMs)
//   training.attention_kernel default | fa1 | fa2 | fa3 | fa4 | cudnn (default: what a current stack
//                             runs on the GPU: FA2 on A100, cuDNN (Transformer Engine's
//                             choice) on Hopper and B200;
//                             sim/hardware/data/cost_tables.yaml; a kernel the GPU has no table for
//                             takes its default, and a note says so)
//   engine.fidelity           auto | full | symmetric (default auto)
//   engine.buckets            integer >= 0 (gradient buckets; default 0 = auto)
//   engine.flow_classes       bool (default true): identical DP flows alone on their links simulated
//                             once per class (engine/flow_classes.hpp); false simulates every flow
//   stragglers: {count (default 0), slowdown (>= 1, default 1), jitter (in [0, 1), default 0)}
//   contention.idle           time (mean idle period; default = burst)
//   reliability.failures_per_gpu_hour  number >= 0; with a preset, rescales its categories
//   reliability.categories    map name -> failures per GPU-hour (replaces the preset's)
//   reliability.checkpoint_write  time; reliability.storage_bandwidth  bandwidth
//   A null value (`key:` or `key: null`) means the key is absent; `reliability: null` turns it off.
//
// Defaults: name = file stem; ffn_hidden = 4 * hidden for gelu (swiglu needs it given);
// kv_heads = heads; gpus_per_node 8; intra fabric nvswitch when the GPU has NVLink (else pcie)
// at the GPU's NVLink (or PCIe) bandwidth, 1us; inter-node fat-tree, 400Gbps x gpus_per_node
// NICs, 5us, oversubscription 1; tp = pp = cp = micro_batch = virtual_stages = 1; 1f1b; zero 0;
// recompute none; precision bf16; adam; steps 100; offload none. With a preset, keys not given
// keep the preset's values (kv_heads follows heads when the preset has no grouped-query attention).
// A relative cluster.platform path is looked up next to the scenario file, then in the current
// directory; platform_file holds the path that was found.
#include "config/scenario.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "config/yaml_fields.hpp"
#include "model/cost_data.hpp"
#include "model/memory.hpp"
#include "model/presets.hpp"
#include "parallel/layer_split.hpp"
#include "util/units.hpp"

namespace trainsim::config {

double diurnal_start_hour(const ContentionSpec& c, uint64_t run_seed) {
  if (c.start_hour >= 0) return c.start_hour;
  const double golden = 0.6180339887498949;  // (sqrt(5) - 1) / 2
  const double x = static_cast<double>(run_seed % (uint64_t{1} << 40)) * golden;
  return 24 * (x - std::floor(x));
}

double diurnal_factor(const ContentionSpec& c, double start_hour, double clock_s) {
  if (c.diurnal_amplitude <= 0) return 1;
  const double hour = start_hour + clock_s / 3600;
  return 1 + c.diurnal_amplitude * std::cos(2 * M_PI * (hour - c.peak_hour) / 24);
}

const char* to_string(Fidelity f) {
  switch (f) {
    case Fidelity::kAuto: return "auto";
    case Fidelity::kFull: return "full";
    case Fidelity::kSymmetric: return "symmetric";
  }
  return "?";
}

Override parse_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos) throw util::InputError({"--set"}, "expected KEY=VALUE, got '" + text + "'");
  if (eq == 0) throw util::InputError({"--set"}, "expected KEY=VALUE, got '" + text + "' (empty KEY)");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

namespace {

using detail::Block;
using detail::describe;
using detail::fail;
using detail::Field;
using util::SourceLocation;

constexpr int64_t kMaxCount = int64_t{1} << 20;  // nodes, tp, pp, dp, cp, layers, heads, ...
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<std::string> kTopKeys = {"version",  "name",        "model",      "cluster", "parallelism",
                                           "training", "reliability", "contention", "stragglers", "link_faults", "engine"};
const std::vector<std::string> kModelKeys = {"preset", "layers", "hidden",          "ffn_hidden",
                                             "heads",  "kv_heads", "head_dim", "vocab",         "seq_len",
                                             "ffn",    "tied_embeddings", "learned_position_embedding",
                                             "dropout", "moe", "mla", "mtp_modules"};
const std::vector<std::string> kMlaKeys = {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"};
const std::vector<std::string> kMoeKeys = {"experts", "top_k", "expert_ffn_hidden", "shared_experts", "first_dense_layers",
                                           "capacity_factor", "max_nodes_per_token"};
const std::vector<std::string> kClusterKeys = {"gpu",        "nodes",    "gpus_per_node", "intra_node",
                                               "inter_node", "platform", "nvlink_domain"};
const std::vector<std::string> kGpuKeys = {"base",      "name",      "hbm",       "hbm_bandwidth",    "peak_bf16",
                                           "peak_fp16", "peak_fp8",  "peak_fp32", "nvlink_bandwidth", "pcie_bandwidth"};
const std::vector<std::string> kIntraKeys = {"fabric",  "bandwidth", "latency", "pcie_switch_gpus", "pcie_switch_uplink",
                                             "sockets", "inter_socket_bandwidth"};
const std::vector<std::string> kInterKeys = {"topology", "nic_bandwidth", "nics_per_node", "latency", "oversubscription", "routing", "nodes_per_leaf", "transport"};
const std::vector<std::string> kParallelKeys = {"tp",       "pp",        "dp",        "cp",        "ep",        "expert_tp",
                                                "micro_batch", "schedule", "virtual_stages", "zero",
                                                "recompute", "sequence_parallel", "overlap_grad_reduce", "layers_per_stage",
                                                "defer_grad_reduce", "pp_microbatch_buffers", "recompute_num_layers",
                                                "activation_offload_layers", "sp_save_gathered", "sac_saves_attention", "ep_overlap", "recompute_modules", "ep_dispatcher",
                                                "overlap_p2p_comm", "overlap_param_gather", "shard_degree", "cp_comm_type"};
const std::vector<std::string> kTrainingKeys = {"precision",    "optimizer",      "global_batch",    "steps",
                                                "total_tokens", "offload",        "gpu_hour_price", "fp32_main_grads",
                                                "runtime_reserve", "flash_attention", "tp_comm_overlap", "attention_kernel",
                                                "optimizer_state_precision", "grad_reduce_fp32", "fp8_stack", "cross_entropy",
                                                "elementwise", "norm_kernel", "activation_kernel"};
const std::vector<std::string> kReliabilityKeys = {"preset",           "failures_per_gpu_hour", "categories",
                                                   "checkpoint_interval", "checkpoint_write",   "storage_bandwidth",
                                                   "restart"};
const std::vector<std::string> kContentionKeys = {"model", "tenants", "load", "burst", "idle", "seed", "job_duration", "job_gap",
                                                    "diurnal_amplitude", "peak_hour", "start_hour"};
const std::vector<std::string> kLinkFaultKeys = {"degraded", "degraded_share", "flaps_per_link_hour", "flap"};
const std::vector<std::string> kStragglerKeys = {"count", "slowdown", "jitter", "episodes_per_gpu_hour", "episode"};
const std::vector<std::string> kEngineKeys = {"fidelity", "buckets", "flow_classes"};

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
  const std::string guess = util::closest_match(word, candidates);
  return guess.empty() ? "" : " (did you mean '" + guess + "'?)";
}

std::string str(int64_t v) { return std::to_string(v); }

class Reader {
 public:
  Reader(const std::string& file, const std::vector<Override>& overrides) : locs_(file), overrides_(overrides) {}

  Scenario read(const std::string& text) {
    YAML::Node root = parse(text);
    detail::apply_overrides(root, overrides_, locs_);
    if (!root.IsMap() && !root.IsNull())
      fail(locs_.mark(root.Mark()), "a scenario must be a map of keys (version, model, cluster, ...), got " + describe(root));
    const Block top(locs_, "", root, {locs_.file(), 1, 1}, kTopKeys);
    note_block(top);

    Scenario sc;
    sc.source_file = locs_.file();
    read_header(top, sc);
    read_model(top, sc.model);
    read_cluster(top, sc.cluster);
    read_parallelism(top, sc.parallel);
    read_training(top, sc.training);
    read_reliability(top, sc);
    read_contention(top, sc);
    read_stragglers(top, sc);
    read_link_faults(top, sc);
    read_engine(top, sc);
    validate(sc);
    return sc;
  }

 private:
  // ---- plumbing ----

  YAML::Node parse(const std::string& text) {
    return detail::load_one_document(text, [this](const YAML::Mark& m) { return locs_.mark(m); });
  }

  // Remembers where a value was written, for checks that involve several keys.
  const Field& note(const Field& f) {
    at_[f.path] = f.value_at;
    return f;
  }
  void note_block(const Block& b) { at_[b.path()] = b.where(); }

  // Where `path` (or, when it was not written, its nearest written ancestor) is.
  SourceLocation at(const std::string& path) const {
    std::string p = path;
    while (true) {
      if (auto it = at_.find(p); it != at_.end()) return it->second;
      const auto dot = p.rfind('.');
      if (dot == std::string::npos) break;
      p.erase(dot);
    }
    if (auto it = at_.find(""); it != at_.end()) return it->second;
    return locs_.whole_file();
  }

  std::optional<Field> get(const Block& b, const std::string& key) {
    auto f = b.get(key);
    if (f) note(*f);
    return f;
  }

  // An optional nested block; when absent, an empty one located at its parent.
  Block sub_block(const Block& parent, const std::string& key, const std::vector<std::string>& keys) {
    auto b = parent.block(key, keys);
    if (!b) return Block(locs_, parent.child_path(key), YAML::Node(), parent.where(), keys);
    note_block(*b);
    return *b;
  }

  Block required_block(const Block& parent, const std::string& key, const std::vector<std::string>& keys) {
    auto b = parent.block(key, keys);
    if (!b) parent.require(key);
    note_block(*b);
    return *b;
  }

  template <typename Enum>
  Enum choice(const Field& f, const std::vector<std::string>& names, const std::vector<Enum>& values) {
    return values[detail::to_choice(f, names)];
  }

  // ---- sections ----

  void read_header(const Block& top, Scenario& sc) {
    const Field v = note(top.require("version"));
    if (!v.node.IsScalar() || v.node.Scalar() != "1") fail(v.value_at, "version must be 1, got " + describe(v.node));
    sc.version = 1;
    if (auto f = get(top, "name")) {
      sc.name = detail::to_text(*f);
      if (sc.name.empty()) fail(f->value_at, "name must not be empty");
    } else {
      sc.name = std::filesystem::path(locs_.file()).stem().string();
    }
  }

  void read_model(const Block& top, model::ModelSpec& m) {
    const Block b = required_block(top, "model", kModelKeys);
    bool preset = false;
    if (auto f = get(b, "preset")) {
      const std::string name = detail::to_text(*f);
      auto p = model::find_model_preset(name);
      if (!p)
        fail(f->value_at, "unknown model preset '" + name + "'" + did_you_mean(name, model::model_preset_names()) +
                              "; known presets: " + util::join(model::model_preset_names()));
      m = *p;
      preset = true;
    }
    if (auto f = get(b, "ffn")) m.ffn = choice(*f, {"swiglu", "gelu"}, std::vector{model::Ffn::kSwiglu, model::Ffn::kGelu});
    const std::string need = preset ? "" : "or set model.preset";
    auto read_count = [&](const std::string& key, int64_t& out, int64_t max) {
      if (auto f = get(b, key)) out = detail::to_int(*f, 1, max);
      else if (!preset) b.require(key, need);
    };
    read_count("layers", m.layers, kMaxCount);
    read_count("hidden", m.hidden, int64_t{1} << 24);
    if (auto f = get(b, "ffn_hidden")) {
      m.ffn_hidden = detail::to_int(*f, 1, int64_t{1} << 26);
    } else if (!preset) {
      if (m.ffn == model::Ffn::kSwiglu) b.require("ffn_hidden", "required with ffn: swiglu");
      m.ffn_hidden = 4 * m.hidden;
      notes_.push_back("model.ffn_hidden = 4 * hidden = " + str(m.ffn_hidden) + " (default for gelu)");
    }
    const int64_t preset_heads = m.heads;
    read_count("heads", m.heads, kMaxCount);
    if (auto f = get(b, "kv_heads")) m.kv_heads = detail::to_int(*f, 1, kMaxCount);
    else if (!preset || m.kv_heads == preset_heads) m.kv_heads = m.heads;
    if (auto f = get(b, "head_dim")) m.head_dim = detail::to_int(*f, 1, int64_t{1} << 16);
    read_count("vocab", m.vocab, int64_t{1} << 30);
    read_count("seq_len", m.seq_len, int64_t{1} << 30);
    if (auto f = get(b, "tied_embeddings")) m.tied_embeddings = detail::to_bool(*f);
    if (auto f = get(b, "dropout")) m.dropout = detail::to_bool(*f);
    if (auto f = get(b, "learned_position_embedding")) m.learned_position_embedding = detail::to_bool(*f);

    if (auto mb = b.block("moe", kMoeKeys)) read_moe(*mb, m, preset);
    if (auto f = get(b, "mtp_modules")) m.mtp_modules = detail::to_int(*f, 0, 16);
    if (auto ab = b.block("mla", kMlaKeys)) {
      note_block(*ab);
      const bool had = m.is_mla();
      auto count = [&](const std::string& key, int64_t& out, int64_t lo) {
        if (auto f = get(*ab, key)) out = detail::to_int(*f, lo, int64_t{1} << 20);
        else if (!had && lo > 0) ab->require(key);
      };
      count("kv_lora_rank", m.mla.kv_lora_rank, 1);
      count("qk_nope_head_dim", m.mla.qk_nope_head_dim, 1);
      count("v_head_dim", m.mla.v_head_dim, 1);
      count("q_lora_rank", m.mla.q_lora_rank, 0);
      count("qk_rope_head_dim", m.mla.qk_rope_head_dim, 0);
    }

    if (m.head_dim == 0 && m.hidden % m.heads != 0)
      fail(at("model.heads"), "model.heads = " + str(m.heads) + " must divide model.hidden = " + str(m.hidden));
    if (m.heads % m.kv_heads != 0)
      fail(at("model.kv_heads"), "model.kv_heads = " + str(m.kv_heads) + " must divide model.heads = " + str(m.heads));
  }

  // model.moe: a preset's values stand unless the block overrides them; without a preset,
  // experts and expert_ffn_hidden are required.
  void read_moe(const Block& b, model::ModelSpec& m, bool preset) {
    note_block(b);
    model::MoeSpec& e = m.moe;
    const bool had = m.is_moe();
    if (auto f = get(b, "experts")) e.experts = detail::to_int(*f, 1, int64_t{1} << 20);
    else if (!had) b.require("experts", preset ? "the preset is dense" : "");
    if (auto f = get(b, "expert_ffn_hidden")) e.expert_ffn_hidden = detail::to_int(*f, 1, int64_t{1} << 26);
    else if (!had) b.require("expert_ffn_hidden");
    if (auto f = get(b, "top_k")) e.top_k = detail::to_int(*f, 1, e.experts);
    if (e.top_k > e.experts)
      fail(at("model.moe.experts"), "model.moe.top_k = " + str(e.top_k) + " is more than model.moe.experts = " + str(e.experts));
    if (auto f = get(b, "shared_experts")) e.shared_experts = detail::to_int(*f, 0, int64_t{1} << 20);
    if (auto f = get(b, "first_dense_layers")) e.first_dense_layers = detail::to_int(*f, 0, kMaxCount);
    if (auto f = get(b, "capacity_factor")) e.capacity_factor = detail::to_number(*f, 0, 1000);
    if (auto f = get(b, "max_nodes_per_token")) e.max_nodes_per_token = detail::to_int(*f, 0, int64_t{1} << 20);
    if (e.first_dense_layers >= m.layers)
      fail(at("model.moe.first_dense_layers"), "model.moe.first_dense_layers = " + str(e.first_dense_layers) +
                                                   " leaves no mixture-of-experts layer of model.layers = " + str(m.layers));
    (void)preset;
  }

  hardware::GpuSpec read_gpu(const Field& f) {
    if (f.node.IsScalar()) return catalog_gpu(f);
    if (!f.node.IsMap())
      fail(f.value_at, "cluster.gpu must be a catalog key or a map of GPU fields, got " + describe(f.node));
    const Block b(locs_, f.path, f.node, f.key_at, kGpuKeys);
    note_block(b);
    hardware::GpuSpec g;
    g.name = "inline";
    const bool based = b.get("base").has_value();
    if (based) {
      g = catalog_gpu(note(*b.get("base")));
      g.name = "inline";
    }
    const std::string need = based ? "" : "an inline GPU without 'base'";
    if (auto n = get(b, "name")) g.name = detail::to_text(*n);
    if (auto v = get(b, "hbm")) g.hbm_bytes = detail::to_size(*v, true);
    else if (!based) b.require("hbm", need);
    if (auto v = get(b, "hbm_bandwidth")) g.hbm_bandwidth_Bps = detail::to_bandwidth(*v);
    else if (!based) b.require("hbm_bandwidth", need);
    if (auto v = get(b, "peak_bf16")) g.peak_bf16_flops = detail::to_flops(*v);
    else if (!based) b.require("peak_bf16", need);
    if (!based) g.peak_fp16_flops = g.peak_bf16_flops;
    if (auto v = get(b, "peak_fp16")) g.peak_fp16_flops = detail::to_flops(*v);
    if (auto v = get(b, "peak_fp8")) g.peak_fp8_flops = detail::to_flops(*v);
    if (auto v = get(b, "peak_fp32")) g.peak_fp32_flops = detail::to_flops(*v);
    if (auto v = get(b, "nvlink_bandwidth")) g.nvlink_bandwidth_Bps = detail::to_bandwidth(*v);
    if (auto v = get(b, "pcie_bandwidth")) g.pcie_bandwidth_Bps = detail::to_bandwidth(*v);
    return g;
  }

  hardware::GpuSpec catalog_gpu(const Field& f) {
    const std::string key = detail::to_text(f);
    auto g = hardware::find_gpu(key);
    if (!g)
      fail(f.value_at, "unknown GPU '" + key + "'" + did_you_mean(key, hardware::gpu_keys()) +
                           "; known GPUs: " + util::join(hardware::gpu_keys()));
    return *g;
  }

  // The PCIe tree keys of intra_node (hardware/intra_node.hpp), checked against the node.
  void read_pcie_tree(const Block& intra, const std::optional<Field>& fabric, hardware::ClusterSpec& c) {
    const bool nvswitch = c.intra_fabric == hardware::IntraFabric::kNvswitch;
    const bool bridge = c.intra_fabric == hardware::IntraFabric::kNvlinkBridge;
    const auto switch_gpus = get(intra, "pcie_switch_gpus");
    const auto uplink = get(intra, "pcie_switch_uplink");
    const auto sockets = get(intra, "sockets");
    const auto socket_bw = get(intra, "inter_socket_bandwidth");
    for (const auto* f : {&switch_gpus, &uplink, &sockets, &socket_bw})
      if (*f && nvswitch)
        fail((*f)->key_at, "cluster.intra_node." + (*f)->path.substr((*f)->path.rfind('.') + 1) +
                               " describes a PCIe tree: it needs fabric: pcie or nvlink-bridge (the fabric is nvswitch)");
    if (bridge && c.gpus_per_node % 2 != 0)
      fail(fabric->value_at, "cluster.intra_node.fabric: nvlink-bridge joins GPUs in pairs; gpus_per_node = " +
                                 str(c.gpus_per_node) + " is odd");
    if (bridge && !(c.gpu.pcie_bandwidth_Bps > 0))
      fail(fabric->value_at, "cluster.intra_node.fabric: nvlink-bridge joins the pairs over PCIe, but GPU '" + c.gpu.name +
                                 "' has no pcie_bandwidth");
    if (switch_gpus) {
      c.gpus_per_pcie_switch = detail::to_int(*switch_gpus, 1, 1024);
      if (c.gpus_per_node % c.gpus_per_pcie_switch != 0)
        fail(switch_gpus->value_at, "cluster.intra_node.pcie_switch_gpus = " + str(c.gpus_per_pcie_switch) +
                                        " must divide cluster.gpus_per_node = " + str(c.gpus_per_node));
    }
    if (uplink) {
      if (!switch_gpus) fail(uplink->key_at, "cluster.intra_node.pcie_switch_uplink needs pcie_switch_gpus (no switches without it)");
      c.pcie_switch_uplink_Bps = detail::to_bandwidth(*uplink);
    }
    if (sockets) {
      c.sockets = detail::to_int(*sockets, 1, 2);
      if (c.sockets == 2) {
        if (!switch_gpus) fail(sockets->value_at, "cluster.intra_node.sockets: 2 needs pcie_switch_gpus (the switches hang under the sockets)");
        if ((c.gpus_per_node / c.gpus_per_pcie_switch) % 2 != 0)
          fail(sockets->value_at, "cluster.intra_node.sockets: 2 needs an even number of PCIe switches, got " +
                                      str(c.gpus_per_node / c.gpus_per_pcie_switch));
        if (!socket_bw) intra.require("inter_socket_bandwidth", "two sockets");
      }
    }
    if (socket_bw) {
      if (c.sockets != 2) fail(socket_bw->key_at, "cluster.intra_node.inter_socket_bandwidth needs sockets: 2");
      c.inter_socket_Bps = detail::to_bandwidth(*socket_bw);
    }
  }

  // cluster.nvlink_domain: N GPUs on one NVLink switch system across N / gpus_per_node servers,
  // folded into one simulated node of N GPUs (its NICs: every server's).
  void read_nvlink_domain(const Field& f, hardware::ClusterSpec& c) {
    const int64_t domain = detail::to_int(f, 1, 1 << 20);
    if (domain == c.gpus_per_node) return;
    if (c.intra_fabric != hardware::IntraFabric::kNvswitch)
      fail(f.key_at, "cluster.nvlink_domain needs intra_node.fabric: nvswitch (the domain is one NVLink switch system), got " +
                         std::string(hardware::to_string(c.intra_fabric)));
    if (domain % c.gpus_per_node != 0)
      fail(f.value_at, "cluster.nvlink_domain = " + str(domain) + " must be a multiple of cluster.gpus_per_node = " +
                           str(c.gpus_per_node) + " (whole servers per domain)");
    const int64_t servers = domain / c.gpus_per_node;
    if (c.nodes % servers != 0)
      fail(f.value_at, "cluster.nvlink_domain = " + str(domain) + " GPUs is " + str(servers) + " servers, which must divide cluster.nodes = " +
                           str(c.nodes) + " (whole domains)");
    notes_.push_back("cluster.nvlink_domain = " + str(domain) + ": " + str(c.nodes) + " servers of " + str(c.gpus_per_node) +
                     " GPUs form " + str(c.nodes / servers) + " NVLink domains, each simulated as one " + str(domain) +
                     "-GPU node (hosts gpu-<domain>-<gpu>)");
    c.nvlink_domain = domain;
    c.servers_per_domain = servers;
    c.nodes /= servers;
    c.gpus_per_node = domain;
    c.nics_per_node *= servers;
  }

  void read_cluster(const Block& top, hardware::ClusterSpec& c) {
    const Block b = required_block(top, "cluster", kClusterKeys);
    c.gpu = read_gpu(note(b.require("gpu")));
    c.nodes = detail::to_int(note(b.require("nodes")), 1, kMaxCount);
    if (auto f = get(b, "gpus_per_node")) c.gpus_per_node = detail::to_int(*f, 1, 1024);

    const Block intra = sub_block(b, "intra_node", kIntraKeys);
    c.intra_fabric = c.gpu.nvlink_bandwidth_Bps > 0 ? hardware::IntraFabric::kNvswitch : hardware::IntraFabric::kPcie;
    auto fabric = get(intra, "fabric");
    if (fabric)
      c.intra_fabric = choice(*fabric, {"nvswitch", "pcie", "nvlink-bridge"},
                              std::vector{hardware::IntraFabric::kNvswitch, hardware::IntraFabric::kPcie,
                                          hardware::IntraFabric::kNvlinkBridge});
    const bool pcie = c.intra_fabric == hardware::IntraFabric::kPcie;
    if (auto f = get(intra, "bandwidth")) {
      c.intra_bandwidth_Bps = detail::to_bandwidth(*f);
    } else {
      c.intra_bandwidth_Bps = pcie ? c.gpu.pcie_bandwidth_Bps : c.gpu.nvlink_bandwidth_Bps;
      if (!(c.intra_bandwidth_Bps > 0))
        intra.require("bandwidth", "GPU '" + c.gpu.name + "' has no " + (pcie ? "pcie_bandwidth" : "nvlink_bandwidth") +
                                       " to default to");
    }
    c.intra_latency_s = 1e-6;
    if (auto f = get(intra, "latency")) c.intra_latency_s = detail::to_time(*f, false);
    read_pcie_tree(intra, fabric, c);

    const Block inter = sub_block(b, "inter_node", kInterKeys);
    c.topology = hardware::Topology::kFatTree;
    if (auto f = get(inter, "topology"))
      c.topology = choice(*f, {"fat-tree", "rail-optimized", "shared"},
                          std::vector{hardware::Topology::kFatTree, hardware::Topology::kRailOptimized,
                                      hardware::Topology::kShared});
    c.nic_bandwidth_Bps = 400e9 / 8;
    if (auto f = get(inter, "nic_bandwidth")) c.nic_bandwidth_Bps = detail::to_bandwidth(*f);
    c.nics_per_node = c.gpus_per_node;
    if (auto f = get(inter, "nics_per_node")) c.nics_per_node = detail::to_int(*f, 1, 1024);
    c.inter_latency_s = 5e-6;
    if (auto f = get(inter, "latency")) c.inter_latency_s = detail::to_time(*f, false);
    c.oversubscription = 1.0;
    if (auto f = get(inter, "oversubscription")) c.oversubscription = detail::to_number(*f, 1, kInf);
    if (auto f = get(inter, "routing")) c.ecmp = choice(*f, {"adaptive", "ecmp"}, std::vector{false, true});
    if (auto f = get(inter, "transport"))
      c.transport = choice(*f, {"infiniband", "efa"}, std::vector{hardware::InterTransport::kInfiniband, hardware::InterTransport::kEfa});
    if (auto f = get(inter, "nodes_per_leaf")) c.nodes_per_leaf = detail::to_int(*f, 1, int64_t{1} << 20);

    if (auto f = get(b, "nvlink_domain")) read_nvlink_domain(*f, c);
    if (auto f = get(b, "platform")) {
      const std::string written = detail::to_text(*f);
      std::vector<std::filesystem::path> candidates = {written};
      if (std::filesystem::path(written).is_relative())
        candidates.insert(candidates.begin(), std::filesystem::path(locs_.file()).parent_path() / written);
      for (const auto& p : candidates) {
        std::error_code ec;
        // A regular file only: opening a FIFO would block until someone writes to it.
        if (std::filesystem::is_regular_file(p, ec) && std::ifstream(p)) {
          c.platform_file = p.string();
          break;
        }
      }
      if (c.platform_file.empty()) {
        std::error_code ec;
        bool special = false;
        for (const auto& p : candidates)
          special |= std::filesystem::exists(p, ec) && !std::filesystem::is_regular_file(p, ec) && !std::filesystem::is_directory(p, ec);
        fail(f->value_at, "cluster.platform: " + std::string(special ? "not a regular file" : "cannot read file") + " '" + written + "'");
      }
    }
    // The platform builder shares each NIC by a whole number of GPUs (platform/fabric.cpp); said
    // here, at the key, rather than by the builder without a place (found by tools/fuzz).
    const int64_t g = c.gpus_per_node, n = c.nics_per_node;
    if (c.platform_file.empty() && ((n < g && g % n != 0) || (n > g && n % g != 0)))
      fail(at("cluster.inter_node.nics_per_node"), "cluster.inter_node.nics_per_node: " + std::to_string(n) +
                                                      " NICs cannot be shared evenly by " + std::to_string(g) +
                                                      " GPUs per node (use a divisor or a multiple of gpus_per_node)");
  }

  // parallelism.layers_per_stage: pp entries (one per stage; with interleaving each stage's layers
  // dealt to its v chunks, the short chunks towards the model's nearer end) or pp * v entries (one
  // per chunk, model order). They add up to model.layers and only the model's first and last chunk
  // may be empty. Leaves p.layers_per_chunk with pp * v entries.
  void check_layers_per_stage(const model::ModelSpec& m, model::ParallelSpec& p) {
    const SourceLocation list = at("parallelism.layers_per_stage");
    const int64_t v = p.virtual_stages;
    const int64_t chunks = p.pp * v;
    const int64_t n = static_cast<int64_t>(p.layers_per_chunk.size());
    if (n != p.pp && n != chunks) {
      std::string need = "pp = " + str(p.pp) + " entries (one per stage)";
      if (v > 1) need += " or pp * virtual_stages = " + str(chunks) + " (one per chunk)";
      fail(list, "parallelism.layers_per_stage has " + str(n) + " entries; it needs " + need);
    }
    int64_t sum = 0;
    for (int64_t x : p.layers_per_chunk) sum += x;
    if (sum != m.layers)
      fail(list, "parallelism.layers_per_stage adds up to " + str(sum) + " layers; model.layers = " + str(m.layers));
    const bool per_stage = n == p.pp && v > 1;
    const std::vector<int64_t> given = p.layers_per_chunk;
    if (per_stage) {
      std::vector<int64_t> out(static_cast<size_t>(chunks), 0);
      for (int64_t r = 0; r < p.pp; ++r) {
        const int64_t layers = p.layers_per_chunk[static_cast<size_t>(r)];
        const int64_t longer = layers % v;
        for (int64_t j = 0; j < v; ++j) {
          const bool is_long = r < (p.pp + 1) / 2 ? j >= v - longer : j < longer;
          out[static_cast<size_t>(j * p.pp + r)] = layers / v + (is_long ? 1 : 0);
        }
      }
      p.layers_per_chunk = std::move(out);
    }
    for (int64_t c = 1; c + 1 < chunks; ++c) {
      if (p.layers_per_chunk[static_cast<size_t>(c)] > 0) continue;
      if (per_stage)
        fail(layer_items_[static_cast<size_t>(c % p.pp)],
             "parallelism.layers_per_stage[" + str(c % p.pp) + "] = " + str(given[static_cast<size_t>(c % p.pp)]) +
                 " is fewer than virtual_stages = " + str(v) + ": chunk " + str(c) +
                 " would hold no layer (only the model's first and last chunk may be empty)");
      fail(layer_items_[static_cast<size_t>(c)], "parallelism.layers_per_stage[" + str(c) +
                                                     "] = 0: only the model's first and last chunk may be empty");
    }
    std::string text = "layers per stage as given: [";
    const std::vector<int64_t> stages = model::stage_layers(m, p);
    for (size_t r = 0; r < stages.size(); ++r) text += (r ? ", " : "") + str(stages[r]);
    notes_.push_back(text + "]");
  }

  void read_parallelism(const Block& top, model::ParallelSpec& p) {
    const Block b = sub_block(top, "parallelism", kParallelKeys);
    if (auto f = get(b, "tp")) p.tp = detail::to_int(*f, 1, kMaxCount);
    if (auto f = get(b, "pp")) p.pp = detail::to_int(*f, 1, kMaxCount);
    if (auto f = get(b, "cp")) p.cp = detail::to_int(*f, 1, kMaxCount);
    if (auto f = get(b, "ep")) p.ep = detail::to_int(*f, 1, kMaxCount);
    if (auto f = get(b, "expert_tp")) p.expert_tp = detail::to_int(*f, 1, kMaxCount);
    if (auto f = get(b, "ep_dispatcher"))
      p.ep_dispatcher = choice(*f, {"alltoall", "deepep"}, std::vector{model::EpDispatcher::kAllToAll, model::EpDispatcher::kDeepEp});
    if (auto f = get(b, "ep_overlap"))
      p.ep_overlap = choice(*f, {"none", "shared_experts", "micro_batches"},
                            std::vector{model::EpOverlap::kNone, model::EpOverlap::kSharedExperts, model::EpOverlap::kMicroBatches});
    dp_given_ = false;
    if (auto f = get(b, "dp")) {
      p.dp = detail::to_int(*f, 1, kMaxCount);
      dp_given_ = true;
    }
    if (auto f = get(b, "micro_batch")) p.micro_batch = detail::to_int(*f, 1, kMaxCount);
    if (auto f = get(b, "schedule"))
      p.schedule = choice(*f, {"gpipe", "1f1b", "interleaved"},
                          std::vector{model::Schedule::kGpipe, model::Schedule::k1F1B, model::Schedule::kInterleaved});
    if (auto f = get(b, "virtual_stages")) p.virtual_stages = detail::to_int(*f, 1, 1024);
    if (auto f = get(b, "zero")) {
      const std::string s = f->node.IsScalar() ? f->node.Scalar() : "";
      if (s != "0" && s != "1" && s != "2" && s != "3")
        fail(f->value_at, "parallelism.zero must be 0, 1, 2 or 3, got " + describe(f->node));
      p.zero = s[0] - '0';
    }
    if (auto f = get(b, "recompute"))
      p.recompute = choice(*f, {"none", "selective", "selective-op", "full"},
                           std::vector{model::Recompute::kNone, model::Recompute::kSelective,
                                       model::Recompute::kSelectiveOp, model::Recompute::kFull});
    if (auto f = get(b, "sequence_parallel")) p.sequence_parallel = detail::to_bool(*f);
    if (auto f = get(b, "overlap_grad_reduce")) p.overlap_grad_reduce = detail::to_bool(*f);
    if (auto f = get(b, "overlap_p2p_comm")) p.overlap_p2p_comm = detail::to_bool(*f);
    if (auto f = get(b, "overlap_param_gather")) p.overlap_param_gather = detail::to_bool(*f);
    if (auto f = get(b, "shard_degree")) p.shard_degree = detail::to_int(*f, 0, kMaxCount);
    if (auto f = get(b, "defer_grad_reduce")) p.defer_grad_reduce = detail::to_bool(*f);
    if (auto f = get(b, "pp_microbatch_buffers")) p.pp_microbatch_buffers = detail::to_bool(*f);
    if (auto f = get(b, "recompute_num_layers")) p.recompute_num_layers = detail::to_int(*f, 0, 1 << 20);
    if (auto f = get(b, "activation_offload_layers")) p.activation_offload_layers = detail::to_int(*f, 0, 1 << 20);
    if (auto f = get(b, "sp_save_gathered")) p.sp_save_gathered = detail::to_bool(*f);
    if (auto f = get(b, "sac_saves_attention")) p.sac_saves_attention = detail::to_bool(*f);
    if (auto f = get(b, "cp_comm_type"))
      p.cp_comm = choice(*f, {"p2p", "all_gather", "a2a"},
                         std::vector{model::CpComm::kP2p, model::CpComm::kAllGather, model::CpComm::kAllToAll});
    layer_items_.clear();
    if (auto f = get(b, "recompute_modules")) {
      if (!f->node.IsSequence())
        fail(f->value_at, "parallelism.recompute_modules must be a list of mla_up_proj, layernorm, moe_act, got " + describe(f->node));
      for (size_t i = 0; i < f->node.size(); ++i) {
        const YAML::Node item = f->node[i];
        const SourceLocation loc = locs_.value(f->path, item);
        const Field field{f->path + "[" + std::to_string(i) + "]", item, loc, loc};
        const size_t k = detail::to_choice(field, {"mla_up_proj", "layernorm", "moe_act"});
        (k == 0 ? p.recompute_mla_up_proj : k == 1 ? p.recompute_layernorm : p.recompute_moe_act) = true;
      }
    }
    if (auto f = get(b, "layers_per_stage")) {
      p.layers_per_chunk.clear();
      if (!f->node.IsSequence() || f->node.size() == 0)
        fail(f->value_at, "parallelism.layers_per_stage must be a list of layer counts, one per stage or per chunk "
                          "(e.g. [7, 8, 8, 7]), got " + describe(f->node));
      for (size_t i = 0; i < f->node.size(); ++i) {
        const std::string path = f->path + "[" + std::to_string(i) + "]";
        const YAML::Node item = f->node[i];
        const SourceLocation loc = locs_.value(f->path, item);
        const Field field{path, item, loc, loc};
        p.layers_per_chunk.push_back(detail::to_int(field, 0, kMaxCount));
        layer_items_.push_back(loc);
      }
    }
  }

  void read_training(const Block& top, model::TrainingSpec& t) {
    const Block b = required_block(top, "training", kTrainingKeys);
    if (auto f = get(b, "precision"))
      t.precision = choice(*f, {"fp32", "fp16", "bf16", "fp8"},
                           std::vector{model::Precision::kFp32, model::Precision::kFp16, model::Precision::kBf16,
                                       model::Precision::kFp8});
    if (auto f = get(b, "optimizer"))
      t.optimizer = choice(*f, {"adam", "sgd"}, std::vector{model::Optimizer::kAdam, model::Optimizer::kSgd});
    t.global_batch = detail::to_int(note(b.require("global_batch")), 1, int64_t{1} << 40);
    t.steps = 100;
    if (auto f = get(b, "steps")) t.steps = detail::to_int(*f, 1, kMaxSteps);
    if (auto f = get(b, "total_tokens")) t.total_tokens = detail::to_number(*f, 0, 1e18);
    if (auto f = get(b, "offload"))
      t.offload = choice(*f, {"none", "cpu", "nvme"},
                         std::vector{model::Offload::kNone, model::Offload::kCpu, model::Offload::kNvme});
    if (auto f = get(b, "gpu_hour_price")) t.gpu_hour_price = detail::to_number(*f, 0, 1e6);
    if (auto f = get(b, "fp32_main_grads")) t.fp32_main_grads = detail::to_bool(*f);
    if (auto f = get(b, "cross_entropy")) t.cross_entropy = choice(*f, {"fused", "torch", "chunked"},
                                                                std::vector{model::CrossEntropy::kFused, model::CrossEntropy::kTorch,
                                                                            model::CrossEntropy::kChunked});
    if (auto f = get(b, "elementwise")) t.eager_elementwise = choice(*f, {"fused", "eager"}, std::vector{false, true});
    t.eager_norm = t.eager_activation = t.eager_elementwise;
    if (auto f = get(b, "norm_kernel")) t.eager_norm = choice(*f, {"fused", "eager"}, std::vector{false, true});
    if (auto f = get(b, "activation_kernel")) t.eager_activation = choice(*f, {"fused", "eager"}, std::vector{false, true});
    if (auto f = get(b, "fp8_stack")) t.fp8_torchao = choice(*f, {"transformer-engine", "torchao"}, std::vector{false, true});
    if (auto f = get(b, "grad_reduce_fp32")) t.grad_reduce_fp32 = detail::to_bool(*f);
    if (auto f = get(b, "optimizer_state_precision"))
      t.optimizer_state_precision =
          choice(*f, {"fp32", "bf16"}, std::vector{model::Precision::kFp32, model::Precision::kBf16});
    if (auto f = get(b, "runtime_reserve")) t.runtime_reserve_bytes = detail::to_size(*f, false);
    if (auto f = get(b, "flash_attention")) t.flash_attention = detail::to_bool(*f);
    if (auto f = get(b, "tp_comm_overlap")) t.tp_comm_overlap = detail::to_bool(*f);
    if (auto f = get(b, "attention_kernel"))
      t.attention_kernel = choice(*f, {"default", "fa1", "fa2", "fa3", "fa4", "cudnn"},
                                  std::vector<std::string>{"", "fa1", "fa2", "fa3", "fa4", "cudnn"});
  }

  void read_reliability(const Block& top, Scenario& sc) {
    auto ob = top.block("reliability", kReliabilityKeys);
    if (!ob) return;
    const Block& b = *ob;
    note_block(b);
    ReliabilitySpec r;
    bool have_categories = false;
    if (auto f = get(b, "preset")) {
      const std::vector<std::string> names = failure_preset_names();
      r.preset = names[detail::to_choice(*f, names)];
      r.categories = *find_failure_preset(r.preset);
      have_categories = true;
    }
    bool explicit_categories = false;
    if (auto f = get(b, "categories")) {
      if (!f->node.IsMap()) fail(f->value_at, f->path + " must be a map of category: failures per GPU-hour, got " + describe(f->node));
      r.categories.clear();
      for (auto it = f->node.begin(); it != f->node.end(); ++it) {
        const YAML::Node k = it->first;  // copies: the iterator's pair is a temporary
        const YAML::Node v = it->second;
        if (!k.IsScalar()) fail(locs_.mark(k.Mark()), "keys must be plain names, got " + describe(k) + " in " + f->path);
        const std::string path = f->path + "." + k.Scalar();
        const Field c{path, v, locs_.key(path, k), locs_.value(path, v)};
        if (c.node.IsNull()) fail(c.value_at, path + " must be a number, got null");
        r.categories[k.Scalar()] = detail::to_number(c, 0, 1);
      }
      have_categories = explicit_categories = true;
    }
    double sum = 0;
    for (const auto& [name, rate] : r.categories) sum += rate;
    if (auto f = get(b, "failures_per_gpu_hour")) {
      r.failures_per_gpu_hour = detail::to_number(*f, 0, 1);
      if (explicit_categories) {
        if (std::abs(sum - r.failures_per_gpu_hour) > 1e-9 * std::max(sum, r.failures_per_gpu_hour))
          fail(f->value_at, "reliability.failures_per_gpu_hour = " + std::string(f->node.Scalar()) +
                                " but reliability.categories add up to " + fmt(sum));
      } else if (have_categories && sum > 0) {
        for (auto& [name, rate] : r.categories) rate *= r.failures_per_gpu_hour / sum;
      } else if (r.failures_per_gpu_hour > 0) {
        r.categories = {{"all", r.failures_per_gpu_hour}};
      }
    } else {
      r.failures_per_gpu_hour = sum;
    }
    if (auto f = get(b, "checkpoint_interval")) r.checkpoint_interval_s = detail::to_time(*f, true);
    if (auto f = get(b, "checkpoint_write")) r.checkpoint_write_s = detail::to_time(*f, false);
    if (auto f = get(b, "storage_bandwidth")) r.storage_bandwidth_Bps = detail::to_bandwidth(*f);
    if (auto f = get(b, "restart")) r.restart_s = detail::to_time(*f, false);
    sc.reliability = r;
  }

  void read_contention(const Block& top, Scenario& sc) {
    auto ob = top.block("contention", kContentionKeys);
    if (!ob) return;
    const Block& b = *ob;
    note_block(b);
    ContentionSpec c;
    if (auto f = get(b, "model")) c.model = std::vector<std::string>{"tenants"}[detail::to_choice(*f, {"tenants"})];
    if (auto f = get(b, "tenants")) c.tenants = detail::to_int(*f, 0, kMaxCount);
    if (auto f = get(b, "load")) c.load = detail::to_number(*f, 0, 1, false, true);
    if (auto f = get(b, "burst")) c.burst_s = detail::to_time(*f, true);
    c.idle_s = c.burst_s;
    if (auto f = get(b, "idle")) c.idle_s = detail::to_time(*f, true);
    if (auto f = get(b, "seed")) c.seed = static_cast<uint64_t>(detail::to_int(*f, 0, std::numeric_limits<int64_t>::max()));
    if (auto f = get(b, "job_duration")) c.job_duration_s = detail::to_time(*f, true);
    c.job_gap_s = c.job_duration_s;
    if (auto f = get(b, "job_gap")) c.job_gap_s = detail::to_time(*f, true);
    if (auto f = get(b, "diurnal_amplitude")) c.diurnal_amplitude = detail::to_number(*f, 0, 1);
    if (auto f = get(b, "peak_hour")) c.peak_hour = detail::to_number(*f, 0, 24, false, true);
    if (auto f = get(b, "start_hour")) c.start_hour = detail::to_number(*f, 0, 24, false, true);
    sc.contention = c;
  }

  void read_link_faults(const Block& top, Scenario& sc) {
    auto ob = top.block("link_faults", kLinkFaultKeys);
    if (!ob) return;
    const Block& b = *ob;
    note_block(b);
    LinkFaultSpec s;
    if (auto f = get(b, "degraded")) s.degraded = detail::to_int(*f, 0, int64_t{1} << 30);
    if (auto f = get(b, "degraded_share")) s.degraded_share = detail::to_number(*f, 0, 1, true, false);
    if (auto f = get(b, "flaps_per_link_hour")) s.flaps_per_link_hour = detail::to_number(*f, 0, 1e6);
    if (auto f = get(b, "flap")) s.flap_s = detail::to_time(*f, true);
    sc.link_faults = s;
  }

  void read_stragglers(const Block& top, Scenario& sc) {
    auto ob = top.block("stragglers", kStragglerKeys);
    if (!ob) return;
    const Block& b = *ob;
    note_block(b);
    StragglerSpec s;
    if (auto f = get(b, "count")) s.count = detail::to_int(*f, 0, int64_t{1} << 30);
    if (auto f = get(b, "slowdown")) s.slowdown = detail::to_number(*f, 1, 1000);
    if (auto f = get(b, "jitter")) s.jitter = detail::to_number(*f, 0, 1, false, true);
    if (auto f = get(b, "episodes_per_gpu_hour")) s.episodes_per_gpu_hour = detail::to_number(*f, 0, 1e6);
    if (auto f = get(b, "episode")) s.episode_s = detail::to_time(*f, true);
    sc.stragglers = s;
  }

  void read_engine(const Block& top, Scenario& sc) {
    const Block b = sub_block(top, "engine", kEngineKeys);
    if (auto f = get(b, "fidelity"))
      sc.fidelity = choice(*f, {"auto", "full", "symmetric"}, std::vector{Fidelity::kAuto, Fidelity::kFull, Fidelity::kSymmetric});
    if (auto f = get(b, "buckets")) sc.gradient_buckets = detail::to_int(*f, 0, kMaxCount);
    if (auto f = get(b, "flow_classes")) sc.flow_classes = detail::to_bool(*f);
  }

  static std::string fmt(double v) {
    std::ostringstream os;
    os << v;
    return os.str();
  }

  // ---- checks across keys (each value is already in range, so no product below overflows) ----

  void validate(Scenario& sc) {
    const model::ModelSpec& m = sc.model;
    const hardware::ClusterSpec& c = sc.cluster;
    model::ParallelSpec& p = sc.parallel;
    const model::TrainingSpec& t = sc.training;
    const int64_t gpus = c.nodes * c.gpus_per_node;  // <= 2^30

    if (c.nodes_per_leaf > 0 && c.nodes % c.nodes_per_leaf != 0)
      fail(at("cluster.inter_node.nodes_per_leaf"), "cluster.inter_node.nodes_per_leaf = " + str(c.nodes_per_leaf) +
                                                        " must divide cluster.nodes = " + str(c.nodes));
    if (c.gpus_per_node % p.tp != 0)
      fail(at("parallelism.tp"), "parallelism.tp = " + str(p.tp) + " must divide cluster.gpus_per_node = " +
                                     str(c.gpus_per_node) + " (tensor parallelism stays inside a node)");
    const std::string cluster_words = str(c.nodes) + " nodes x " + str(c.gpus_per_node) + " gpus_per_node = " + str(gpus) + " GPUs";
    if (dp_given_) {
      const __int128 product = static_cast<__int128>(p.tp) * p.cp * p.pp * p.dp;  // each <= 2^20
      if (product != gpus) {
        const std::string prod = product > (__int128{1} << 62) ? "more than 2^62" : str(static_cast<int64_t>(product));
        fail(at("parallelism.dp"), "tp*cp*pp*dp = " + str(p.tp) + "*" + str(p.cp) + "*" + str(p.pp) + "*" + str(p.dp) +
                                       " = " + prod + " GPUs, but the cluster has " + cluster_words);
      }
    } else {
      const __int128 tcp = static_cast<__int128>(p.tp) * p.cp * p.pp;
      if (tcp > gpus || gpus % static_cast<int64_t>(tcp) != 0)
        fail(at("parallelism"), "tp*cp*pp = " + str(p.tp) + "*" + str(p.cp) + "*" + str(p.pp) + " = " +
                                    (tcp > (__int128{1} << 62) ? std::string("more than 2^62") : str(static_cast<int64_t>(tcp))) +
                                    " does not divide the cluster's " + cluster_words);
      p.dp = gpus / static_cast<int64_t>(tcp);
      notes_.push_back("parallelism.dp = " + str(p.dp) + " (derived: " + str(gpus) + " GPUs / (tp*cp*pp = " +
                       str(static_cast<int64_t>(tcp)) + "))");
    }
    if (m.heads % p.tp != 0)
      fail(at("parallelism.tp"), "parallelism.tp = " + str(p.tp) + " must divide model.heads = " + str(m.heads));
    if (m.kv_heads % p.tp != 0 && p.tp % m.kv_heads != 0)
      fail(at("parallelism.tp"), "parallelism.tp = " + str(p.tp) + " and model.kv_heads = " + str(m.kv_heads) +
                                     " are incompatible (one must divide the other)");
    if (m.ffn_hidden % p.tp != 0)
      fail(at("parallelism.tp"), "parallelism.tp = " + str(p.tp) + " must divide model.ffn_hidden = " + str(m.ffn_hidden));
    if (m.seq_len % p.cp != 0)
      fail(at("parallelism.cp"), "parallelism.cp = " + str(p.cp) + " must divide model.seq_len = " + str(m.seq_len));
    if (p.cp > 1 && p.cp_comm == model::CpComm::kAllToAll && !model::a2a_splits_heads(m, p)) {
      const model::RankHeads heads = model::rank_heads(m, p);
      fail(at("parallelism.cp_comm_type"), "parallelism.cp_comm_type a2a scatters the heads over cp = " + str(p.cp) +
                                               ": a TP rank's " + str(heads.query) + " query and " + str(heads.key_value) +
                                               " key-value heads must both divide by it");
    }
    if (p.sequence_parallel && (m.seq_len / p.cp) % p.tp != 0)
      fail(at("parallelism.sequence_parallel"), "sequence_parallel needs parallelism.tp = " + str(p.tp) +
                                                    " to divide the sequence per context rank, " + str(m.seq_len / p.cp));

    // Expert parallelism (Megatron-Core: carved out of data x context parallelism; the experts'
    // FFNs split over tp too).
    if (p.ep > 1 && !m.is_moe())
      fail(at("parallelism.ep"), "parallelism.ep = " + str(p.ep) + " needs a mixture-of-experts model (model.moe)");
    if (p.expert_tp > 0 && !m.is_moe())
      fail(at("parallelism.expert_tp"), "parallelism.expert_tp needs a mixture-of-experts model (model.moe)");
    if (m.is_moe()) {
      if (m.moe.experts % p.ep != 0)
        fail(at("parallelism.ep"), "parallelism.ep = " + str(p.ep) + " must divide model.moe.experts = " + str(m.moe.experts));
      if (p.expert_tp == 0 && (p.dp * p.cp) % p.ep != 0)
        fail(at("parallelism.ep"), "parallelism.ep = " + str(p.ep) + " must divide dp * cp = " + str(p.dp * p.cp) +
                                       " (expert parallelism is carved out of the data-parallel ranks; parallelism.expert_tp "
                                       "folds it over the tensor-parallel ranks too)");
      if (p.expert_tp > 0 && p.tp % p.expert_tp != 0)
        fail(at("parallelism.expert_tp"), "parallelism.expert_tp = " + str(p.expert_tp) + " must divide tp = " + str(p.tp));
      if (p.expert_tp > 0 && (p.tp * p.cp * p.dp) % (p.ep * p.expert_tp) != 0)
        fail(at("parallelism.expert_tp"), "parallelism.ep x expert_tp = " + str(p.ep * p.expert_tp) +
                                              " must divide tp x cp x dp = " + str(p.tp * p.cp * p.dp) +
                                              " (the expert layers' ranks are the stage's)");
      if (m.moe.expert_ffn_hidden % p.etp() != 0)
        fail(at(p.expert_tp > 0 ? "parallelism.expert_tp" : "parallelism.tp"),
             std::string(p.expert_tp > 0 ? "parallelism.expert_tp = " : "parallelism.tp = ") + str(p.etp()) +
                 " must divide model.moe.expert_ffn_hidden = " + str(m.moe.expert_ffn_hidden));
    }

    if (p.shard_degree > 0) {
      const std::string where = "parallelism.shard_degree";
      if (p.zero == 0) fail(at(where), where + " needs parallelism.zero 1, 2 or 3 (plain DP shards nothing)");
      if ((p.dp * p.cp) % p.shard_degree != 0)
        fail(at(where), where + " = " + str(p.shard_degree) + " must divide dp * cp = " + str(p.dp * p.cp));
    }

    if (p.recompute_num_layers >= 0 && p.recompute != model::Recompute::kFull)
      fail(at("parallelism.recompute_num_layers"), "parallelism.recompute_num_layers needs recompute: full (got " +
                                                       std::string(model::to_string(p.recompute)) + ")");

    // Megatron-Core's rules for CPU activation offloading (transformer_config.py).
    if (p.activation_offload_layers > 0) {
      const std::string where = "parallelism.activation_offload_layers";
      if (p.activation_offload_layers >= m.layers)
        fail(at(where), where + " = " + str(p.activation_offload_layers) + " must be less than model.layers = " + str(m.layers));
      if (p.pp > 1) fail(at(where), where + " needs parallelism.pp = 1 (got " + str(p.pp) + "): Megatron offloads no pipeline");
      if (p.recompute != model::Recompute::kNone)
        fail(at(where), where + " needs recompute: none (got " + std::string(model::to_string(p.recompute)) + ")");
    }

    // Pipeline.
    const bool interleaved = p.schedule == model::Schedule::kInterleaved;
    if (!interleaved && p.virtual_stages != 1)
      fail(at("parallelism.virtual_stages"), "parallelism.virtual_stages = " + str(p.virtual_stages) +
                                                 " needs schedule: interleaved (got " + model::to_string(p.schedule) + ")");
    if (interleaved && p.virtual_stages < 2)
      fail(at("parallelism.virtual_stages"),
           "schedule: interleaved needs parallelism.virtual_stages >= 2, got " + str(p.virtual_stages));
    if (interleaved && p.pp < 2)
      fail(at("parallelism.pp"), "schedule: interleaved needs parallelism.pp >= 2, got " + str(p.pp));
    const int64_t chunks = p.pp * p.virtual_stages;  // <= 2^30
    if (!p.layers_per_chunk.empty()) check_layers_per_stage(m, p);
    // Every chunk holds a layer, except that the two ends of the model may hold only the embedding
    // or only the output layer and loss (Llama 3 405B: 126 layers over 16 stages x 8 chunks).
    const int64_t least = parallel::min_layers(p.pp, p.virtual_stages);
    if (p.layers_per_chunk.empty() && m.layers < least) {
      if (p.virtual_stages == 1)
        fail(at("parallelism.pp"), "model.layers = " + str(m.layers) + " is fewer than parallelism.pp - 2 = " +
                                       str(least) + " (every stage but the first and the last needs a layer)");
      fail(at("parallelism.pp"), "model.layers = " + str(m.layers) + " is fewer than pp * virtual_stages - 2 = " +
                                     str(p.pp) + " * " + str(p.virtual_stages) + " - 2 = " + str(least) +
                                     " (every chunk but the first and the last needs a layer)");
    }
    if (p.layers_per_chunk.empty() && m.layers % chunks != 0)
      notes_.push_back(parallel::describe_split(m.layers, p.pp, p.virtual_stages));

    // Batch.
    const int64_t per_step = p.dp * p.micro_batch;  // <= 2^40
    if (t.global_batch % per_step != 0)
      fail(at("training.global_batch"), "training.global_batch = " + str(t.global_batch) +
                                            " is not a multiple of dp * micro_batch = " + str(p.dp) + " * " +
                                            str(p.micro_batch) + " = " + str(per_step));
    const int64_t micro_batches = t.global_batch / per_step;
    if (interleaved && micro_batches % p.pp != 0)
      fail(at("parallelism.schedule"), "schedule: interleaved needs the micro-batches per step (global_batch / (dp * "
                                       "micro_batch) = " + str(micro_batches) + ") to be a multiple of parallelism.pp = " +
                                           str(p.pp));

    // Precision against the GPU.
    if (!(c.gpu.peak_flops(t.precision) > 0))
      fail(at("training.precision"), "training.precision: GPU '" + c.gpu.name + "' has no " +
                                         model::to_string(t.precision) + " peak");

    // A kernel the GPU has no measurement for is costed as the GPU's default: the report says so.
    if (t.flash_attention && !t.attention_kernel.empty()) {
      const model::GpuCostData& kernels = model::gpu_cost_data(c.gpu);
      if (kernels.attention.count(t.attention_kernel) == 0)
        notes_.push_back("training.attention_kernel = " + t.attention_kernel + ": no measurement on " + c.gpu.name +
                         "; its default (" + kernels.default_attention + ") is costed");
    }

    if (sc.stragglers && sc.stragglers->count > gpus)
      fail(at("stragglers.count"), "stragglers.count = " + str(sc.stragglers->count) + " is more than the cluster's " +
                                       str(gpus) + " GPUs");
    sc.notes = notes_;
  }

  detail::Locations locs_;
  const std::vector<Override>& overrides_;
  std::map<std::string, SourceLocation> at_;
  std::vector<std::string> notes_;
  bool dp_given_ = false;
  std::vector<SourceLocation> layer_items_;  // parallelism.layers_per_stage entries, for messages
};

}  // namespace

Scenario load_scenario_text(const std::string& yaml, const std::string& name_for_errors,
                            const std::vector<Override>& overrides) {
  Reader reader(name_for_errors, overrides);
  try {
    return reader.read(yaml);
  } catch (const YAML::Exception& e) {
    // yaml-cpp complaining past the parse (it should not): still an input error at its mark.
    throw util::InputError(detail::Locations(name_for_errors).mark(e.mark), e.msg);
  }
}

std::string read_scenario_file(const std::string& path) {
  std::error_code ec;
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path, ec)) throw util::InputError({path}, "cannot read file");
  // Read at most kMaxScenarioBytes (and one more, to know): `run /dev/zero` must not fill memory.
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxScenarioBytes)
      throw util::InputError({path}, "larger than " + std::to_string(kMaxScenarioBytes >> 20) +
                                         " MiB: not a scenario file (they are a few kB)");
  }
  if (in.bad()) throw util::InputError({path}, "cannot read file");
  return text;
}

Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides) {
  return load_scenario_text(read_scenario_file(path), path, overrides);
}

}  // namespace trainsim::config
