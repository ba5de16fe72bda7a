// Inputs kept in test/fuzz/regressions/ (each one hung or crashed once; see tools/fuzz): every one
// loads or fails with util::InputError, quickly, and the named ones give the answer checked below.
// File format as in test/fuzz/fuzz_scenario.cpp: YAML, optionally a NUL then NUL-separated --set.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "model/memory.hpp"
#include "model/transformer.hpp"
#include "util/error.hpp"

namespace trainsim::config {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(TRAINSIM_SOURCE_DIR) / "test" / "fuzz" / "regressions";

struct Input {
  std::string yaml;
  std::vector<Override> overrides;
};

Input read_input(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  Input input;
  const size_t nul = text.find('\0');
  input.yaml = text.substr(0, nul);
  for (size_t start = nul == std::string::npos ? text.size() + 1 : nul + 1; start <= text.size();) {
    const size_t end = std::min(text.find('\0', start), text.size());
    try {
      input.overrides.push_back(parse_override(text.substr(start, end - start)));
    } catch (const util::InputError&) {
    }
    start = end + 1;
  }
  return input;
}

TEST(FuzzRegressions, EveryKeptInputLoadsOrIsAnInputError) {
  int files = 0;
  for (const auto& entry : fs::directory_iterator(kDir)) {
    ++files;
    const Input in = read_input(entry.path());
    const auto start = std::chrono::steady_clock::now();
    try {
      const Scenario sc = load_scenario_text(in.yaml, entry.path().filename().string(), in.overrides);
      const auto mem = model::memory_per_gpu(sc.model, sc.parallel, sc.training);
      EXPECT_GE(mem.total(), 0) << entry.path();
      if (sc.parallel.pp <= 64) model::largest_micro_batch(sc.model, sc.parallel, sc.training, sc.cluster.gpu.hbm_bytes);
    } catch (const util::InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(entry.path().filename().string(), 0), 0u) << e.what();
    }
    // Each of these once hung: a few seconds is plenty even under ASan.
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 10.0) << entry.path();
  }
  EXPECT_GE(files, 2);
}

// tools/fuzz, once it reached the platform planner (issue 21 item 9): 5 NICs for 8 GPUs loaded, and
// only the builder refused it, without a place. The loader now says where.
TEST(FuzzRegressions, NicsThatDoNotDivideTheGpusAreRefusedAtTheKey) {
  const Input in = read_input(kDir / "nics-not-dividing-gpus.yaml");
  try {
    load_scenario_text(in.yaml, "n.yaml");
    FAIL() << "loaded";
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "n.yaml:25:20: cluster.inter_node.nics_per_node: 5 NICs cannot be shared evenly by 8 GPUs "
                                     "per node (use a divisor or a multiple of gpus_per_node)");
  }
}

// yaml-cpp 0.7's LoadAll looped forever, allocating, on a stray ',' (yaml-cpp issue #1040); found
// while fuzzing the loader by hand before tools/fuzz existed.
TEST(FuzzRegressions, StrayCommaIsAnInputErrorNotAHang) {
  const Input in = read_input(kDir / "loadall-stray-comma.yaml");
  try {
    load_scenario_text(in.yaml, "c.yaml");
    FAIL() << "loaded";
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "c.yaml:1:1: invalid YAML: unexpected ','");
  }
}

// model::largest_micro_batch counted down from the per-replica batch, 2^40 / dp 4 = 2^38 trials
// (hours); it now visits the divisors only. The answer is the largest power of two (the divisors of
// 2^38) whose memory fits in the h100-sxm's 80 GB, so b fits and 2b does not.
TEST(FuzzRegressions, LargestMicroBatchOfAHugeBatchIsQuickAndRight) {
  const Input in = read_input(kDir / "largest-micro-batch-hang.yaml");
  const Scenario sc = load_scenario_text(in.yaml, "h.yaml");
  ASSERT_EQ(sc.training.global_batch, int64_t{1} << 40);
  const double cap = sc.cluster.gpu.hbm_bytes;
  const auto start = std::chrono::steady_clock::now();
  const int64_t b = model::largest_micro_batch(sc.model, sc.parallel, sc.training, cap);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5.0);
  ASSERT_GE(b, 1);
  EXPECT_EQ(b & (b - 1), 0);  // a divisor of 2^38
  model::ParallelSpec p = sc.parallel;
  p.micro_batch = b;
  EXPECT_LE(model::memory_per_gpu(sc.model, p, sc.training).total(), cap);
  p.micro_batch = 2 * b;
  EXPECT_GT(model::memory_per_gpu(sc.model, p, sc.training).total(), cap);
}

}  // namespace
}  // namespace trainsim::config
