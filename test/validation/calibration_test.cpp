// The fitted constants and the accuracy of the whole model on every usable published run
// (validation_set.hpp states the rules): in-sample, on the third held out of every fit, and
// leave-one-source-out. Prints the table README's "Accuracy" section reproduces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "hardware/gpu.hpp"
#include "model/accuracy.hpp"
#include "validation_set.hpp"

namespace trainsim::validation {
namespace {

// The terms of a row's predicted step (closed form), the largest two with their share of the
// step: "compute 91%, dp/pp-comm 6%". Compute is most rows' largest term; the second says what
// else the prediction rests on (a row whose error is large beside a large communication share
// points at the network model, not at the kernels).
std::string dominant(const PublishedRun& r) {
  const auto costs = model::compute_step_costs(r.model, r.par, r.train, r.cluster);
  const auto e = model::estimate_step(costs, r.model, r.par, r.train, r.cluster);
  double tp = 0;
  for (const auto& st : costs.stages)
    for (const auto& ch : st.chunks) tp += ch.tp_comm_s;
  tp *= static_cast<double>(costs.micro_batches) / static_cast<double>(std::max<size_t>(costs.stages.size(), 1));
  std::vector<std::pair<double, const char*>> terms = {{e.compute_s - tp, "compute"},
                                                       {tp, "tp-comm"},
                                                       {e.exposed_comm_s, "dp/pp-comm"},
                                                       {e.bubble_s, "bubble"},
                                                       {e.optimizer_s, "optimizer"}};
  std::sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s %.0f%%, %s %.0f%%", terms[0].second, 100 * terms[0].first / e.step_s,
                terms[1].second, 100 * terms[1].first / e.step_s);
  return buf;
}

TEST(Calibration, TheDefaultConstantsAreTheFit) {
  const auto rows = validation_rows();
  double mean = 0;
  const model::Calibration c = fit(rows, [](const Row& r) { return !r.held_out; }, &mean);
  const model::Calibration& d = model::default_calibration();
  std::printf("fit over %zu rows: sustained %.2f, replica jitter %.3f s: mean over sources of mean |error| %.2f%%\n",
              std::count_if(rows.begin(), rows.end(), [](const Row& r) { return !r.held_out; }), c.sustained_compute,
              c.replica_jitter_s, mean);
  EXPECT_NEAR(d.sustained_compute, c.sustained_compute, 1e-9);
  EXPECT_NEAR(d.replica_jitter_s, c.replica_jitter_s, 1e-9);
}

// The fit computes each row's costs once per sustained factor and moves only the jitter term for
// the others (validation_set.hpp with_jitter_term): that must give every row exactly what computing
// its costs with the constants does.
TEST(Calibration, TheFitsCostShortcutIsExact) {
  model::Calibration base, c;
  base.sustained_compute = c.sustained_compute = 0.77;
  base.replica_jitter_s = 0;
  c.replica_jitter_s = 0.085;
  int rows = 0;
  for (const Row& r : validation_rows()) {
    const model::StepCosts costs = model::compute_step_costs(r.run.model, r.run.par, r.run.train, r.run.cluster, base);
    const double direct = predict_tflops(r.run, c);
    EXPECT_NEAR(predict_tflops(r.run, with_jitter_term(costs, r.run.par, base, c), c), direct, 1e-9 * direct) << r.run.id;
    // The jitter moves every data-parallel row's prediction and no single replica's.
    if (r.run.par.dp * r.run.par.cp > 1) EXPECT_LT(direct, predict_tflops(r.run, base)) << r.run.id;
    else EXPECT_DOUBLE_EQ(direct, predict_tflops(r.run, base)) << r.run.id;
    ++rows;
  }
  EXPECT_EQ(rows, 212);
}

TEST(Calibration, LeaveOneSourceOutAccuracy) {
  const auto rows = validation_rows();
  ASSERT_GE(rows.size(), 94u);  // 31 published_runs.yaml (one left out: MLPerf) + 63 more_runs.yaml
  std::map<std::string, model::Calibration> loso = loso_fits(rows);
  Accuracy in_sample, held, validation_only, all_loso;
  std::map<std::string, Accuracy> by_family;
  std::printf("%-46s %-18s %9s %9s %8s %8s  %-26s\n", "id", "source", "measured", "predicted", "error", "LOSO", "largest terms");
  for (const Row& r : rows) {
    const double e = error_pct(r.run, model::default_calibration());
    const double l = error_pct(r.run, loso[r.family]);
    (r.validation_only ? validation_only : r.held_out ? held : in_sample).add(e);
    all_loso.add(l);
    by_family[r.family].add(l);
    std::printf("%-46s %-18s %9.1f %9.1f %+7.1f%% %+7.1f%%  %-26s%s\n", r.run.id.c_str(), r.family.c_str(),
                r.run.measured_tflops, predict_tflops(r.run), e, l, dominant(r.run).c_str(), r.validation_only ? "  validation only" : r.held_out ? "  held out" : "");
  }
  in_sample.finish();
  held.finish();
  validation_only.finish();
  all_loso.finish();
  for (auto& [f, a] : by_family) {
    a.finish();
    std::printf("LOSO %-18s rows %3d: mean |error| %5.2f%%, signed %+6.2f%%, max %5.1f%% (fit without it: sustained %.2f, jitter %.3f s)\n",
                f.c_str(), a.rows, a.mean_abs, a.mean_signed, a.max_abs, loso[f].sustained_compute, loso[f].replica_jitter_s);
  }
  std::printf("in-sample rows %d: mean |error| %.2f%% (signed %+.2f%%, max %.1f%%)\n", in_sample.rows, in_sample.mean_abs,
              in_sample.mean_signed, in_sample.max_abs);
  std::printf("held-out third rows %d: mean |error| %.2f%% (signed %+.2f%%, max %.1f%%)\n", held.rows, held.mean_abs,
              held.mean_signed, held.max_abs);
  std::printf("validation-only sources rows %d: mean |error| %.2f%% (signed %+.2f%%, max %.1f%%)\n", validation_only.rows,
              validation_only.mean_abs, validation_only.mean_signed, validation_only.max_abs);
  std::printf("leave-one-source-out rows %d: mean |error| %.2f%% (signed %+.2f%%, max %.1f%%)\n", all_loso.rows,
              all_loso.mean_abs, all_loso.mean_signed, all_loso.max_abs);
  std::printf("leave-one-source-out signed error: 5th percentile %+.2f%%, 95th %+.2f%%\n", all_loso.quantile(0.05),
              all_loso.quantile(0.95));
  // sim/hardware/data/accuracy.yaml ships this printout to every report (model/accuracy.hpp): it
  // must be what the model gives now.
  const model::ErrorBand& shipped = model::model_accuracy().step_time;
  EXPECT_EQ(shipped.rows, all_loso.rows) << "update sim/hardware/data/accuracy.yaml step_time";
  EXPECT_NEAR(shipped.mean_abs_pct, all_loso.mean_abs, 0.006) << "update sim/hardware/data/accuracy.yaml step_time";
  EXPECT_NEAR(shipped.p05_pct, all_loso.quantile(0.05), 0.006) << "update sim/hardware/data/accuracy.yaml step_time";
  EXPECT_NEAR(shipped.p95_pct, all_loso.quantile(0.95), 0.006) << "update sim/hardware/data/accuracy.yaml step_time";
  // Issue 13 asks for a leave-one-source-out mean |error| <= 5%, no row beyond 15% and a mean signed
  // error within +-2%. The bias is met: +1.25%. The mean is 5.54% over 212 rows (5.36% before
  // FlagPerf's own correction put its Llama 3 rows on the H100s their tables name, not H800s: its
  // 8B TP2 rows went from +9..+14% to +22..+24%, its 70B TP8 row from -18% to +9%; 5.35% over the
  // 193 before FlagPerf's 19 Megatron rows, 5.38% before an
  // interleaved step's closed form reduced each chunk's gradients once the chunk was done, 5.47%
  // before Transformer Engine's userbuffers ran each TP collective by its own method, 5.97% before the
  // fixed host time per step gave way to the wait for the slowest of the dp x cp replicas, 6.16%
  // before each ZeRO-3 layer's collectives paid their NCCL latency on the critical path, 6.01% over
  // the 174 before the Zero Bubble paper's appendix rows, 6.18% before the fit's grid went to 0.01
  // steps, 6.40% before Megatron's unfused attention ran at its measured speed, 6.48% before GEMMs
  // were bound by their HBM traffic, 6.47% over the 150 before the Zero Bubble rows, 5.87% over the
  // 138 before XTuner's), and 10 rows lie beyond 15%, all but one optimistic (below). FlagPerf
  // (validation only, collected 2026-12-08: BAAI's Megatron-Core 0.6.0 Llama 3 cases and its
  // FlagScale Llama 2 70B and Aquila2-7B cases) adds 19 rows at 5.5%: its two single-node A800 layout
  // sweeps (Llama 3 8B: PP 1-8 x TP 1-8, NVLink at 200 GB/s a direction, within -3.2..+4.3%; Aquila2-7B:
  // TP 1-8 x PP 1-8, +0.3..+5.6%), Llama 2 70B on 32 H800s at TP8 PP4 and
  // TP4 PP8 +2.9..+5.3%, its Llama 3 8B TP2 rows on H800 (taken from the 70B README's environment)
  // +9..+14%, and its Llama 3 70B TP8 PP4 on 64 H800s -18.4%, the one row beyond 15% on the slow
  // side, where TP8's unoverlapped collectives are 42% of the predicted step (41% in the Llama 2 70B
  // TP8 row, +2.9%). The Zero Bubble
  // appendix rows (19, validation only: 1F1B at twice Table 4's micro-batch, its Table 11, and with 2
  // to 16 micro-batches, no more than the stages, its Table 12) measure a single pipeline's step as
  // its bubble plus its micro-batches and nothing else; under the fixed host time (0.12 s a step)
  // Table 12 was 6-23% slow, with one replica waiting for none it is -1.9..+4.9% (Table 11
  // -1.4..+1.9%). The other validation-only rows lose what that time stood in for: the 80 collected
  // before the appendix go 6.44% -> 7.20%, most of it Zero Bubble's Table 4 (24 rows, tp 1, dp 1,
  // pp 8-32, A100, no flash attention; 3.35% -> 5.66%), whose interleaved 1F1B with one layer per
  // chunk is +4.0..+12.7% (1F1B -0.0..+5.4%): measured, each extra chunk costs ~0.3-0.4 ms a pass
  // (its slopes against micro-batches, 1F1B against interleaved) that trainsim, which hides the
  // chunks' transfers under the other pass, does not charge; as a fitted per-pass gap the fitted
  // sources put it at 0 (compute.hpp). Before, Zero Bubble's Table 4 were optimistic on 23 of 24
  // (+6.1%) while the unfused attention core took its HBM traffic at the streaming bandwidth; the
  // FlashAttention paper's measurement of Megatron's call (cost_tables.yaml unfused_attention)
  // set that. XTuner's speed table
  // (validation only, collected 2026-12-07) adds 12 rows at 13.2%: its long-sequence Ulysses rows
  // within -7..+7% but Yi-34B at 256K (+22%, which trainsim holds at 88.5 GB of 85.9: the run was at
  // the allocator's edge or kept less than HF's float32 logits), and its short-sequence 34B / 70B rows
  // on 32 GPUs under DeepSpeed ZeRO-3 at one 8K micro-batch a step (+29%, +50%), where its 70B
  // step holds ~11 s that its own 32K run (four micro-batches of the same 8K tokens a GPU, 27 s
  // each) does not: a per-step cost of DeepSpeed ZeRO-3 at that size that trainsim lacks.
  // Since 2026-12-07 fused attention runs at its measured in-step
  // fraction of the isolated curves (cost_tables.yaml attention_in_step, 0.99 from four step
  // profiles) and the fit weighs every source once (validation_set.hpp); before, attention took the
  // GEMMs' 0.80 and ml-engineering's 128K-256K rows were 16-21% slow (now within 6%). The other six:
  // ml-engineering's ZeRO-3 sweep with CPU-offloaded Adam at 8K, +22% (H200) and +29% (B200), where
  // the host's Adam update dominates the step and trainsim's host throughput is what DeepSpeed
  // measured per rank on a DGX A100 serving two GPUs (cost_tables.yaml host: 21.0 GB/s; these 8-GPU
  // hosts updated at ~15-16); llm-foundry MPT-70B on 64 A100-40GB (+31%) and MPT-30B on 8 H100 at
  // 8K (+21%); InternLM's 1,024-GPU rows at 1 and 2 micro-batches (+24%, +23%; its 512-GPU row at
  // 2 is +14.8%).
  // InternLM's communication-bound rows say its all-reduce over 64-128 nodes of 4 x 100 Gb RoCE was
  // slower than the NIC model. llm-foundry's H100 rows pull two ways inside one table: its 2024
  // large-scale rows that ran the 2022 Triton FlashAttention (13B, 30B) are predicted 2-11% slow,
  // those that ran flash-attn 2 (1B, 3B, 7B, 70B) fast, where the kernels' measured H100 gap
  // (kernels.yaml fa1 / fa2) would have the two kinds far apart; and measured throughput falls
  // 2-10% from 128 to 512 GPUs at the same work per GPU. With every ZeRO-3 layer's calls paying
  // NCCL's ring latency (tuning.cc, ~2.4 ms a call at 512 ranks) on the critical path, as that fall
  // says they do (README "Where the rest of the error sits"), trainsim's FULL_SHARD rows follow it
  // (MPT-7B +2.7 / +0.4 / -5.0% at 128 / 256 / 512); the SHARD_GRAD_OP rows (1B, 3B), bucketed
  // like Megatron's ZeRO-2 in trainsim, follow it with the wait for the slowest of 128 / 256 / 512
  // replicas (1B -1.9 / -0.9 / +3.0%, 3B +1.9 / +2.5 / +5.1%; +2.4 / +5.5 / +11.5% and +5.7 / +8.1 /
  // +12.5% under the fixed host time). Why the latency does not hide is not measured (a profile of
  // these runs would say; nccl#1229 is prose).
  // The IBM rows ran eager PyTorch (training.elementwise: eager): without that term its H100 rows
  // were 14-28% fast; with it 6-11%, and its A100 rows with full checkpointing 9-14% slow.
  // The bounds keep what is reached.
  EXPECT_LE(all_loso.mean_abs, 5.55);
  EXPECT_LE(all_loso.max_abs, 52.0);
  EXPECT_LE(std::fabs(all_loso.mean_signed), 2.0);
  EXPECT_LE(held.mean_abs, 5.05);
}

// The band a report prints (model::step_time_band) holds the measured step time of 90% of the
// published runs, each predicted without its source: a throughput predicted e% high is a step
// time (1 + e) times too short, so the band must widen the predicted step upward by the 95th
// percentile. The wrong direction (dividing) would leave a different set of rows outside.
TEST(Calibration, TheReportedBandHoldsNinetyPercentOfMeasuredSteps) {
  const auto rows = validation_rows();
  std::map<std::string, model::Calibration> loso = loso_fits(rows);
  int inside = 0, below = 0, above = 0;
  for (const Row& r : rows) {
    const PublishedRun& run = r.run;
    const model::Calibration& c = loso[r.family];
    const model::StepCosts costs = model::compute_step_costs(run.model, run.par, run.train, run.cluster, c);
    const double predicted_s = model::estimate_step(costs, run.model, run.par, run.train, run.cluster, c).step_s;
    const double measured_s = predicted_s * predict_tflops(run, c) / run.measured_tflops;
    const model::Range band = model::step_time_band(predicted_s);
    if (measured_s < band.low * (1 - 1e-9)) ++below;
    else if (measured_s > band.high * (1 + 1e-9)) ++above;
    else ++inside;
  }
  std::printf("measured step inside the band: %d of %zu (below %d, above %d)\n", inside, rows.size(), below, above);
  // 5% of 212 below and above: 10.6 each, the percentiles interpolated between rows (the rows at
  // the band's edges leave 11 on each side).
  EXPECT_GE(inside, 190);
  EXPECT_LE(below, 11);
  EXPECT_LE(above, 11);
}

// sim/hardware/data/accuracy.yaml coverage: what the rows behind the band span, so that a report
// can say when a scenario lies outside it (model::outside_coverage).
TEST(Calibration, TheShippedCoverageIsTheValidationSet) {
  const std::vector<Row> rows = validation_rows();
  std::set<std::string> gpus, fabrics, transports;
  int64_t max_gpus = 0;
  bool moe = false;
  for (const Row& r : rows) {
    const hardware::ClusterSpec& c = r.run.cluster;
    gpus.insert(c.gpu.catalog);
    fabrics.insert(hardware::to_string(c.intra_fabric));
    if (c.nodes > 1) transports.insert(hardware::to_string(c.transport));
    max_gpus = std::max(max_gpus, c.gpus());
    moe = moe || r.run.model.is_moe();
  }
  const model::Coverage& shipped = model::model_accuracy().coverage;
  EXPECT_EQ(std::set<std::string>(shipped.gpus.begin(), shipped.gpus.end()), gpus) << "update accuracy.yaml coverage.gpus";
  EXPECT_EQ(std::set<std::string>(shipped.intra_fabrics.begin(), shipped.intra_fabrics.end()), fabrics)
      << "update accuracy.yaml coverage.intra_fabrics";
  EXPECT_EQ(std::set<std::string>(shipped.inter_transports.begin(), shipped.inter_transports.end()), transports)
      << "update accuracy.yaml coverage.inter_transports";
  EXPECT_EQ(shipped.max_gpus, max_gpus) << "update accuracy.yaml coverage.max_gpus";
  EXPECT_EQ(shipped.moe, moe) << "update accuracy.yaml coverage.moe";
  // A run of the set is inside; the PCIe GPT-3 scenario's fabric and an MI300X are not (a B200 is,
  // since ml-engineering's rows).
  const Row& first = rows.front();
  EXPECT_TRUE(model::outside_coverage(first.run.model, first.run.cluster).empty()) << first.run.id;
  hardware::ClusterSpec pcie = first.run.cluster;
  pcie.intra_fabric = hardware::IntraFabric::kPcie;
  pcie.gpu = *hardware::find_gpu("mi300x");
  pcie.nodes = 4096;
  const std::vector<std::string> out = model::outside_coverage(first.run.model, pcie);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].rfind("mi300x GPUs", 0), 0u) << out[0];
  EXPECT_EQ(out[1].rfind("a pcie node fabric", 0), 0u) << out[1];
  EXPECT_EQ(out[2], "32768 GPUs (the largest published run: 16384)");
  // Over AWS EFA between nodes: outside (every multi-node run of the set is InfiniBand or RoCE).
  hardware::ClusterSpec efa = first.run.cluster;
  efa.nodes = 2;
  efa.transport = hardware::InterTransport::kEfa;
  const std::vector<std::string> efa_out = model::outside_coverage(first.run.model, efa);
  ASSERT_EQ(efa_out.size(), 1u);
  EXPECT_EQ(efa_out[0], "an efa network between nodes (published runs: infiniband)");
  hardware::ClusterSpec b200 = first.run.cluster;
  b200.gpu = *hardware::find_gpu("b200");
  EXPECT_TRUE(model::outside_coverage(first.run.model, b200).empty());
}

// torch.compile's gain on the IBM runs (fms-fsdp README at ed74fd5 against the blog's eager rows,
// same clusters, 7B HSDP): 3,700 -> 4,550 tokens/s per GPU on 128 A100s (1.23x), 7,500 -> 9,600
// on 96 H100s (1.28x). The eager element-wise kernels trainsim counts (cost_tables.yaml
// elementwise) are part of what compile removes: the predicted gain is above 1.05 and below the
// measured one (compile also fuses the residual adds into the norms, drops launches and copies
// trainsim does not count): 1.10 and 1.14 at present.
TEST(Calibration, EagerKernelsArePartOfWhatCompileSaved) {
  std::map<std::string, double> predicted;
  for (const Row& r : validation_rows())
    if (r.run.id.rfind("ibmfsdp_", 0) == 0) predicted[r.run.id] = predict_tflops(r.run);
  const std::pair<const char*, const char*> pairs[] = {
      {"ibmfsdp_a100_128gpu_l2_7b_bs2_noac", "ibmfsdp_compile_a100_128gpu_l2_7b_bs2_noac"},
      {"ibmfsdp_h100_96gpu_l2_7b_bs2_noac", "ibmfsdp_compile_h100_96gpu_l2_7b_bs2_noac"}};
  const double measured[] = {4550.0 / 3700, 9600.0 / 7500};
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(predicted.count(pairs[i].first) && predicted.count(pairs[i].second)) << pairs[i].first;
    const double gain = predicted[pairs[i].second] / predicted[pairs[i].first];
    std::printf("%s: compile gain predicted %.3f, measured %.3f\n", pairs[i].first, gain, measured[i]);
    EXPECT_GT(gain, 1.05) << pairs[i].first;
    EXPECT_LT(gain, measured[i]) << pairs[i].first;
  }
}

}  // namespace
}  // namespace trainsim::validation
