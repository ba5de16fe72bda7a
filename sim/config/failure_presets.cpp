#include <array>

#include "config/scenario.hpp"

namespace trainsim::config {
namespace {

// Llama 3 405B pre-training, 54-day snapshot (published_runs.yaml: llama3_405b_reliability_54day;
// Llama 3 paper arXiv:2407.21783, Sec. 3.3.4, Table 5): 419 unexpected interruptions on a job of
// 16,384 H100s. Rate of a category = its count / (54 days * 24 h * 16384 GPUs).
constexpr double kLlama3GpuHours = 54.0 * 24.0 * 16384.0;

struct Count {
  const char* category;
  int interruptions;
};

// Table 5 rows in its order; the counts add up to the 419 unexpected interruptions.
constexpr std::array<Count, 18> kLlama3Table5 = {{
    {"faulty_gpu", 148},
    {"gpu_hbm3_memory", 72},
    {"software_bug", 54},
    {"network_switch_cable", 35},
    {"host_maintenance", 32},
    {"gpu_sram_memory", 19},
    {"gpu_system_processor", 17},
    {"nic", 7},
    {"nccl_watchdog_timeout", 7},
    {"silent_data_corruption", 6},
    {"gpu_thermal_interface_sensor", 6},
    {"ssd", 3},
    {"power_supply", 3},
    {"server_chassis", 2},
    {"io_expansion_board", 2},
    {"dependency", 2},
    {"cpu", 2},
    {"system_memory", 2},
}};

}  // namespace

std::optional<std::map<std::string, double>> find_failure_preset(std::string_view name) {
  if (name != "llama3") return std::nullopt;
  std::map<std::string, double> rates;
  for (const Count& c : kLlama3Table5) rates[c.category] = c.interruptions / kLlama3GpuHours;
  return rates;
}

std::vector<std::string> failure_preset_names() { return {"llama3"}; }

}  // namespace trainsim::config
