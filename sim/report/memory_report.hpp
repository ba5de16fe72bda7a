// `trainsim memory`: does the scenario fit in GPU memory, what takes the memory, and what single
// change would make it fit. Pure functions: plan (numbers), then render as a console table or as
// JSON (CONTRACT.md keys: model.params, memory.*, min_gpus_for_weights*). No I/O here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/scenario.hpp"
#include "model/memory.hpp"

namespace trainsim::report {

// One change to the scenario that makes it fit (or, for the micro-batch, the best that fits).
struct MemorySuggestion {
  std::string text;              // e.g. "selective recompute would fit", "ZeRO-1 would fit"
  std::vector<std::string> set;  // the --set overrides that make the change, e.g. "parallelism.zero=1"
  double per_gpu_bytes = 0;      // busiest GPU's memory after the change
  double capacity_bytes = 0;     // the GPU capacity it is compared with (differs for a GPU change)
};

// Fewest GPUs of the scenario's type that hold the weights alone at one precision.
struct WeightsOnly {
  std::string precision;       // "bf16", "fp16", "int8", "fp8"
  double bytes_per_param = 0;  // 2, 2, 1, 1
  int64_t gpus = 0;            // model::min_gpus_for_weights without the reserve
  int64_t gpus_with_reserve = 0;  // with the layout's runtime reserve kept free on each GPU
};

struct MemoryPlan {
  std::string scenario_name;
  std::string gpu_name;        // catalog key or "inline"
  int64_t gpus = 0;            // tp * pp * dp * cp
  double params = 0;           // whole model (model::count_params)
  model::ModelSpec model;
  model::ParallelSpec parallel;
  model::TrainingSpec training;
  model::MemoryBreakdown breakdown;  // the busiest GPU
  double capacity_bytes = 0;   // model::usable_capacity_bytes(cluster.gpu): what the driver reports
  double datasheet_bytes = 0;  // cluster.gpu.hbm_bytes: the nominal HBM
  std::vector<std::string> notes;  // what the loader decided for the user (config::Scenario::notes)
  bool fits = false;           // breakdown.total() <= capacity_bytes
  int64_t largest_micro_batch = 0;  // model::largest_micro_batch at this capacity (0: none fits)
  std::vector<WeightsOnly> weights_only;  // bf16, fp16, int8, fp8 in that order
  // Empty when it fits. Otherwise, in this order, each that applies: the largest micro-batch that
  // fits, recompute, sequence parallelism, ZeRO stage, optimizer offload, more pipeline stages, more
  // tensor parallelism (both at the same GPU count when dp allows), a catalog GPU with more HBM;
  // when no single change fits, one line saying so (with a combination that fits, if any).
  std::vector<MemorySuggestion> suggestions;
};

// REQUIRES: a validated scenario (config/).
MemoryPlan plan_memory(const config::Scenario& scenario);

// The console report: aligned columns, sizes in GB (1e9 B) with one decimal. Ends with a newline.
std::string render_memory_table(const MemoryPlan& plan);

// {scenario: {name}, gpus, gpu, model: {params}, memory: {per_gpu_bytes, capacity_bytes, fits,
//  breakdown: {weights, gradients, optimizer, activations, other}, busiest_stage, ...},
//  min_gpus_for_weights: {bf16, fp16, int8, fp8}, min_gpus_for_weights_with_reserve: {...},
//  suggestions: [{text, set, per_gpu_bytes}]}
nlohmann::json memory_json(const MemoryPlan& plan);
// memory.breakdown.* of run and memory reports: the five parts and the parts of `other` (other_*).
nlohmann::json memory_breakdown_json(const model::MemoryBreakdown& mb);

// How far the published runs' measurements have been from trainsim's predictions, applied to this
// prediction (model/accuracy.hpp; sim/hardware/data/accuracy.yaml):
//   {step_time: {basis, runs, mean_abs_error_pct, p05_error_pct, p95_error_pct, low_s, high_s,
//                outside: [what the scenario has that no published run behind the band had]},
//    days: {low, high} (when days > 0),
//    memory: {basis, runs, mean_abs_error_pct, p05_error_pct, p95_error_pct, low_bytes, high_bytes,
//             capacity_inside}}
// capacity_inside: the GPU's capacity lies within the memory band (the fit verdict, either way,
// is within the model's error). step_s <= 0 leaves step_time and days out (the memory command).
nlohmann::json accuracy_json(double step_s, double days, const model::MemoryBreakdown& mb, double capacity_bytes,
                             const std::vector<std::string>& outside = {});
// The memory band as one console line (indented by `indent`, its label padded to `label_width`),
// and when the capacity lies inside it, a second line saying the verdict is within the model's
// error.
std::string memory_band_line(const model::MemoryBreakdown& mb, double capacity_bytes, const std::string& indent,
                             int label_width);

}  // namespace trainsim::report
