// FLOPs of a dense decoder-only transformer, per micro-batch, counted the Megatron way (Narayanan et
// al. SC21 Eq.3, Korthikanti et al. 2022 Eq.7, as NeMo's model TFLOP/s): GEMMs only, a multiply-add
// = 2 FLOPs, attention scores and values over the FULL s x s matrix (2*2*b*s^2*h, causal masking not
// discounted), logits 2*b*s*h*V; norms, softmax and element-wise ops not counted. Backward = 2 x
// forward. With these, per token model FLOPs = PaLM's 6N + 12LHQT (N = GEMM weights incl. logits).
//   Recompute adds to the backward: full = one more forward of every transformer layer (not the
//   logits); selective = the attention core (scores and values) again.
//   GQA: K and V projections are h x (kv_heads * head_dim).
// All figures are for the whole model width (divide by tp*cp for one GPU).
#pragma once

#include <cstdint>

#include "model/spec.hpp"

namespace trainsim::model {

struct LayerFlops {
  double qkv = 0;          // 2 b s h (h + 2 kv)
  double attention = 0;    // scores + values: 2 * 2 b s^2 h
  double out_proj = 0;     // 2 b s h^2
  double mlp = 0;          // gelu: 2 GEMMs 2 * 2 b s h f; swiglu: 3 GEMMs 3 * 2 b s h f
                           // MoE layer: the same per expert a token goes through (top_k + shared,
                           // at expert_ffn_hidden) plus the router, 2 b s h experts
  double total() const { return qkv + attention + out_proj + mlp; }
  double gemm() const { return qkv + out_proj + mlp; }  // weight GEMMs (all but the attention core)
};

// Forward FLOPs of one transformer layer for `micro_batch` sequences of model.seq_len (a dense one,
// or with `moe` the model's mixture-of-experts layer: FLOPs from the active parameters).
LayerFlops layer_forward_flops(const ModelSpec& model, int64_t micro_batch, bool moe = false);
// Forward FLOPs of the output projection (logits) for `micro_batch` sequences: 2 b s h V.
double logits_forward_flops(const ModelSpec& model, int64_t micro_batch);
// Extra FLOPs re-run in the backward of one layer per micro-batch under `recompute`.
// `saves_attention`: ParallelSpec::sac_saves_attention (selective-op only).
double layer_recompute_flops(const ModelSpec& model, int64_t micro_batch, Recompute recompute, bool saves_attention = true);

// Model FLOPs (no recompute) of one training step over `global_batch` sequences:
// 3 x (layers x layer forward + logits forward). The MFU numerator.
double model_flops_per_step(const ModelSpec& model, int64_t global_batch);
// Hardware FLOPs: model FLOPs + recompute. The HFU numerator. `saves_attention` as for
// layer_recompute_flops.
double hardware_flops_per_step(const ModelSpec& model, int64_t global_batch, Recompute recompute,
                               bool saves_attention = true);

// Closed forms from the papers, for cross-checks (gelu, ffn = 4h, no GQA):
// Megatron SC21 Eq.3 (full recompute): 96 B s l h^2 (1 + s/(6h) + V/(16 l h)).
double megatron_eq3_flops(const ModelSpec& model, int64_t global_batch);
// Korthikanti Eq.7 model FLOPs: 72 B L s h^2 (1 + s/(6h) + V/(12 h L)).
double korthikanti_eq7_flops(const ModelSpec& model, int64_t global_batch);

}  // namespace trainsim::model
