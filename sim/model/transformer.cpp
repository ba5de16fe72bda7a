#include "model/transformer.hpp"

namespace trainsim::model {

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts c;
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * head_dim(m);
  const bool gpt = m.ffn == Ffn::kGelu;
  // Q and O are h x h; K and V are h x kv each.
  c.attention = 2 * h * h + 2 * h * kv + (gpt ? (h + 2 * kv) + h : 0);
  c.mlp = gpt ? 2 * h * f + f + h : 3 * h * f;
  c.norms = gpt ? 4 * h : 2 * h;
  c.per_layer = c.attention + c.mlp + c.norms;
  c.embedding = static_cast<double>(m.vocab) * h;
  c.position = m.learned_position_embedding ? static_cast<double>(m.seq_len) * h : 0;
  c.output = m.tied_embeddings ? 0 : static_cast<double>(m.vocab) * h;
  c.final_norm = gpt ? 2 * h : h;
  const double ends = c.embedding + c.position + c.output + c.final_norm;
  c.total = static_cast<double>(m.layers) * c.per_layer + ends;
  c.active = c.total;
  if (m.is_moe()) {
    // Each expert is an FFN of expert_ffn_hidden (biases only in gelu models); the router is a
    // bias-free hidden x experts linear (Mixtral, DeepSeek, Qwen3-MoE).
    const double fe = static_cast<double>(m.moe.expert_ffn_hidden);
    const double e = static_cast<double>(m.moe.experts);
    c.expert = gpt ? 2 * h * fe + fe + h : 3 * h * fe;
    c.router = h * e;
    const double common = c.attention + c.norms + c.router;
    c.moe_layer = common + (e + static_cast<double>(m.moe.shared_experts)) * c.expert;
    const double moe_layers = static_cast<double>(m.moe_layers());
    const double dense_layers = static_cast<double>(m.layers) - moe_layers;
    c.total = dense_layers * c.per_layer + moe_layers * c.moe_layer + ends;
    c.active = dense_layers * c.per_layer +
               moe_layers * (common + static_cast<double>(m.moe.top_k + m.moe.shared_experts) * c.expert) + ends;
  }
  return c;
}

}  // namespace trainsim::model
