// The published runs simulated by the SimGrid engine (the product's own path: step costs ->
// simulated schedule, p2p and DP flows) against the closed form of the same program. Each run is
// simulated in a forked child: SimGrid allows one Engine per process.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "config/scenario.hpp"
#include "engine/step_engine.hpp"
#include "more_runs.hpp"
#include "published_runs.hpp"

namespace trainsim::validation {
namespace {

std::string reference_path() {
  // The shared reference data when present, else the snapshot kept beside this test.
  const std::string shared = std::string(TRAINSIM_SOURCE_DIR) + "/../shared/reference/published_runs.yaml";
  if (std::filesystem::exists(shared)) return shared;
  return std::string(TRAINSIM_SOURCE_DIR) + "/test/validation/published_runs.yaml";
}

// Simulated step time of a scenario (3 steps, the last), or -1 on failure.
double simulated_step(const config::Scenario& sc, config::Fidelity fidelity) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  std::fflush(stdout);  // the child inherits the buffer
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double step = -1;
    try {
      const auto costs = model::compute_step_costs(sc.model, sc.parallel, sc.training, sc.cluster);
      engine::EngineOptions o;
      o.steps = 3;
      o.fidelity = fidelity;
      const auto res = engine::simulate(sc, costs, o);
      step = res.steps.back().time_s;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", sc.name.c_str(), e.what());
    }
    (void)!write(fds[1], &step, sizeof step);
    _exit(0);
  }
  close(fds[1]);
  double step = -1;
  (void)!read(fds[0], &step, sizeof step);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return step;
}

double simulated_step(const PublishedRun& r) {
  config::Scenario sc;
  sc.name = r.id;
  sc.model = r.model;
  sc.parallel = r.par;
  sc.training = r.train;
  sc.cluster = r.cluster;
  return simulated_step(sc, config::Fidelity::kSymmetric);
}

// Issue 13 item 3: the engine (pipeline transfers as blocking flows, DP buckets as flows with NCCL's
// per-call latency) and the closed form (model/step_estimate.hpp) are two models of one program: they
// agree within 2% on every published row. The accuracy against the measurements is
// calibration_test.cpp's.
TEST(EngineValidation, EngineAndClosedFormAgreeOnEveryPublishedRow) {
  const auto runs = load_published_runs(reference_path());
  ASSERT_GE(runs.size(), 31u);
  double worst = 0;
  std::printf("%-40s %9s %9s %8s\n", "id", "closed", "engine", "diff");
  std::fflush(stdout);  // the children fork with this buffer
  for (const auto& r : runs) {
    const double step = simulated_step(r);
    ASSERT_GT(step, 0) << r.id;
    const auto costs = model::compute_step_costs(r.model, r.par, r.train, r.cluster);
    const double closed = model::estimate_step(costs, r.model, r.par, r.train, r.cluster).step_s;
    const double diff = (step - closed) / closed * 100;
    std::printf("%-40s %9.3f %9.3f %+7.2f%%\n", r.id.c_str(), closed, step, diff);
    std::fflush(stdout);
    EXPECT_LE(std::fabs(diff), 2.0) << r.id;
    worst = std::max(worst, std::fabs(diff));
  }
  std::printf("engine vs closed form: %zu rows, worst %.2f%%\n", runs.size(), worst);
}

// The same on every usable row of more_runs.yaml (FSDP/ZeRO-3, CP, interleaved, FP8 rows among them).
TEST(EngineValidation, EngineAndClosedFormAgreeOnEveryCollectedRow) {
  const auto runs = load_more_runs(std::string(TRAINSIM_SOURCE_DIR) + "/test/validation/more_runs.yaml");
  ASSERT_GE(runs.size(), 45u);
  double worst = 0;
  int beyond = 0;
  std::fflush(stdout);
  for (const auto& m : runs) {
    const PublishedRun& r = m.run;
    const double step = simulated_step(r);
    ASSERT_GT(step, 0) << r.id;
    const double closed = model::estimate_step(r.model, r.par, r.train, r.cluster).step_s;
    const double diff = (step - closed) / closed * 100;
    std::printf("%-46s %9.3f %9.3f %+7.2f%%\n", r.id.c_str(), closed, step, diff);
    std::fflush(stdout);
    if (std::fabs(diff) > 2.0) ++beyond;
    worst = std::max(worst, std::fabs(diff));
  }
  std::printf("engine vs closed form: %zu collected rows, worst %.2f%%, %d beyond 2%%\n", runs.size(), worst, beyond);
  // Issue 13 item 3: within 2% on every row.
  EXPECT_EQ(beyond, 0);
  EXPECT_LE(worst, 2.0);
}

// Every shipped scenario on a dedicated fabric, by file name: contention, stragglers and failures
// are what the engine adds on top of the closed form, so they are taken out.
std::vector<std::pair<std::string, config::Scenario>> dedicated_shipped_scenarios() {
  std::vector<std::pair<std::string, config::Scenario>> out;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    config::Scenario sc = config::load_scenario(entry.path().string());
    sc.contention.reset();
    sc.stragglers.reset();
    sc.reliability.reset();
    out.emplace_back(entry.path().filename().string(), std::move(sc));
  }
  return out;
}

// The same for every shipped scenario.
TEST(EngineValidation, EngineAndClosedFormAgreeOnEveryShippedScenario) {
  int n = 0;
  for (const auto& [file, sc] : dedicated_shipped_scenarios()) {
    const double step = simulated_step(sc, config::Fidelity::kAuto);
    ASSERT_GT(step, 0) << file;
    const double closed = model::estimate_step(sc.model, sc.parallel, sc.training, sc.cluster).step_s;
    const double diff = (step - closed) / closed * 100;
    std::printf("%-36s closed %9.3f engine %9.3f %+7.2f%%\n", file.c_str(), closed, step, diff);
    EXPECT_LE(std::fabs(diff), 2.0) << file;
    ++n;
  }
  EXPECT_GE(n, 9);
}

// Over AWS EFA (cluster.inter_node.transport: efa, a network step 53 us instead of 14) both take
// NCCL's latencies from model::net_call_cost / inter_collective_time_s, and agree within 3%, not 2:
// gb200-nvl72 is +2.2% (+1.7% over InfiniBand), the others within 1.6% (the flagship +0.4%; -2.5%
// while the closed form hid an interleaved step's gradient reduction under one last backward
// instead of releasing each chunk's as the engine does, model/step_estimate.cpp).
TEST(EngineValidation, EngineAndClosedFormAgreeOverEfa) {
  int n = 0;
  for (auto [file, sc] : dedicated_shipped_scenarios()) {
    if (sc.cluster.nodes < 2 || !sc.cluster.platform_file.empty()) continue;
    const double ib = model::estimate_step(sc.model, sc.parallel, sc.training, sc.cluster).step_s;
    sc.cluster.transport = hardware::InterTransport::kEfa;
    const double step = simulated_step(sc, config::Fidelity::kAuto);
    const double closed = model::estimate_step(sc.model, sc.parallel, sc.training, sc.cluster).step_s;
    const double diff = (step - closed) / closed * 100;
    std::printf("%-36s efa closed %9.3f (infiniband %9.3f) engine %9.3f %+7.2f%%\n", file.c_str(), closed, ib, step, diff);
    EXPECT_LE(std::fabs(diff), 3.0) << file;
    EXPECT_GE(closed, ib) << file;  // never faster than over InfiniBand
    ++n;
  }
  EXPECT_GE(n, 6);
}

}  // namespace
}  // namespace trainsim::validation

namespace trainsim::validation {
namespace {

// Issue 13: the shipped flagship, configured as the Llama 3 paper describes it, within 10% of the
// 400 TFLOP/s per GPU Meta measured on 16,384 H100s (Table 4), in both models; and the same
// configuration as the validation row, so the README's accuracy table and the worked example agree.
TEST(Flagship, Llama3On16kGpusWithinTenPercentOfMeta) {
  config::Scenario sc = config::load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-405b-16k.yaml");
  const auto e = model::estimate_step(sc.model, sc.parallel, sc.training, sc.cluster);
  std::printf("closed form: %.1f TFLOP/s per GPU (Meta: 400)\n", e.tflops_per_gpu / 1e12);
  EXPECT_NEAR(e.tflops_per_gpu / 1e12, 400.0, 40.0);
  const double step = simulated_step(sc, config::Fidelity::kAuto);
  EXPECT_NEAR(e.step_s * e.tflops_per_gpu / step / 1e12, 400.0, 40.0);  // the engine's TFLOP/s
  for (const auto& m : load_more_runs(std::string(TRAINSIM_SOURCE_DIR) + "/test/validation/more_runs.yaml")) {
    if (m.run.id != "llama3_405b_t4_16384gpu_seq8k") continue;
    EXPECT_EQ(m.run.par.virtual_stages, sc.parallel.virtual_stages);
    EXPECT_EQ(m.run.par.zero, sc.parallel.zero);
    EXPECT_EQ(m.run.train.grad_reduce_fp32, sc.training.grad_reduce_fp32);
    EXPECT_EQ(m.run.train.attention_kernel, sc.training.attention_kernel);
    EXPECT_EQ(m.run.train.tp_comm_overlap, sc.training.tp_comm_overlap);
  }
}

}  // namespace
}  // namespace trainsim::validation
