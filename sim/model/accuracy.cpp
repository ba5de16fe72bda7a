#include "model/accuracy.hpp"

#include <yaml-cpp/yaml.h>

#include "model/cost_data.hpp"

namespace trainsim::model {
namespace {

ErrorBand band(const YAML::Node& n) {
  ErrorBand b;
  b.basis = n["basis"].as<std::string>();
  b.rows = n["rows"].as<int>();
  b.mean_abs_pct = n["mean_abs_pct"].as<double>();
  b.p05_pct = n["p05_pct"].as<double>();
  b.p95_pct = n["p95_pct"].as<double>();
  return b;
}

}  // namespace

const ModelAccuracy& model_accuracy() {
  static const ModelAccuracy a = [] {
    const YAML::Node root = YAML::Load(accuracy_yaml());
    return ModelAccuracy{band(root["step_time"]), band(root["peak_memory"])};
  }();
  return a;
}

Range step_time_band(double predicted_s) {
  const ErrorBand& b = model_accuracy().step_time;
  return {predicted_s * (1 + b.p05_pct / 100), predicted_s * (1 + b.p95_pct / 100)};
}

Range memory_band(const MemoryBreakdown& mb) {
  const ErrorBand& b = model_accuracy().peak_memory;
  const double outside = mb.reserve.cuda_context + mb.reserve.nccl;
  const double allocator = mb.total() - outside;
  return {outside + allocator / (1 + b.p95_pct / 100), outside + allocator / (1 + b.p05_pct / 100)};
}

}  // namespace trainsim::model
