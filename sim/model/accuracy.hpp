// How far predictions have been from published measurements (sim/hardware/data/accuracy.yaml, the
// validation set's summary): the band a report prints beside a predicted step time, run length and
// peak memory. An empirical band (90% of the published runs fell inside it), not a guarantee: a
// configuration unlike any published run may fall outside.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/memory.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

// Signed errors (predicted - measured) / measured, in percent, over `rows` published runs.
struct ErrorBand {
  std::string basis;  // e.g. "leave-one-source-out over 124 published runs"
  int rows = 0;
  double mean_abs_pct = 0;
  double p05_pct = 0;  // 5th percentile
  double p95_pct = 0;  // 95th percentile
};

// What the published runs behind the bands span.
struct Coverage {
  std::vector<std::string> gpus;           // catalog keys
  std::vector<std::string> intra_fabrics;  // hardware::to_string(IntraFabric)
  std::vector<std::string> inter_transports;  // hardware::to_string(InterTransport), runs of 2+ nodes
  int64_t max_gpus = 0;
  bool moe = false;
};

struct ModelAccuracy {
  ErrorBand step_time;    // on model TFLOP/s per GPU, i.e. on step time
  ErrorBand peak_memory;  // on the caching allocator's peak
  Coverage coverage;
};

const ModelAccuracy& model_accuracy();

struct Range {
  double low = 0, high = 0;
  bool contains(double x) const { return low <= x && x <= high; }
};

// What a measured step time has been for a predicted one: throughput error e means measured time =
// predicted x (1 + e), so [t (1 + p05), t (1 + p95)]. Applies as well to anything proportional to
// the step time (days, GPU-hours).
Range step_time_band(double predicted_s);

// What a measured per-GPU peak has been for a predicted breakdown: the allocator's part (the total
// less the CUDA context and NCCL's buffers, which the published peaks do not include) divided by
// (1 + e), the rest as predicted.
Range memory_band(const MemoryBreakdown& mb);

// What a scenario has that no published run behind the bands had (empty: nothing), one phrase
// each: "b200 GPUs (published runs: a100-40gb, ...)", "a pcie node fabric (...)", "131072 GPUs
// (the largest published run: 16384)", "a mixture-of-experts model". The band is then a
// statement about other runs; reports print each after "no published run had".
std::vector<std::string> outside_coverage(const ModelSpec& model, const hardware::ClusterSpec& cluster);

}  // namespace trainsim::model
