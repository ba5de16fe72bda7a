// Advice as simulated counterfactuals (issue 16): changes a user can make with --set on the same
// cluster (schedule, layout, recompute, offload, overlap), each checked to load and to fit,
// shortlisted by the closed-form step, then the shortlist simulated by the engine with the run's
// own seed and options in worker processes, so that each printed gain is what running its --set
// gives. The same batch measures what only the engine can: the run on a dedicated fabric
// (contention removed) and without stragglers, for the bottleneck table and the stretch split.
#pragma once

#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <string>
#include <vector>

#include "cli/batch.hpp"
#include "cli/run_command.hpp"

namespace trainsim::cli {

struct AdviceCandidate {
  std::string what;               // "interleaved schedule, 4 chunks per stage"
  std::vector<std::string> sets;  // "parallelism.schedule=interleaved", ... (added after the user's)
  double estimate_s = 0;          // closed-form step with the change
};

// Every candidate that loads (from `text`, the bytes of the scenario at `path`) with the user's sets
// plus its own and fits in memory, with its closed-form step on `run_scenario`'s cluster (the one a
// platform file may have replaced), the `top` fastest of those faster than `base_estimate_s` by at
// least 1%, fastest first.
std::vector<AdviceCandidate> shortlist_advice(const std::string& path, const std::string& text, const std::vector<std::string>& user_sets,
                                              const config::Scenario& run_scenario, double base_estimate_s, size_t top);

struct AdviceOptions {
  std::string self;  // the trainsim binary (workers)
  std::string path;  // scenario file (named in messages)
  std::string text;  // its bytes, as the run read them: the workers simulate these
  std::vector<std::string> sets;
  uint64_t seed = 1;
  int64_t steps = 0;
  std::string fidelity = "auto";
  size_t top = 3;     // alternatives simulated (0: none)
  bool progress = true;
};

// The shortlist and the engine-only counterfactuals, simulated in worker processes. They start when
// the batch is made, before the run's own simulation, so that they use the other cores while it
// runs (issue 20 item 4: `run` uses the second core): one worker fewer than there are cores until
// finish(), every core after.
class AdviceBatch {
 public:
  // `run_scenario`: the run's scenario as simulated (a platform file's cluster in it).
  AdviceBatch(const AdviceOptions& options, const config::Scenario& run_scenario);
  // Not finished (the run failed or was stopped): kills the workers, waits for them.
  ~AdviceBatch();
  AdviceBatch(const AdviceBatch&) = delete;
  AdviceBatch& operator=(const AdviceBatch&) = delete;

  // Waits for the workers (progress on stderr), then fills summary.advice (one line per
  // alternative that was faster, largest gain first, each "what: 11.22 s -> 8.02 s (-29%)  --set
  // ..."), the advice runs in `runs` (JSON `advice_runs`), the measured savings
  // (interconnect.contention, compute.stragglers) and the stretch split, then re-diagnoses.
  // `summary` is the run's. A signal under a StopOnSignal stops the workers; call once.
  void finish(report::RunSummary& summary, nlohmann::json& runs);

 private:
  AdviceOptions opt_;
  config::Scenario sc_;
  std::vector<AdviceCandidate> shortlist_;
  std::vector<Job> jobs_;
  size_t dedicated_ = SIZE_MAX;  // job of the dedicated-fabric counterfactual
  size_t quiet_ = SIZE_MAX;      // job of the healthy-GPU one
  bool contended_ = false;
  bool straggling_ = false;
  BatchControl control_;
  std::vector<JobResult> results_;
  std::exception_ptr error_;
  std::mutex mutex_;       // done_, reporting_
  size_t done_ = 0;
  bool reporting_ = false;
  std::thread thread_;     // runs run_jobs; last, so that everything it uses exists first
};

}  // namespace trainsim::cli
