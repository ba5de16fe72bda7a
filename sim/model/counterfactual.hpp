// What each resource costs the step: the closed-form step re-costed with that one resource
// idealised, the others as they are (issue 16's counterfactual diagnosis). The bottleneck is the
// class whose idealisation saves the most (report/run_report.cpp).
//
//   key                  idealised as
//   interconnect.inter   inter-node bandwidth unlimited (NIC and fabric; NCCL latencies kept)
//   interconnect.intra   intra-node bandwidth unlimited (every ring flow, NVLink or PCIe)
//   interconnect         both at once
//   pipeline             no bubble (a perfect schedule; pipeline transfers kept)
//   compute.flops        twice the GPU's tensor throughput (every precision)
//   compute.hbm          HBM bandwidth unlimited (memory-bound kernels, optimizer)
//   compute.host         no fixed per-step overhead (the wait for the slowest data-parallel replica's
//                        host at the step's synchronisation, the gradient-norm all-reduce)
//   compute              the three at once
//   memory.recompute     no activation recompute (only when the scenario recomputes)
//   memory.offload       no optimizer-state offload (only when the scenario offloads)
//   memory               both at once (only when either applies): what unlimited HBM capacity buys
//
// Classes are the contract's bottleneck names; finer keys are "class.part". The engine adds what
// only it can measure (interconnect.contention, compute.stragglers: cli/run_command.cpp).
// Each saving is base step - idealised step, >= 0 up to rounding.
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

struct Counterfactual {
  std::string resource;    // key above
  double step_s = 0;       // the idealised step
  double saved_s = 0;      // base step - step_s
  bool simulated = false;  // measured by the engine (cli/advice.hpp) rather than the closed form
};

// A scenario with one key idealised (one definition of each counterfactual). Bandwidths become a thousand times the scenario's: no
// transfer of a step then takes measurable time, and every formula and SimGrid link stays finite.
struct Idealised {
  ModelSpec model;
  ParallelSpec par;
  TrainingSpec train;
  hardware::ClusterSpec cluster;
  bool no_host_overhead = false;  // StepCosts::step_overhead_s set to 0 after costing
};
// REQUIRES: `key` is one of the table's keys other than `pipeline` (a schedule, not a resource the
// scenario can be given: the engine's own bubble measures it).
Idealised idealise(const std::string& key, const ModelSpec& model, const ParallelSpec& par, const TrainingSpec& train,
                   const hardware::ClusterSpec& cluster);


// "interconnect.intra" -> "interconnect"; a class is its own class.
std::string class_of(const std::string& key);
inline bool is_class(const std::string& key) { return key.find('.') == std::string::npos; }

// Every key that applies, classes and parts, sorted by saving, largest first (stable: the table
// order above breaks ties).
// REQUIRES: the spec is validated.
std::vector<Counterfactual> counterfactual_savings(const ModelSpec& model, const ParallelSpec& par,
                                                   const TrainingSpec& train, const hardware::ClusterSpec& cluster);

// The class that saves the most, and its part that saves the most (the class itself for
// `pipeline`). `savings` sorted as above; empty input gives empty names.
struct BottleneckChoice {
  std::string klass;
  std::string part;
  double saved_s = 0;  // the class's saving
};
BottleneckChoice largest_saving(const std::vector<Counterfactual>& savings);

}  // namespace trainsim::model
