// How far predictions have been from published measurements (sim/hardware/data/accuracy.yaml, the
// validation set's summary): the band a report prints beside a predicted step time, run length and
// peak memory. An empirical band (90% of the published runs fell inside it), not a guarantee: a
// configuration unlike any published run may fall outside.
#pragma once

#include <string>

#include "model/memory.hpp"

namespace trainsim::model {

// Signed errors (predicted - measured) / measured, in percent, over `rows` published runs.
struct ErrorBand {
  std::string basis;  // e.g. "leave-one-source-out over 124 published runs"
  int rows = 0;
  double mean_abs_pct = 0;
  double p05_pct = 0;  // 5th percentile
  double p95_pct = 0;  // 95th percentile
};

struct ModelAccuracy {
  ErrorBand step_time;    // on model TFLOP/s per GPU, i.e. on step time
  ErrorBand peak_memory;  // on the caching allocator's peak
};

const ModelAccuracy& model_accuracy();

struct Range {
  double low = 0, high = 0;
};

// What a measured step time has been for a predicted one: throughput error e means measured time =
// predicted x (1 + e), so [t (1 + p05), t (1 + p95)]. Applies as well to anything proportional to
// the step time (days, GPU-hours).
Range step_time_band(double predicted_s);

// What a measured per-GPU peak has been for a predicted breakdown: the allocator's part (the total
// less the CUDA context and NCCL's buffers, which the published peaks do not include) divided by
// (1 + e), the rest as predicted.
Range memory_band(const MemoryBreakdown& mb);

}  // namespace trainsim::model
