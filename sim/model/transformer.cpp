#include "model/transformer.hpp"

namespace trainsim::model {

AttentionWidths attention_widths(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden);
  AttentionWidths w;
  if (!m.is_mla()) {
    // Queries and the output projection heads x head_dim wide (the hidden size unless head_dim says
    // otherwise), keys and values kv_heads x head_dim.
    const double kv = static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * head_dim(m);
    w.q = static_cast<double>(m.heads) * head_dim(m);
    w.k = kv;
    w.v = kv;
    w.out = w.q;
    w.qkv_weights = h * (w.q + 2 * kv);
    return w;
  }
  const double heads = static_cast<double>(m.heads);
  const double ql = static_cast<double>(m.mla.q_lora_rank), kl = static_cast<double>(m.mla.kv_lora_rank);
  const double nope = static_cast<double>(m.mla.qk_nope_head_dim), rope = static_cast<double>(m.mla.qk_rope_head_dim);
  const double dv = static_cast<double>(m.mla.v_head_dim);
  w.q = heads * (nope + rope);
  w.k = heads * (nope + rope);
  w.v = heads * dv;
  w.out = heads * dv;
  w.latent = ql + kl + rope;
  // Queries: h x q_lora then q_lora x heads (nope + rope) (or h x heads (nope + rope)); keys and
  // values: h x (kv_lora + rope) then kv_lora x heads (nope + v) (DeepSeek-V2 Sec. 2.1).
  w.qkv_weights = (ql > 0 ? h * ql + ql * w.q : h * w.q) + h * (kl + rope) + kl * heads * (nope + dv);
  w.latent_norms = ql + kl;
  return w;
}

ParamCounts count_params(const ModelSpec& m) {
  ParamCounts c;
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  const bool gpt = m.ffn == Ffn::kGelu;
  // Q and O are h x q (q = heads x head_dim, h unless head_dim says otherwise); K and V h x kv each;
  // GPT adds their biases. MLA: its projections (attention_widths) and the two latent norms.
  const AttentionWidths w = attention_widths(m);
  c.attention = w.qkv_weights + w.out * h + (m.is_mla() ? w.latent_norms : gpt ? (w.q + w.k + w.v) + h : 0);
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
