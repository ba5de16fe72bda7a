#include "report/run_report.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "model/accuracy.hpp"

namespace trainsim::report {
namespace {

config::Scenario scenario() {
  config::Scenario sc;
  sc.name = "report-test";
  sc.model.layers = 2;
  sc.model.hidden = 1024;
  sc.model.ffn_hidden = 4096;
  sc.model.heads = 16;
  sc.model.kv_heads = 16;
  sc.model.vocab = 32000;
  sc.model.seq_len = 2048;
  sc.cluster.gpu = *hardware::find_gpu("h100-sxm");
  sc.cluster.nodes = 1;
  sc.training.global_batch = 8;
  sc.training.total_tokens = 1e12;
  sc.training.steps = 4;
  return sc;
}

model::StepCosts costs() {
  model::StepCosts c;
  c.stages.resize(1);
  c.stages[0].chunks.resize(1);
  c.stages[0].chunks[0].forward_flops = 1;
  c.tokens_per_step = 8 * 2048;
  c.model_flops_per_step = 8 * 989.4e12 * 0.5;  // half of peak for one second on 8 GPUs
  c.micro_batches = 8;
  return c;
}

engine::RunResult run_of(std::vector<double> times) {
  engine::RunResult r;
  int64_t i = 0;
  for (double t : times) {
    engine::StepRecord s;
    s.step = i++;
    s.time_s = t;
    s.compute_s = 0.6 * t;
    s.exposed_comm_s = 0.2 * t;
    s.bubble_s = 0.15 * t;
    s.optimizer_s = 0.05 * t;
    s.sync_wait_s = 0.3 * t;
    r.steps.push_back(s);
  }
  r.tracks = {"replica 0 stage 0", "replica 0 stage 0 dp-sync"};
  r.trace = {{"F0.0", "forward", 0, 0.0, 0.1}, {"grad bucket 0.0", "dp-sync", 1, 0.1, 0.05}};
  r.network_model = "CM02";
  r.fidelity = "full";
  return r;
}

TEST(RunReportTest, StatsPercentilesInterpolate) {
  const auto s = stats_of({4, 1, 3, 2});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.p50, 2.5);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.p90, 3.7);  // 0.9 * 3 = 2.7 -> 3 + 0.7 * (4 - 3)
}

TEST(RunReportTest, BreakdownAddsUpAndMfuFollowsFlops) {
  const auto s = summarize(scenario(), costs(), run_of({1.0, 1.0, 1.0, 1.0}), 1);
  EXPECT_NEAR(s.compute_s + s.exposed_comm_s + s.bubble_s + s.optimizer_s, s.step_time.mean, 1e-3 * s.step_time.mean);
  EXPECT_NEAR(s.mfu, 0.5, 1e-9);            // model FLOPs / (GPUs * step * peak)
  EXPECT_NEAR(s.tokens_per_s, 16384, 1e-9);  // tokens per step / mean step
  EXPECT_NEAR(s.sync_wait_fraction, 0.3, 1e-12);
  // The bottleneck is the class whose idealisation saves the most (closed form on the scenario),
  // whatever shares the run reports: 2 layers on one GPU's worth of work are compute-bound.
  EXPECT_EQ(s.bottleneck, model::largest_saving(s.savings).klass);
  EXPECT_EQ(s.bottleneck, "compute");
}

TEST(RunReportTest, ProjectionIsStepsTimesMeanStep) {
  // total_steps = ceil(1e12 / 16384) = 61035157; days = steps * mean / 86400.
  const auto s = summarize(scenario(), costs(), run_of({1.0, 2.0, 3.0}), 1);
  EXPECT_DOUBLE_EQ(s.projection.total_steps, 61035157);
  EXPECT_NEAR(s.projection.days, 61035157 * 2.0 / 86400, 1e-3 * s.projection.days);
  // Without sync wait each GPU only works: mean step minus mean wait (0.3 x 2 s).
  EXPECT_NEAR(s.projection.days_without_sync_wait, 61035157 * 1.4 / 86400, 1e-6 * s.projection.days);
  EXPECT_NEAR(s.projection.stretch_days, s.projection.days - s.projection.days_without_sync_wait, 1e-9);
  EXPECT_EQ(s.projection.goodput, 1.0);  // no reliability block
  EXPECT_EQ(s.projection.days_lost_to_failures, 0.0);
}

// Issue 16: the stretch by cause. The run's waiting (0.3 x 2 s per step) split by the GPUs' totals:
// 1 s of transfer waiting against 3 s of waiting on other ranks gives communication 1/4, bubble 3/4.
// With measured runs on a dedicated fabric (0.45 s) and without stragglers too (0.35 s):
// contention = 0.6 - 0.45, stragglers = 0.45 - 0.35, the rest 0.35 split 40/60. Always adds up.
TEST(RunReportTest, StretchSplitsByCauseAndAddsUp) {
  auto run = run_of({1.0, 2.0, 3.0});
  engine::GpuTotals g;
  g.comm_wait_s = 1;
  g.bubble_s = 3;
  run.gpus = {g};
  auto s = summarize(scenario(), costs(), run, 1);
  const double per_day = s.projection.total_steps / 86400.0;
  const auto& c = s.projection.stretch_days_by_cause;
  EXPECT_NEAR(c.communication, 0.25 * 0.6 * per_day, 1e-9 * per_day);
  EXPECT_NEAR(c.bubble, 0.75 * 0.6 * per_day, 1e-9 * per_day);
  EXPECT_EQ(c.contention, 0);
  EXPECT_EQ(c.stragglers, 0);
  split_stretch(s, 0.45, 0.35, 0.4);
  EXPECT_NEAR(c.contention, 0.15 * per_day, 1e-9 * per_day);
  EXPECT_NEAR(c.stragglers, 0.10 * per_day, 1e-9 * per_day);
  EXPECT_NEAR(c.communication, 0.4 * 0.35 * per_day, 1e-9 * per_day);
  EXPECT_NEAR(c.bubble, 0.6 * 0.35 * per_day, 1e-9 * per_day);
  EXPECT_NEAR(c.bubble + c.communication + c.stragglers + c.contention, s.projection.stretch_days, 1e-9 * per_day);
  const auto j = to_json(s);
  EXPECT_NEAR(j["projection"]["stretch_days_by_cause"]["contention"].get<double>(), c.contention, 1e-12);
}

// A measured saving joins its class: contention adds to interconnect, and both are then read against
// the run's step; the bottleneck follows the new largest class.
TEST(RunReportTest, MeasuredSavingJoinsItsClass) {
  auto s = summarize(scenario(), costs(), run_of({1.0}), 1);
  double before = 0;
  for (const auto& c : s.savings)
    if (c.resource == "interconnect") before = c.saved_s;
  add_measured_saving(s, "interconnect.contention", 10.0, 9.0);
  diagnose(scenario(), s);
  double after = -1, part = -1, step = -1;
  for (const auto& c : s.savings) {
    if (c.resource == "interconnect") {
      after = c.saved_s;
      step = c.step_s;
    }
    if (c.resource == "interconnect.contention") part = c.saved_s;
  }
  EXPECT_DOUBLE_EQ(part, 9.0);
  EXPECT_DOUBLE_EQ(after, before + 9.0);
  EXPECT_DOUBLE_EQ(step, 10.0 - after);
  EXPECT_EQ(s.bottleneck, "interconnect");
  EXPECT_NE(s.bottleneck_reason.find("the same seed on a dedicated"), std::string::npos) << s.bottleneck_reason;
}

TEST(RunReportTest, JsonHasTheContractKeys) {
  const auto j = to_json(summarize(scenario(), costs(), run_of({1.0}), 7));
  for (const char* k : {"/scenario/name", "/gpus", "/model/params", "/memory/per_gpu_bytes", "/memory/capacity_bytes",
                        "/memory/fits", "/memory/breakdown/weights", "/memory/breakdown/gradients",
                        "/memory/breakdown/optimizer", "/memory/breakdown/activations", "/memory/breakdown/other",
                        "/step_time_s/mean", "/step_time_s/p50", "/step_time_s/p90", "/step_time_s/p99",
                        "/step_time_s/min", "/step_time_s/max", "/tokens_per_s", "/tflops_per_gpu", "/mfu",
                        "/breakdown_s/compute", "/breakdown_s/tp_comm", "/breakdown_s/exposed_comm", "/breakdown_s/bubble",
                        "/breakdown_s/optimizer", "/sync_wait/fraction", "/projection/total_steps",
                        "/projection/days", "/projection/days_without_sync_wait", "/projection/stretch_days",
                        "/projection/goodput", "/projection/days_lost_to_failures", "/bottleneck",
                        "/bottleneck_reason", "/steps_simulated", "/seed", "/network_model", "/wall_s"})
    EXPECT_TRUE(j.contains(nlohmann::json::json_pointer(k))) << k;
  EXPECT_EQ(j["seed"], 7);
  EXPECT_EQ(j["network_model"], "CM02");
  // Issue 16's counterfactuals (closed form): every always-present resource, in seconds saved.
  for (const char* k : {"interconnect", "interconnect.inter", "interconnect.intra", "pipeline", "compute", "compute.flops",
                        "compute.hbm", "compute.host"}) {
    ASSERT_TRUE(j["bottleneck_savings_s"].contains(k)) << k;
    EXPECT_GE(j["bottleneck_savings_s"][k].get<double>(), 0) << k;
  }
}

// The published runs' error band beside the prediction (model/accuracy.hpp): mean step 2 s and
// 61,035,157 steps (ProjectionIsStepsTimesMeanStep) become 2 (1 + p05) .. 2 (1 + p95) s and the
// days the same way, in the JSON and on the console.
TEST(RunReportTest, ErrorBandBesideStepTimeAndDays) {
  const auto s = summarize(scenario(), costs(), run_of({1.0, 2.0, 3.0}), 1);
  const auto j = to_json(s);
  const model::ErrorBand& e = model::model_accuracy().step_time;
  EXPECT_DOUBLE_EQ(j["accuracy"]["step_time"]["low_s"].get<double>(), 2.0 * (1 + e.p05_pct / 100));
  EXPECT_DOUBLE_EQ(j["accuracy"]["step_time"]["high_s"].get<double>(), 2.0 * (1 + e.p95_pct / 100));
  EXPECT_EQ(j["accuracy"]["step_time"]["runs"], e.rows);
  const double days = 61035157 * 2.0 / 86400;
  EXPECT_NEAR(j["accuracy"]["days"]["low"].get<double>(), days * (1 + e.p05_pct / 100), 1e-3 * days);
  EXPECT_NEAR(j["accuracy"]["days"]["high"].get<double>(), days * (1 + e.p95_pct / 100), 1e-3 * days);
  EXPECT_TRUE(j["accuracy"]["memory"].contains("capacity_inside"));
  const std::string table = console_table(s);
  EXPECT_NE(table.find("error band (90%)"), std::string::npos) << table;
  EXPECT_NE(table.find(e.basis), std::string::npos) << table;
  // An H100 SXM node with NVSwitch is what published runs had: nothing outside them.
  EXPECT_TRUE(j["accuracy"]["step_time"]["outside"].empty());
  EXPECT_EQ(table.find("no published run had"), std::string::npos) << table;
  // The same on MI300X: the band has no MI300X run behind it, and the report says so.
  config::Scenario mi = scenario();
  mi.cluster.gpu = *hardware::find_gpu("mi300x");
  const auto m = summarize(mi, costs(), run_of({1.0, 2.0, 3.0}), 1);
  ASSERT_EQ(m.outside_coverage.size(), 1u);
  EXPECT_EQ(to_json(m)["accuracy"]["step_time"]["outside"][0], m.outside_coverage[0]);
  EXPECT_NE(console_table(m).find("no published run had     mi300x GPUs"), std::string::npos) << console_table(m);
}

TEST(RunReportTest, CsvHasOneRowPerStep) {
  const std::string csv = steps_csv(run_of({1.0, 2.0, 3.0}));
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "step,time_s,compute_s,tp_comm_s,exposed_comm_s,bubble_s,optimizer_s,sync_wait_s,replicated");
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 3);
}

TEST(RunReportTest, CsvMarksTheReplicatedSteps) {
  auto run = run_of({1.0, 2.0, 2.0, 2.0});
  run.steps_replicated = 2;  // the last two
  std::istringstream in(steps_csv(run));
  std::string line;
  std::vector<char> flags;
  std::getline(in, line);
  while (std::getline(in, line)) flags.push_back(line.back());
  EXPECT_EQ(flags, (std::vector<char>{'0', '0', '1', '1'}));
}

TEST(RunReportTest, TraceIsChromeTraceJson) {
  const auto j = nlohmann::json::parse(chrome_trace(run_of({1.0})));
  ASSERT_TRUE(j["traceEvents"].is_array());
  int complete = 0;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(e.contains("ts") && e.contains("dur") && e.contains("tid"));
    }
  EXPECT_EQ(complete, 2);
  // Without track groups every track is in process 0, named after the run; threads keep their names.
  EXPECT_EQ(j["traceEvents"][0]["name"], "process_name");
  EXPECT_EQ(j["traceEvents"][0]["args"]["name"], "trainsim run");
  EXPECT_EQ(j["traceEvents"][2]["name"], "thread_name");
  EXPECT_EQ(j["traceEvents"][2]["args"]["name"], "replica 0 stage 0");
}

}  // namespace
}  // namespace trainsim::report
