// What one simulation may ask of the machine. The loader accepts any scenario `trainsim memory`
// can answer for (up to 2^30 GPUs); simulating one takes SimGrid hosts, actors and per-step
// records, so every command that simulates checks these first, before SimGrid sees the scenario.
// Figures measured on the 2-core, 24 GB development machine with the release build.
#pragma once

#include <cstdint>

#include "config/scenario.hpp"

namespace trainsim::config {

// The platform has a host per GPU: 2^20 GPUs (fat-tree, symmetric fidelity) took 3.9 GB and 51 s
// for one step.
constexpr int64_t kMaxSimulatedGpus = int64_t{1} << 20;
// Actors, one per simulated pipeline stage (full fidelity: dp * pp; symmetric: pp). Full fidelity
// with 4,096 took 1.4 GB and 26 s per step.
constexpr int64_t kMaxSimulatedStages = 16384;
// Per-(stage, step) records the engine allocates up front, 32 B each: 2 GiB.
constexpr int64_t kMaxStageSteps = int64_t{1} << 26;
// Per-step activities and mailboxes: simulated stages * virtual stages * micro-batches.
constexpr int64_t kMaxStageMicroBatches = int64_t{1} << 24;

// Throws util::InputError ("FILE: too large to simulate: ...", FILE = scenario.source_file) when
// simulating `steps` steps of `scenario` would pass a limit above, or when steps is outside
// [1, kMaxSteps]. `full_fidelity`: whether the engine gives every DP replica its own actors
// (engine::resolve_fidelity(...) == Fidelity::kFull).
void check_simulable(const Scenario& scenario, int64_t steps, bool full_fidelity);

}  // namespace trainsim::config
