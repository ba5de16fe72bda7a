// config::check_simulable: the limits of one simulation (config/limits.hpp), at and past each edge.
#include "config/limits.hpp"

#include <gtest/gtest.h>

#include <string>

#include "util/error.hpp"

namespace trainsim::config {
namespace {

// tiny-gpt-2node with `nodes` nodes: tp 2, pp 2, dp derived = nodes * 8 / 4, micro-batch 1,
// global batch = dp (one micro-batch per step).
Scenario tiny(int64_t nodes) {
  const int64_t dp = nodes * 8 / 4;
  return load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/tiny-gpt-2node.yaml",
                       {{"cluster.nodes", std::to_string(nodes)}, {"parallelism.dp", ""},
                        {"parallelism.micro_batch", "1"}, {"training.global_batch", std::to_string(dp)}});
}

std::string error_of(const Scenario& sc, int64_t steps, bool full) {
  try {
    check_simulable(sc, steps, full);
  } catch (const util::InputError& e) {
    return e.message();
  }
  return "";
}

TEST(Limits, GpusAtMost2To20) {
  EXPECT_EQ(error_of(tiny(131072), 1, false), "");  // 131,072 x 8 = 2^20 GPUs
  EXPECT_EQ(error_of(tiny(131073), 1, false),
            "too large to simulate: 1,048,584 GPUs (at most 1,048,576); `trainsim memory` answers for any size");
}

TEST(Limits, SimulatedStagesAtMost16384) {
  // 4096 nodes: dp 8192 x pp 2 = 16,384 stages with full fidelity (allowed); symmetric: pp = 2.
  EXPECT_EQ(error_of(tiny(4096), 1, true), "");
  EXPECT_EQ(error_of(tiny(4097), 1, true),
            "too large to simulate: 16,388 simulated pipeline stages (dp * pp with full fidelity; at most 16,384)"
            "; --fidelity symmetric simulates pp");
  EXPECT_EQ(error_of(tiny(4097), 1, false), "");
}

TEST(Limits, StepsTimesStagesAtMost2To26) {
  // 2 nodes, full: dp 4 x pp 2 = 8 stages; 2^26 / 8 = 8,388,608 > kMaxSteps, so only kMaxSteps binds.
  EXPECT_EQ(error_of(tiny(2), kMaxSteps, true), "");
  EXPECT_EQ(error_of(tiny(2), kMaxSteps + 1, true), "steps must be in [1, 1,000,000], got 1000001");
  EXPECT_EQ(error_of(tiny(2), 0, true), "steps must be in [1, 1,000,000], got 0");
  // 64 nodes, full: 128 x 2 = 256 stages; 2^26 / 256 = 262,144 steps.
  EXPECT_EQ(error_of(tiny(64), 262144, true), "");
  EXPECT_EQ(error_of(tiny(64), 262145, true),
            "too large to simulate: 262,145 steps of 256 simulated stages (steps * stages at most 67,108,864); "
            "use at most --steps 262,144");
}

TEST(Limits, MicroBatchesTimesChunksAtMost2To24) {
  Scenario sc = tiny(2);                       // dp 4, micro-batch 1, 8 stages with full fidelity
  sc.training.global_batch = 4 * (1 << 21);    // 2^21 micro-batches x 8 = 2^24: allowed
  EXPECT_EQ(error_of(sc, 1, true), "");
  sc.training.global_batch = 4 * ((1 << 21) + 1);
  EXPECT_EQ(error_of(sc, 1, true),
            "too large to simulate: 2,097,153 micro-batches per step on 8 simulated model chunks (their product at "
            "most 16,777,216); raise parallelism.micro_batch or lower training.global_batch");
}

}  // namespace
}  // namespace trainsim::config
