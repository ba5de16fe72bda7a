#include "model/flops.hpp"

#include "model/transformer.hpp"

namespace trainsim::model {
namespace {
double d(int64_t v) { return static_cast<double>(v); }
}  // namespace

LayerFlops layer_forward_flops(const ModelSpec& m, int64_t micro_batch, bool moe) {
  const double tokens = d(micro_batch) * d(m.seq_len);
  const double h = d(m.hidden);
  const double f = d(m.ffn_hidden);
  LayerFlops l;
  // Projections; scores over the query/key width and values over theirs (4 s^2 b h with standard
  // heads; latent attention's own widths: attention_widths).
  const AttentionWidths w = attention_widths(m);
  l.qkv = 2 * tokens * w.qkv_weights;
  l.attention = 2 * tokens * d(m.seq_len) * (w.q + w.out);
  l.out_proj = 2 * tokens * w.out * h;
  l.mlp = (m.ffn == Ffn::kSwiglu ? 3 : 2) * 2 * tokens * h * f;
  if (moe && m.is_moe()) {
    const double per_expert = (m.ffn == Ffn::kSwiglu ? 3 : 2) * 2 * tokens * h * d(m.moe.expert_ffn_hidden);
    l.mlp = d(m.moe.top_k + m.moe.shared_experts) * per_expert + 2 * tokens * h * d(m.moe.experts);
  }
  return l;
}

double logits_forward_flops(const ModelSpec& m, int64_t micro_batch) {
  return 2 * d(micro_batch) * d(m.seq_len) * d(m.hidden) * d(m.vocab);
}

double layer_recompute_flops(const ModelSpec& m, int64_t micro_batch, Recompute recompute, bool saves_attention) {
  switch (recompute) {
    case Recompute::kNone: return 0;
    case Recompute::kSelective: return layer_forward_flops(m, micro_batch).attention;
    case Recompute::kSelectiveOp: {
      // torchtitan's per-op policy re-runs the even-numbered matmuls of each block: in the order
      // wq, wk, wv, wo, w1, w3, w2 (gelu: fc1, fc2) those are wk, wo and w3 (gelu: fc2), each
      // 2 s b h x its width.
      const double h = d(m.hidden), f = d(m.ffn_hidden > 0 ? m.ffn_hidden : 4 * m.hidden);
      const AttentionWidths w = attention_widths(m);
      const double mms = 2 * d(micro_batch) * d(m.seq_len) * h * (w.k + w.out + f);
      // The attention itself too where the policy does not keep its output (spec.hpp).
      return saves_attention ? mms : mms + layer_forward_flops(m, micro_batch).attention;
    }
    case Recompute::kFull: return layer_forward_flops(m, micro_batch).total();
  }
  return 0;
}

double model_flops_per_step(const ModelSpec& m, int64_t global_batch) {
  const double moe = d(m.moe_layers());
  return 3 * ((d(m.layers) - moe) * layer_forward_flops(m, global_batch).total() +
              moe * layer_forward_flops(m, global_batch, true).total() + logits_forward_flops(m, global_batch));
}

double hardware_flops_per_step(const ModelSpec& m, int64_t global_batch, Recompute recompute, bool saves_attention) {
  double extra = d(m.layers) * layer_recompute_flops(m, global_batch, recompute, saves_attention);
  if (recompute == Recompute::kFull && m.is_moe())
    extra = model_flops_per_step(m, global_batch) / 3 - logits_forward_flops(m, global_batch);
  return model_flops_per_step(m, global_batch) + extra;
}

double megatron_eq3_flops(const ModelSpec& m, int64_t global_batch) {
  const double s = d(m.seq_len), l = d(m.layers), h = d(m.hidden), v = d(m.vocab);
  return 96 * d(global_batch) * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h));
}

double korthikanti_eq7_flops(const ModelSpec& m, int64_t global_batch) {
  const double s = d(m.seq_len), l = d(m.layers), h = d(m.hidden), v = d(m.vocab);
  return 72 * d(global_batch) * l * s * h * h * (1 + s / (6 * h) + v / (12 * h * l));
}

}  // namespace trainsim::model
