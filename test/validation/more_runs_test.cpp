// Loading more_runs.yaml (rules: more_runs.hpp). Parse checks only: prediction accuracy on these
// rows is checked elsewhere.
#include "more_runs.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <map>

namespace trainsim::validation {
namespace {

const std::string kMorePath = std::string(TRAINSIM_SOURCE_DIR) + "/test/validation/more_runs.yaml";

const MoreRun* find(const std::vector<MoreRun>& runs, const std::string& id) {
  for (const MoreRun& r : runs)
    if (r.run.id == id) return &r;
  return nullptr;
}

TEST(MoreRuns, LoadsTheUsableRowsAndSaysWhyTheOthersAreNot) {
  std::vector<std::string> skipped;
  const std::vector<MoreRun> runs = load_more_runs(kMorePath, &skipped);
  std::map<std::string, std::pair<int, int>> by_family;  // used, of which unverified
  for (const MoreRun& r : runs) {
    ++by_family[r.source_family].first;
    if (r.unverified) ++by_family[r.source_family].second;
  }
  std::printf("%-52s %-18s %4s %3s %4s %3s %3s %5s %4s %-4s %-4s %4s %8s\n", "id", "family", "tp", "pp", "dp", "cp", "mb", "gb",
              "zero", "rc", "sch", "prec", "TF/GPU");
  for (const MoreRun& m : runs) {
    const PublishedRun& r = m.run;
    const char* rc = r.par.recompute == model::Recompute::kFull ? "full" : r.par.recompute == model::Recompute::kSelective ? "sel" : "none";
    const std::string sch = r.par.schedule == model::Schedule::kInterleaved ? "i" + std::to_string(r.par.virtual_stages) : "1f1b";
    std::printf("%-52s %-18s %4lld %3lld %4lld %3lld %3lld %5lld %4d %-4s %-4s %4s %8.1f\n", r.id.c_str(), m.source_family.c_str(),
                static_cast<long long>(r.par.tp), static_cast<long long>(r.par.pp), static_cast<long long>(r.par.dp),
                static_cast<long long>(r.par.cp), static_cast<long long>(r.par.micro_batch),
                static_cast<long long>(r.train.global_batch), r.par.zero, rc, sch.c_str(), model::to_string(r.train.precision),
                r.measured_tflops);
  }
  for (const auto& [fam, c] : by_family) std::printf("used %-20s %3d (unverified %d)\n", fam.c_str(), c.first, c.second);
  for (const std::string& s : skipped) std::printf("skipped %s\n", s.c_str());
  std::printf("used %zu, skipped %zu\n", runs.size(), skipped.size());
  EXPECT_EQ(runs.size() + skipped.size(), 233u);
  // 233 rows (19 of them FlagPerf's Megatron cases, 22 InternLM's, 8 IBM's FSDP blog and fms-fsdp
  // README, 18 llm-foundry's 2024 large-scale H100 table, 14 ml-engineering's H200 / B200 DeepSpeed
  // benchmark, 14 XTuner's speed benchmark, 43 the Zero Bubble paper's 1F1B and interleaved 1F1B
  // baselines: 24 from its Table 4, 10 at twice the micro-batch from Table 11 and 9 with no more
  // micro-batches than stages from Table 12): torchtitan's 13 Grand Teton H100 rows (no catalog
  // GPU), nanotron's 23 multi-node rows (AWS EFA, its collectives measured at half the bandwidth of
  // the sweep trainsim's efa transport is built on: no setting stands for that cluster as it ran;
  // the 80B one at 64 nodes would also put TP16 across nodes), 5 OLMo-core (GPU count not printed),
  // 7 FP8-LM (batch not printed), 2 Megatron strong-scaling (tp/pp not printed) and XTuner's two
  // Llama 2 70B rows at sp 16 and 64 (8 key-value heads: its a2a repeats them first) are skipped.
  EXPECT_EQ(runs.size(), 181u);

  for (const MoreRun& m : runs) {
    const PublishedRun& r = m.run;
    EXPECT_FALSE(m.source_family.empty()) << r.id;
    EXPECT_EQ(r.metric, Metric::kModelTflops) << r.id;
    EXPECT_GT(r.measured_tflops, 0) << r.id;
    EXPECT_LT(r.measured_tflops, r.cluster.gpu.peak_flops(r.train.precision) / 1e12) << r.id;
    EXPECT_EQ(r.par.gpus(), r.cluster.nodes * r.cluster.gpus_per_node) << r.id;
    EXPECT_EQ(r.train.global_batch % (r.par.dp * r.par.micro_batch), 0) << r.id;
    EXPECT_GT(r.model.vocab, 0) << r.id;
    EXPECT_GT(r.model.ffn_hidden, 0) << r.id;
  }
}

TEST(MoreRuns, PinsParsedValuesOfThreeRows) {
  const std::vector<MoreRun> runs = load_more_runs(kMorePath);

  // Llama 3 405B, Table 4, 16,384 GPUs, 8K: TP 8, CP 1, PP 16, DP 128, batch 2048 seqs (16M tokens),
  // 400 TFLOP/s per GPU (41% BF16 MFU); dims 126 x 16384, ffn 53248, 128 heads, 8 KV heads.
  {
    const MoreRun* m = find(runs, "llama3_405b_t4_16384gpu_seq8k");
    ASSERT_NE(m, nullptr);
    const PublishedRun& r = m->run;
    EXPECT_EQ(m->source_family, "llama3");
    EXPECT_TRUE(m->unverified);
    EXPECT_EQ(r.par.tp, 8);
    EXPECT_EQ(r.par.pp, 16);
    EXPECT_EQ(r.par.dp, 128);
    EXPECT_EQ(r.par.cp, 1);
    EXPECT_EQ(r.model.seq_len, 8192);
    EXPECT_EQ(r.model.layers, 126);
    EXPECT_EQ(r.model.hidden, 16384);
    EXPECT_EQ(r.model.ffn_hidden, 53248);
    EXPECT_EQ(r.model.heads, 128);
    EXPECT_EQ(r.model.kv_heads, 8);
    EXPECT_EQ(r.model.vocab, 128000);  // "128000 (Table 3)"
    EXPECT_EQ(r.model.ffn, model::Ffn::kSwiglu);
    EXPECT_EQ(r.train.global_batch, 2048);
    EXPECT_DOUBLE_EQ(r.measured_tflops, 400.0);  // tflops_per_gpu: 400
    EXPECT_EQ(r.par.zero, 2);                    // FSDP, params kept after forward
    EXPECT_EQ(r.par.recompute, model::Recompute::kNone);
    EXPECT_EQ(r.par.schedule, model::Schedule::kInterleaved);  // "modified interleaved 1F1B"
    // V not printed; Sec. 3.3.2's first chunk holding only the embedding: one layer per chunk,
    // (126 + 2) / 16 = 8 (virtual_pp_derived).
    EXPECT_EQ(r.par.virtual_stages, 8);
    EXPECT_TRUE(r.train.grad_reduce_fp32);               // Sec. 3.3.4
    EXPECT_EQ(r.train.attention_kernel, "fa2");
    EXPECT_EQ(r.train.precision, model::Precision::kBf16);
    EXPECT_EQ(r.cluster.gpu.name, "h100-sxm");
    EXPECT_EQ(r.cluster.nodes, 2048);
    EXPECT_DOUBLE_EQ(r.cluster.nic_bandwidth_Bps, 400e9 / 8);  // RoCE 400 Gbps per GPU
  }

  // torchtitan's H100 tables ran on Grand Teton H100s (96 GB HBM2e, 500 W): no catalog part, skipped
  // with that reason. Its A100 table (docs/performance.md): Llama 3 8B on 64 A100 80GB, FSDP2 64,
  // local batch 1, seq 8192 (the Llama 3 default), selective (per layer) checkpointing: 2904
  // tokens/s per GPU; converted with the model FLOPs per token.
  {
    EXPECT_EQ(find(runs, "torchtitan_h100_l31_70b_256gpu_2d_asynctp"), nullptr);
    const MoreRun* m = find(runs, "torchtitan_a100_64gpu_l3_8b_bs1_sel_layer");
    ASSERT_NE(m, nullptr);
    const PublishedRun& r = m->run;
    EXPECT_EQ(m->source_family, "torchtitan");
    EXPECT_EQ(r.cluster.gpu.name, "a100-80gb");
    EXPECT_EQ(r.par.tp, 1);
    EXPECT_EQ(r.par.dp, 64);
    EXPECT_EQ(r.model.seq_len, 8192);
    EXPECT_EQ(r.model.layers, 32);
    EXPECT_EQ(r.model.hidden, 4096);
    EXPECT_EQ(r.model.ffn_hidden, 14336);
    EXPECT_EQ(r.train.global_batch, 64);
    EXPECT_EQ(r.par.micro_batch, 1);
    EXPECT_EQ(r.par.zero, 3);
    // "selective layer": torchtitan's default selective_ac_option "2" checkpoints every other
    // block, i.e. full recompute of 16 of the 32 layers.
    EXPECT_EQ(r.par.recompute, model::Recompute::kFull);
    EXPECT_EQ(r.par.recompute_num_layers, 16);
    const double per_token = model::model_flops_per_step(r.model, 64) / (64.0 * 8192);
    EXPECT_DOUBLE_EQ(r.measured_tflops, 2904 * per_token / 1e12);  // tokens_per_s_per_gpu: 2904
  }

  // llm-foundry, H100 80GB BF16 table, MPT-70B, 64 GPUs, seq 2048: micro batch 8, grad accum 4, global
  // batch 2048, full activation checkpointing, FSDP FULL_SHARD; Model TFLOP 4.212583E+14 = 421.3 per
  // GPU (MFU 42.57%).
  {
    const MoreRun* m = find(runs, "llmfoundry_mpt70b_h100_bf16_64gpu_seq2048");
    ASSERT_NE(m, nullptr);
    const PublishedRun& r = m->run;
    EXPECT_EQ(m->source_family, "llm-foundry");
    EXPECT_EQ(r.par.tp, 1);
    EXPECT_EQ(r.par.pp, 1);
    EXPECT_EQ(r.par.dp, 64);
    EXPECT_EQ(r.model.seq_len, 2048);
    EXPECT_EQ(r.model.layers, 80);
    EXPECT_EQ(r.model.hidden, 8192);
    EXPECT_EQ(r.model.heads, 64);
    EXPECT_EQ(r.model.ffn_hidden, 32768);
    EXPECT_EQ(r.model.vocab, 50368);
    EXPECT_EQ(r.model.ffn, model::Ffn::kGelu);
    EXPECT_TRUE(r.model.learned_position_embedding);
    EXPECT_TRUE(r.model.tied_embeddings);
    EXPECT_EQ(r.train.global_batch, 2048);
    EXPECT_EQ(r.par.micro_batch, 8);
    EXPECT_EQ(r.train.micro_batches(r.par), 4);  // grad_accum: 4
    EXPECT_EQ(r.par.zero, 3);
    EXPECT_EQ(r.par.recompute, model::Recompute::kFull);
    EXPECT_EQ(r.train.precision, model::Precision::kBf16);
    EXPECT_DOUBLE_EQ(r.measured_tflops, 421.3);  // tflops_per_gpu: 421.3
    // Run by 2023-10-03 on composer <= 0.16.0, whose "DEFAULT" left the reduce dtype to torch FSDP
    // (the parameter dtype, bf16); float32 came with composer 0.16.4.
    EXPECT_FALSE(r.train.grad_reduce_fp32);
  }

  // The 2024 large-scale table ran composer 0.17: "DEFAULT" reduces in float32.
  {
    const MoreRun* m = find(runs, "llmfoundry_large_mpt70b_h100_bf16_128gpu_seq2048");
    ASSERT_NE(m, nullptr);
    EXPECT_TRUE(m->run.train.grad_reduce_fp32);
  }

  // Megatron-LM's --bf16 reduces gradients in fp32 (arguments.py at core_r0.8.0): the README's
  // weak-scaling rows and Nemotron-4, on the distributed optimizer.
  for (const char* id : {"megatron_core_r080_weak_70B_768gpu", "nemotron4_340b_t2_dp16_1536gpu"}) {
    const MoreRun* m = find(runs, id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_TRUE(m->run.train.grad_reduce_fp32) << id;
    EXPECT_EQ(m->run.par.zero, 1) << id;
  }

  // InternLM: 4 x 100 Gb RoCE per node (4 NICs for 8 GPUs), hybrid ZeRO-1 within the node (zero1 =
  // 8) with the parameter broadcast not overlapped, FlashAttention 1, TGS x model FLOPs per token: 2,346 x
  // (6 x 6.74e9 weights' GEMM FLOPs + 12 x 32 x 4096 x 2048 attention) per token.
  {
    const MoreRun* m = find(runs, "internlm_7b_a100_1024gpu_mb2x1_noac");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->source_family, "internlm");
    EXPECT_EQ(m->run.cluster.nics_per_node, 4);
    EXPECT_DOUBLE_EQ(m->run.cluster.nic_bandwidth_Bps, 100e9 / 8);
    EXPECT_EQ(m->run.par.dp, 1024);
    EXPECT_EQ(m->run.par.zero, 1);
    EXPECT_EQ(m->run.par.shard_degree, 8);
    EXPECT_FALSE(m->run.par.overlap_param_gather);
    EXPECT_FALSE(m->run.train.grad_reduce_fp32);
    EXPECT_EQ(m->run.train.attention_kernel, "fa1");
    EXPECT_EQ(m->run.train.global_batch, 2048);  // 1024 GPUs x 2 x 1 micro-batch
    const double per_token = model::model_flops_per_step(m->run.model, 2048) / (2048.0 * 2048);
    EXPECT_NEAR(m->run.measured_tflops, 2346 * per_token / 1e12, 1e-9);
    EXPECT_NEAR(m->run.measured_tflops, 104.7, 0.05);
  }

  // And an A100 llm-foundry row, where the column is printed as 100x: MFU 35.87% x 312 = 111.9.
  {
    const MoreRun* m = find(runs, "llmfoundry_mpt70b_a100_40_64gpu_seq2048");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->run.cluster.gpu.name, "a100-40gb");
    EXPECT_DOUBLE_EQ(m->run.cluster.nic_bandwidth_Bps, 200e9 / 8);  // 1600 Gbps per node = 8 x 200
    EXPECT_NEAR(m->run.measured_tflops, 0.3587 * 312, 1e-9);
  }

  // IBM's FSDP blog, Table 1, 7B on 128 A100 80GB: HSDP (FSDP1 HYBRID_SHARD: sharded within the
  // 8-GPU node), batch 2 per GPU of 4,096 tokens (256 sequences, "1 million tokens per batch"),
  // gradients reduced in bf16 (fms-fsdp bfSixteen), "400Gbps inter-node interconnect" per node =
  // 4 x 100 Gb/s; 3,700 tokens/s per GPU x model FLOPs per token.
  {
    const MoreRun* m = find(runs, "ibmfsdp_a100_128gpu_l2_7b_bs2_noac");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->source_family, "ibm-fsdp");
    EXPECT_EQ(m->run.cluster.gpu.name, "a100-80gb");
    EXPECT_EQ(m->run.par.zero, 3);
    EXPECT_EQ(m->run.par.shard_degree, 8);
    EXPECT_EQ(m->run.par.dp, 128);
    EXPECT_EQ(m->run.par.micro_batch, 2);
    EXPECT_EQ(m->run.train.global_batch, 256);
    EXPECT_FALSE(m->run.train.grad_reduce_fp32);
    EXPECT_EQ(m->run.par.recompute, model::Recompute::kNone);
    EXPECT_DOUBLE_EQ(static_cast<double>(m->run.cluster.nics_per_node) * m->run.cluster.nic_bandwidth_Bps, 400e9 / 8);
    const double per_token = model::model_flops_per_step(m->run.model, 256) / (256.0 * 4096);
    EXPECT_NEAR(m->run.measured_tflops, 3700 * per_token / 1e12, 1e-9);
  }
}

// XTuner's Llama 2 7B at 128K on 8 A100s, sp 8: its sequence parallelism as cp 8 with the a2a
// (Ulysses) exchange, dp 1, one sequence a micro-batch and 8 accumulated (global batch 8), ZeRO-3,
// full checkpointing, HF's eager kernels and float32 logits, flash-attn 2. Its printed 948.6 tokens
// per GPU per second become model TFLOP/s at 6 x 6.607e9 GEMM weights (32 layers x (4 x 4096^2 + 3 x
// 4096 x 11008) + the 4096 x 32000 output layer) + 12 x 32 x 4096 x 131072 (attention) = 245.8
// GFLOP a token: 233.2 TFLOP/s.
TEST(MoreRuns, PinsXtunersUlyssesRow) {
  const std::vector<MoreRun> runs = load_more_runs(kMorePath);
  const MoreRun* m = find(runs, "xtuner_llama2_7b_a100_8gpu_128k_sp8");
  ASSERT_NE(m, nullptr);
  const PublishedRun& r = m->run;
  EXPECT_EQ(m->source_family, "xtuner");
  EXPECT_EQ(r.par.cp, 8);
  EXPECT_EQ(r.par.dp, 1);
  EXPECT_EQ(r.par.cp_comm, model::CpComm::kAllToAll);
  EXPECT_EQ(r.par.zero, 3);
  EXPECT_EQ(r.par.recompute, model::Recompute::kFull);
  EXPECT_EQ(r.par.micro_batch, 1);
  EXPECT_EQ(r.train.global_batch, 8);
  EXPECT_EQ(r.train.attention_kernel, "fa2");
  EXPECT_EQ(r.train.cross_entropy, model::CrossEntropy::kTorch);
  EXPECT_TRUE(r.train.eager_norm);
  EXPECT_EQ(r.cluster.gpu.name, "a100-80gb");
  const double per_token = 6 * (32 * (4 * 4096.0 * 4096 + 3 * 4096.0 * 11008) + 4096.0 * 32000) + 12 * 32 * 4096.0 * 131072;
  EXPECT_NEAR(per_token, 245.8e9, 0.05e9);
  EXPECT_NEAR(r.measured_tflops, 948.6 * per_token / 1e12, 0.001);
  // The two 70B rows whose 8 key-value heads do not split over sp 16 and 64 are refused.
  EXPECT_EQ(find(runs, "xtuner_llama2_70b_a100_32gpu_256k_sp16"), nullptr);
}

// The Zero Bubble paper's Megatron-LM baselines (Table 3 settings, Table 4 throughput): GPT 1.5B as
// a pure 8-stage pipeline, 24 micro-batches of 6, fp16, Megatron's unfused attention; 11.8 samples
// per GPU per second under 1F1B, 13.1 interleaved with one layer per chunk.
TEST(MoreRuns, PinsZeroBubblePipelineRows) {
  const std::vector<MoreRun> runs = load_more_runs(kMorePath);
  const MoreRun* m = find(runs, "zb_1p5b_a100_8gpu_1f1b_m24");
  ASSERT_NE(m, nullptr);
  const PublishedRun& r = m->run;
  EXPECT_EQ(m->source_family, "zero-bubble");
  EXPECT_TRUE(m->unverified);
  EXPECT_EQ(r.par.tp, 1);
  EXPECT_EQ(r.par.pp, 8);
  EXPECT_EQ(r.par.dp, 1);
  EXPECT_EQ(r.par.micro_batch, 6);
  EXPECT_EQ(r.train.global_batch, 144);  // 24 micro-batches of 6
  EXPECT_EQ(r.par.schedule, model::Schedule::k1F1B);
  EXPECT_EQ(r.train.precision, model::Precision::kFp16);
  EXPECT_FALSE(r.train.flash_attention);
  EXPECT_EQ(r.par.recompute, model::Recompute::kNone);
  EXPECT_TRUE(r.model.tied_embeddings);
  EXPECT_TRUE(r.model.learned_position_embedding);
  EXPECT_EQ(r.model.ffn_hidden, 4 * 2304);
  // "both the initial and final pipeline stages possess one fewer transformer layer": 22 layers on 8.
  EXPECT_EQ(parallel::split_layers(22, 8), (std::vector<int64_t>{2, 3, 3, 3, 3, 3, 3, 2}));
  // Model FLOPs per token: 6 x (22 layers x 12 h^2 + the tied 32000 x h logits) + 12 L h s (full s^2
  // attention) = 9.474e9; 11.8 x 1024 tokens a second -> 114.5 TFLOP/s.
  const double per_token = 6 * (22 * 12 * 2304.0 * 2304 + 2304.0 * 32000) + 12 * 22 * 2304.0 * 1024;
  EXPECT_NEAR(per_token, 9.474e9, 0.001e9);
  EXPECT_NEAR(r.measured_tflops, 11.8 * 1024 * per_token / 1e12, 0.001);

  const MoreRun* i = find(runs, "zb_1p5b_a100_8gpu_1f1bi_m24");
  ASSERT_NE(i, nullptr);
  EXPECT_EQ(i->run.par.schedule, model::Schedule::kInterleaved);
  EXPECT_EQ(i->run.par.virtual_stages, 3);  // one layer per chunk: (22 + 2) / 8
  const std::vector<int64_t> chunks = parallel::split_layers(22, 8, 3);
  EXPECT_EQ(chunks.front(), 0);  // the model's first and last chunk hold no layer
  EXPECT_EQ(chunks.back(), 0);
  EXPECT_NEAR(i->run.measured_tflops, 13.1 * 1024 * per_token / 1e12, 0.001);
}

// FlagPerf's Llama 3 8B on one DGX A800 (d02409dd), its baseline PP2 DP4 TP1: Megatron-Core 0.6.0 as
// pretrain_llama3.sh runs it (more_runs.yaml header), 512 sequences of 8192 a step, 3698.7 tokens
// per GPU per second.
TEST(MoreRuns, PinsFlagPerfRows) {
  const std::vector<MoreRun> runs = load_more_runs(kMorePath);
  const MoreRun* m = find(runs, "flagperf_llama3_8b_a800_8gpu_pp2_dp4_tp1");
  ASSERT_NE(m, nullptr);
  const PublishedRun& r = m->run;
  EXPECT_EQ(m->source_family, "flagperf");
  EXPECT_FALSE(m->unverified);
  EXPECT_EQ(r.cluster.gpu.name, "a800");
  EXPECT_DOUBLE_EQ(r.cluster.intra_bandwidth_Bps, 200e9);  // NVLink 400 GB/s both ways
  EXPECT_EQ(r.par.pp, 2);
  EXPECT_EQ(r.par.dp, 4);
  EXPECT_EQ(r.par.micro_batch, 1);
  EXPECT_EQ(r.train.global_batch, 512);
  EXPECT_EQ(r.par.zero, 1);
  EXPECT_FALSE(r.par.overlap_grad_reduce);
  EXPECT_FALSE(r.par.overlap_param_gather);
  EXPECT_EQ(r.par.recompute, model::Recompute::kNone);
  EXPECT_TRUE(r.model.tied_embeddings);
  EXPECT_TRUE(r.model.learned_position_embedding);
  EXPECT_TRUE(r.model.dropout.value_or(false));
  // Model FLOPs per token: 6 x (32 layers x (2 h^2 + 2 h x 1024 (GQA 8 of 32 heads) + 3 h x 14336)
  // + the tied 128256 x h logits) + 12 L h s = 57.92e9; x 3698.7 tokens a second = 214.2 TFLOP/s.
  const double per_token =
      6 * (32 * (2 * 4096.0 * 4096 + 2 * 4096.0 * 1024 + 3 * 4096.0 * 14336) + 128256.0 * 4096) + 12 * 32 * 4096.0 * 8192;
  EXPECT_NEAR(per_token, 57.92e9, 0.01e9);
  EXPECT_NEAR(r.measured_tflops, 3698.7 * per_token / 1e12, 0.001);

  const MoreRun* h = find(runs, "flagperf_llama3_70b_h100_64gpu_pp4_dp2_tp8");
  ASSERT_NE(h, nullptr);
  // H100: FlagPerf's ddd8f62a (2024-06-14) corrected the README's environment from an H800 to the
  // H100 its table names.
  EXPECT_EQ(h->run.cluster.gpu.name, "h100-sxm");
  EXPECT_TRUE(h->run.par.sequence_parallel);
  EXPECT_FALSE(h->run.train.tp_comm_overlap);
  EXPECT_EQ(h->run.cluster.nodes, 8);

  // Its Llama 2 70B on FlagScale's legacy Megatron model: RoPE, no dropout, untied, the flash-attn 2
  // package, eager SwiGLU; 44 micro-batches of 4096 tokens a step; 8 x 200 Gb/s InfiniBand a node.
  const MoreRun* l = find(runs, "flagperf_llama2_70b_h800_32gpu_tp8_pp4_gbs44");
  ASSERT_NE(l, nullptr);
  EXPECT_FALSE(l->run.model.learned_position_embedding);
  EXPECT_FALSE(l->run.model.dropout.value_or(true));
  EXPECT_FALSE(l->run.model.tied_embeddings);
  EXPECT_EQ(l->run.train.attention_kernel, "fa2");
  EXPECT_TRUE(l->run.train.eager_activation);
  EXPECT_EQ(l->run.train.global_batch, 44);
  EXPECT_DOUBLE_EQ(l->run.cluster.nic_bandwidth_Bps, 25e9);
  // Its Aquila2-7B command passes no --sequence-parallel: TP8 without it.
  const MoreRun* a = find(runs, "flagperf_aquila2_7b_a800_8gpu_tp8_pp1_dp1");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->run.par.tp, 8);
  EXPECT_FALSE(a->run.par.sequence_parallel);
  EXPECT_EQ(a->run.par.micro_batch, 8);
  EXPECT_EQ(a->run.train.global_batch, 72);
}

}  // namespace
}  // namespace trainsim::validation
