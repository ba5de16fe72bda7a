// A scenario: everything one `trainsim run` needs, loaded from YAML (version 1, CONTRACT.md) and
// validated. Nothing downstream re-validates: a Scenario that exists is consistent.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hardware/cluster.hpp"
#include "model/spec.hpp"
#include "util/error.hpp"

namespace trainsim::config {

// Failure statistics over the run (issue 8). Rates per GPU-hour.
struct ReliabilitySpec {
  std::string preset;                       // "llama3" or ""
  double failures_per_gpu_hour = 0;         // all categories together
  std::map<std::string, double> categories;  // category -> failures per GPU-hour (sums to the above)
  double checkpoint_interval_s = 7200;
  double checkpoint_write_s = 0;            // 0 = from checkpoint size / storage bandwidth
  double storage_bandwidth_Bps = 0;         // aggregate write bandwidth to checkpoint storage; 0 = unset
  double restart_s = 600;
};

// Other tenants on the inter-node fabric (issue 7).
struct ContentionSpec {
  std::string model = "tenants";
  int64_t tenants = 4;
  double load = 0.5;       // mean fraction of a shared link's bandwidth a busy tenant takes
  double burst_s = 30;     // mean busy period
  double idle_s = 30;      // mean idle period (default = burst)
  uint64_t seed = 1;
  // Tenants as jobs that come and go (issue 17): each tenant slot holds a job for an exponential
  // time of mean job_duration_s, then stays empty for one of mean job_gap_s. Each job draws
  // its own links and its own load (U(0.5, 1.5) x load, at most 1). job_duration_s = 0: every
  // tenant is present for the whole run with one placement (the model before).
  double job_duration_s = 0;
  double job_gap_s = 0;    // default = job_duration_s
  // Load that changes over the day (issue 17): a busy tenant takes load x (1 + diurnal_amplitude x
  // cos(2 pi (hour - peak_hour) / 24)) of a link (at most all of it), re-evaluated at least every
  // kDiurnalStep_s of a busy period. The hour is the simulated window's start hour plus the clock:
  // `start_hour`, or when absent (< 0) one drawn per run seed (diurnal_start_hour), so seeds sample
  // the whole day.
  double diurnal_amplitude = 0;
  double peak_hour = 14;
  double start_hour = -1;
};

// How often a busy tenant re-reads the time of day (15 min: the daily curve moves by at most
// 2 pi / 96 of its phase between updates).
inline constexpr double kDiurnalStep_s = 900;

// The hour of day a run's simulated window starts: c.start_hour when set, else spread evenly over
// consecutive seeds (the fractional parts of seed x the golden ratio, a Weyl sequence).
double diurnal_start_hour(const ContentionSpec& c, uint64_t run_seed);
// The tenants' load multiplier at `clock_s` simulated seconds after a window that started at
// `start_hour`; 1 without a diurnal amplitude.
double diurnal_factor(const ContentionSpec& c, double start_hour, double clock_s);

// Faulty fabric links (issue 17), each drawn per seed among the switch uplink cables (leaf uplinks
// and above): `degraded` cables run the whole run at `degraded_share` of their bandwidth (a cable
// negotiated down, a lossy optic retransmitting); every cable goes down at `flaps_per_link_hour`
// (Poisson) for an exponential time of mean flap_s, its traffic waiting meanwhile (no rerouting:
// the cost before the fabric converges around it).
struct LinkFaultSpec {
  int64_t degraded = 0;
  double degraded_share = 0.5;
  double flaps_per_link_hour = 0;
  double flap_s = 10;
};

// Slow GPUs or nodes that gate every collective they join (issue 7).
struct StragglerSpec {
  int64_t count = 0;        // how many GPUs are slow for the whole run
  double slowdown = 1.0;    // compute time multiplier of a slow GPU (>= 1)
  double jitter = 0;        // per-step relative std-dev of every GPU's compute time
  // Stragglers that come and go (thermal or power capping, a noisy neighbour on the host): each
  // GPU starts an episode at this rate (Poisson), runs `slowdown` times slower for an exponential
  // time of mean episode_s, then recovers. 0 = none.
  double episodes_per_gpu_hour = 0;
  double episode_s = 60;
};

// Most steps one run simulates (training.steps, --steps): the engine keeps a record per simulated
// stage and step, and 10^6 steps of the smallest scenario already take about an hour.
constexpr int64_t kMaxSteps = 1000000;
// Scenario files are read up to this size (load_scenario); real ones are a few kB.
constexpr size_t kMaxScenarioBytes = size_t{16} << 20;

enum class Fidelity { kAuto, kFull, kSymmetric };
const char* to_string(Fidelity f);

struct Scenario {
  int version = 1;
  std::string name;
  std::string source_file;  // path it was loaded from ("" when built in code)
  model::ModelSpec model;
  hardware::ClusterSpec cluster;
  model::ParallelSpec parallel;
  model::TrainingSpec training;
  std::optional<ReliabilitySpec> reliability;
  std::optional<ContentionSpec> contention;
  std::optional<StragglerSpec> stragglers;
  std::optional<LinkFaultSpec> link_faults;
  Fidelity fidelity = Fidelity::kAuto;  // engine.fidelity: auto | full | symmetric
  int64_t gradient_buckets = 0;         // engine.buckets; 0 = auto
  // engine.flow_classes: DP flows that are alone on their links and identical are simulated once
  // per class (exact; engine/flow_classes.hpp). false: every flow is simulated (for comparisons).
  bool flow_classes = true;
  // What the loader decided for the user that they may want to know (derived dp, uneven layer
  // split, defaulted ffn_hidden), one sentence each. The loader does not log; the CLI may print them.
  std::vector<std::string> notes;
};

// Failure rates per GPU-hour by category for `reliability.preset` ("llama3"), nullopt when unknown.
std::optional<std::map<std::string, double>> find_failure_preset(std::string_view name);
std::vector<std::string> failure_preset_names();

// One `--set KEY=VALUE` override, e.g. {"model.layers", "80"}.
struct Override {
  std::string key;
  std::string value;
};

// Parses "KEY=VALUE". Throws util::InputError("--set: ...") when there is no '='.
Override parse_override(const std::string& text);

// The bytes of the scenario file at `path` (any readable file: a FIFO such as /dev/stdin or a
// process substitution is read once, to its end). Throws util::InputError("PATH: cannot read file").
std::string read_scenario_file(const std::string& path);

// Loads, applies overrides (validated exactly like the file; errors point at "--set:1:COL"),
// fills presets and defaults, validates everything. Throws util::InputError with the location.
Scenario load_scenario(const std::string& path, const std::vector<Override>& overrides = {});
// Same from a string (tests); `name_for_errors` stands in for the path in messages.
Scenario load_scenario_text(const std::string& yaml, const std::string& name_for_errors,
                            const std::vector<Override>& overrides = {});

}  // namespace trainsim::config
