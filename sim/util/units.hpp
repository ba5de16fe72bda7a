// Quantities with units, in SimGrid's unit syntax. G = 10^9, Gi = 2^30.
//   bandwidth: "450GBps" (bytes/s), "400Gbps" (bits/s), "25GiBps"; also "Bps"/"bps" with k M G T P
//   size:      "80GB", "80GiB", "512MiB", "1e9B"
//   time:      "1us", "5ms", "2h", "10min", "30s", "1d"
// A bare number where a unit is needed is an error: the caller learns why via UnitError.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim::util {

class UnitError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// Returns bytes per second. REQUIRES: text has a unit; the value is finite and > 0.
double parse_bandwidth(std::string_view text);
// Returns bytes. REQUIRES: text has a unit; the value is finite and >= 0.
double parse_size(std::string_view text);
// Returns seconds. REQUIRES: text has a unit; the value is finite and >= 0.
double parse_time(std::string_view text);

// Human-readable forms for tables: "80.0 GB", "450 GB/s", "3.2 us", "12.4 days".
std::string format_bytes(double bytes);
std::string format_bandwidth(double bytes_per_s);
std::string format_duration(double seconds);

// The items with `sep` between them: {"a", "b"} -> "a, b"; {} -> "".
std::string join(const std::vector<std::string>& items, const std::string& sep = ", ");

// Closest candidate by edit distance, or "" when none is close enough ("did you mean").
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Appended (config/): returns flop/s from SimGrid's speed syntax, "989.4Tf" or "989.4Tflops";
// prefixes k M G T P E (powers of 10). REQUIRES: text has a unit; the value is finite and > 0.
double parse_flops(std::string_view text);

}  // namespace trainsim::util
