// The training-step engine: SimGrid actors run each pipeline stage's schedule (forward and
// backward as Execs on the stage's GPU, activations and gradients between stages as real flows),
// a communication actor per stage runs the DP gradient synchronisation as flows (bucketed and
// overlapped with the last backward when asked), then the optimizer; a barrier ends the step
// (Megatron's gradient-norm all-reduce spans every stage).
//
// Fidelity: `full` gives every DP replica its own actors; `symmetric` simulates replica 0 and puts
// the other replicas on the network only through their share of the DP flows. Only the TP-rank-0,
// CP-rank-0 GPU of a stage has an actor: TP and CP collectives are folded into compute times
// (model/step_costs.hpp), the other TP/CP ranks' identical flows are not replayed.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>

#include "config/scenario.hpp"
#include "engine/result.hpp"
#include "model/step_costs.hpp"

namespace simgrid::s4u {
class Engine;
}
namespace trainsim::platform {
class Platform;
}

namespace trainsim::engine {

struct EngineOptions {
  int64_t steps = 100;                 // steps of the run (simulated, or replicated: below)
  // Once the run is in a steady state (nothing random: no tenants, no per-step jitter; three
  // consecutive steps identical in duration and in every GPU's breakdown), the remaining steps are
  // copies of the last checked one instead of simulated (RunResult::steps_replicated). false: every
  // step is simulated (--no-replicate).
  bool replicate = true;
  uint64_t seed = 1;                   // contention, stragglers, jitter
  config::Fidelity fidelity = config::Fidelity::kAuto;
  int64_t trace_steps = 0;             // record trace events for the first N steps
  int64_t buckets = 0;                 // DP gradient buckets per stage; 0 = auto
  // Called after every step of the critical stage with (steps done, steps total); may be empty.
  std::function<void(int64_t, int64_t)> on_step;
  // When set and non-zero, the run stops at the next step boundary (SIGINT handling).
  const volatile std::sig_atomic_t* stop = nullptr;
};

// Which fidelity `auto` picks: full while the actor count stays small, symmetric beyond.
config::Fidelity resolve_fidelity(const config::Scenario& scenario, config::Fidelity requested);

// Gradient buckets per stage the engine uses (auto: Megatron's, model::grad_bucket_params, at most 8).
int64_t resolve_buckets(const model::StageCost& stage, const model::ParallelSpec& par, int64_t requested);

// The SimGrid engine with the run's platform in it, made before the costs when they depend on the
// platform (a platform file: platform/derive.hpp). Moved into simulate().
struct World {
  World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;
  ~World();
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::unique_ptr<platform::Platform> platform;
};
// Makes the engine and builds (or loads) the cluster's platform. Throws util::InputError for a bad
// platform file. One per process.
World make_world(const hardware::ClusterSpec& cluster);

// Runs the simulation. One call per process (SimGrid allows one Engine per process).
// REQUIRES: scenario validated; costs = model::compute_step_costs(scenario...) or equivalent.
// Throws std::runtime_error if the simulated DAG stalls (an activity that never finished).
RunResult simulate(const config::Scenario& scenario, const model::StepCosts& costs, const EngineOptions& options);
// Same on a world already made from scenario.cluster.
RunResult simulate(const config::Scenario& scenario, const model::StepCosts& costs, const EngineOptions& options,
                   World world);

}  // namespace trainsim::engine
