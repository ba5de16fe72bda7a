#include "model/presets.hpp"

#include <array>

namespace trainsim::model {
namespace {

struct Row {
  const char* name;
  int64_t layers, hidden, ffn_hidden, heads, kv_heads, vocab, seq_len;
  Ffn ffn;
  bool tied_embeddings;
  bool learned_position_embedding;
};

constexpr Ffn kG = Ffn::kGelu;
constexpr Ffn kS = Ffn::kSwiglu;

// GPT/Megatron rows: gelu, ffn 4h, tied embeddings, learned positions, vocab padded to 51200
// (Megatron pads GPT-2's 50257 to a multiple of 128 * TP), seq 2048.
// Llama rows (Touvron et al. 2023; Llama Team 2024, Table 3): swiglu, untied output, rotary positions.
const std::array<Row, 21> kPresets = {{
    // GPT-3 175B (Brown et al. 2020, Table 2.1): 96 layers, d 12288, 96 heads. Eq.2 gives 174.6B,
    // the size Megatron SC21 reports for it (published_runs: megatron_sc21_t2_ptdp_174.6B_384gpu).
    {"gpt3-175b", 96, 12288, 49152, 96, 96, 51200, 2048, kG, true, true},
    // Llama 2 (nemo2407_llama2_7b/13b/70b give layers, hidden, heads; ffn from the released configs).
    {"llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, kS, false, false},
    {"llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096, kS, false, false},
    {"llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, kS, false, false},
    // Llama 3 (nemo2407_llama3_8b, nemo2407_llama3_70b; 405B: Llama 3 paper Table 3).
    {"llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, kS, false, false},
    {"llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, kS, false, false},
    {"llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8192, kS, false, false},
    // Megatron SC21 Table 1 (published_runs: megatron_sc21_t1_<size>B).
    {"megatron-1.7b", 24, 2304, 9216, 24, 24, 51200, 2048, kG, true, true},
    {"megatron-3.6b", 30, 3072, 12288, 32, 32, 51200, 2048, kG, true, true},
    {"megatron-7.5b", 36, 4096, 16384, 32, 32, 51200, 2048, kG, true, true},
    {"megatron-18.4b", 40, 6144, 24576, 48, 48, 51200, 2048, kG, true, true},
    {"megatron-39.1b", 48, 8192, 32768, 64, 64, 51200, 2048, kG, true, true},
    {"megatron-76.1b", 60, 10240, 40960, 80, 80, 51200, 2048, kG, true, true},
    {"megatron-145.6b", 80, 12288, 49152, 96, 96, 51200, 2048, kG, true, true},
    {"megatron-310.1b", 96, 16384, 65536, 128, 128, 51200, 2048, kG, true, true},
    {"megatron-529.6b", 105, 20480, 81920, 128, 128, 51200, 2048, kG, true, true},
    {"megatron-1008b", 128, 25600, 102400, 160, 160, 51200, 2048, kG, true, true},
    // Mixture-of-experts models (issue 19); their experts and attention in kMoePresets below.
    // Mixtral 8x7B (Jiang et al. 2024, "Mixtral of Experts", Table 1: dim 4096, 32 layers, 32 heads,
    // 8 KV heads, hidden_dim 14336, vocab 32000, context 32768).
    {"mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 32768, kS, false, false},
    // Mixtral 8x22B: 56 layers, hidden 6144, 48 heads, 8 KV heads, expert width 16384 (NVIDIA
    // Megatron-LM's Mixtral 8x22B configuration; Mistral publishes 141B total, 39B active, which
    // these reproduce), vocab 32000 (v0.1), context 65536 (Mistral's announcement).
    {"mixtral-8x22b", 56, 6144, 16384, 48, 8, 32000, 65536, kS, false, false},
    // DeepSeek-V3 (DeepSeek-AI 2024, arXiv 2412.19437, Sec. 4.2; deepseek-ai/DeepSeek-V3
    // inference/configs/config_671B.json): 61 layers, hidden 7168, 128 heads, the first 3 layers
    // dense with FFN 18432, vocab 129280, pre-training sequence 4096, untied output layer.
    {"deepseek-v3", 61, 7168, 18432, 128, 128, 129280, 4096, kS, false, false},
    // Qwen3-235B-A22B (Qwen Team 2025, arXiv 2505.09388, Table 2; the Megatron arguments of
    // THUDM/slime scripts/models/qwen3-235B-A22B.sh): 94 layers, hidden 4096, 64 query heads and 4
    // key-value heads of 128 (head_dim below: 64 x 128 = 8192 is wider than the hidden size), vocab
    // 151936, untied output; pre-training sequence 4096 (Sec. 3.2, stages 1-2). Its dense FFN
    // width 12288 is unused: every layer has experts.
    {"qwen3-235b-a22b", 94, 4096, 12288, 64, 4, 151936, 4096, kS, false, false},
}};

// The experts and latent attention of the mixture-of-experts presets.
struct MoeRow {
  const char* name;
  MoeSpec moe;
  MlaSpec mla;
};
const std::array<MoeRow, 4> kMoePresets = {{
    // Mixtral: 8 experts, top 2, every layer (Table 1).
    {"mixtral-8x7b", {8, 2, 14336, 0, 0, 0}, {}},
    {"mixtral-8x22b", {8, 2, 16384, 0, 0, 0}, {}},
    // DeepSeek-V3 Sec. 4.2: 256 routed experts + 1 shared, top 8, expert width 2048, every FFN but
    // the first three's; MLA with query latent 1536, key-value latent 512, 128 + 64 (rope) per head
    // for queries and keys, 128 for values. Dropless (no token dropping, Sec. 2.1.2).
    {"deepseek-v3", {256, 8, 2048, 1, 3, 0}, {1536, 512, 128, 64, 128}},
    // Qwen3-235B-A22B: 128 experts of width 1536, top 8, no shared expert, every layer (same sources).
    {"qwen3-235b-a22b", {128, 8, 1536, 0, 0, 0}, {}},
}};

}  // namespace

std::optional<ModelSpec> find_model_preset(std::string_view name) {
  for (const Row& r : kPresets) {
    if (name != r.name) continue;
    ModelSpec m;
    m.preset = r.name;
    m.layers = r.layers;
    m.hidden = r.hidden;
    m.ffn_hidden = r.ffn_hidden;
    m.heads = r.heads;
    m.kv_heads = r.kv_heads;
    m.vocab = r.vocab;
    m.seq_len = r.seq_len;
    m.ffn = r.ffn;
    m.tied_embeddings = r.tied_embeddings;
    m.learned_position_embedding = r.learned_position_embedding;
    for (const MoeRow& e : kMoePresets)
      if (name == e.name) {
        m.moe = e.moe;
        m.mla = e.mla;
      }
    if (name == "deepseek-v3") m.mtp_modules = 1;  // Sec. 4.2: "the MTP depth D is set to 1"
    if (name == "qwen3-235b-a22b") m.head_dim = 128;  // --kv-channels 128
    return m;
  }
  return std::nullopt;
}

std::vector<std::string> model_preset_names() {
  std::vector<std::string> names;
  for (const Row& r : kPresets) names.emplace_back(r.name);
  return names;
}

}  // namespace trainsim::model
