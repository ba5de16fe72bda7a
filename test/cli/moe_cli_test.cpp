// Issue 19 validation: DeepSeek-V3's pre-training as its technical report describes it
// (scenarios/deepseek-v3-2048.yaml), against the report's cost and memory.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "cli_test_util.hpp"

namespace {

using trainsim::testing::scenario;
using trainsim::testing::trainsim;

// DeepSeek-AI, arXiv 2412.19437, Sec. 1: "180K H800 GPU hours" per trillion tokens on 2,048 H800.
// trainsim: GPU-hours per trillion tokens = GPUs x 10^12 / tokens per second / 3600, within 15% (the
// issue's tolerance; measured 164.7K, -8.5%). And it fits in an H800's memory, as it did.
TEST(MoeValidation, DeepSeekV3GpuHoursPerTrillionTokens) {
  auto r = trainsim("run " + scenario("deepseek-v3-2048.yaml") + " --steps 4 --advice 0 --quiet --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const double gpu_hours = j["gpus"].get<double>() * 1e12 / j["tokens_per_s"].get<double>() / 3600;
  EXPECT_NEAR(gpu_hours, 180e3, 0.15 * 180e3);
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  EXPECT_NEAR(j["model"]["params"].get<double>(), 671e9, 0.01 * 671e9);
  auto m = trainsim("memory " + scenario("deepseek-v3-2048.yaml") + " --json -");
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_NEAR(nlohmann::json::parse(m.out)["model"]["active_params"].get<double>(), 37e9, 0.02 * 37e9);
}

// Expert parallelism inside a node against across nodes on the same model: Mixtral 8x7B (8 of its
// layers) on 8 DGX H100 nodes, ep 8 with tp 1 (one node's GPUs) against ep 8 with tp 8 (eight nodes,
// one GPU each): the all-to-alls cross InfiniBand in the second. Its TP/EP communication exceeds
// the same layout's without experts split (ep 1, TP alone) by more than 3x the first's all.
TEST(MoeValidation, ExpertParallelismAcrossNodesCostsTheFabricGap) {
  const std::string yaml = trainsim::testing::tmp("mixtral.yaml");
  std::ofstream(yaml) << "version: 1\nname: mixtral\nmodel:\n  preset: mixtral-8x7b\n  layers: 8\n  seq_len: 4096\n"
                         "cluster:\n  gpu: h100-sxm\n  nodes: 8\n  gpus_per_node: 8\n"
                         "parallelism:\n  tp: 1\n  dp: 64\n  zero: 1\ntraining:\n  global_batch: 64\n";
  auto comm = [&](const std::string& extra) {
    auto r = trainsim("run " + yaml + " --steps 3 --advice 0 --quiet --json -" + extra);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out)["breakdown_s"]["tp_comm"].get<double>() : 0.0;
  };
  const double intra = comm(" --set parallelism.ep=8");
  const double inter = comm(" --set parallelism.tp=8 --set parallelism.dp=8 --set parallelism.ep=8");
  const double tp_alone = comm(" --set parallelism.tp=8 --set parallelism.dp=8");
  EXPECT_GT(intra, 0.0);
  EXPECT_GT(inter - tp_alone, 3 * intra);
  // The diagnosis names the all-to-alls when the NICs are the bottleneck they make.
  auto r = trainsim("run " + yaml + " --steps 3 --advice 0 --quiet --json - --set parallelism.tp=8 --set parallelism.dp=8 --set parallelism.ep=8");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bottleneck"], "interconnect");
  EXPECT_NE(j["bottleneck_reason"].get<std::string>().find("expert-parallel all-to-alls"), std::string::npos) << j["bottleneck_reason"];
}

// Qwen3-235B-A22B on 256 H100 (32 DGX nodes, 8 x 400G IB a node), BF16, sequence 4096, batch 2048:
// the five rows of yanring/Megatron-MoE-ModelZoo best_practice/qwen3/readme.md's H100 table
// (test/validation/moe_runs.md Sec. 3.1), each layout as printed (symmetric fidelity: within 1% of
// full here, at a fraction of its time): every row's EDP and ETP 1 mean
// the expert layers are folded (parallel.expert_tp 1). Step times published: 19.7, 17.6, 17.6,
// 24.2, 29.0 s. trainsim measured (2026-12-07, fit 0.81 / replica jitter 0.05 s): 18.85, 14.24,
// 19.02, 17.50, 19.10 s: -4.3%, -19.1%, +8.1%, -27.7%, -34.1%, mean |error| 18.7% (with a fixed
// 0.12 s host time a step, earlier that day: -4.2, -18.9, +8.0, -27.4, -34.0%, 18.5%, with every
// ZeRO-3 layer's calls paying their NCCL latency; the FSDP row at 128 ranks +3.8% before the
// latency, mean 17.7%; earlier that
// day -3.7, -18.6, +4.4, -26.9, -33.6%, 17.4%; 2026-12-06: -4.7, -19.6, +3.1, -27.4, -34.2%, 17.8%). The last two (the A2A dispatcher over 32
// stages of about one layer a chunk; TP 4 without recompute) are the model's worst: optimistic,
// as the dense model was before issue 13. The test holds the mean and the worst where they are.
TEST(MoeValidation, Qwen3On256H100MegatronModelZooRows) {
  const std::string yaml = trainsim::testing::tmp("qwen3.yaml");
  std::ofstream(yaml) << "version: 1\nname: qwen3-256\nmodel:\n  preset: qwen3-235b-a22b\n"
                         "cluster:\n  gpu: h100-sxm\n  nodes: 32\n  gpus_per_node: 8\n"
                         "parallelism:\n  tp: 2\n  sequence_parallel: true\n  expert_tp: 1\n  ep_dispatcher: deepep\n"
                         "  micro_batch: 1\n  zero: 1\n  recompute: none\n  recompute_modules: [layernorm, moe_act]\n"
                         "training:\n  global_batch: 2048\n";
  const std::string vpp4 = " --set parallelism.schedule=interleaved --set parallelism.virtual_stages=4";
  const struct {
    const char* row;
    std::string set;
    double published_s;
  } rows[] = {
      {"EP32 PP8 VPP4 DP16 (cross-node EP)", " --set parallelism.ep=32 --set parallelism.pp=8 --set parallelism.dp=16" + vpp4, 19.7},
      {"the same, EP all-to-all overlapped with 1F1B",
       " --set parallelism.ep=32 --set parallelism.pp=8 --set parallelism.dp=16 --set parallelism.ep_overlap=micro_batches" + vpp4, 17.6},
      {"EP8 DP128 FSDP MBS4 full recompute (intra-node EP)",
       " --set parallelism.ep=8 --set parallelism.dp=128 --set parallelism.zero=3 --set parallelism.micro_batch=4"
       " --set parallelism.recompute=full --set parallelism.recompute_modules=[]",
       17.6},
      {"A2A EP8 PP32 VPP3 DP4",
       " --set parallelism.ep=8 --set parallelism.pp=32 --set parallelism.dp=4 --set parallelism.ep_dispatcher=alltoall"
       " --set parallelism.schedule=interleaved --set parallelism.virtual_stages=3",
       24.2},
      {"TP4 EP8 PP8 VPP4 DP8, no recompute",
       " --set parallelism.tp=4 --set parallelism.ep=8 --set parallelism.pp=8 --set parallelism.dp=8"
       " --set parallelism.recompute_modules=[]" + vpp4,
       29.0},
  };
  double sum = 0, worst = 0;
  for (const auto& r : rows) {
    auto out = trainsim("run " + yaml + " --steps 3 --advice 0 --fidelity symmetric --quiet --json -" + r.set);
    ASSERT_EQ(out.code, 0) << r.row << ": " << out.err;
    const double step = nlohmann::json::parse(out.out)["step_time_s"]["mean"].get<double>();
    const double err = step / r.published_s - 1;
    std::printf("  %-55s published %5.1f s  trainsim %6.2f s  %+6.1f%%\n", r.row, r.published_s, step, 100 * err);
    sum += std::abs(err);
    worst = std::max(worst, std::abs(err));
  }
  EXPECT_LT(sum / 5, 0.20);  // measured 18.7%
  EXPECT_LT(worst, 0.40);    // measured 34.1%
}

}  // namespace
