#include "model/accuracy.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "model/cost_data.hpp"
#include "util/units.hpp"

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
    const YAML::Node cov = root["coverage"];
    Coverage c;
    c.gpus = cov["gpus"].as<std::vector<std::string>>();
    c.intra_fabrics = cov["intra_fabrics"].as<std::vector<std::string>>();
    c.inter_transports = cov["inter_transports"].as<std::vector<std::string>>();
    c.max_gpus = cov["max_gpus"].as<int64_t>();
    c.moe = cov["moe"].as<bool>();
    return ModelAccuracy{band(root["step_time"]), band(root["peak_memory"]), c};
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

std::vector<std::string> outside_coverage(const ModelSpec& model, const hardware::ClusterSpec& cluster) {
  const Coverage& c = model_accuracy().coverage;
  auto has = [](const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); };
  std::vector<std::string> out;
  const std::string gpu = cluster.gpu.catalog.empty() ? cluster.gpu.name : cluster.gpu.catalog;
  if (!has(c.gpus, gpu)) out.push_back(gpu + " GPUs (published runs: " + util::join(c.gpus) + ")");
  const std::string fabric = hardware::to_string(cluster.intra_fabric);
  if (cluster.gpus_per_node > 1 && !has(c.intra_fabrics, fabric))
    out.push_back("a " + fabric + " node fabric (published runs: " + util::join(c.intra_fabrics) + ")");
  const std::string transport = hardware::to_string(cluster.transport);
  if (cluster.nodes > 1 && !has(c.inter_transports, transport))
    out.push_back("an " + transport + " network between nodes (published runs: " + util::join(c.inter_transports) + ")");
  if (cluster.gpus() > c.max_gpus)
    out.push_back(std::to_string(cluster.gpus()) + " GPUs (the largest published run: " + std::to_string(c.max_gpus) + ")");
  if (model.is_moe() && !c.moe) out.push_back("a mixture-of-experts model");
  return out;
}

}  // namespace trainsim::model
