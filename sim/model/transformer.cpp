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
  c.total = static_cast<double>(m.layers) * c.per_layer + c.embedding + c.position + c.output + c.final_norm;
  return c;
}

}  // namespace trainsim::model
