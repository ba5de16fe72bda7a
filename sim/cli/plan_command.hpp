// `trainsim plan`: the best way to lay this model out on this cluster (issue 18). Every parallel
// layout of the scenario's model, cluster and global batch is enumerated (tp, cp, pp with
// interleaved chunks, dp, micro-batch, schedule, recompute, ZeRO stage, sequence parallelism,
// optimizer offload); the loader's own rules reject the invalid ones, the memory model the ones that
// do not fit, the closed form costs the rest, and the engine simulates the best `top` of them (and
// the layout as written) in worker processes. Ranked by simulated step time, run cost or the fewest
// GPUs that meet a deadline; with --nodes, at each cluster size, with the knee of the sizes' best.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::cli {

struct PlanOptions {
  std::string scenario;
  std::vector<std::string> sets;
  int64_t top = 8;                  // layouts simulated per cluster size
  int64_t jobs = 0;                 // worker processes (0 = number of cores)
  std::string json_path;
  std::string write_best;           // scenario YAML of the winner
  std::string objective = "time";   // time | cost | gpus
  double deadline_s = 0;            // --deadline (objective gpus)
  int64_t max_gpus = 0;             // sizes above this are skipped (0 = no limit)
  std::string nodes;                // "256..2048": one plan per size; "" = the scenario's
  int64_t steps = 50;               // steps simulated per layout
  uint64_t seed = 1;
  double threshold = 0.9;           // scaling efficiency below which the sizes' knee is reported
  bool quiet = false;
};

int plan_command(const PlanOptions& options, const char* argv0);

}  // namespace trainsim::cli
