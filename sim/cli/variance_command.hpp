// `trainsim variance`: R independent seeds; the run-to-run distribution, dedicated vs shared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace trainsim::cli {

struct VarianceOptions {
  std::string scenario;
  int64_t runs = 10;
  uint64_t seed = 1;
  int64_t jobs = 0;
  std::string json_path;
  std::vector<std::string> sets;
  int64_t steps = 0;
  bool quiet = false;
  bool no_replicate = false;
};

int variance_command(const VarianceOptions& options, const char* argv0);

}  // namespace trainsim::cli
