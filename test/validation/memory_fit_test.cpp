// Issue 14: configurations that really ran on their GPUs must be predicted to fit. Every row of
// the validation set (published_runs.yaml, more_runs.yaml: 212 runs with their sources) trained on
// the GPU it names, with the layout it names.
#include <gtest/gtest.h>

#include <set>

#include "model/memory.hpp"
#include "model/memory_data.hpp"
#include "validation_set.hpp"

namespace trainsim::validation {
namespace {

TEST(MemoryFit, EveryRunThatReallyTrainedIsPredictedToFit) {
  // Known misses (README "Memory model"), each over by the figure in its comment:
  const std::set<std::string> known = {
      // Meta's modified interleaved schedule at 32 micro-batches per pipeline: trainsim holds
      // Megatron's warm-up on stage 1 (2(p-1) + (v-1)p + 1 = 141 chunk-micro-batches of one layer,
      // v = 8 as the loader derives it from Sec. 3.3.2): 88.4 GB of 85.5. Meta's schedule groups N
      // micro-batches per chunk (Fig. 6) with N not printed for this run; N <= 15 would fit.
      "llama3_405b_t4_8192gpu_seq8k",
      // NeMo 24.07's 340B recipe (TP8 PP8 v12 DP2, fp8, distributed optimizer): 97.3 GB on stage 0.
      // The launcher's nemotron_340b.yaml gives bf16 gradient sync and no dropout (both applied);
      // its optim.dtype: bf16 is not passed to Megatron-Core's OptimizerConfig by NeMo's
      // setup_megatron_optimization, so Adam states stay fp32 (12 B/param over 2 ranks); with TE's
      // fp8 weight copies (10.4 GB) the stage does not fit. Whether NeMo kept fp8 primary weights
      // (no copies) is not published.
      "nemo2407_nemotron_340b",
      // XTuner's Yi-34B-200K at 256K on 32 A100 80GB (sp 8, ZeRO-3, full checkpointing): 88.5 GB of
      // 85.9. HF's float32 logits of a rank's 32,768 tokens x 64,000 (trainsim's torch cross-entropy,
      // 12 B a logit: 25 GB) dominate; what XTuner's loss path kept is not published, and the run's
      // throughput (22% below trainsim's) is what an allocator at its edge gives.
      "xtuner_yi_34b_200k_a100_32gpu_256k_sp8",
  };
  int fit = 0, rows = 0;
  for (const Row& row : validation_rows()) {
    const PublishedRun& r = row.run;
    ++rows;
    const model::MemoryBreakdown mb = model::memory_per_gpu(r.model, r.par, r.train, r.cluster);
    const double cap = model::usable_capacity_bytes(r.cluster.gpu);
    const bool fits = mb.total() <= cap;
    if (known.count(r.id)) {
      EXPECT_FALSE(fits) << r.id << " now fits: take it off the known list";
      continue;
    }
    EXPECT_TRUE(fits) << r.id << ": " << mb.total() / 1e9 << " GB of " << cap / 1e9 << " GB";
    fit += fits;
  }
  EXPECT_EQ(rows, 212);
  EXPECT_EQ(fit, 209);
}

}  // namespace
}  // namespace trainsim::validation
