#include "model/memory.hpp"

#include <algorithm>
#include <cmath>

#include "model/compute.hpp"
#include "model/memory_data.hpp"
#include "model/transformer.hpp"

namespace trainsim::model {
namespace {

// Megatron DDP's gradient bucket: max(40M, 1M * dp) parameters; we keep the 40M floor. Only a
// separate buffer under ZeRO-2, where the full gradients are not resident (stages 0-1 reduce in
// place in the contiguous gradient buffer).
constexpr double kGradBucketParams = 40e6;

// Bytes of one activation element: 16-bit activations for bf16, fp16 and fp8 (Transformer
// Engine keeps activations in 16 bits outside the GEMMs), 32-bit for fp32 training.
double activation_element_bytes(Precision p) { return p == Precision::kFp32 ? 4 : 2; }

// As the model says (model.dropout), else GPT/Megatron models (gelu) use dropout and Llama-style
// models (swiglu) do not.
bool has_dropout(const ModelSpec& m) { return m.dropout.value_or(m.ffn == Ffn::kGelu); }

// Derivation of the per-layer activation bytes (one micro-batch; s = seq_len / cp, b micro-batch,
// h hidden, a heads, g = kv_heads / heads, f ffn_hidden, e bytes per activation element (2),
// dropout masks 1 byte per element; with model.head_dim, Q and the output projection's input are
// heads x head_dim wide instead of h). Following Korthikanti et al. 2022 Sec. 4.1, each operation
// keeps its inputs for the backward:
//   norms:      the two norms keep their inputs                          2 * e sbh          [R]
//   attention:  QKV projection input                                     e sbh              [R]
//               Q for QK^T                                               e sbh              [S]
//               K and V (GQA: kv_heads * head_dim = g h wide)            2 * e g sbh        [S]
//               output projection input                                  e sbh              [S]
//               dropout mask after the projection (gelu models only)     sbh                [R]
//               softmax output                                           e as^2b            [A]
//               softmax dropout mask and its output (gelu models only)   as^2b + e as^2b    [A]
//   MLP gelu:   fc1 input e sbh [R]; GeLU input and fc2 input 2 * e sbf [S]; dropout mask sbh [R]
//   MLP swiglu: gate/up input e sbh [R]; the fused gate+up GEMM's output (2 * e sbf, the SwiGLU
//               kernel's input, which recomputes SiLU in its backward) and the down projection's
//               input (e sbf): 3 * e sbf [S]. Megatron-Core's bias_swiglu_impl / Transformer
//               Engine's swiglu save only their input; Llama 3 405B at s = 8192, TP8: 533 MB per
//               layer and micro-batch.
// With e = 2, g = 1, f = 4h and dropout: R = 10 sbh, S = 24 sbh, A = 5as^2b, the paper's
// 34 sbh + 5as^2b (11 sbh attention + 19 sbh MLP + 4 sbh norms).
// Tensor parallelism splits [S] and [A] over t; sequence parallelism also splits [R] (Eq.4);
// selective recompute drops [A] (Eq.6); full recompute keeps only the layer input, e sbh (/t with SP).
struct LayerTerms {
  double replicated = 0;  // [R]
  double split = 0;       // [S]
  double attention = 0;   // [A]
  // What torchtitan's per-op policy keeps instead of [R] + [S] (stored_bytes kSelectiveOp).
  double op_replicated = 0;
  double op_split = 0;
  double op_attention_out = 0;  // of op_split, the fused attention's output
  double input = 0;       // the layer input, all full recompute keeps
  double gemm_inputs = 0; // of [R], the QKV and MLP-up inputs (the normalised layer input, twice)
};

LayerTerms layer_terms(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train, bool moe = false) {
  const double s = static_cast<double>(m.seq_len) / static_cast<double>(std::max<int64_t>(par.cp, 1));
  const double b = static_cast<double>(par.micro_batch);
  const double h = static_cast<double>(m.hidden);
  const double a = static_cast<double>(m.heads);
  const double f = static_cast<double>(m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden);
  const double e = activation_element_bytes(train.precision);
  const double d = has_dropout(m) ? 1 : 0;
  const double sbh = s * b * h;
  // Under fp8 (Transformer Engine) each Linear keeps its input for the weight gradient as the fp8
  // cast it multiplied, 1 byte (te/pytorch/module/linear.py: save_for_backward(... inputmat_t if
  // fp8_wgrad ...), fp8_wgrad on unless the recipe overrides it): the QKV, MLP-up and MLP-down
  // inputs. The attention output stays in 16 bits for the fused attention's backward and gains the
  // output projection's fp8 copy. Norm inputs, Q/K/V and the MLP activation's input stay 16-bit.
  const bool fp8 = transformer_engine_fp8(train);
  const double gemm_in = fp8 ? 1 : e;
  const double out_proj = fp8 ? e + 1 : e;
  LayerTerms t;
  t.replicated = (2 * e + gemm_in + gemm_in) * sbh + 2 * d * sbh;
  t.gemm_inputs = 2 * gemm_in * sbh;
  const double sbf = s * b * f;
  double mlp = m.ffn == Ffn::kSwiglu ? (2 * e + gemm_in) * sbf : (e + gemm_in) * sbf;
  if (moe && m.is_moe()) {
    // A mixture-of-experts layer: each token's FFN activations once per expert it goes through
    // (top_k routed, at their even share: the average rank; plus the shared experts), at the
    // expert width; the routed copies of the normalised input the experts multiply (the
    // dispatched tokens, kept for the weight gradient); the router's fp32 probabilities over the
    // experts.
    const double sbfe = s * b * static_cast<double>(m.moe.expert_ffn_hidden);
    const double per_expert = m.ffn == Ffn::kSwiglu ? (2 * e + gemm_in) * sbfe : (e + gemm_in) * sbfe;
    const double k = static_cast<double>(m.moe.top_k), shared = static_cast<double>(m.moe.shared_experts);
    mlp = (k + shared) * per_expert;
    t.replicated += k * gemm_in * sbh + 4 * s * b * static_cast<double>(m.moe.experts);
  }
  // Q, K and V (GQA: kv_heads x head_dim each), the output projection's input; latent attention
  // adds the latents the up-projections read (Q, K with nope + rope a head, V and the output
  // projection's input at heads x v_head_dim: attention_widths).
  const AttentionWidths w = attention_widths(m);
  t.split = s * b * (e * (w.q + w.k + w.v) + out_proj * w.out + gemm_in * w.latent) + mlp;
  // Flash attention never materialises the s x s scores: it keeps only the fp32 softmax
  // statistics (one per row per head), which is what selective recompute achieves by hand.
  t.attention = train.flash_attention ? 4 * a * s * b : (e + d * (1 + e)) * a * s * s * b;
  // torchtitan's per-op policy (torchtitan/models/llama/parallelize_llama.py _save_list: mm,
  // the SDPA kernels, reduce_scatter; "recompute every other mm"): per block its input, the
  // outputs of wq, wv, w1 (gelu: fc1) and w2, and the fused attention's output and logsumexp
  // ([A]). The block input and w2's output are [R]-like (split under SP), the rest [S].
  // Megatron-Core's recompute modules: what each no longer keeps.
  if (par.recompute_layernorm) {
    t.replicated -= t.gemm_inputs;
    t.gemm_inputs = 0;
  }
  if (par.recompute_mla_up_proj && m.is_mla()) {
    t.split -= e * s * b * (w.q + w.k + w.v);
  }
  if (par.recompute_moe_act && moe && m.is_moe()) {
    const double sbfe = s * b * static_cast<double>(m.moe.expert_ffn_hidden);
    t.split -= static_cast<double>(m.moe.top_k + m.moe.shared_experts) * gemm_in * sbfe;  // the down-projection inputs
  }
  t.op_replicated = 2 * e * sbh;
  t.op_split = e * s * b * (w.q + w.v + w.out) + e * sbf;
  t.op_attention_out = e * s * b * w.out;
  t.input = e * sbh;
  return t;
}

double stored_bytes(const LayerTerms& lt, const ParallelSpec& par, Recompute recompute) {
  const double t = static_cast<double>(par.tp);
  const bool sp = par.sequence_parallel && par.tp > 1;
  // ParallelSpec::sp_save_gathered: the column-parallel inputs stay whole.
  const double replicated = !sp                   ? lt.replicated
                            : par.sp_save_gathered ? (lt.replicated - lt.gemm_inputs) / t + lt.gemm_inputs
                                                   : lt.replicated / t;
  switch (recompute) {
    case Recompute::kNone: return replicated + lt.split / t + lt.attention / t;
    case Recompute::kSelective: return replicated + lt.split / t;
    case Recompute::kSelectiveOp:
      // ParallelSpec::sac_saves_attention false: the attention's output and logsumexp recomputed.
      return (sp ? lt.op_replicated / t : lt.op_replicated) +
             (par.sac_saves_attention ? lt.op_split + lt.attention : lt.op_split - lt.op_attention_out) / t;
    case Recompute::kFull: return sp ? lt.input / t : lt.input;
  }
  return 0;
}

}  // namespace

StateBytesPerParam state_bytes_per_param(const TrainingSpec& train) {
  StateBytesPerParam sb;
  if (train.precision == Precision::kFp32) {
    sb.weights = 4;
    sb.gradients = 4;  // fp32 gradients are already the main gradients
    const double moment = train.optimizer_state_precision == Precision::kBf16 ? 2 : 4;
    sb.optimizer = train.optimizer == Optimizer::kAdam ? 2 * moment : 0;
  } else {
    sb.weights = 2;
    // Megatron's main gradients in fp32 (training.fp32_main_grads; Megatron-LM's --bf16 implies
    // them): the 16-bit gradients are accumulated straight into one fp32 buffer and never kept
    // beside it, 4 bytes in place of 2 (Megatron-LM docs/user-guide/features/dist_optimizer.md @
    // d98e8a6: "bf16 parameters, fp32 gradients: 18 | 6 + 12/d").
    sb.gradients = train.fp32_main_grads ? 4 : 2;
    // fp32 master weights (4) + Adam's two moments (4 + 4, or 2 + 2 in bf16).
    const double moment = train.optimizer_state_precision == Precision::kBf16 ? 2 : 4;
    sb.optimizer = 4 + (train.optimizer == Optimizer::kAdam ? 2 * moment : 0);
  }
  return sb;
}

MemoryBreakdown model_states(double params, const TrainingSpec& train, int zero, int64_t shard_ranks) {
  const StateBytesPerParam sb = state_bytes_per_param(train);
  const double n = static_cast<double>(std::max<int64_t>(shard_ranks, 1));
  MemoryBreakdown mb;
  mb.params = params;
  mb.weights = params * sb.weights / (zero >= 3 ? n : 1);
  mb.gradients = params * sb.gradients / (zero >= 2 ? n : 1);
  mb.optimizer = params * sb.optimizer / (zero >= 1 ? n : 1);
  if (train.offload != Offload::kNone) {
    mb.offloaded_bytes = mb.optimizer;
    mb.offload_to = train.offload;
    mb.optimizer = 0;
  }
  return mb;
}

std::vector<int64_t> chunk_layer_counts(int64_t layers, int64_t chunks) {
  chunks = std::max<int64_t>(chunks, 1);
  const int64_t per = (layers + chunks - 1) / chunks;
  std::vector<int64_t> counts(static_cast<size_t>(chunks), per);
  int64_t shortfall = per * chunks - layers;  // < chunks
  for (int64_t k = 0; shortfall > 0; ++k, --shortfall) {
    // k = 0 -> first, 1 -> last, 2 -> second, 3 -> second to last, ...
    const int64_t idx = (k % 2 == 0) ? k / 2 : chunks - 1 - k / 2;
    --counts[static_cast<size_t>(idx)];
  }
  return counts;
}

std::vector<int64_t> stage_layer_counts(int64_t layers, int64_t pp, int64_t v) {
  pp = std::max<int64_t>(pp, 1);
  v = std::max<int64_t>(v, 1);
  const std::vector<int64_t> chunks = chunk_layer_counts(layers, pp * v);
  std::vector<int64_t> stages(static_cast<size_t>(pp), 0);
  for (size_t c = 0; c < chunks.size(); ++c) stages[c % static_cast<size_t>(pp)] += chunks[c];
  return stages;
}

std::vector<int64_t> chunk_layers(const ModelSpec& m, const ParallelSpec& par) {
  const int64_t v = par.schedule == Schedule::kInterleaved ? std::max<int64_t>(1, par.virtual_stages) : 1;
  const int64_t chunks = std::max<int64_t>(par.pp, 1) * v;
  if (static_cast<int64_t>(par.layers_per_chunk.size()) == chunks) return par.layers_per_chunk;
  return chunk_layer_counts(m.layers, chunks);
}

std::vector<int64_t> stage_layers(const ModelSpec& m, const ParallelSpec& par) {
  const std::vector<int64_t> chunks = chunk_layers(m, par);
  const size_t pp = static_cast<size_t>(std::max<int64_t>(par.pp, 1));
  std::vector<int64_t> stages(pp, 0);
  for (size_t c = 0; c < chunks.size(); ++c) stages[c % pp] += chunks[c];
  return stages;
}

bool transformer_engine_fp8(const TrainingSpec& train) {
  return train.precision == Precision::kFp8 && !train.fp8_torchao;
}

bool keeps_fp8_weight_copies(const ParallelSpec& par, const TrainingSpec& train) {
  return transformer_engine_fp8(train) && par.zero < 3;
}

int64_t recomputed_layers(const ParallelSpec& par, int64_t chunk_layers) {
  if (par.recompute == Recompute::kNone) return 0;
  if (par.recompute != Recompute::kFull || par.recompute_num_layers < 0) return chunk_layers;
  return std::min(par.recompute_num_layers, chunk_layers);
}

bool defers_grad_reduce(const ParallelSpec& par, const TrainingSpec& train) {
  return par.defer_grad_reduce && par.zero >= 2 && train.micro_batches(par) > 1;
}

double layer_activation_bytes(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train, bool moe) {
  return stored_bytes(layer_terms(m, par, train, moe), par, par.recompute);
}

double layer_full_activation_bytes(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train, bool moe) {
  return stored_bytes(layer_terms(m, par, train, moe), par, Recompute::kNone);
}

std::vector<int64_t> stage_moe_layers(const ModelSpec& m, const ParallelSpec& par) {
  const std::vector<int64_t> chunks = chunk_layers(m, par);
  const size_t pp = static_cast<size_t>(std::max<int64_t>(par.pp, 1));
  std::vector<int64_t> out(pp, 0);
  if (!m.is_moe()) return out;
  int64_t start = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    const int64_t end = start + chunks[c];
    out[c % pp] += std::max<int64_t>(0, end - std::max(start, m.moe.first_dense_layers));
    start = end;
  }
  return out;
}

int64_t interleaved_warmup(int64_t p, int64_t m, int64_t v, int64_t rank, bool torch_pipelining) {
  const int64_t total = m * v;
  if (m == p && !torch_pipelining) return total;  // Megatron runs all forwards first
  return std::min((p - rank - 1) * 2 + (v - 1) * p, total);
}

double in_flight_micro_batches(Schedule schedule, int64_t rank, int64_t p, int64_t m, int64_t v,
                               bool torch_pipelining) {
  m = std::max<int64_t>(m, 1);
  switch (schedule) {
    case Schedule::kGpipe: return static_cast<double>(m);
    case Schedule::k1F1B: return static_cast<double>(std::min(p - rank, m));
    case Schedule::kInterleaved: {
      if (v <= 1) return static_cast<double>(std::min(p - rank, m));
      return static_cast<double>(std::min(interleaved_warmup(p, m, v, rank, torch_pipelining) + 1, m * v));
    }
  }
  return static_cast<double>(m);
}

namespace {

// What the loss over one micro-batch's logits holds at its peak on the last stage (s tokens per
// sequence on this GPU, e bytes per activation element; TrainingSpec::cross_entropy):
//  - fused: the fp32 logits once, their gradient written in place: 4 bytes per logit;
//  - torch: F.cross_entropy over .float() logits, 12 bytes per logit (16 under TP's loss_parallel);
//  - chunked: Liger-Kernel's fused linear cross-entropy (src/liger_kernel/ops/
//    fused_linear_cross_entropy.py at v0.8.0, fused_linear_cross_entropy_forward): the tokens go
//    through in chunks of next_pow2(ceil(tokens / ceil(v / h))) rows, each chunk's logits (input
//    dtype) taking their gradient in place; the input's gradient (tokens x h, `grad_input`) and the
//    weight's (v x h in the weight's dtype, `grad_weight`) are made in the forward and kept for the
//    backward, and each chunk's weight-gradient product is made in the input dtype and cast to fp32
//    before it is added (`torch.mm(...).float()`: 6 bytes per weight element at that moment).
double loss_peak_bytes(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train, double s, double e) {
  const double t = static_cast<double>(par.tp);
  const double tokens = s * static_cast<double>(par.micro_batch);
  const double v = static_cast<double>(m.vocab) / t;
  const double h = static_cast<double>(m.hidden);
  switch (train.cross_entropy) {
    case CrossEntropy::kFused: return 4 * tokens * v;
    case CrossEntropy::kTorch: return (par.tp > 1 ? 16 : 12) * tokens * v;
    case CrossEntropy::kChunked: {
      const double chunk = std::min(tokens, std::exp2(std::ceil(std::log2(std::ceil(tokens / std::ceil(v / h))))));
      return e * tokens * h + e * chunk * v + (e + 6) * v * h;
    }
  }
  return 4 * tokens * v;
}

std::vector<MemoryBreakdown> stages_memory(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                                           const hardware::ClusterSpec* cluster) {
  const ParamCounts pc = count_params(m);
  const int64_t p = std::max<int64_t>(par.pp, 1);
  const int64_t v = par.schedule == Schedule::kInterleaved ? std::max<int64_t>(par.virtual_stages, 1) : 1;
  const double t = static_cast<double>(std::max<int64_t>(par.tp, 1));
  const int64_t micro_batches = std::max<int64_t>(train.micro_batches(par), 1);
  const std::vector<int64_t> layers = stage_layers(m, par);
  const StateBytesPerParam sb = state_bytes_per_param(train);
  // ZeRO shards over dp x cp, or over the shard group under hybrid sharding (ParallelSpec::shard_degree).
  const int64_t shard_ranks = std::max<int64_t>(par.shard_ranks(), 1);

  const double layer_params = (pc.attention + pc.mlp) / t + pc.norms;
  // A mixture-of-experts layer on one GPU: the part every data-parallel rank holds (attention,
  // norms, router, shared experts) and its share of the routed experts (experts / ep of them,
  // their FFNs split over expert_tp), whose states shard over the expert-data-parallel ranks,
  // tp x cp x dp / (ep x expert_tp) (dp x cp / ep without folding).
  const double ep = static_cast<double>(std::max<int64_t>(par.ep, 1));
  const double moe_common_params =
      m.is_moe() ? pc.attention / t + pc.norms + pc.router + static_cast<double>(m.moe.shared_experts) * pc.expert / t : 0;
  const double moe_expert_params = m.is_moe() ? static_cast<double>(m.moe.experts) / ep * pc.expert / static_cast<double>(par.etp()) : 0;
  const std::vector<int64_t> moe_layers = stage_moe_layers(m, par);
  const double embedding_params = pc.embedding / t + pc.position;
  const double output_params = pc.output / t + pc.final_norm + (m.tied_embeddings && p > 1 ? pc.embedding / t : 0);

  const double dense_per_layer = layer_activation_bytes(m, par, train);
  const double dense_full_layer = layer_full_activation_bytes(m, par, train);
  const double moe_per_layer = m.is_moe() ? layer_activation_bytes(m, par, train, true) : 0;
  const double moe_full_layer = m.is_moe() ? layer_full_activation_bytes(m, par, train, true) : 0;
  // Recomputed layers per stage (recompute_num_layers counts per chunk); the rest keep everything.
  const std::vector<int64_t> chunks = chunk_layers(m, par);
  std::vector<int64_t> recomputed(static_cast<size_t>(p), 0);
  for (size_t c = 0; c < chunks.size(); ++c) recomputed[c % static_cast<size_t>(p)] += recomputed_layers(par, chunks[c]);
  const bool sp = par.sequence_parallel && par.tp > 1;
  const double s = static_cast<double>(m.seq_len) / static_cast<double>(std::max<int64_t>(par.cp, 1));
  const double sbh = s * static_cast<double>(par.micro_batch) * static_cast<double>(m.hidden);
  const double e = activation_element_bytes(train.precision);
  // Embedding dropout mask (gelu models), 1 byte per element; split by t under SP.
  const double embedding_act = has_dropout(m) ? (sp ? sbh / t : sbh) : 0;
  // A micro-batch's hidden states as a layer or stage boundary holds them (split under SP).
  const double hidden_states = sp ? e * sbh / t : e * sbh;
  // A micro-batch's logits on one GPU (the vocabulary split over t), in elements.
  const double logits = s * static_cast<double>(par.micro_batch) * static_cast<double>(m.vocab) / t;
  // The output layer's input: whole when the column-parallel linear keeps it gathered.
  const double output_input = sp && !par.sp_save_gathered ? e * sbh / t : e * sbh;
  const double output_act = hidden_states + output_input + loss_peak_bytes(m, par, train, s, e);

  std::vector<MemoryBreakdown> out;
  out.reserve(static_cast<size_t>(p));
  for (int64_t r = 0; r < p; ++r) {
    const bool first = r == 0;
    const bool last = r == p - 1;
    const double lr = static_cast<double>(layers[static_cast<size_t>(r)]);
    const double lm = static_cast<double>(moe_layers[static_cast<size_t>(r)]);  // of which mixture-of-experts
    double params = (lr - lm) * layer_params + lm * moe_common_params;
    if (first) params += embedding_params;
    if (last) params += output_params;
    // Multi-token prediction modules on the last stage: a layer each (with experts when the model
    // has them), a 2h x h projection; their activations and logits like the main model's.
    const double mtp = last ? static_cast<double>(m.mtp_modules) : 0;
    if (mtp > 0) params += mtp * ((m.is_moe() ? moe_common_params : layer_params) + 2 * static_cast<double>(m.hidden) * static_cast<double>(m.hidden) / t);
    const double expert_params = (lm + (m.is_moe() ? mtp : 0)) * moe_expert_params;
    // Per layer on this stage, dense and mixture-of-experts layers averaged.
    const double per_layer = lr > 0 ? ((lr - lm) * dense_per_layer + lm * moe_per_layer) / lr : dense_per_layer;
    const double full_layer = lr > 0 ? ((lr - lm) * dense_full_layer + lm * moe_full_layer) / lr : dense_full_layer;
    const double working_set = par.recompute == Recompute::kFull ? std::max(dense_full_layer, lm > 0 ? moe_full_layer : 0) : 0;

    MemoryBreakdown mb = model_states(params, train, par.zero, shard_ranks);
    if (expert_params > 0) {
      const MemoryBreakdown ex = model_states(expert_params, train, par.zero, std::max<int64_t>(par.expert_dp(), 1));
      mb.params += ex.params;
      mb.weights += ex.weights;
      mb.gradients += ex.gradients;
      mb.optimizer += ex.optimizer;
      mb.offloaded_bytes += ex.offloaded_bytes;
      params += expert_params;
    }
    // Transformer Engine keeps, between micro-batches, each fp8 Linear weight's cast and its
    // transpose (te/pytorch/module/linear.py: weight_fp8, weight_t_fp8; Hopper's fp8 GEMMs take
    // TN operands only): 2 bytes per layer weight beside the 16-bit one. Under ZeRO-3 the weights
    // are gathered one unit at a time and no copy outlives it.
    if (keeps_fp8_weight_copies(par, train))
      mb.weights += 2 * ((lr - lm) * (pc.attention + pc.mlp) / t +
                         lm * (pc.attention / t + static_cast<double>(m.moe.shared_experts) * pc.expert / t) + expert_params);
    mb.stage = r;
    mb.layers = layers[static_cast<size_t>(r)];
    mb.has_embedding = first;
    mb.has_output = last;
    mb.layer_activation_bytes = per_layer;

    // Held chunk-micro-batches; each chunk of this rank holds lr / v layers on average.
    const double held = in_flight_micro_batches(par.schedule, r, p, micro_batches, v, par.pp_microbatch_buffers);
    mb.in_flight_micro_batches = held / static_cast<double>(v);
    const double rl = static_cast<double>(recomputed[static_cast<size_t>(r)]);
    mb.recomputed_layers = recomputed[static_cast<size_t>(r)];
    mb.full_layer_activation_bytes = full_layer;
    mb.activations = held / static_cast<double>(v) * (rl * per_layer + (lr - rl) * full_layer);
    if (rl > 0) mb.activations += working_set;
    // CPU activation offload (pp = 1, no recompute: every layer keeps per_layer): the first N
    // layers' activations live on the host; the GPU keeps the double buffer, two layers' worth.
    if (par.activation_offload_layers > 0) {
      const double off = static_cast<double>(std::min<int64_t>(par.activation_offload_layers, layers[static_cast<size_t>(r)]));
      mb.offloaded_activation_bytes = held / static_cast<double>(v) * off * per_layer;
      mb.activations -= mb.offloaded_activation_bytes - std::min(off, 2.0) * per_layer;
    }
    if (first) mb.activations += mb.in_flight_micro_batches * embedding_act;
    if (last) mb.activations += (par.schedule == Schedule::kGpipe ? static_cast<double>(micro_batches) : 1.0) * output_act * (1 + mtp);
    if (mtp > 0) mb.activations += mb.in_flight_micro_batches * mtp * (m.is_moe() ? moe_per_layer : dense_per_layer);

    // Deferred reduction (ParallelSpec::defer_grad_reduce): every parameter of the rank keeps its
    // unsharded 16-bit copy and an unsharded gradient accumulator in the reduce precision until the
    // step's last backward. A chunk's accumulator appears at its first backward, when the
    // schedule has begun to free activations: with v chunks run backward one after the other, the
    // k-th accumulator is allocated while about (v - k + 1) / v of the held activations remain, so
    // what coincides with the activation peak is the larger of one chunk's accumulator and all of
    // them less the activations the first k - 1 chunks have freed (v = 1: all of it).
    if (defers_grad_reduce(par, train)) {
      const double accumulator = params * grad_bytes_per_param(train);
      const double vv = static_cast<double>(v);
      mb.gradients += std::max(accumulator / vv, accumulator - mb.activations * (vv - 1) / vv);
      if (par.zero >= 3) mb.weights = params * sb.weights;
    }

    // torch.distributed.pipelining's per-micro-batch tensors (ParallelSpec::pp_microbatch_buffers),
    // for each chunk g of this rank, at the rank's last forward (the held micro-batches are at
    // their most; the others' backwards are done: m - held of them a chunk): an activation receive
    // buffer per micro-batch (g > 0; those of the held micro-batches are the first layer's kept
    // input, counted above) and, in it, the gradient of each input whose backward is done (g > 0);
    // a gradient receive buffer per micro-batch and every micro-batch's output, kept whether its
    // backward is done or not (g not last; the stage boundary's hidden states, split over tp under
    // SP); or on the last chunk every micro-batch's 16-bit logits (the current one's are in
    // output_act).
    if (par.pp_microbatch_buffers && p > 1) {
      const double mbs = static_cast<double>(micro_batches);
      const double held_chunk = held / static_cast<double>(v);
      const double done = std::max(0.0, mbs - held_chunk);
      for (int64_t c = 0; c < v; ++c) {
        const int64_t g = c * p + r;
        if (g > 0) mb.buffer_bytes += 2 * done * hidden_states;
        if (g + 1 < p * v) {
          mb.buffer_bytes += mbs * hidden_states;
          mb.activations += mbs * hidden_states;
        } else {
          mb.activations += (mbs - 1) * 2 * logits;
        }
      }
    }

    // Temporary communication buffers.
    // The all-to-all of a mixture-of-experts layer: its send and receive buffers of the routed
    // tokens (top_k copies of the micro-batch's hidden states, split over tp under SP).
    if (lm > 0) mb.buffer_bytes += 2 * static_cast<double>(m.moe.top_k) * e * (sp ? sbh / t : sbh);
    // Context parallelism's all-gather exchange (ParallelSpec::cp_comm): one layer's K and V of the
    // whole sequence at a time. Its backward (Transformer Engine AttnFuncWithCPAndKVAllGather)
    // gathers K and V again and reorders them, allocates dK and dV at the whole length and reorders
    // those too before the reduce-scatter: gathered K + V, their gradients and the reordered copy
    // of dK at once, 2.5 x the gathered K and V.
    if (par.cp > 1 && par.cp_comm == CpComm::kAllGather && layers[static_cast<size_t>(r)] > 0) {
      const AttentionWidths aw = attention_widths(m);
      mb.buffer_bytes += 2.5 * e * static_cast<double>(m.seq_len) * static_cast<double>(par.micro_batch) * (aw.k + aw.v) / t;
    }
    // Under a2a (Ulysses) the all-to-all's outputs: Q, K and V head-split over the whole sequence
    // beside their sequence-split inputs until the exchange ends (as large: one more Q, K, V).
    if (par.cp > 1 && par.cp_comm == CpComm::kAllToAll && layers[static_cast<size_t>(r)] > 0) {
      const AttentionWidths aw = attention_widths(m);
      mb.buffer_bytes += e * s * static_cast<double>(par.micro_batch) * (aw.q + aw.k + aw.v) / t;
    }
    if (par.zero == 2) {
      mb.buffer_bytes += std::min(kGradBucketParams, params) * sb.gradients;
    } else if (par.zero >= 3) {
      // All-gather of the unit being computed and the next one (prefetch), in 16-bit, plus the
      // unsharded gradients of one unit before their reduce-scatter. A unit is one layer, or the
      // embedding / output layer when larger.
      double unit = layers[static_cast<size_t>(r)] > 0 ? (lm > 0 ? std::max(layer_params, moe_common_params + moe_expert_params) : layer_params) : 0;
      if (first) unit = std::max(unit, embedding_params);
      if (last) unit = std::max(unit, output_params);
      mb.buffer_bytes += unit * (2 * sb.weights + sb.gradients);
    }
    const double allocated = mb.model_states() + mb.activations + mb.buffer_bytes;
    if (cluster) {
      mb.reserve = runtime_reserve(par, train, m, *cluster, allocated);
    } else {
      mb.reserve.fixed = std::max(train.runtime_reserve_bytes, 0.0);  // no cluster: no parts to build
    }
    mb.reserve_bytes = mb.reserve.total();
    mb.other = mb.reserve_bytes + mb.buffer_bytes;
    out.push_back(mb);
  }
  return out;
}

MemoryBreakdown busiest(const std::vector<MemoryBreakdown>& stages) {
  size_t best = 0;
  for (size_t i = 1; i < stages.size(); ++i)
    if (stages[i].total() > stages[best].total()) best = i;
  return stages[best];
}

}  // namespace

std::vector<MemoryBreakdown> memory_per_stage(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train) {
  return stages_memory(m, par, train, nullptr);
}
std::vector<MemoryBreakdown> memory_per_stage(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                                              const hardware::ClusterSpec& cluster) {
  return stages_memory(m, par, train, &cluster);
}
MemoryBreakdown memory_per_gpu(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train) {
  return busiest(stages_memory(m, par, train, nullptr));
}
MemoryBreakdown memory_per_gpu(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                               const hardware::ClusterSpec& cluster) {
  return busiest(stages_memory(m, par, train, &cluster));
}

int64_t largest_micro_batch(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                            double capacity_bytes) {
  return largest_micro_batch(m, par, train, nullptr, capacity_bytes);
}
int64_t largest_micro_batch(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                            const hardware::ClusterSpec& cluster, double capacity_bytes) {
  return largest_micro_batch(m, par, train, &cluster, capacity_bytes);
}
int64_t largest_micro_batch(const ModelSpec& m, const ParallelSpec& par, const TrainingSpec& train,
                            const hardware::ClusterSpec* cluster, double capacity_bytes) {
  const int64_t per_replica = train.global_batch / std::max<int64_t>(par.dp, 1);
  // The divisors of the per-replica batch, largest first: O(sqrt(n)) to list (a batch of 2^40
  // sequences has at most a few thousand divisors; counting down from n would take hours).
  std::vector<int64_t> candidates;
  if (per_replica < 1) {
    candidates.push_back(1);
  } else {
    std::vector<int64_t> large;
    for (int64_t d = 1; d <= per_replica / d; ++d) {
      if (per_replica % d != 0) continue;
      candidates.push_back(d);
      if (d != per_replica / d) large.push_back(per_replica / d);
    }
    candidates.insert(candidates.end(), large.rbegin(), large.rend());
    std::reverse(candidates.begin(), candidates.end());
  }
  ParallelSpec trial = par;
  for (const int64_t b : candidates) {
    // Interleaving needs the micro-batch count to be a multiple of pp (config/ checks it).
    if (par.schedule == Schedule::kInterleaved && per_replica >= 1 && (per_replica / b) % std::max<int64_t>(par.pp, 1) != 0)
      continue;
    trial.micro_batch = b;
    if (busiest(stages_memory(m, trial, train, cluster)).total() <= capacity_bytes) return b;
  }
  return 0;
}

int64_t min_gpus_for_weights(double params, double bytes_per_param, double capacity_bytes, double reserve_bytes) {
  const double usable = capacity_bytes - reserve_bytes;
  if (usable <= 0) return 0;
  // The 1e-9 keeps an exact fit (e.g. 800 GB on 80 GB GPUs = 10) from rounding up.
  return static_cast<int64_t>(std::ceil(params * bytes_per_param / usable - 1e-9));
}

}  // namespace trainsim::model
