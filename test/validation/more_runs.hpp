// Scenarios built from more_runs.yaml (226 further published, measured LLM-training runs), in the same
// PublishedRun form as published_runs.hpp, each tagged with its source family (for leave-one-source-
// out validation) and whether the file marks it unverified (read only via a secondary transcription).
//
// Which rows are used: a row needs model.layers, hidden, heads numbers and a seq_len (number, or the
// per-source default below); a known GPU; hardware.count a number; parallelism tp and pp numbers, cp
// (1 when absent) and dp a number, or, for FSDP / HSDP rows that leave dp out, dp = count / (tp*pp*cp);
// tp*pp*dp*cp = count; a global batch in sequences (global_batch_seqs; else global_batch_tokens /
// seq_len; else local_batch_seqs * dp or batch_per_dp_seqs * dp); a measured figure convertible to
// model TFLOP/s per GPU (per source below). MoE rows and rows with a `kind` are not runs. A row whose
// layout the simulator cannot represent (tp larger than a node or not dividing heads / kv_heads /
// ffn_hidden, seq_len % cp, global batch not a multiple of dp * micro_batch, interleaving with
// micro-batches % pp != 0) is skipped too, with the reason. At the time of writing this leaves out:
// the two Megatron-LM README strong-scaling rows (layout not printed), all 5 OLMo-core rows (GPU
// count not printed), all 7 FP8-LM rows (global batch not printed), and nanotron's 23 multi-node
// rows (on AWS EFA, below; the 80B one at 64 nodes would also put tp 16 across two 8-GPU nodes).
//
// Every used row gets Metric::kModelTflops; measured_tflops is model TFLOP/s (1e12) per GPU, model
// FLOPs as model::model_flops_per_step counts them (GEMMs + full s^2 attention + logits, no recompute
// = PaLM's 6N + 12LHQT). How each source's printed figure becomes that (one rule per source):
//  - llama3 (Llama 3 Herd, Table 4): tflops_per_gpu as printed (BF16 model FLOPs per PaLM, 430/0.43
//    => the 989 H100 dense bf16 peak).
//  - llm-foundry (MPT benchmark README): the "Model TFLOP" column per GPU (tflops_per_gpu) where the
//    row has it as a number (H100 tables); the A100 tables print that column as 100x (older
//    collect_results.py), so there mfu_pct x the peak collect_results.py used: 312 for A100 bf16
//    (989 H100 bf16, 1979 H100 fp8; the fp8 row's MFU is against the fp8 peak). Both are the same
//    definition (3 x (2N s + 4 L h s^2) per sequence = ours up to the position table).
//  - torchtitan: tokens_per_s_per_gpu (printed on every row; MFU only on the A100 rows) x model FLOPs
//    per token, model_flops_per_step(model, B) / (B * seq_len).
//  - internlm: TGS (tokens per GPU per second) converted as torchtitan; its printed TFLOPS (the
//    Megatron SC21 formula, counting the recomputed forward under checkpointing) are not used.
//  - xtuner: TGS (tokens per GPU per second) converted as torchtitan; its TFLOPs (counting the
//    recomputed forward) are not used.
//  - zero-bubble: samples (sequences) per GPU per second x seq_len, converted as torchtitan.
//  - flagperf: token/p/s (512 x 8192 tokens over the last logged iteration, per GPU) converted as
//    torchtitan; its MFU (6 x 8e9 per token for both models) is not used.
//  - ml-engineering: its TFLOPS are benchmark.py's estimate_tflos (6 x the linear weights incl. one
//    vocab x hidden, + causal attention 6 s^2 d heads layers) over the step; the yaml derives the
//    step and tokens per GPU per second from that formula, converted as torchtitan.
//  - nemotron4: mfu_pct x 989.4 (catalog H100 dense bf16 peak; the report quotes 989).
//  - megatron-lm-readme (r0.8.0 table): tflops_per_gpu as printed (model FLOPs, no recompute).
//  - nanotron: mfu_pct x 989.4 (peak not printed; nanotron computes MFU against H100 dense bf16).
//  - fp8-lm, olmo-core: tflops_per_gpu as printed (FP8-LM: model TFLOP/s, FP8 MFU is against the fp8
//    peak), resp. tokens/s per GPU converted as torchtitan (neither is used at present, see above).
// No source prints hardware FLOPs as its figure (llm-foundry's hfu_pct is not used), so no row uses
// Metric::kHardwareTflops.
//
// Defaults for what a row leaves out, one rule per source, never per row:
//  - Cluster (all): gpus_per_node as printed, else 8, on NVSwitch at the catalog NVLink rate per
//    direction (A100 300 GB/s, H100/H200 450 GB/s); 8 NICs per node at 200 Gb/s (A100, HDR) or
//    400 Gb/s (H100/H200, NDR), matching every row that prints its network: Llama 3, torchtitan H100
//    and H200 "400 Gb/s per GPU", Nemotron-4 "8x 400 Gbps IB per node", llm-foundry A100 "1600 Gbps per
//    node RoCE" = 8 x 200 Gb/s. Latencies 1 us intra, 5 us inter, oversubscription 1 (Llama 3's 1:7
//    above 3,072-GPU pods is not modelled: only the outermost DP traffic crosses pods).
//    GPU names: "A800" -> a800, "H800" -> h800 (first: FlagPerf's names quote its tables' "A100" /
//    "H100"), "A100 ... 40GB" -> a100-40gb, other A100 (all print 80GB) -> a100-80gb, "H200" ->
//    h200, "H100" -> h100-sxm; NVSwitch at the GPU's NVLink rate (A800 / H800: 200 GB/s).
//    torchtitan's Grand Teton H100 (96 GB HBM2e, capped at 500 W) has no catalog entry and no
//    published peak: those rows are skipped (unknown GPU).
//  - nanotron's multi-node rows (2 to 64 nodes) are skipped. Its figure prints no network; other
//    sources put the cluster on AWS EFA (p5.48xlarge, 32 x 100 Gb/s a node: more_runs.yaml notes),
//    and the source's own measurement of that cluster's collectives at 256 MB reads 39-58% of the
//    bus bandwidth trainsim's model gives at 4 to 64 nodes, about half of the later p5 sweep that
//    cluster.inter_node.transport: efa is measured on (collectives.yaml 'MULTI-NODE ON AWS EFA'):
//    no setting stands for the cluster as it ran. Costed on InfiniBand they average +22%, with
//    transport efa +21% (README "Accuracy").
//  - Attention kernel: FA1-class for llm-foundry (its 2023 benchmark tables ran attn_impl 'triton', the
//    2022 Triton FlashAttention: submit_benchmarks.py default, not overridden in sweep.sh; its
//    docstring puts it slightly below FlashAttention-1 forward + backward: kernels.yaml
//    fa1-for-triton; a row printing attn_impl flash, the 2024 large-scale table's sweep.py, FA2), FA2 for nanotron and torchtitan (flash-attn 2 / SDPA) and for
//    Llama 3 (the paper names no kernel; its pre-training ran before FlashAttention-3 was published,
//    arXiv:2407.08608, July 2024), the GPU's default (cuDNN fused attention on Hopper) for the Megatron-based
//    stacks.
//  - Gradients reduced in fp32 (training.grad_reduce_fp32) where the stack does: llm-foundry's 2024
//    large-scale table (composer 0.17: "DEFAULT" reduces in float32, "PURE" in bf16; the 2023
//    tables ran composer <= 0.16.0, whose DEFAULT reduced in the parameter dtype: bf16), torchtitan (mixed_precision_reduce float32), Llama 3
//    (paper Sec. 3.3.4), and the Megatron-LM rows (README r0.8.0, Nemotron-4): --bf16 sets
//    accumulate_allreduce_grads_in_fp32 (megatron/training/arguments.py at core_r0.8.0, "bfloat16
//    requires gradient accumulation and all-reduce to be done in fp32"), which training.py passes
//    on as the DDP config's grad_reduce_in_fp32; the distributed optimizer then all-gathers the bf16
//    weights.
//  - Pipeline schedule (all): interleaved only where the row prints it (virtual_pp > 1, or
//    "interleav..." in pipeline_schedule / virtual_pp_note), with virtual_pp chunks where printed,
//    or virtual_pp_derived where the source's text fixes V without printing it (Llama 3: one layer
//    per chunk, the yaml quotes the sentence), else 2 (torchtitan's default stages per rank for
//    looped schedules; the smallest interleave for Nemotron-4 340B, which does not print V);
//    otherwise 1F1B (nanotron's "1F1B or AFAB" has the same bubble). micro_batch as printed; else
//    (torchtitan: below) 1 with PP, and without PP the largest divisor of the local batch that fits
//    the GPU's memory: the tables publish tuned configurations, and without PP gradient
//    accumulation only costs (Megatron-LM README's weak-scaling rows, Nemotron-4 15B).
//  - llama3: Llama (SwiGLU, dims as printed; vocab the printed 128,000), bf16, no recompute
//    (printed for 8K, not printed for the 128K stage), FSDP keeping parameters after forward =
//    zero 2 with overlapped reduce-scatter, sequence parallel when tp > 1 (not printed; 405B without
//    recompute needs it), flash attention on, no TP comm overlap (not printed); CP as the row's
//    cp_implementation says (the 128K row: all-gather based, parallelism.cp_comm_type all_gather).
//  - llm-foundry: MPT = GPT (gelu, ffn 4h, learned positions, embeddings tied: the printed NumParams
//    count one V x h matrix), vocab 50368 when absent; FSDP FULL_SHARD = zero 3, SHARD_GRAD_OP = zero 2 (overlapped); flash
//    attention on; activation checkpointing as printed (full / none); bf16 unless "fp8"; tp = 1, so
//    no TP settings.
//  - torchtitan: Llama flavours (dims as printed, fill_llama when absent); seq_len 8192 when not
//    printed (llama3_*.toml default, as the file notes); bf16 unless the row's precision says fp8;
//    flash attention (SDPA) on; recompute as printed: "full" -> full, "selective op" -> the per-op
//    policy (selective-op), "selective layer" -> every 2nd block fully (full recompute of half the
//    layers), else none; FSDP2 = zero 3, but zero 2 when pp > 1 (torchtitan sets
//    reshard_after_forward = False under PP) with the reduction deferred to the last backward
//    (parallelism.defer_grad_reduce: torch.distributed.pipelining), with its per-micro-batch receive buffers and kept
//    outputs (parallelism.pp_microbatch_buffers); sequence parallel when tp > 1 (its TP plan); TP comm
//    overlap only when async_tp is true; element-wise kernels eager unless the row ran
//    torch.compile, the norm as its toml's norm_type (fused_rmsnorm or eager rmsnorm). micro_batch:
//    without PP the local batch (no gradient accumulation); with PP local batch / (pp * stages per
//    rank) (torchtitan's default number of micro-batches = total stages).
//  - nemotron4 (Megatron-LM / NeMo): squared-ReLU MLP (2 GEMMs, like gelu), ffn 4h (not printed),
//    vocab 256000, RoPE; bf16 (the 340B row's "not trained in FP8"); no recompute (not printed);
//    distributed optimizer zero 1 with overlapped grad reduce; sequence parallel when tp > 1; flash
//    attention and TP comm overlap on (NeMo defaults, as published_runs.hpp's NeMo rule).
//  - megatron-lm-readme (Megatron-Core r0.8.0): GPT (gelu, ffn 4h, kv_heads = heads, learned
//    positions: Megatron defaults; none printed), vocab as printed; bf16 (peak implied by
//    TFLOP/s / MFU); distributed optimizer (zero 1) with overlapped grad reduce; TP comm overlap on
//    (printed flags); sequence parallel when tp > 1; flash attention on; no recompute.
//  - nanotron v0.5: Llama-style (SwiGLU, dims, vocab and tied embeddings as printed); bf16; zero as
//    printed ("ZeRO-1" -> 1, "ZeRO-0" -> 0), gradient reduce overlapped (bucketed DDP); sequence
//    parallel when tp > 1 (tp_mode REDUCE_SCATTER); flash attention on; no TP comm overlap; no
//    recompute (not printed); TritonRMSNorm and flash-attn's rotary kernel fused, SwiGLU as two
//    eager kernels (training.activation_kernel: eager).
//  - fp8-lm (Megatron-LM + TE / MS-AMP, late 2023): GPT (gelu, ffn as printed else 4h, RoPE), vocab
//    50257 (GPT-2 BPE of the MS-AMP examples); fp8 when the row's precision starts "FP8"; zero 1
//    (distributed optimizer of the example scripts), sequence parallel when tp > 1, flash attention
//    on, no TP comm overlap, no recompute.
//  - internlm (InternLM doc/en/train_performance.md and its code at c18bec9, July 2023): Llama-style
//    (SwiGLU, dims from configs/7B_sft.py); 4 NICs of 100 Gb/s per 8-GPU node ("4 * 100Gb RoCE");
//    bf16 with gradients all-reduced in bf16 over every DP rank under the last micro-batch's
//    backward (zero_overlap_communication) and the updated parameters broadcast within the node
//    after the optimizer, not overlapped: hybrid ZeRO-1 within the node (shard_degree 8: the
//    gradients reduce-scattered within the node, each rank's eighth all-reduced across the nodes,
//    the all-reduce's NIC bytes; the parameters gathered within the node) with
//    overlap_param_gather false; FlashAttention 1 (the repo's pin, 1.0.8);
//    recompute as printed; no TP; SwiGLU as two eager kernels (apex RMSNorm and flash-attn's rotary
//    fused). A validation-only source (validation_set.hpp).
//  - ibm-fsdp (IBM's FSDP blog, fms-fsdp README): Llama-style, FSDP1 zero 3 (HSDP: shard_degree =
//    the node), bf16 reduction, SDPA FA2; eager element-wise kernels (norm included) unless the row
//    ran torch.compile; interconnect read per node as 100 Gb/s NICs. Validation only.
//  - ml-engineering (stas00/ml-engineering "When Is It Worth Upgrading GPUs?", benchmark.py and
//    bench_decompose.py at 744d01e): Llama 3.1 8B on one 8-GPU H200 or B200 node, DeepSpeed ZeRO as
//    printed with overlap_comm and bf16 reduction, CPU Adam where offloaded, HF checkpointing of
//    every layer (full), Liger-Kernel (fused norm / RoPE / SwiGLU, chunked cross-entropy) or HF's
//    eager kernels and float32 logits without it, FA3 on H200 and FA4 on B200 (HF's choice).
//    Validation only.
//  - xtuner (InternLM/xtuner's speed benchmark, April 2024): Llama 2 7B / 70B and Yi-34B-200K on A100
//    80GB, DeepSpeed ZeRO-3 (not printed), full checkpointing, HF's eager kernels and float32
//    logits, flash-attn 2, its sequence parallelism as cp with the a2a (Ulysses) exchange; the
//    network not printed (the A100 default above). Validation only.
//  - zero-bubble (Qi et al., "Zero Bubble Pipeline Parallelism", arXiv 2401.10241, Table 4: the
//    1F1B and interleaved 1F1B baselines; Tables 11 and 12: 1F1B at twice the micro-batch and
//    with no more micro-batches than stages): Megatron-LM (its fork at megatron-core 0.4.0rc0) GPT
//    (gelu, ffn 4h, learned positions, tied embeddings, dropout at Megatron's defaults; the vocab
//    not printed, 32,000 reproduces every model name); pure pipeline (tp 1, dp 1) on A100 SXM
//    80GB, the first and last stage one layer fewer (the default split); interleaved with one
//    layer per chunk, the model's first and last chunk empty; fp16 and no flash attention (the
//    repo's example script: --fp16, no --use-flash-attn: Megatron's unfused attention with its
//    fused softmax); no recompute; the network not printed ("RoCE RDMA": the A100 default above;
//    only pipeline transfers cross it). Validation only; read from transcriptions (unverified).
//  - olmo-core: Llama-style (SwiGLU, dims as printed, vocab the printed 100278); HSDP is taken as
//    zero 3 over all ranks (its shard group size is not printed; every row is skipped anyway: no
//    GPU count), like FSDP; bf16 unless "fp8"; no recompute; flash attention on.
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "model/memory.hpp"
#include "parallel/layer_split.hpp"
#include "published_runs.hpp"

namespace trainsim::validation {

struct MoreRun {
  PublishedRun run;
  std::string source_family;  // llama3, llm-foundry, torchtitan, nemotron4, megatron-lm-readme, nanotron, fp8-lm, olmo-core, internlm, ibm-fsdp, ml-engineering, xtuner, zero-bubble
  bool unverified = false;    // source.unverified: read only via a secondary transcription
};

namespace more_detail {

using detail::contains;
using detail::number;
using detail::text;

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The number a scalar starts with: "128000 (Table 3 ...)" -> 128000, "43%" -> 43; nullopt if none.
inline std::optional<double> leading_number(const YAML::Node& n) {
  if (auto v = number(n)) return v;
  const std::string s = text(n);
  if (s.empty()) return std::nullopt;
  const char* begin = s.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin) return std::nullopt;
  return v;
}

inline bool flag(const YAML::Node& n) {
  if (!n || !n.IsScalar()) return false;
  try {
    return n.as<bool>();
  } catch (const YAML::Exception&) {
    return false;
  }
}

// Source family from source.primary (one key per source).
inline std::string family(const YAML::Node& source) {
  const std::string p = text(source["primary"]);
  if (contains(p, "Llama 3 Herd")) return "llama3";
  if (contains(p, "llm-foundry")) return "llm-foundry";
  if (contains(p, "torchtitan")) return "torchtitan";
  if (contains(p, "Nemotron-4")) return "nemotron4";
  if (contains(p, "Megatron-LM README")) return "megatron-lm-readme";
  if (contains(p, "OLMo-core")) return "olmo-core";
  if (contains(p, "FP8-LM")) return "fp8-lm";
  if (contains(p, "nanotron")) return "nanotron";
  if (contains(p, "InternLM/xtuner")) return "xtuner";
  if (contains(p, "InternLM")) return "internlm";
  if (contains(p, "Maximizing training throughput using PyTorch FSDP") || contains(p, "fms-fsdp README")) return "ibm-fsdp";
  if (contains(p, "ml-engineering")) return "ml-engineering";
  if (contains(p, "Zero Bubble Pipeline Parallelism")) return "zero-bubble";
  if (contains(p, "FlagOpen/FlagPerf")) return "flagperf";
  return "";
}

inline std::optional<hardware::GpuSpec> gpu_for(const std::string& name) {
  // The export parts first: their names may quote the table's "A100" / "H100" beside them.
  if (contains(name, "A800")) return hardware::find_gpu("a800");
  if (contains(name, "H800")) return hardware::find_gpu("h800");
  if (contains(name, "A100")) return hardware::find_gpu(contains(name, "40GB") ? "a100-40gb" : "a100-80gb");
  if (contains(name, "H200")) return hardware::find_gpu("h200");
  // torchtitan's Grand Teton H100 (96 GB HBM2e at 2.4 TB/s, capped at 500 W) has no catalog entry:
  // its peak is not published, and costing it as an 80 GB SXM part overstates it.
  if (contains(name, "H100") && (contains(name, "96 GB") || contains(name, "500 W"))) return std::nullopt;
  if (contains(name, "H100")) return hardware::find_gpu("h100-sxm");
  if (contains(name, "B200")) return hardware::find_gpu("b200");
  return std::nullopt;
}

inline std::string str(double v) { return std::to_string(static_cast<long long>(v)); }

// The element-wise kernels of a PyTorch stack (torchtitan, fms-fsdp): eager unless the row ran
// torch.compile; the norm as the row's norm_type names it (fused_rmsnorm: a Triton kernel).
inline void eager_kernels_as_printed(const YAML::Node& par, model::TrainingSpec& t) {
  t.eager_elementwise = t.eager_activation = !flag(par["torch_compile"]);
  t.eager_norm = t.eager_elementwise && !contains(text(par["norm_type"]), "fused");
}

}  // namespace more_detail

// The usable rows of more_runs.yaml, as scenarios. `skipped`, when given, receives "id: reason" for
// every other row. Throws YAML::Exception if the file is unreadable.
inline std::vector<MoreRun> load_more_runs(const std::string& path, std::vector<std::string>* skipped = nullptr) {
  using more_detail::contains;
  using more_detail::leading_number;
  using more_detail::lower;
  using more_detail::number;
  using more_detail::str;
  using more_detail::text;
  std::vector<MoreRun> out;
  const YAML::Node root = YAML::LoadFile(path);
  for (const YAML::Node& e : root["runs"]) {
    const std::string id = text(e["id"]);
    const auto skip = [&](const std::string& why) {
      if (skipped) skipped->push_back(id + ": " + why);
    };
    if (e["kind"]) {
      skip("kind " + text(e["kind"]) + " is not a run");
      continue;
    }
    const std::string fam = more_detail::family(e["source"]);
    // FlagPerf's rows on BAAI's FlagScale (its legacy Megatron model) rather than Megatron-Core.
    const bool flagscale = fam == "flagperf" && contains(text(e["software"]), "FlagScale");
    if (fam.empty()) {
      skip("unknown source");
      continue;
    }
    const YAML::Node m = e["model"], hw = e["hardware"], par = e["parallelism"], meas = e["measured"];
    if (!m || !hw || !par || !meas) {
      skip("model, hardware, parallelism or measured missing");
      continue;
    }
    const std::string arch = text(m["arch"]);
    if (contains(lower(arch), "moe") || contains(lower(arch), "mixture of experts") || m["experts"] || m["num_experts"]) {
      skip("MoE");
      continue;
    }

    // Model dims.
    const auto layers = number(m["layers"]), hidden = number(m["hidden"]), heads = number(m["heads"]);
    std::optional<double> seq = number(m["seq_len"]);
    if (!seq && fam == "torchtitan") seq = 8192;  // llama3_*.toml default
    if (!layers || !hidden || !heads || !seq) {
      skip("model dims (layers, hidden, heads, seq_len) not printed");
      continue;
    }

    // Hardware.
    const auto count = number(hw["count"]);
    if (!count) {
      skip("GPU count not printed");
      continue;
    }
    const std::string gpu_name = text(hw["gpu"]);
    const std::optional<hardware::GpuSpec> spec = more_detail::gpu_for(gpu_name);
    if (!spec) {
      skip("unknown GPU '" + gpu_name + "'");
      continue;
    }
    const int64_t n = static_cast<int64_t>(*count);
    if (fam == "nanotron" && n > 8) {
      skip("multi-node row on AWS EFA, its collectives measured at half of the sweep transport efa is built on");
      continue;
    }

    // Layout.
    const auto tp = number(par["tp"]), pp = number(par["pp"]);
    const double cp = number(par["cp"]).value_or(1);
    if (!tp || !pp) {
      skip("tp / pp not printed");
      continue;
    }
    const std::string zero_text = text(par["zero_fsdp"]);
    const bool fsdp_like = contains(zero_text, "FSDP") || contains(zero_text, "HSDP");
    std::optional<double> dp = number(par["dp"]);
    if (!dp && fsdp_like) {
      const int64_t tpc = static_cast<int64_t>(*tp * *pp * cp);
      if (tpc > 0 && n % tpc == 0) dp = static_cast<double>(n / tpc);  // FSDP / HSDP: dp is what is left
    }
    if (!dp) {
      skip("dp not printed");
      continue;
    }
    PublishedRun r;
    r.id = id;
    r.metric = Metric::kModelTflops;
    r.par.tp = static_cast<int64_t>(*tp);
    r.par.pp = static_cast<int64_t>(*pp);
    r.par.cp = static_cast<int64_t>(cp);
    r.par.dp = static_cast<int64_t>(*dp);
    if (r.par.gpus() != n) {
      skip("tp*pp*dp*cp = " + str(static_cast<double>(r.par.gpus())) + " != GPU count " + str(*count));
      continue;
    }

    // Global batch (sequences).
    std::optional<double> gb = number(par["global_batch_seqs"]);
    if (!gb) {
      if (const auto tokens = number(par["global_batch_tokens"]); tokens && std::fmod(*tokens, *seq) == 0) gb = *tokens / *seq;
    }
    if (!gb) {
      if (const auto local = number(par["local_batch_seqs"])) gb = *local * *dp;
    }
    if (!gb) {
      if (const auto per_dp = number(par["batch_per_dp_seqs"])) gb = *per_dp * *dp;
    }
    if (!gb) {
      skip("global batch not printed (nor tokens per batch, nor local batch)");
      continue;
    }
    r.train.global_batch = static_cast<int64_t>(*gb);

    // Model.
    r.model.layers = static_cast<int64_t>(*layers);
    r.model.hidden = static_cast<int64_t>(*hidden);
    r.model.heads = static_cast<int64_t>(*heads);
    r.model.kv_heads = static_cast<int64_t>(number(m["kv_heads"]).value_or(*heads));
    r.model.seq_len = static_cast<int64_t>(*seq);
    r.model.vocab = static_cast<int64_t>(leading_number(m["vocab"]).value_or(0));
    r.model.ffn_hidden = static_cast<int64_t>(number(m["ffn_hidden"]).value_or(0));
    r.model.tied_embeddings = more_detail::flag(m["tied_embeddings"]);
    const bool llama_like = fam == "llama3" || fam == "torchtitan" || fam == "nanotron" || fam == "olmo-core" || fam == "internlm" || fam == "ibm-fsdp" || fam == "xtuner" ||
                            fam == "ml-engineering" || fam == "flagperf";
    if (llama_like) {
      r.model.ffn = model::Ffn::kSwiglu;
      if (r.model.vocab == 0 || r.model.ffn_hidden == 0) detail::fill_llama(r.model, arch);
      if (fam == "flagperf") {
        // Megatron-Core's GPTModel as FlagPerf's Llama 3 command builds it (header): learned
        // absolute positions, dropout at Megatron's 0.1 (tied embeddings as the yaml says); its
        // FlagScale commands set RoPE and no dropout.
        r.model.learned_position_embedding = !flagscale;
        r.model.dropout = !flagscale;
      }
    } else {
      r.model.ffn = model::Ffn::kGelu;  // GPT gelu; Nemotron squared ReLU (also 2 GEMMs)
      if (fam == "llm-foundry") {
        r.model.learned_position_embedding = true;
        r.model.tied_embeddings = true;
        // llmfoundry/models/mpt/configuration_mpt.py at the table's commit: attn_pdrop, resid_pdrop
        // and emb_pdrop default 0.0, and the pretrain yamls leave them.
        r.model.dropout = false;
        if (r.model.vocab == 0) r.model.vocab = 50368;
      } else if (fam == "nemotron4") {
        if (r.model.vocab == 0) r.model.vocab = 256000;
        r.model.dropout = false;  // Nemotron-4 15B report (arXiv 2402.16819) Sec. 2: "dropout rate of zero"
      } else if (fam == "megatron-lm-readme") {
        r.model.learned_position_embedding = true;
      } else if (fam == "fp8-lm") {
        if (r.model.vocab == 0) r.model.vocab = 50257;
      } else if (fam == "zero-bubble") {
        r.model.learned_position_embedding = true;  // Megatron GPTModel (--max-position-embeddings 2048)
      }
      if (r.model.ffn_hidden == 0) r.model.ffn_hidden = 4 * r.model.hidden;
    }
    if (r.model.vocab == 0 || r.model.ffn_hidden == 0) {
      skip("vocab / ffn_hidden not printed and no default for this architecture");
      continue;
    }

    // Cluster.
    r.cluster.gpu = *spec;
    r.cluster.gpus_per_node = static_cast<int64_t>(number(hw["gpus_per_node"]).value_or(8));
    if (n % r.cluster.gpus_per_node != 0 && n > r.cluster.gpus_per_node) {
      skip("GPU count not a multiple of gpus_per_node");
      continue;
    }
    r.cluster.nodes = std::max<int64_t>(1, n / r.cluster.gpus_per_node);
    if (n < r.cluster.gpus_per_node) r.cluster.gpus_per_node = n;
    r.cluster.intra_fabric = hardware::IntraFabric::kNvswitch;
    r.cluster.intra_bandwidth_Bps = spec->nvlink_bandwidth_Bps;  // 300 (A100) / 450 (H100, H200) GB/s per direction
    const bool a100 = spec->name == "a100-40gb" || spec->name == "a100-80gb" || spec->name == "a800";
    const std::string net = text(hw["inter_node"]);
    double nic_gbps = a100 ? 200 : 400;
    int64_t nics = 8;
    if (contains(net, "1600 Gbps per node")) nic_gbps = 200;  // llm-foundry A100 RoCE: 8 x 200 Gb/s
    else if (contains(net, "400 Gb")) nic_gbps = 400;        // Llama 3, torchtitan, Nemotron-4
    else if (contains(net, "200Gb/s")) nic_gbps = 200;       // FlagPerf's H800 (Llama 2) and A800 nodes
    else if (contains(net, "4 x 100 Gb")) {                   // InternLM: "4 * 100Gb RoCE" per node
      nics = 4;
      nic_gbps = 100;
    }
    if (fam == "ibm-fsdp") {  // "400Gbps" (A100) / "800Gbps" (H100) inter-node, read per node, as 100 Gb/s NICs
      nic_gbps = 100;
      nics = contains(net, "800") ? 8 : 4;
    }
    r.cluster.nics_per_node = nics;
    r.cluster.nic_bandwidth_Bps = nic_gbps * 1e9 / 8;
    r.cluster.intra_latency_s = 1e-6;
    r.cluster.inter_latency_s = 5e-6;
    r.cluster.oversubscription = 1.0;

    // Precision.
    const std::string prec = lower(text(par["precision"]) + " " + text(e["precision"]));
    const bool fp8_allowed = fam == "llm-foundry" || fam == "torchtitan" || fam == "olmo-core" || fam == "flagperf";
    bool fp8 = fp8_allowed && contains(prec, "fp8");
    if (fam == "fp8-lm") fp8 = prec.rfind("fp8", 0) == 0;
    r.train.precision = fp8 ? model::Precision::kFp8 : model::Precision::kBf16;
    if (fam == "zero-bubble" && contains(prec, "fp16")) r.train.precision = model::Precision::kFp16;
    // Megatron-LM without --use-flash-attn (Zero Bubble's example script): unfused attention.
    r.train.flash_attention = fam != "zero-bubble";
    // The attention kernel each stack ran (rules above): llm-foundry's 2023 tables the 2022 Triton
    // FlashAttention (FA1-class), nanotron the flash-attn 2 package, torchtitan PyTorch SDPA's flash
    // backend (FlashAttention-2), Llama 3 FA2-class; the Megatron/NeMo/TE stacks (Megatron-Core r0.8,
    // Nemotron-4) the generation's default: cuDNN fused attention on Hopper, which Transformer Engine
    // prefers there (cost_tables.yaml, te-attention-backend).
    if (fam == "nanotron" || fam == "torchtitan" || fam == "llama3") r.train.attention_kernel = "fa2";
    if (fam == "internlm") r.train.attention_kernel = "fa1";  // flash-attn 1.0.x (its third_party pin)
    if (fam == "ibm-fsdp") r.train.attention_kernel = "fa2";  // "SDPA FlashAttention v2" (the blog)
    if (fam == "xtuner") r.train.attention_kernel = "fa2";    // flash_attn_func (flash-attn 2)
    // llm-foundry: attn_impl triton (kernels.yaml fa1-for-triton) unless the row prints flash (the
    // 2024 large-scale table's sweep.py: flash-attn 2.4.2, FA2).
    if (fam == "llm-foundry") r.train.attention_kernel = contains(lower(text(par["attn_impl"])), "flash") ? "fa2" : "fa1";

    // Pipeline schedule: interleaved only where printed.
    auto vpp = number(par["virtual_pp"]);
    if (!vpp) vpp = number(par["virtual_pp_derived"]);  // derived from the source's text (the yaml says how)
    const std::string sched = lower(text(par["pipeline_schedule"]) + " " + text(par["virtual_pp_note"]));
    const bool interleaved = r.par.pp > 1 && ((vpp && *vpp > 1) || contains(sched, "interleav"));
    r.par.schedule = interleaved ? model::Schedule::kInterleaved : model::Schedule::k1F1B;
    r.par.virtual_stages = interleaved ? static_cast<int64_t>(vpp && *vpp > 1 ? *vpp : 2) : 1;

    // Micro-batch.
    if (const auto mb = number(par["microbatch"])) {
      r.par.micro_batch = static_cast<int64_t>(*mb);
    } else if (fam == "torchtitan") {
      const int64_t local = r.train.global_batch / r.par.dp;
      const int64_t micro_batches = r.par.pp > 1 ? r.par.pp * r.par.virtual_stages : 1;
      r.par.micro_batch = std::max<int64_t>(1, local / micro_batches);
    } else {
      r.par.micro_batch = 1;  // with PP; without PP the largest that fits, once the row is configured (below)
    }
    const bool micro_batch_printed = number(par["microbatch"]).has_value() || fam == "torchtitan";

    // Recompute as printed.
    const std::string rc = lower(text(par["recompute"]));
    const model::Recompute printed_recompute = contains(rc, "full")        ? model::Recompute::kFull
                                               : contains(rc, "selective") ? model::Recompute::kSelective
                                                                           : model::Recompute::kNone;

    // Per-source software stack.
    const bool tp_gt1 = r.par.tp > 1;
    if (fam == "llama3") {
      r.par.recompute = printed_recompute;
      r.par.zero = 2;  // FSDP, parameters kept after forward: optimizer + gradient sharding
      r.par.overlap_grad_reduce = true;
      r.train.grad_reduce_fp32 = true;  // paper Sec. 3.3.4: "reduce-scatter gradients in FP32"
      r.par.sequence_parallel = tp_gt1;
      r.train.tp_comm_overlap = false;
      // Sec. 3.3.2: "all-gather based" CP, its latency "exposed in the critical path".
      if (contains(lower(text(par["cp_implementation"])), "all-gather")) r.par.cp_comm = model::CpComm::kAllGather;
    } else if (fam == "llm-foundry") {
      r.par.recompute = printed_recompute;
      r.par.zero = contains(zero_text, "SHARD_GRAD_OP") ? 2 : 3;  // FSDP SHARD_GRAD_OP / FULL_SHARD
      r.par.overlap_grad_reduce = true;
      // composer's FSDP mixed_precision as the row prints it ("PURE" reduces in the 16-bit
      // precision) and as the composer the run used sets "DEFAULT": float32 from composer 0.16.4
      // (d745fcb1b "patch default (#2628)", 2023-10-10, adds reduce_dtype = torch.float32); before
      // it DEFAULT left reduce_dtype unset and torch >= 2.0 FSDP reduces in the parameter dtype
      // (flat_param.py _init_param_reduce_dtypes). The 2024 large-scale table (commit 5e85bd62,
      // composer 0.17) reduces in float32; the 2023 tables' runs were done by 2023-10-03
      // (scripts/train/benchmarking/h100new.csv @beb8dee69, same figures; image
      // mosaicml/pytorch:2.1.0_cu121-nightly20230827 with composer 0.16.0, or older stacks), so bf16.
      const bool composer_fp32_default = contains(text(e["source"]["primary"]), "5e85bd62");
      r.train.grad_reduce_fp32 = composer_fp32_default && !contains(text(par["fsdp_mixed_precision"]), "PURE");
      r.par.sequence_parallel = false;
      r.train.tp_comm_overlap = false;
    } else if (fam == "torchtitan") {
      r.par.recompute = printed_recompute;
      // torchtitan's selective AC (activation_checkpoint.selective_ac_option): "op", the per-op
      // policy that recomputes every other matmul (model::Recompute::kSelectiveOp); a layer
      // frequency, "selective layer" in its docs with the default "2" ("2 = checkpoint every other
      // layer", config_manager.py; parallelize_llama.py wraps every 2nd block in checkpoint_wrapper):
      // full recompute of half the layers.
      if (printed_recompute == model::Recompute::kSelective) {
        if (contains(rc, "selective op") || contains(rc, "per-op")) {
          r.par.recompute = model::Recompute::kSelectiveOp;
        } else if (contains(rc, "selective layer")) {
          r.par.recompute = model::Recompute::kFull;
          const int64_t chunks = std::max<int64_t>(1, r.par.pp * r.par.virtual_stages);
          r.par.recompute_num_layers = r.model.layers / chunks / 2;
        }
      }
      r.par.zero = r.par.pp > 1 ? 2 : 3;  // FSDP2; reshard_after_forward = False under PP
      r.par.defer_grad_reduce = r.par.pp > 1;  // torch.distributed.pipelining: reduced after the last backward
      r.par.pp_microbatch_buffers = r.par.pp > 1;  // and its receive buffers and kept outputs per micro-batch
      r.par.sp_save_gathered = true;           // DTensor's ColwiseParallel keeps the all-gathered input
      r.par.overlap_grad_reduce = true;
      r.train.grad_reduce_fp32 = true;  // training.mixed_precision_reduce: default (and only choice) float32
      r.train.fp8_torchao = true;       // float8 through torchao's Float8Linear
      // The norm_type as the row's train_configs toml sets it.
      more_detail::eager_kernels_as_printed(par, r.train);
      r.par.sequence_parallel = tp_gt1;
      r.train.tp_comm_overlap = more_detail::flag(par["async_tp"]);
    } else if (fam == "nemotron4" || fam == "megatron-lm-readme") {
      r.par.recompute = model::Recompute::kNone;
      r.par.zero = 1;  // distributed optimizer
      r.par.overlap_grad_reduce = true;
      r.par.sequence_parallel = tp_gt1;
      r.train.tp_comm_overlap = true;
      r.train.grad_reduce_fp32 = true;  // --bf16 implies it (header)
      r.train.fp32_main_grads = true;   // ... accumulated in Megatron's fp32 main_grad buffer
    } else if (fam == "nanotron") {
      r.par.recompute = printed_recompute;
      r.par.zero = contains(zero_text, "ZeRO-1") ? 1 : 0;
      // models/llama.py: TritonRMSNorm and flash-attn's rotary kernel, SwiGLU as
      // `self.act(gate_states) * up_states` (GLUActivation): two eager kernels.
      r.train.eager_activation = true;
      r.par.overlap_grad_reduce = true;
      r.par.sequence_parallel = tp_gt1;
      r.train.tp_comm_overlap = false;
    } else if (fam == "fp8-lm") {
      r.par.recompute = model::Recompute::kNone;
      r.par.zero = 1;
      r.par.overlap_grad_reduce = true;
      r.par.sequence_parallel = tp_gt1;
      r.train.tp_comm_overlap = false;
    } else if (fam == "internlm") {
      r.par.recompute = printed_recompute;
      // Hybrid ZeRO (hybrid_zero_optim.py at c18bec9): bf16 gradients all-reduced over every DP rank,
      // bucket by bucket under the last micro-batch's backward (zero_overlap_communication=True);
      // Adam states sharded within the node (zero1=8); each node's owners broadcast their updated
      // parameters after the optimizer, not overlapped ("TODO: support broadcast overlap"). As
      // hybrid ZeRO-1 (shard_degree = zero1 = 8): the gradients reduce-scattered within the node
      // and each rank's eighth all-reduced across the nodes (that all-reduce's NIC bytes), the
      // parameters gathered within the node, exposed (overlap_param_gather false).
      r.par.zero = 1;
      r.par.shard_degree = 8;
      // modeling_internlm.py / linear.py at c18bec9: apex MixedFusedRMSNorm, flash-attn's rotary
      // kernel, SwiGLU as `self.w3(F.silu(self.w1(x)) * self.w2(x))`: two eager kernels.
      r.train.eager_activation = true;
      r.par.overlap_grad_reduce = true;
      r.par.overlap_param_gather = false;
      r.train.grad_reduce_fp32 = false;
      r.par.sequence_parallel = false;
      r.train.tp_comm_overlap = false;
    } else if (fam == "ibm-fsdp") {
      more_detail::eager_kernels_as_printed(par, r.train);
      // fms-fsdp at cf6e42c (main_training.py, train_utils.get_policies): FSDP1, bfSixteen
      // (parameters and gradient reduction in bf16), limit_all_gathers, FSDP1's default
      // BACKWARD_PRE prefetch; "fsdp" = FULL_SHARD, "hsdp" = HYBRID_SHARD (sharded within the
      // 8-GPU node, replicated across nodes: README "HSDP", docs/train_details.md); activation
      // checkpointing of every block (selective_checkpointing = 1) where the row prints "Yes".
      r.par.recompute = printed_recompute;
      r.par.zero = 3;
      if (contains(zero_text, "HSDP")) r.par.shard_degree = r.cluster.gpus_per_node;
      r.par.overlap_grad_reduce = true;
      r.train.grad_reduce_fp32 = false;
      r.par.sequence_parallel = false;
      r.train.tp_comm_overlap = false;
    } else if (fam == "xtuner") {
      // XTuner's speed benchmark (configs and dispatch at e179091c / 59834032c): DeepSpeed ZeRO-3
      // (inferred), HF gradient checkpointing of every decoder layer (full), HF LlamaForCausalLM's
      // eager RMSNorm (float32), rotate_half RoPE and act(gate) * up, float32 logits into
      // cross-entropy; flash-attn 2; its sequence parallelism = DeepSpeed Ulysses (a2a) over the
      // printed sp ranks, which take the place of CP (each holds seq / sp tokens). XTuner repeats
      // the key-value heads to the query heads before the all-to-all, trainsim exchanges them
      // unrepeated: the GQA rows' exchanges (under 1% of their steps) are undercounted.
      r.par.recompute = printed_recompute;
      r.par.zero = 3;
      r.par.overlap_grad_reduce = true;
      r.train.grad_reduce_fp32 = false;
      r.train.eager_elementwise = r.train.eager_norm = r.train.eager_activation = true;
      r.train.cross_entropy = model::CrossEntropy::kTorch;
      if (r.par.cp > 1) r.par.cp_comm = model::CpComm::kAllToAll;
      r.par.sequence_parallel = false;
      r.train.tp_comm_overlap = false;
    } else if (fam == "ml-engineering") {
      // benchmark.py / bench_decompose.py at 744d01e: DeepSpeed ZeRO as printed (stage 2 or 3,
      // overlap_comm: the reduction under the backward), bf16 without communication_data_type:
      // gradients reduced in bf16; AdamW on the CPU where offload_optimizer is set (DeepSpeed CPU
      // Adam); HF gradient checkpointing = every decoder layer recomputed (full). Liger-Kernel
      // (USE_LIGER 1, the sweep): fused RMSNorm, RoPE, SwiGLU and the fused linear cross-entropy;
      // without it (the decomposition row) HF's eager LlamaRMSNorm (float32), rotate_half RoPE,
      // act(gate) * up and float32 logits. Attention: FA3 on Hopper, FA4 on Blackwell (HF
      // attn_implementation auto-selected per GPU).
      r.par.recompute = printed_recompute;
      r.par.zero = contains(zero_text, "ZeRO-3") ? 3 : 2;
      r.par.overlap_grad_reduce = true;
      r.train.grad_reduce_fp32 = false;
      if (lower(text(par["offload"])) == "cpu") r.train.offload = model::Offload::kCpu;
      const bool liger = more_detail::flag(par["liger_kernel"]);
      r.train.eager_elementwise = r.train.eager_norm = r.train.eager_activation = !liger;
      r.train.cross_entropy = liger ? model::CrossEntropy::kChunked : model::CrossEntropy::kTorch;
      r.train.attention_kernel = spec->name == "b200" ? "fa4" : "fa3";
      r.par.sequence_parallel = false;
      r.train.tp_comm_overlap = false;
    } else if (fam == "flagperf") {
      // Megatron-LM core_v0.6.0 as pretrain_llama3.sh runs it (header): no recompute flag, the
      // distributed optimizer with core 0.6.0's defaults (no --overlap-grad-reduce, no
      // --overlap-param-gather: the reduction and the gather after the step, exposed), fp32 gradient
      // reduction (--bf16 implies it), sequence parallelism with TP, no TP overlap; Transformer
      // Engine's attention (the GPU's default kernel). The bf16+fp8 rows: TE's hybrid recipe.
      r.par.recompute = model::Recompute::kNone;
      r.par.zero = 1;
      r.par.overlap_grad_reduce = false;
      r.par.overlap_param_gather = false;
      r.par.sequence_parallel = tp_gt1 && more_detail::flag(par["sequence_parallel"]);  // as the command passes it
      r.train.tp_comm_overlap = false;
      r.train.grad_reduce_fp32 = true;
      r.train.fp32_main_grads = true;  // Megatron's fp32 main_grad buffer (the same --bf16 rule)
      // The Llama 2 70B and Aquila2-7B rows ran FlagScale's legacy Megatron model (megatron_main.sh,
      // flagscale_main.sh): the flash-attn 2 package for attention, SwiGLU as F.silu(x[0]) * x[1]
      // (two eager kernels).
      if (flagscale) {
        r.train.attention_kernel = "fa2";
        r.train.eager_activation = true;
      }
    } else if (fam == "zero-bubble") {
      // Megatron-LM's pipeline alone (tp 1, dp 1): no recompute flag in the example script, plain
      // DDP (nothing to reduce with dp 1), overlap_p2p_comm on for the interleaved schedule (the
      // ParallelSpec default; megatron/arguments.py of the arxiv branch).
      r.par.recompute = printed_recompute;
      r.par.zero = 0;
      r.par.sequence_parallel = false;
      r.train.tp_comm_overlap = false;
    } else {  // olmo-core: HSDP taken as zero 3 over all ranks (shard group size not printed)
      r.par.recompute = printed_recompute;
      r.par.zero = 3;
      r.par.overlap_grad_reduce = true;
      r.par.sequence_parallel = tp_gt1;
      r.train.tp_comm_overlap = false;
    }

    // Micro-batch not printed, no pipeline: the benchmark tables publish tuned configurations, and
    // without PP gradient accumulation only costs (each extra micro-batch re-reads the weights and
    // shortens the backward the gradient reduction hides under): the largest micro-batch dividing
    // the local batch whose memory fits the GPU.
    if (!micro_batch_printed && r.par.pp == 1 && r.par.dp > 0)
      r.par.micro_batch = std::max<int64_t>(
          1, model::largest_micro_batch(r.model, r.par, r.train, r.cluster, model::usable_capacity_bytes(r.cluster.gpu)));

    // What the simulator can represent (as config/scenario.cpp checks a scenario).
    std::string bad;
    if (r.cluster.gpus_per_node % r.par.tp != 0) bad = "tp " + str(static_cast<double>(r.par.tp)) + " does not fit in a " +
                                                       str(static_cast<double>(r.cluster.gpus_per_node)) + "-GPU node";
    else if (r.model.heads % r.par.tp != 0) bad = "tp does not divide heads";
    else if (r.model.kv_heads % r.par.tp != 0 && r.par.tp % r.model.kv_heads != 0) bad = "tp and kv_heads incompatible";
    else if (r.model.ffn_hidden % r.par.tp != 0) bad = "tp does not divide ffn_hidden";
    else if (r.model.seq_len % r.par.cp != 0) bad = "cp does not divide seq_len";
    else if (r.par.cp > 1 && r.par.cp_comm == model::CpComm::kAllToAll && !model::a2a_splits_heads(r.model, r.par))
      bad = "a2a: the key-value heads do not split over cp (the stack repeats them first; trainsim's a2a does not)";
    else if (r.par.sequence_parallel && (r.model.seq_len / r.par.cp) % r.par.tp != 0) bad = "sequence parallel: tp does not divide seq_len / cp";
    else if (r.model.layers < parallel::min_layers(r.par.pp, r.par.virtual_stages)) bad = "fewer layers than pipeline chunks (only the two end chunks may be empty)";
    else if (r.train.global_batch % (r.par.dp * r.par.micro_batch) != 0) bad = "global batch not a multiple of dp * micro_batch";
    else if (interleaved && r.train.micro_batches(r.par) % r.par.pp != 0) bad = "interleaved: micro-batches not a multiple of pp";
    if (!bad.empty()) {
      skip("not representable: " + bad);
      continue;
    }

    // Measured figure -> model TFLOP/s per GPU.
    const double flops_per_token = model::model_flops_per_step(r.model, r.train.global_batch) /
                                   (static_cast<double>(r.train.global_batch) * static_cast<double>(r.model.seq_len));
    const auto tflops = number(meas["tflops_per_gpu"]);
    const auto mfu = leading_number(meas["mfu_pct"]);
    const auto tps = number(meas["tokens_per_s_per_gpu"]);
    std::optional<double> measured;
    if (fam == "llama3" || fam == "megatron-lm-readme" || fam == "fp8-lm") {
      measured = tflops;
    } else if (fam == "llm-foundry") {
      if (tflops) measured = tflops;
      else if (mfu) measured = *mfu / 100 * spec->peak_flops(r.train.precision) / 1e12;
    } else if (fam == "nemotron4" || fam == "nanotron") {
      if (mfu) measured = *mfu / 100 * spec->peak_bf16_flops / 1e12;
    } else if (fam == "ml-engineering") {
      // Printed TFLOPS are benchmark.py's estimate_tflos (causal attention, vocab x hidden once) over
      // the step: the step time (derived in the yaml from that formula) as tokens per GPU per second.
      if (const auto derived_tps = number(e["derived"]["tokens_per_s_per_gpu"])) measured = *derived_tps * flops_per_token / 1e12;
    } else if (fam == "zero-bubble") {
      if (const auto sps = number(meas["samples_per_s_per_gpu"])) measured = *sps * *seq * flops_per_token / 1e12;
    } else {  // torchtitan, olmo-core, internlm (TGS)
      if (tps) measured = *tps * flops_per_token / 1e12;
    }
    if (!measured || !(*measured > 0)) {
      skip("no measured figure convertible to model TFLOP/s per GPU");
      continue;
    }
    r.measured_tflops = *measured;

    MoreRun run;
    run.run = r;
    run.source_family = fam;
    run.unverified = more_detail::flag(e["source"]["unverified"]);
    out.push_back(run);
  }
  return out;
}

}  // namespace trainsim::validation
