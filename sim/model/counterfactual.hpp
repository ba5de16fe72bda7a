// What each resource costs the step: the closed-form step re-costed with that one resource
// idealised, the others as they are (issue 16's counterfactual diagnosis, first part: the engine
// does not yet re-run the shortlist, and the bottleneck line still comes from shares).
//
//   key                  idealised as
//   interconnect.inter   inter-node bandwidth unlimited (NIC and fabric; NCCL latencies kept)
//   interconnect.intra   intra-node bandwidth unlimited (every ring flow, NVLink or PCIe)
//   pipeline             no bubble (a perfect schedule; pipeline transfers kept)
//   compute.flops        twice the GPU's tensor throughput (every precision)
//   compute.hbm          HBM bandwidth unlimited (memory-bound kernels, optimizer)
//   recompute            no activation recompute (whether it would fit is not asked)
//   offload              no optimizer-state offload (only when the scenario offloads)
//
// Each saving is base step - idealised step, >= 0 up to rounding; sorted, largest first.
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

struct Counterfactual {
  std::string resource;  // key above
  double step_s = 0;     // the idealised step
  double saved_s = 0;    // base step - step_s
};

// REQUIRES: the spec is validated.
std::vector<Counterfactual> counterfactual_savings(const ModelSpec& model, const ParallelSpec& par,
                                                   const TrainingSpec& train, const hardware::ClusterSpec& cluster);

}  // namespace trainsim::model
