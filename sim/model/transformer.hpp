// Parameter counts of a decoder-only transformer (dense, or mixture-of-experts).
// Conventions: `gelu` models are GPT/Megatron style (biases on every linear layer, LayerNorm with
// weight and bias, learned position embeddings when ModelSpec says so); `swiglu` models are
// Llama style (no biases, RMSNorm weight only, rotary positions). With gelu, hidden h, and
// learned positions this reproduces Megatron SC21 Eq.2: P = 12lh^2(1 + 13/(12h) + (V+s)/(12lh)).
#pragma once

#include "model/spec.hpp"

namespace trainsim::model {

struct ParamCounts {
  double attention = 0;   // per layer: Q, K, V (GQA-sized), output projection (+ biases)
  double mlp = 0;         // per layer: up/gate/down (+ biases)
  double norms = 0;       // per layer: the two norms
  double per_layer = 0;   // attention + mlp + norms
  double embedding = 0;   // vocab * hidden
  double position = 0;    // seq_len * hidden when learned, else 0
  double output = 0;      // output projection vocab * hidden; 0 when tied
  double final_norm = 0;
  double total = 0;
  // Mixture-of-experts layers (ModelSpec::moe; all 0 for a dense model): `mlp` above is then the
  // dense layers' FFN (the first moe.first_dense_layers layers).
  double expert = 0;        // one expert's FFN
  double router = 0;        // the router's hidden x experts weights
  double moe_layer = 0;     // attention + norms + router + (experts + shared) x expert
  double active = 0;        // parameters one token goes through: top_k routed experts + shared ones
};

ParamCounts count_params(const ModelSpec& m);

// Head dimension = hidden / heads.
inline double head_dim(const ModelSpec& m) {
  return m.head_dim > 0 ? static_cast<double>(m.head_dim) : static_cast<double>(m.hidden) / static_cast<double>(m.heads);
}

// The attention's widths per token (whole model width), multi-head / grouped-query or latent (MLA):
struct AttentionWidths {
  double q = 0;        // queries: hidden (MLA: heads x (nope + rope))
  double k = 0;        // keys: kv_heads x head_dim (MLA: heads x (nope + rope), after the up-projection)
  double v = 0;        // values and the core's output per head group: kv_heads x head_dim (MLA: heads x v_head_dim)
  double out = 0;      // the output projection's input: hidden (MLA: heads x v_head_dim)
  double latent = 0;   // MLA: the compressed query and key-value (+ rope key) the up-projections read; 0 otherwise
  double qkv_weights = 0;  // weights from the hidden state to Q, K and V (MLA: down- and up-projections)
  double latent_norms = 0; // MLA: the norms on the two latents
};
AttentionWidths attention_widths(const ModelSpec& m);

}  // namespace trainsim::model
