// What a simulation produced: one record per simulated step, per-stage totals, trace events.
// Plain data; report/ turns it into tables, JSON, CSV and traces.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::engine {

// One step as seen by the critical stage (the one with the most compute + optimizer time):
// time_s = compute_s + tp_comm_s + exposed_comm_s + bubble_s + optimizer_s exactly.
struct StepRecord {
  int64_t step = 0;
  double start_s = 0;         // simulated time the step began
  double time_s = 0;
  double compute_s = 0;
  double tp_comm_s = 0;       // exposed TP/CP communication folded into the passes (model/compute.hpp)
  double exposed_comm_s = 0;  // waiting on a transfer that was already under way
  double bubble_s = 0;        // waiting on another rank (pipeline fill/drain, step-end barrier)
  double optimizer_s = 0;      // optimizer step plus the fixed per-step overhead (StepCosts::step_overhead_s)
  double sync_wait_s = 0;     // mean over simulated GPUs of (exposed comm + bubble)
};

// Totals over all simulated steps for one simulated GPU (one pipeline stage of one replica).
struct GpuTotals {
  int64_t replica = 0;
  int64_t stage = 0;
  double compute_s = 0;
  double tp_comm_s = 0;
  double optimizer_s = 0;
  double comm_wait_s = 0;
  double bubble_s = 0;
};

// Chrome trace events, times in simulated seconds: 'X' complete slices, 'i' instants (step
// markers), 's' / 'f' the two ends of a flow (a pipeline message from sender to receiver).
struct TraceEvent {
  std::string name;
  std::string category;  // forward | backward | tp | optimizer | send | recv | bubble | dp-sync | step
  int64_t track = 0;     // index into RunResult::tracks
  double start_s = 0;
  double duration_s = 0;
  char phase = 'X';
  uint64_t flow = 0;     // 's' / 'f': the id both ends share
};

struct RunResult {
  std::vector<StepRecord> steps;
  std::vector<GpuTotals> gpus;
  // Trace tracks: "steps" first, then for each simulated GPU (the first rank of its TP x CP group)
  // its compute stream, TP stream and DP stream. track_groups: the trace process of each track
  // (0 = the run, r + 1 = replica r).
  std::vector<std::string> tracks;
  std::vector<int64_t> track_groups;
  std::vector<TraceEvent> trace;
  std::string fidelity;             // "full" | "symmetric"
  std::string network_model;
  int64_t critical_stage = 0;
  int64_t simulated_gpus = 0;       // GPUs with an actor of their own
  int64_t dp_flows_per_step = 0;    // network flows the DP synchronisation put on the platform
  int64_t p2p_flows_per_step = 0;
  int64_t dp_flow_plans = 0;        // DP collective plans made: one per (communication actor, kind, bytes), reused
  int64_t dp_flows_started = 0;     // DP flows SimGrid simulated over the run
  int64_t dp_flows_classed = 0;     // DP flows a flow of their class stood for (engine/flow_classes.hpp)
  int64_t p2p_transfers_timed = 0;  // pipeline transfers timed alone, not simulated (Simulation::timed_transfer)
  double wall_s = 0;
  bool interrupted = false;         // stopped early (SIGINT); steps holds what finished
  int64_t steps_replicated = 0;     // steps copied from the detected steady state (the last ones of `steps`)
};

}  // namespace trainsim::engine
