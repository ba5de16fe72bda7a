#include "config/limits.hpp"

#include <string>

#include "util/error.hpp"

namespace trainsim::config {
namespace {

std::string thousands(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

}  // namespace

void check_simulable(const Scenario& sc, int64_t steps, bool full) {
  const util::SourceLocation where{sc.source_file};
  const auto refuse = [&](const std::string& what) {
    throw util::InputError(where, "too large to simulate: " + what);
  };
  if (steps < 1 || steps > kMaxSteps)
    throw util::InputError(where, "steps must be in [1, " + thousands(kMaxSteps) + "], got " + std::to_string(steps));
  const int64_t gpus = sc.cluster.gpus();
  if (gpus > kMaxSimulatedGpus)
    refuse(thousands(gpus) + " GPUs (at most " + thousands(kMaxSimulatedGpus) + "); `trainsim memory` answers for any size");
  const int64_t stages = (full ? sc.parallel.dp : 1) * sc.parallel.pp;  // each <= 2^20
  if (stages > kMaxSimulatedStages)
    refuse(thousands(stages) + " simulated pipeline stages (" + (full ? "dp * pp with full fidelity" : "pp") +
           "; at most " + thousands(kMaxSimulatedStages) + ")" + (full ? "; --fidelity symmetric simulates pp" : ""));
  if (stages * steps > kMaxStageSteps)
    refuse(thousands(steps) + " steps of " + thousands(stages) + " simulated stages (steps * stages at most " +
           thousands(kMaxStageSteps) + "); use at most --steps " + thousands(kMaxStageSteps / stages));
  const int64_t v = sc.parallel.schedule == model::Schedule::kInterleaved ? sc.parallel.virtual_stages : 1;
  const int64_t micro_batches = sc.training.global_batch / (sc.parallel.dp * sc.parallel.micro_batch);  // <= 2^40
  const double per_step = static_cast<double>(stages) * static_cast<double>(v) * static_cast<double>(micro_batches);
  if (per_step > static_cast<double>(kMaxStageMicroBatches))
    refuse(thousands(micro_batches) + " micro-batches per step on " + thousands(stages * v) +
           " simulated model chunks (their product at most " + thousands(kMaxStageMicroBatches) +
           "); raise parallelism.micro_batch or lower training.global_batch");
}

}  // namespace trainsim::config
