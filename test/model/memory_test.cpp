#include "model/memory.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "model/presets.hpp"
#include "model/transformer.hpp"

namespace trainsim::model {
namespace {

constexpr double kGB = 1e9;

// Relative comparison for byte counts computed along different paths.
void expect_rel(double actual, double expected, double rel = 1e-12) {
  EXPECT_NEAR(actual, expected, std::fabs(expected) * rel) << "actual " << actual << " expected " << expected;
}

TrainingSpec mixed_adam() {
  TrainingSpec t;
  t.precision = Precision::kBf16;
  t.optimizer = Optimizer::kAdam;
  // Korthikanti et al. account for Megatron-LM 2022's unfused attention (the 5as^2b term).
  t.flash_attention = false;
  return t;
}

// GPT-style model of Korthikanti et al. 2022 Table 3 (published_runs.yaml
// korthikanti22_{22B,175B,530B,1T}_*): s = 2048, V = 51200, ffn = 4h, MHA, GeLU, dropout.
ModelSpec gpt(int64_t layers, int64_t hidden, int64_t heads) {
  ModelSpec m;
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.vocab = 51200;
  m.seq_len = 2048;
  m.ffn = Ffn::kGelu;
  m.learned_position_embedding = true;
  return m;
}

// Llama 3.1 405B (published_runs.yaml llama3_405b_reliability_54day, Llama 3 paper Table 3).
ModelSpec llama3_405b() {
  ModelSpec m;
  m.layers = 126;
  m.hidden = 16384;
  m.ffn_hidden = 53248;
  m.heads = 128;
  m.kv_heads = 8;
  m.vocab = 128256;
  m.seq_len = 8192;
  m.ffn = Ffn::kSwiglu;
  return m;
}

// --- Model states: ZeRO paper (reference_formulas.zero_sc20) ---------------------------------

TEST(ModelStates, ZeroPaperFigure1SevenPointFiveBOn64) {
  // zero_sc20.figure1_example: Psi = 7.5B, Nd = 64, K = 12: 120 / 31.4 / 16.6 / 1.875 GB;
  // table1_computed_from_formulas_GB 7.5B_Nd64: 120.0 / 31.406 / 16.641 / 1.875.
  const TrainingSpec t = mixed_adam();
  expect_rel(model_states(7.5e9, t, 0, 64).total(), 120.0 * kGB);     // 16 Psi
  expect_rel(model_states(7.5e9, t, 1, 64).total(), 31.40625 * kGB);  // 4 Psi + 12 Psi / 64
  expect_rel(model_states(7.5e9, t, 2, 64).total(), 16.640625 * kGB); // 2 Psi + 14 Psi / 64
  expect_rel(model_states(7.5e9, t, 3, 64).total(), 1.875 * kGB);     // 16 Psi / 64
}

TEST(ModelStates, ZeroPaperTable1Rows) {
  // table1_computed_from_formulas_GB: 128B_Nd16 = 2048 / 608 / 368 / 128; 1000B_Nd1024 Pos = 4011.719.
  const TrainingSpec t = mixed_adam();
  expect_rel(model_states(128e9, t, 0, 16).total(), 2048 * kGB);
  expect_rel(model_states(128e9, t, 1, 16).total(), 608 * kGB);
  expect_rel(model_states(128e9, t, 2, 16).total(), 368 * kGB);
  expect_rel(model_states(128e9, t, 3, 16).total(), 128 * kGB);
  EXPECT_NEAR(model_states(1000e9, t, 1, 1024).total() / kGB, 4011.719, 1e-3);
}

TEST(ModelStates, SevenBMixedPrecisionAdamIs112GB) {
  // zero_sc20.model_states_mixed_precision_adam: 16 bytes per parameter -> 7e9 * 16 = 112 GB.
  const MemoryBreakdown mb = model_states(7e9, mixed_adam(), 0, 1);
  expect_rel(mb.weights, 14 * kGB);    // 2 bytes
  expect_rel(mb.gradients, 14 * kGB);  // 2 bytes
  expect_rel(mb.optimizer, 84 * kGB);  // 12 bytes
  expect_rel(mb.total(), 112 * kGB);
}

TEST(ModelStates, Fp32MainGradsAreMegatronsEighteenBytesPerParam) {
  // Megatron-LM docs/user-guide/features/dist_optimizer.md (@d98e8a6), "bf16 parameters, fp32
  // gradients": 18 bytes per parameter without the distributed optimizer, 6 + 12/d with it.
  TrainingSpec t = mixed_adam();
  t.fp32_main_grads = true;
  expect_rel(model_states(7e9, t, 0, 1).total(), 7e9 * 18);  // 2 + 4 + 12
  expect_rel(model_states(7e9, t, 1, 8).total(), 7e9 * (6 + 12.0 / 8));
  // ZeRO-2 shards them with the other gradients: 2 + (4 + 12) / 8.
  expect_rel(model_states(7e9, t, 2, 8).total(), 7e9 * (2 + 16.0 / 8));
}

TEST(ModelStates, Fp32SgdAndFp8Accounting) {
  TrainingSpec t = mixed_adam();
  t.precision = Precision::kFp32;
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).total(), 16);  // 4 weights + 4 grads + 8 Adam moments
  t.optimizer = Optimizer::kSgd;
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).total(), 8);   // no momentum, no master copy
  t.precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).total(), 8);   // 2 + 2 + 4 fp32 master
  t.optimizer = Optimizer::kAdam;
  t.precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).total(), 16);  // fp8 accounted like bf16
}

TEST(ModelStates, Bf16AdamMomentsKeepTheFp32Master) {
  // training.optimizer_state_precision: bf16: fp32 master 4 + two bf16 moments 2 + 2 = 8 bytes of
  // optimizer state (12 in fp32); with 16-bit weights and gradients 12 bytes per parameter.
  TrainingSpec t = mixed_adam();
  t.optimizer_state_precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).optimizer, 8);
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).total(), 12);
  t.precision = Precision::kFp32;  // fp32 training, bf16 moments: 4 + 4 + 2 + 2
  EXPECT_DOUBLE_EQ(state_bytes_per_param(t).total(), 12);
}

TEST(ModelStates, OffloadMovesOptimizerStatesOffTheGpu) {
  TrainingSpec t = mixed_adam();
  t.offload = Offload::kCpu;
  const MemoryBreakdown mb = model_states(7.5e9, t, 1, 64);
  EXPECT_EQ(mb.optimizer, 0);
  expect_rel(mb.offloaded_bytes, 12 * 7.5e9 / 64);
  EXPECT_EQ(mb.offload_to, Offload::kCpu);
  expect_rel(mb.total(), 4 * 7.5e9);
}

// --- Fewest GPUs for the weights (CONTRACT.md: 405B: 11 at bf16, 6 at int8 on 80 GB) ---------

TEST(MinGpusForWeights, FourHundredFiveB) {
  // 405e9 * 2 B = 810 GB: 810 / 80 = 10.1 -> 11; with a 10 GB reserve 810 / 70 = 11.6 -> 12.
  EXPECT_EQ(min_gpus_for_weights(405e9, 2, 80 * kGB, 0), 11);
  EXPECT_EQ(min_gpus_for_weights(405e9, 2, 80 * kGB, 10 * kGB), 12);
  // int8: 405 / 80 = 5.06 -> 6; 405 / 70 = 5.8 -> 6.
  EXPECT_EQ(min_gpus_for_weights(405e9, 1, 80 * kGB, 0), 6);
  EXPECT_EQ(min_gpus_for_weights(405e9, 1, 80 * kGB, 10 * kGB), 6);
  // The Llama 3 405B shape counts 405.9e9 parameters: same answers.
  const double p = count_params(llama3_405b()).total;
  EXPECT_EQ(min_gpus_for_weights(p, 2, 80 * kGB, 0), 11);
  EXPECT_EQ(min_gpus_for_weights(p, 2, 80 * kGB, 10 * kGB), 12);
  EXPECT_EQ(min_gpus_for_weights(p, 1, 80 * kGB, 10 * kGB), 6);
}

TEST(MinGpusForWeights, ExactFitAndNoRoom) {
  EXPECT_EQ(min_gpus_for_weights(400e9, 2, 80 * kGB, 0), 10);  // 800 GB on 80 GB GPUs exactly
  EXPECT_EQ(min_gpus_for_weights(1e9, 2, 10 * kGB, 10 * kGB), 0);
}

// --- Layer split ---------------------------------------------------------------------------

TEST(LayerSplit, FewerLayersAtTheEnds) {
  // Llama 3 405B: 126 layers on 16 stages = [7, 8 x 14, 7].
  std::vector<int64_t> expected(16, 8);
  expected.front() = 7;
  expected.back() = 7;
  EXPECT_EQ(stage_layer_counts(126, 16, 1), expected);
  EXPECT_EQ(chunk_layer_counts(10, 4), (std::vector<int64_t>{2, 3, 3, 2}));
  EXPECT_EQ(chunk_layer_counts(9, 4), (std::vector<int64_t>{2, 2, 3, 2}));  // first, last, second
  // Interleaved: 10 layers in 4 chunks [2, 3, 3, 2] on 2 ranks: rank 0 holds chunks 0, 2.
  EXPECT_EQ(stage_layer_counts(10, 2, 2), (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(stage_layer_counts(11, 2, 2), (std::vector<int64_t>{5, 6}));  // chunks [2, 3, 3, 3]
}

// --- Activations: Korthikanti et al. 2022 (reference_formulas.korthikanti22) ---------------

struct PaperConfig {
  const char* name;
  int64_t layers, hidden, heads;
};
// Table 3 (Sec. 4 dims): 22B, 175B, 530B, 1T; all with t = 8, s = 2048, b = 1.
const PaperConfig kPaper[] = {
    {"22B", 48, 6144, 64}, {"175B", 96, 12288, 96}, {"530B", 105, 20480, 128}, {"1T", 128, 25600, 160}};

ParallelSpec tp_par(int64_t t, bool sp, Recompute r) {
  ParallelSpec p;
  p.tp = t;
  p.sequence_parallel = sp;
  p.recompute = r;
  p.micro_batch = 1;
  return p;
}

TEST(Activations, KorthikantiPerLayerFormulas) {
  const TrainingSpec train = mixed_adam();
  for (const PaperConfig& c : kPaper) {
    SCOPED_TRACE(c.name);
    const ModelSpec m = gpt(c.layers, c.hidden, c.heads);
    const double s = 2048, b = 1, h = static_cast<double>(c.hidden), a = static_cast<double>(c.heads), t = 8;
    const double sbh = s * b * h;
    // Eq.1, no parallelism: sbh(34 + 5as/h).
    expect_rel(layer_activation_bytes(m, tp_par(1, false, Recompute::kNone), train), sbh * (34 + 5 * a * s / h));
    // Eq.2, tensor parallel: sbh(10 + 24/t + 5as/(ht)).
    expect_rel(layer_activation_bytes(m, tp_par(8, false, Recompute::kNone), train),
               sbh * (10 + 24 / t + 5 * a * s / (h * t)));
    // Eq.4, tensor + sequence parallel: sbh/t (34 + 5as/h).
    expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kNone), train), sbh / t * (34 + 5 * a * s / h));
    // Eq.6, selective recompute + SP: 34 sbh / t; without SP: sbh(10 + 24/t).
    expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kSelective), train), 34 * sbh / t);
    expect_rel(layer_activation_bytes(m, tp_par(8, false, Recompute::kSelective), train), sbh * (10 + 24 / t));
    // Full recompute: the layer input, 2sbh (2sbh/t with SP).
    expect_rel(layer_activation_bytes(m, tp_par(8, false, Recompute::kFull), train), 2 * sbh);
    expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kFull), train), 2 * sbh / t);
    // The rematerialized working set is the no-recompute layer.
    expect_rel(layer_full_activation_bytes(m, tp_par(8, true, Recompute::kFull), train), sbh / t * (34 + 5 * a * s / h));
  }
}

TEST(Activations, FlashAttentionKeepsNoScores) {
  // Flash attention stores only fp32 softmax statistics (4 bytes x a x s x b): the layer then
  // keeps what selective recompute keeps, 34sbh/t, plus that small term.
  TrainingSpec train = mixed_adam();
  train.flash_attention = true;
  const ModelSpec m = gpt(96, 12288, 96);
  const double s = 2048, h = 12288, a = 96, t = 8;
  expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kNone), train), 34 * s * h / t + 4 * a * s / t);
}

TEST(Activations, TwentyTwoBNumbers) {
  // 22B, t = 8, SP, b = 1: 2048 * 6144 / 8 * (34 + 5 * 64 * 2048 / 6144) = 221,249,536 B per layer;
  // selective: 34 * 2048 * 6144 / 8 = 53,477,376 B.
  const ModelSpec m = gpt(48, 6144, 64);
  EXPECT_NEAR(layer_activation_bytes(m, tp_par(8, true, Recompute::kNone), mixed_adam()), 221249536.0, 1.0);
  EXPECT_NEAR(layer_activation_bytes(m, tp_par(8, true, Recompute::kSelective), mixed_adam()), 53477376.0, 1e-3);
}

TEST(Activations, MicroBatchAndContextParallelScale) {
  const ModelSpec m = gpt(48, 6144, 64);
  ParallelSpec p = tp_par(8, true, Recompute::kNone);
  const double one = layer_activation_bytes(m, p, mixed_adam());
  p.micro_batch = 4;
  expect_rel(layer_activation_bytes(m, p, mixed_adam()), 4 * one);
  // CP = 2: s -> s/2; the sbh terms halve, the as^2b term quarters.
  p.micro_batch = 1;
  p.cp = 2;
  const double sbh = 1024.0 * 6144;
  expect_rel(layer_activation_bytes(m, p, mixed_adam()), sbh / 8 * (34 + 5.0 * 64 * 1024 / 6144));
}

TEST(Activations, GroupedQueryAttentionShrinksKandV) {
  // K and V are g h wide (g = kv_heads / heads): 4sbh -> 4g sbh, so 34 sbh -> (30 + 4g) sbh.
  ModelSpec m = gpt(48, 6144, 64);
  m.kv_heads = 8;  // g = 1/8
  const double s = 2048, h = 6144, a = 64, sbh = s * h;
  expect_rel(layer_activation_bytes(m, tp_par(1, false, Recompute::kNone), mixed_adam()),
             sbh * (30 + 4.0 / 8) + 5 * a * s * s);
}

TEST(Activations, SwigluLlamaLayer) {
  // Llama convention (no dropout): R = 8 sbh (norms 4, QKV input 2, MLP input 2); S = Q 2 + K,V 4g
  // + out-proj input 2 sbh + 3 tensors of 2 sbf (the fused gate+up output, 2 of them, and the
  // down projection's input); A = softmax output only, 2as^2b. Llama 3 405B: g = 8/128, f = 53248.
  const ModelSpec m = llama3_405b();
  const double s = 8192, h = 16384, f = 53248, a = 128, g = 8.0 / 128, sbh = s * h;
  const double expected = 8 * sbh + (4 + 4 * g) * sbh + 6 * s * f + 2 * a * s * s;
  expect_rel(layer_activation_bytes(m, tp_par(1, false, Recompute::kNone), mixed_adam()), expected);
  // t = 8 with SP and selective recompute: (R + S) / t.
  expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kSelective), mixed_adam()),
             (8 * sbh + (4 + 4 * g) * sbh + 6 * s * f) / 8);
}

TEST(Activations, Llama405bLayerUnderFlashAttentionIs533MB) {
  // Issue 14's figure, the tensors Megatron-Core + Transformer Engine keep for one Llama 3 405B
  // layer at s = 8192, b = 1, TP8 with SP and flash attention: norms' inputs and outputs 4 sbh,
  // Q + K + V + attention output (2 + 2g) sbh, MLP 3 sbf, all 2 bytes and divided by t = 8, plus
  // flash attention's fp32 logsumexp 4as/t: 533.2 MB.
  const ModelSpec m = llama3_405b();
  TrainingSpec t = mixed_adam();
  t.flash_attention = true;
  const double s = 8192, h = 16384, f = 53248, a = 128, g = 8.0 / 128;
  const double expected = (2 * (4 + 2 + 2 * g) * s * h + 2 * 3 * s * f + 4 * a * s) / 8;
  expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kNone), t), expected);
  EXPECT_NEAR(expected / 1e6, 533.2, 0.1);
  // Selective recompute drops only what flash attention never kept (the s x s scores): the
  // logsumexp, 0.5 MB of 533.
  EXPECT_NEAR(layer_activation_bytes(m, tp_par(8, true, Recompute::kSelective), t), expected - 4 * a * s / 8, 1);
}

TEST(Activations, Fp8KeepsTheGemmInputsInOneByte) {
  // Transformer Engine under fp8 keeps each Linear's input as its 1-byte fp8 cast (QKV, MLP-up,
  // MLP-down inputs); the attention output keeps its 16-bit copy for the fused attention and gains
  // the output projection's fp8 one. Llama 3 405B layer, s = 8192, TP8 + SP:
  //   (2*2 norms + 1 + 1) sbh + (2 + 2*2g + 2 + 1) sbh + (2*2 + 1) sbf, / t, + logsumexp 4as/t
  // = 27.5 sbh/t + 4as/t = 461.9 MB (bf16: 31.75 sbh/t + 4as/t, 533.2 MB).
  const ModelSpec m = llama3_405b();
  TrainingSpec t = mixed_adam();
  t.flash_attention = true;
  t.precision = Precision::kFp8;
  const double s = 8192, h = 16384, f = 53248, a = 128, g = 8.0 / 128;
  const double expected = ((4 + 1 + 1) * s * h + (2 + 4 * g + 3) * s * h + 5 * s * f + 4 * a * s) / 8;
  expect_rel(layer_activation_bytes(m, tp_par(8, true, Recompute::kNone), t), expected);
  EXPECT_NEAR(expected / 1e6, 461.9, 0.1);
}

TEST(StageMemory, Fp8KeepsTeWeightCopiesBesideTheBf16Weights) {
  // 2 bytes (fp8 weight + its transpose) per layer weight on top of the 2-byte bf16 weight, not for
  // the embedding, and not under ZeRO-3 (gathered per unit).
  const ModelSpec m = llama3_405b();
  ParallelSpec par;
  par.tp = 8;
  par.pp = 16;
  par.dp = 128;
  par.zero = 1;
  par.sequence_parallel = true;
  TrainingSpec t = mixed_adam();
  t.global_batch = 2048;
  const double bf16 = memory_per_stage(m, par, t)[0].weights;
  t.precision = Precision::kFp8;
  const ParamCounts pc = count_params(m);
  expect_rel(memory_per_stage(m, par, t)[0].weights, bf16 + 2 * 7 * (pc.attention + pc.mlp) / 8);
  par.zero = 3;
  const double z3_bf16 = memory_per_stage(m, par, mixed_adam())[0].weights;
  expect_rel(memory_per_stage(m, par, t)[0].weights, z3_bf16);
}

// Hybrid sharding (ParallelSpec::shard_degree): the ZeRO states shard over the shard group, not
// over all of dp x cp. InternLM's 7B-class run on 1,024 GPUs (TP1, zero1 = 8): Adam's 12 bytes a
// parameter (fp32 master and moments) over 8 ranks, not over 1,024; the 2-byte weights and
// gradients whole (ZeRO-1). ZeRO-3 over groups of 8 holds an eighth of the weights.
TEST(StageMemory, HybridShardingShardsOverTheShardGroup) {
  const ModelSpec m = gpt(32, 4096, 32);
  ParallelSpec par;
  par.dp = 1024;
  par.zero = 1;
  TrainingSpec t = mixed_adam();
  t.global_batch = 1024;
  const MemoryBreakdown full = memory_per_stage(m, par, t)[0];
  par.shard_degree = 8;
  const MemoryBreakdown hybrid = memory_per_stage(m, par, t)[0];
  expect_rel(full.optimizer, full.params * 12 / 1024);
  expect_rel(hybrid.optimizer, hybrid.params * 12 / 8);
  expect_rel(hybrid.weights, full.weights);
  expect_rel(hybrid.gradients, full.gradients);
  par.zero = 3;
  expect_rel(memory_per_stage(m, par, t)[0].weights, full.params * 2 / 8);
}

TEST(Activations, NoDropoutNoMasks) {
  // model.dropout false on a gelu model (Nemotron-4: "dropout rate of zero"): Korthikanti's
  // 34 sbh + 5as^2b loses the two 1-byte masks of R (2 sbh) and the softmax-dropout mask and output
  // of A (3as^2b): 32 sbh + 2as^2b, unfused attention, no TP.
  TrainingSpec t = mixed_adam();
  ModelSpec m = gpt(48, 6144, 64);
  m.dropout = false;
  const double s = 2048, h = 6144, a = 64, sbh = s * h;
  expect_rel(layer_activation_bytes(m, tp_par(1, false, Recompute::kNone), t), 32 * sbh + 2 * a * s * s);
}

TEST(Activations, Fp32DoublesTheValuesNotTheMasks) {
  // e = 4: R = 16 sbh + 2 masks, S = 16 + 32 = 48 sbh (f = 4h), A = (4 + 1 + 4) as^2b.
  TrainingSpec t = mixed_adam();
  t.precision = Precision::kFp32;
  const ModelSpec m = gpt(48, 6144, 64);
  const double s = 2048, h = 6144, a = 64, sbh = s * h;
  expect_rel(layer_activation_bytes(m, tp_par(1, false, Recompute::kNone), t), sbh * (18 + 48) + 9 * a * s * s);
}

// --- Pipeline: in-flight micro-batches and the first stage (Eq.5) ---------------------------

TEST(InFlight, SchedulesHoldWhatTheyShould) {
  EXPECT_EQ(in_flight_micro_batches(Schedule::k1F1B, 0, 8, 64, 1), 8);
  EXPECT_EQ(in_flight_micro_batches(Schedule::k1F1B, 7, 8, 64, 1), 1);
  EXPECT_EQ(in_flight_micro_batches(Schedule::k1F1B, 0, 8, 4, 1), 4);  // fewer micro-batches than stages
  EXPECT_EQ(in_flight_micro_batches(Schedule::kGpipe, 3, 8, 64, 1), 64);
  // Interleaved, rank 0: 2(p-1) + (v-1)p + 1 = 14 + 8 + 1 = 23 chunk-micro-batches for p = 8, v = 2.
  EXPECT_EQ(in_flight_micro_batches(Schedule::kInterleaved, 0, 8, 64, 2), 23);
  EXPECT_EQ(in_flight_micro_batches(Schedule::kInterleaved, 7, 8, 64, 2), 9);
  // As many micro-batches as stages: Megatron runs every forward first (m v = 16 on every rank);
  // torch.distributed.pipelining keeps the warm-up, capped at m v: rank 0 min(14 + 8 + 1, 16) = 16,
  // rank 7 0 + 8 + 1 = 9.
  EXPECT_EQ(in_flight_micro_batches(Schedule::kInterleaved, 7, 8, 8, 2), 16);
  EXPECT_EQ(in_flight_micro_batches(Schedule::kInterleaved, 0, 8, 8, 2, true), 16);
  EXPECT_EQ(in_flight_micro_batches(Schedule::kInterleaved, 7, 8, 8, 2, true), 9);
}

struct StageFixture {
  ModelSpec model = gpt(96, 12288, 96);  // 175B
  ParallelSpec par;
  TrainingSpec train = mixed_adam();
  StageFixture() {
    par.tp = 8;
    par.pp = 8;
    par.dp = 1;
    par.micro_batch = 1;
    par.sequence_parallel = true;
    train.global_batch = 64;  // m = 64
  }
};

TEST(StageMemory, FirstStageHoldsLLayersOneF1B) {
  // Eq.5: the first stage holds p micro-batches of L/p layers = L layers' worth,
  // s b h L / t (34 + 5as/h), plus the embedding dropout masks p sbh / t (extra_terms).
  StageFixture f;
  const std::vector<MemoryBreakdown> stages = memory_per_stage(f.model, f.par, f.train);
  ASSERT_EQ(stages.size(), 8u);
  const double s = 2048, h = 12288, a = 96, t = 8, L = 96, p = 8, sbh = s * h;
  expect_rel(stages[0].activations, sbh * L / t * (34 + 5 * a * s / h) + p * sbh / t);
  EXPECT_EQ(stages[0].layers, 12);
  EXPECT_EQ(stages[0].in_flight_micro_batches, 8);
  // Last stage: one micro-batch of 12 layers + final-norm/output inputs 4sbh/t + fp32 logits 4sbv/t.
  expect_rel(stages[7].activations, 12 * sbh / t * (34 + 5 * a * s / h) + 4 * sbh / t + 4 * s * 51200 / t);
}

TEST(StageMemory, InterleavedCorrection) {
  // Korthikanti interleaved correction: first stage holds L (1 + (p-1)/(p v)) layers' worth.
  StageFixture f;
  f.par.schedule = Schedule::kInterleaved;
  f.par.virtual_stages = 2;
  const MemoryBreakdown first = memory_per_stage(f.model, f.par, f.train)[0];
  const double s = 2048, h = 12288, a = 96, t = 8, L = 96, p = 8, v = 2, sbh = s * h;
  const double layers_worth = L * (1 + (p - 1) / (p * v));  // 138
  expect_rel(first.activations, layers_worth * sbh / t * (34 + 5 * a * s / h) + (23.0 / 2) * sbh / t);
}

TEST(StageMemory, DeferredReductionKeepsUnshardedAccumulators) {
  // torch.distributed.pipelining + FSDP2: every parameter of the rank keeps an unsharded fp32
  // gradient accumulator until the last backward (grad_reduce_fp32: 4 bytes per parameter).
  // 1F1B: all of it coincides with the activation peak.
  StageFixture f;
  f.par.dp = 8;
  f.par.zero = 2;
  f.train.grad_reduce_fp32 = true;
  const std::vector<MemoryBreakdown> plain = memory_per_stage(f.model, f.par, f.train);
  f.par.defer_grad_reduce = true;
  const std::vector<MemoryBreakdown> deferred = memory_per_stage(f.model, f.par, f.train);
  for (size_t r = 0; r < plain.size(); ++r) {
    expect_rel(deferred[r].gradients - plain[r].gradients, 4 * plain[r].params);
    expect_rel(deferred[r].weights, plain[r].weights);  // ZeRO-2 weights are unsharded already
    expect_rel(deferred[r].activations, plain[r].activations);
  }
  // Interleaved, v = 2: the second chunk's accumulator appears once the first chunk run backward
  // has freed half the held activations A: max(G / 2, G - A / 2) with G = 4 x params.
  f.par.schedule = Schedule::kInterleaved;
  f.par.virtual_stages = 2;
  const MemoryBreakdown v2 = memory_per_stage(f.model, f.par, f.train)[0];
  f.par.defer_grad_reduce = false;
  const MemoryBreakdown v2_plain = memory_per_stage(f.model, f.par, f.train)[0];
  const double g = 4 * v2.params, a = v2.activations;
  expect_rel(v2.gradients - v2_plain.gradients, std::max(g / 2, g - a / 2));
  // ZeRO-3: the parameters stay unsharded too (reshard_after_backward off).
  f.par.schedule = Schedule::k1F1B;
  f.par.virtual_stages = 1;
  f.par.zero = 3;
  const MemoryBreakdown z3 = memory_per_stage(f.model, f.par, f.train)[0];
  f.par.defer_grad_reduce = true;
  const MemoryBreakdown z3_deferred = memory_per_stage(f.model, f.par, f.train)[0];
  expect_rel(z3.weights, 2 * z3.params / 8);
  expect_rel(z3_deferred.weights, 2 * z3.params);
  // One micro-batch per step: nothing to accumulate.
  f.train.global_batch = 8;
  f.par.zero = 2;
  const MemoryBreakdown one = memory_per_stage(f.model, f.par, f.train)[0];
  f.par.defer_grad_reduce = false;
  expect_rel(one.gradients, memory_per_stage(f.model, f.par, f.train)[0].gradients);
}

TEST(StageMemory, TorchPipeliningKeepsBuffersAndOutputsPerMicroBatch) {
  // torch.distributed.pipelining (ParallelSpec::pp_microbatch_buffers), 175B, t = 8 with SP, p = 8,
  // m = 64, 1F1B: the stage boundary is B = 2 s h / t bytes (16-bit hidden states, split over t).
  // At a rank's last forward it holds min(p - r, m) micro-batches and has run the backward of the
  // other m - min(p - r, m). Every stage but the first keeps an activation receive buffer per
  // micro-batch beyond the held ones (those are the first layer's kept input) and the gradient of
  // every input whose backward is done; every stage but the last a gradient receive buffer and
  // the output of every micro-batch (torch 2.6.0 stage.py: output_chunks on every stage); the last
  // stage every micro-batch's 16-bit logits 2 s V / t, the current one's already in its loss.
  StageFixture f;
  const double s = 2048, h = 12288, t = 8, v = 51200, m = 64, b = 2 * s * h / t;
  const std::vector<MemoryBreakdown> plain = memory_per_stage(f.model, f.par, f.train);
  f.par.pp_microbatch_buffers = true;
  const std::vector<MemoryBreakdown> torch = memory_per_stage(f.model, f.par, f.train);
  expect_rel(torch[0].buffer_bytes - plain[0].buffer_bytes, m * b);
  expect_rel(torch[0].activations - plain[0].activations, m * b);
  expect_rel(torch[3].buffer_bytes - plain[3].buffer_bytes, 2 * (m - 5) * b + m * b);
  expect_rel(torch[3].activations - plain[3].activations, m * b);
  expect_rel(torch[7].buffer_bytes - plain[7].buffer_bytes, 2 * (m - 1) * b);
  expect_rel(torch[7].activations - plain[7].activations, (m - 1) * 2 * s * v / t);
  // Interleaved, v = 2: rank 0 runs model stages 0 and 8; it holds 2(p - 1) + p + 1 = 23
  // chunk-micro-batches (Megatron's warm-up), so 11.5 a chunk on average, and has run 52.5
  // backwards a chunk; stage 8 receives, stage 0 does not.
  f.par.schedule = Schedule::kInterleaved;
  f.par.virtual_stages = 2;
  const MemoryBreakdown v2 = memory_per_stage(f.model, f.par, f.train)[0];
  f.par.pp_microbatch_buffers = false;
  const MemoryBreakdown v2_plain = memory_per_stage(f.model, f.par, f.train)[0];
  const double held = 2 * v2.in_flight_micro_batches;
  EXPECT_DOUBLE_EQ(held, 23);
  expect_rel(v2.buffer_bytes - v2_plain.buffer_bytes, m * b + 2 * (m - held / 2) * b + m * b);
  expect_rel(v2.activations - v2_plain.activations, 2 * m * b);
  // Without pipeline parallelism there is no stage to buffer for.
  f.par.schedule = Schedule::k1F1B;
  f.par.virtual_stages = 1;
  f.par.pp = 1;
  f.par.dp = 8;
  const MemoryBreakdown one = memory_per_stage(f.model, f.par, f.train)[0];
  f.par.pp_microbatch_buffers = true;
  expect_rel(memory_per_stage(f.model, f.par, f.train)[0].total(), one.total());
}

TEST(StageMemory, TorchLossUnderTensorParallelHoldsSixteenBytesPerLogit) {
  // Last stage, one micro-batch: fp32 logits 4sbv/t fused; torch's F.cross_entropy 12 B per logit;
  // with the vocabulary sharded over TP, DTensor's loss_parallel decomposition 16 B per logit.
  StageFixture f;
  const double s = 2048, t = 8, v = 51200;
  const double fused = memory_per_stage(f.model, f.par, f.train)[7].activations;
  f.train.cross_entropy = CrossEntropy::kTorch;
  expect_rel(memory_per_stage(f.model, f.par, f.train)[7].activations - fused, 16 * s * v / t - 4 * s * v / t);
  f.par.tp = 1;
  f.par.dp = 8;
  f.par.sequence_parallel = false;
  const double tp1_torch = memory_per_stage(f.model, f.par, f.train)[7].activations;
  f.train.cross_entropy = CrossEntropy::kFused;
  expect_rel(tp1_torch - memory_per_stage(f.model, f.par, f.train)[7].activations, 8 * s * v);
}

TEST(StageMemory, ChunkedLossHoldsOneChunkOfLogitsAndTheTwoGradients) {
  // Liger's fused linear cross-entropy (v0.8.0) on Llama 3 8B shapes, one GPU, micro-batch 1:
  // chunk = next_pow2(ceil(tokens / ceil(v / h))) = next_pow2(ceil(tokens / 32)); the loss holds
  // grad_input 2 x tokens x h, one chunk's bf16 logits 2 x chunk x v and the weight gradient with its
  // fp32 cast (2 + 6) x v x h, in place of the fused loss's 4 x tokens x v.
  StageFixture f;
  f.model.hidden = 4096;
  f.model.heads = 32;
  f.model.kv_heads = 8;
  f.model.ffn = Ffn::kSwiglu;
  f.model.ffn_hidden = 14336;
  f.model.vocab = 128256;
  f.model.layers = 32;
  f.model.tied_embeddings = false;
  f.par.tp = 1;
  f.par.pp = 1;
  f.par.dp = 8;
  f.par.sequence_parallel = false;
  const double h = 4096, v = 128256;
  for (const double s : {8192.0, 262144.0}) {
    f.model.seq_len = static_cast<int64_t>(s);
    f.train.cross_entropy = CrossEntropy::kFused;
    const double fused = memory_per_stage(f.model, f.par, f.train)[0].activations;
    f.train.cross_entropy = CrossEntropy::kChunked;
    const double chunked = memory_per_stage(f.model, f.par, f.train)[0].activations;
    const double chunk = s == 8192 ? 256 : 8192;  // 8192 / 32 = 256; 262144 / 32 = 8192
    // At 256K tokens the fused loss's 134.5 GB of fp32 logits become 8.5 GB.
    expect_rel(chunked - fused, 2 * s * h + 2 * chunk * v + 8 * v * h - 4 * s * v);
  }
}

TEST(StageMemory, RecomputeNumLayersKeepsTheOtherLayersWhole) {
  // 12 layers per stage, first 4 recomputed: 8 micro-batches x (4 x 2sbh/t + 8 x the whole layer
  // sbh/t (34 + 5as/h)) + one layer's working set + embedding masks 8 sbh/t.
  StageFixture f;
  f.par.recompute = Recompute::kFull;
  f.par.recompute_num_layers = 4;
  const MemoryBreakdown first = memory_per_stage(f.model, f.par, f.train)[0];
  const double s = 2048, h = 12288, a = 96, t = 8, sbh = s * h;
  const double whole = sbh / t * (34 + 5 * a * s / h);
  expect_rel(first.activations, 8 * (4 * 2 * sbh / t + 8 * whole) + whole + 8 * sbh / t);
  EXPECT_EQ(first.recomputed_layers, 4);
  // None recomputed: no working set, the same as recompute none.
  f.par.recompute_num_layers = 0;
  const double zero = memory_per_stage(f.model, f.par, f.train)[0].activations;
  f.par.recompute = Recompute::kNone;
  f.par.recompute_num_layers = -1;
  expect_rel(zero, memory_per_stage(f.model, f.par, f.train)[0].activations);
}

TEST(StageMemory, ActivationOffloadLeavesTwoLayersOnTheGpu) {
  // pp = 1, 96 layers, one micro-batch in flight: the first 40 layers' activations go to the host,
  // the GPU keeps the other 56 and a double buffer of two layers.
  StageFixture f;
  f.par.pp = 1;
  f.par.dp = 8;
  const MemoryBreakdown plain = memory_per_stage(f.model, f.par, f.train)[0];
  f.par.activation_offload_layers = 40;
  const MemoryBreakdown off = memory_per_stage(f.model, f.par, f.train)[0];
  const double s = 2048, h = 12288, a = 96, t = 8, sbh = s * h;
  const double layer = sbh / t * (34 + 5 * a * s / h);
  expect_rel(off.layer_activation_bytes, layer);
  expect_rel(off.offloaded_activation_bytes, 40 * layer);
  expect_rel(plain.activations - off.activations, 38 * layer);
}

TEST(StageMemory, GatheredSequenceParallelInputsStayWhole) {
  // DTensor's ColwiseParallel keeps the all-gathered QKV and MLP-up inputs (2 x 2 sbh per layer,
  // 16-bit) and the output layer's input (2 sbh) whole instead of split over t = 8: per layer
  // 4 sbh (1 - 1/t) more; the last stage's output layer 2 sbh (1 - 1/t) more.
  StageFixture f;
  const std::vector<MemoryBreakdown> megatron = memory_per_stage(f.model, f.par, f.train);
  f.par.sp_save_gathered = true;
  const std::vector<MemoryBreakdown> dtensor = memory_per_stage(f.model, f.par, f.train);
  const double s = 2048, h = 12288, t = 8, sbh = s * h;
  expect_rel(dtensor[0].layer_activation_bytes - megatron[0].layer_activation_bytes, 4 * sbh * (1 - 1 / t));
  // Last stage: one micro-batch of 12 layers.
  expect_rel(dtensor[7].activations - megatron[7].activations, 12 * 4 * sbh * (1 - 1 / t) + 2 * sbh * (1 - 1 / t));
  // Without sequence parallelism nothing was split to begin with.
  f.par.sequence_parallel = false;
  const double no_sp = memory_per_stage(f.model, f.par, f.train)[0].activations;
  f.par.sp_save_gathered = false;
  expect_rel(no_sp, memory_per_stage(f.model, f.par, f.train)[0].activations);
}

TEST(StageMemory, PerOpPolicyWithoutAttentionOnItsListRecomputesIt) {
  // torchtitan's per-op policy keeps per layer the outputs of wq, wv, w1, w2, the fused attention's
  // output (2 s b h bytes) and its fp32 logsumexp (4 a s b); where the run's SDPA kernel is not on
  // its save list (cuDNN attention on Blackwell before torchtitan b39377f) the last two are
  // recomputed: per layer (2 sbh + 4 asb) / t less, here 175B at s = 2048, TP8 with SP.
  StageFixture f;
  f.par.recompute = Recompute::kSelectiveOp;
  f.train.flash_attention = true;
  const std::vector<MemoryBreakdown> kept = memory_per_stage(f.model, f.par, f.train);
  f.par.sac_saves_attention = false;
  const std::vector<MemoryBreakdown> recomputed = memory_per_stage(f.model, f.par, f.train);
  const double s = 2048, h = 12288, a = 96, t = 8;
  expect_rel(kept[0].layer_activation_bytes - recomputed[0].layer_activation_bytes, (2 * s * h + 4 * a * s) / t);
  // Other recompute settings do not look at it.
  f.par.recompute = Recompute::kFull;
  const double full = memory_per_stage(f.model, f.par, f.train)[0].activations;
  f.par.sac_saves_attention = true;
  expect_rel(full, memory_per_stage(f.model, f.par, f.train)[0].activations);
}

TEST(StageMemory, GpipeHoldsAllMicroBatches) {
  StageFixture f;
  f.par.schedule = Schedule::kGpipe;
  const MemoryBreakdown first = memory_per_stage(f.model, f.par, f.train)[0];
  const double s = 2048, h = 12288, a = 96, t = 8, sbh = s * h;
  expect_rel(first.activations, 64 * 12 * sbh / t * (34 + 5 * a * s / h) + 64 * sbh / t);
}

TEST(StageMemory, FullRecomputeAddsOneLayerWorkingSet) {
  StageFixture f;
  f.par.recompute = Recompute::kFull;
  const MemoryBreakdown first = memory_per_stage(f.model, f.par, f.train)[0];
  const double s = 2048, h = 12288, a = 96, t = 8, sbh = s * h;
  // 8 micro-batches x 12 layers x 2sbh/t + one full layer + embedding masks 8 sbh/t.
  expect_rel(first.activations, 96 * 2 * sbh / t + sbh / t * (34 + 5 * a * s / h) + 8 * sbh / t);
}

TEST(StageMemory, Appendix530BFirstStageLooseCheck) {
  // korthikanti22_530B_full_recompute: t = 8, p = 35, b = 1, no SP, interleaved with 3 chunks,
  // global batch 280. App. B (appendixB_530B_p35, read from Fig. 9, approximate): first-stage
  // activations ~13 GB (without output-tensor deallocation). Ours: 139 chunk-micro-batches x 1
  // layer x 2sbh (11.7 GB) + one layer's working set sbh(13 + 5as/(ht)) (0.9 GB) + embedding
  // dropout masks 46.3 x sbh (1.9 GB) = 14.5 GB: within 20% of the figure.
  const ModelSpec m = gpt(105, 20480, 128);
  ParallelSpec par;
  par.tp = 8;
  par.pp = 35;
  par.micro_batch = 1;
  par.schedule = Schedule::kInterleaved;
  par.virtual_stages = 3;
  par.recompute = Recompute::kFull;
  TrainingSpec t = mixed_adam();
  t.global_batch = 280;
  const MemoryBreakdown first = memory_per_stage(m, par, t)[0];
  EXPECT_NEAR(first.activations / kGB, 13.0, 0.2 * 13.0);
}

// --- Parameters per stage and the busiest GPU ----------------------------------------------

TEST(StageMemory, ParamsPerStageEmbeddingAndOutput) {
  const ModelSpec m = llama3_405b();
  ParallelSpec par;
  par.tp = 8;
  par.pp = 16;
  par.dp = 128;
  par.zero = 1;
  par.sequence_parallel = true;
  TrainingSpec t = mixed_adam();
  t.global_batch = 2048;
  const ParamCounts pc = count_params(m);
  const std::vector<MemoryBreakdown> stages = memory_per_stage(m, par, t);
  const double layer = (pc.attention + pc.mlp) / 8 + pc.norms;
  expect_rel(stages[0].params, 7 * layer + pc.embedding / 8);
  expect_rel(stages[1].params, 8 * layer);
  expect_rel(stages[15].params, 7 * layer + pc.output / 8 + pc.final_norm);
  // ZeRO-1 over dp = 128: 2 + 2 bytes resident, 12 / 128 sharded.
  expect_rel(stages[1].weights, 2 * 8 * layer);
  expect_rel(stages[1].optimizer, 12 * 8 * layer / 128);
}

TEST(StageMemory, ExplicitLayersPerStageAreTheOnesHeld) {
  // parallelism.layers_per_stage [6, 8 x 15] instead of the even [7, 8 x 14, 7]: stage 0 holds 6
  // layers' parameters and activations, the last stage 8 plus the output layer.
  const ModelSpec m = llama3_405b();
  ParallelSpec par;
  par.tp = 8;
  par.pp = 16;
  par.dp = 128;
  par.zero = 1;
  par.sequence_parallel = true;
  par.layers_per_chunk = std::vector<int64_t>(16, 8);
  par.layers_per_chunk[0] = 6;
  TrainingSpec t = mixed_adam();
  t.global_batch = 2048;
  EXPECT_EQ(chunk_layers(m, par), par.layers_per_chunk);
  const ParamCounts pc = count_params(m);
  const std::vector<MemoryBreakdown> stages = memory_per_stage(m, par, t);
  const double layer = (pc.attention + pc.mlp) / 8 + pc.norms;
  EXPECT_EQ(stages[0].layers, 6);
  EXPECT_EQ(stages[15].layers, 8);
  expect_rel(stages[0].params, 6 * layer + pc.embedding / 8);
  expect_rel(stages[15].params, 8 * layer + pc.output / 8 + pc.final_norm);
  // 1F1B: stage 0 holds p = 16 micro-batches of its 6 layers (+ embedding masks: none for Llama).
  expect_rel(stages[0].activations, 16 * 6 * layer_activation_bytes(m, par, t));
  // Without an explicit layout: the even split.
  par.layers_per_chunk.clear();
  EXPECT_EQ(chunk_layers(m, par).front(), 7);
  EXPECT_EQ(stage_layers(m, par).back(), 7);
}

TEST(StageMemory, TiedEmbeddingCopyOnLastStage) {
  ModelSpec m = gpt(24, 2304, 24);
  m.tied_embeddings = true;
  ParallelSpec par;
  par.pp = 2;
  TrainingSpec t = mixed_adam();
  const ParamCounts pc = count_params(m);
  const std::vector<MemoryBreakdown> stages = memory_per_stage(m, par, t);
  expect_rel(stages[1].params, 12 * pc.per_layer + pc.embedding + pc.final_norm);
  par.pp = 1;
  expect_rel(memory_per_gpu(m, par, t).params, pc.total);  // one shared copy
}

TEST(StageMemory, ZeroShardsOverDpTimesCp) {
  ModelSpec m = gpt(36, 4096, 32);  // megatron_sc21_t1_7.5B shape
  ParallelSpec par;
  par.dp = 4;
  par.cp = 2;
  par.zero = 3;
  TrainingSpec t = mixed_adam();
  t.global_batch = 8;
  const double psi = count_params(m).total;
  const MemoryBreakdown mb = memory_per_gpu(m, par, t);
  expect_rel(mb.model_states(), 16 * psi / 8);
}

TEST(StageMemory, ReserveAndBuffersAreOther) {
  ModelSpec m = gpt(36, 4096, 32);
  ParallelSpec par;
  par.dp = 8;
  par.zero = 3;
  TrainingSpec t = mixed_adam();
  t.global_batch = 8;
  t.runtime_reserve_bytes = 10 * kGB;
  const ParamCounts pc = count_params(m);
  const MemoryBreakdown mb = memory_per_gpu(m, par, t);
  // ZeRO-3: two 16-bit copies of the largest unit (embedding + positions here) + its 16-bit grads.
  const double unit = std::max(pc.per_layer, pc.embedding + pc.position);
  expect_rel(mb.buffer_bytes, unit * (2 * 2 + 2));
  expect_rel(mb.other, 10 * kGB + mb.buffer_bytes);
}

TEST(LargestMicroBatch, FindsTheBoundary) {
  StageFixture f;
  f.train.runtime_reserve_bytes = 10 * kGB;
  ParallelSpec p2 = f.par;
  p2.micro_batch = 2;
  ParallelSpec p4 = f.par;
  p4.micro_batch = 4;
  const double at2 = memory_per_gpu(f.model, p2, f.train).total();
  const double at4 = memory_per_gpu(f.model, p4, f.train).total();
  ASSERT_LT(at2, at4);
  // Per-replica batch 64: divisors 1, 2, 4, ...; a capacity just above b = 2 gives 2.
  EXPECT_EQ(largest_micro_batch(f.model, f.par, f.train, at2 + 1), 2);
  EXPECT_EQ(largest_micro_batch(f.model, f.par, f.train, at4), 4);
  EXPECT_EQ(largest_micro_batch(f.model, f.par, f.train, 1 * kGB), 0);
}

}  // namespace
}  // namespace trainsim::model

namespace trainsim::model {
namespace {

// Context parallelism's all-gather exchange holds one layer's whole-sequence K and V, their
// gradients and a reordered copy of dK (Transformer Engine AttnFuncWithCPAndKVAllGather.backward):
// 2.5 x the gathered K and V among the communication buffers; ring attention (p2p) holds no such
// buffer. Llama 3 405B at 128K, TP8 CP16: one KV head of 128 per TP rank, K and V together
// 131072 x 256 x 2 B = 64 MiB, so 160 MiB.
TEST(Buffers, AllGatherContextParallelismHoldsTheGatheredKeysAndValues) {
  ModelSpec m = llama3_405b();
  m.seq_len = 131072;
  ParallelSpec par;
  par.tp = 8;
  par.cp = 16;
  par.pp = 16;
  par.dp = 8;
  par.sequence_parallel = true;
  TrainingSpec t;
  t.global_batch = 128;
  const double ring = memory_per_gpu(m, par, t).buffer_bytes;
  par.cp_comm = CpComm::kAllGather;
  expect_rel(memory_per_gpu(m, par, t).buffer_bytes - ring, 2.5 * 131072.0 * 256 * 2);
}

// Ulysses (cp_comm_type a2a) holds a layer's head-split Q, K and V beside their sequence-split
// inputs while it exchanges them: Llama 2 7B (MHA) at 64K over cp 8, a rank's 8192 tokens x 3 x 4096
// x 2 B = 192 MiB more than ring attention.
TEST(Buffers, UlyssesHoldsTheExchangedQueriesKeysAndValues) {
  ModelSpec m = *find_model_preset("llama2-7b");
  m.seq_len = 65536;
  ParallelSpec par;
  par.cp = 8;
  TrainingSpec t;
  t.global_batch = 8;
  const double ring = memory_per_gpu(m, par, t).buffer_bytes;
  par.cp_comm = CpComm::kAllToAll;
  expect_rel(memory_per_gpu(m, par, t).buffer_bytes - ring, 8192.0 * 3 * 4096 * 2);
}

}  // namespace
}  // namespace trainsim::model
