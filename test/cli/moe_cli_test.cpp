// Issue 19 validation: DeepSeek-V3's pre-training as its technical report describes it
// (scenarios/deepseek-v3-2048.yaml), against the report's cost and memory.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>

#include "cli_test_util.hpp"

namespace {

using trainsim::testing::scenario;
using trainsim::testing::trainsim;

// DeepSeek-AI, arXiv 2412.19437, Sec. 1: "180K H800 GPU hours" per trillion tokens on 2,048 H800.
// trainsim: GPU-hours per trillion tokens = GPUs x 10^12 / tokens per second / 3600, within 15% (the
// issue's tolerance; measured 161.8K, -10.1%). And it fits in an H800's memory, as it did.
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
}

}  // namespace
