// libFuzzer target over the scenario loader and the --set parser.
//
// Input layout: a scenario YAML text, optionally followed by a NUL byte and NUL-separated
// `--set` arguments ("KEY=VALUE"). Every argument goes through config::parse_override; those it
// accepts are applied by config::load_scenario_text, which then loads the text. A scenario that
// loads is also costed (parameters, memory per GPU, step costs) since that is what every command
// does next and the loader promises those computations a consistent, in-range scenario.
// Inputs that once failed are kept in test/fuzz/regressions/ (seeds for tools/fuzz) and loaded by
// test/config/regression_test.cpp.
//
// It then goes on to what reports it (issue 21 item 9): the built platform's plan
// (platform::plan_fabric, every value SimGrid would see), and the report writers on a summary of
// the closed-form step (report::summarize with the estimate standing in for the engine's steps):
// the JSON report, dumped strictly (invalid UTF-8 throws: how a byte 0xFF in `name` once crashed
// `run --json`), the console table, the memory report.
//
// Contract checked: the only exception a user's input may raise is util::InputError. Anything
// else (another exception, a sanitizer report, a hang past -timeout) is a crash.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "config/scenario.hpp"
#include "engine/result.hpp"
#include "model/memory.hpp"
#include "model/step_costs.hpp"
#include "model/step_estimate.hpp"
#include "model/transformer.hpp"
#include "platform/fabric.hpp"
#include "report/memory_report.hpp"
#include "report/run_report.hpp"
#include "util/error.hpp"

namespace {

using namespace trainsim;

[[noreturn]] void crash(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_scenario: %s: %s\n", what, detail.c_str());
  std::abort();
}

void cost(const config::Scenario& sc) {
  const auto params = model::count_params(sc.model);
  const auto mem = model::memory_per_gpu(sc.model, sc.parallel, sc.training);
  if (!(params.total > 0)) crash("non-positive parameter count", sc.name);
  if (!(mem.total() >= 0)) crash("negative or NaN memory", sc.name);
  const auto costs = model::compute_step_costs(sc.model, sc.parallel, sc.training, sc.cluster);
  if (static_cast<int64_t>(costs.stages.size()) != sc.parallel.pp) crash("stage count != pp", sc.name);
  // What `trainsim memory` suggests. Its cost grows with pp times the divisors of the batch, so
  // only small pipelines here (a deep one is a slow input, not a bug, and -timeout would flag it).
  if (sc.parallel.pp <= 64) {
    const int64_t b = model::largest_micro_batch(sc.model, sc.parallel, sc.training, sc.cluster.gpu.hbm_bytes);
    if (b < 0 || b > sc.training.global_batch) crash("largest_micro_batch out of range", sc.name);
  }
  if (sc.cluster.platform_file.empty()) (void)platform::plan_fabric(sc.cluster);
  // The report writers, on two steps of the closed form's timeline.
  const auto est = model::estimate_step(costs, sc.model, sc.parallel, sc.training, sc.cluster);
  engine::RunResult run;
  for (int64_t k = 0; k < 2; ++k) {
    engine::StepRecord r;
    r.step = k;
    r.start_s = static_cast<double>(k) * est.step_s;
    r.time_s = est.step_s;
    r.compute_s = est.compute_s;
    r.exposed_comm_s = est.exposed_comm_s;
    r.bubble_s = est.bubble_s;
    r.optimizer_s = est.optimizer_s;
    run.steps.push_back(r);
  }
  run.fidelity = "symmetric";
  run.network_model = "CM02";
  const auto summary = report::summarize(sc, costs, run, 1);
  const std::string json = report::to_json(summary).dump(2);  // strict: throws on invalid UTF-8
  const std::string table = report::console_table(summary);
  if (json.empty() || table.empty()) crash("empty report", sc.name);
  if (sc.parallel.pp <= 64) (void)report::memory_json(report::plan_memory(sc)).dump(2);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string yaml = input.substr(0, nul);
  std::vector<config::Override> overrides;
  if (nul != std::string::npos) {
    size_t start = nul + 1;
    while (start <= input.size() && overrides.size() < 16) {
      const size_t end = std::min(input.find('\0', start), input.size());
      try {
        overrides.push_back(config::parse_override(input.substr(start, end - start)));
      } catch (const util::InputError&) {
      } catch (const std::exception& e) {
        crash("parse_override threw a non-InputError", e.what());
      }
      start = end + 1;
    }
  }
  for (const bool with_overrides : {false, true}) {
    if (with_overrides && overrides.empty()) break;
    try {
      const auto sc = config::load_scenario_text(yaml, "fuzz.yaml", with_overrides ? overrides : std::vector<config::Override>{});
      cost(sc);
    } catch (const util::InputError& e) {
      const std::string msg = e.what();
      if (msg.rfind("fuzz.yaml", 0) != 0 && msg.rfind("--set", 0) != 0)
        crash("InputError without a location", msg);
    } catch (const std::exception& e) {
      crash("load_scenario_text threw a non-InputError", e.what());
    }
  }
  return 0;
}
