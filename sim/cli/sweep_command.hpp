// `trainsim sweep`: the scenario at several node counts; where does scaling go sublinear.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::cli {

struct SweepOptions {
  std::string scenario;
  std::string nodes;              // "8,16,32" or "8..2048" (powers of two within)
  int64_t jobs = 0;               // 0 = number of cores
  std::string json_path;
  std::string csv_path;
  std::vector<std::string> sets;
  std::string scaling = "strong"; // strong: keep global batch; weak: keep batch per replica
  double threshold = 0.9;
  int64_t steps = 0;
  std::string resume_path;        // JSON-lines results file: finished points kept, not recomputed
  bool quiet = false;
  int64_t runs = 1;               // seeds per point (seed, seed + 1, ...): mean and 95% interval per point
  uint64_t seed = 1;
};

// Parses "8,16,32" or "8..2048". Throws util::InputError("--nodes: ...").
std::vector<int64_t> parse_node_list(const std::string& text);

int sweep_command(const SweepOptions& options, const char* argv0);

}  // namespace trainsim::cli
