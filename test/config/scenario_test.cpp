#include "config/scenario.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "model/transformer.hpp"

namespace trainsim::config {
namespace {

// A small valid scenario; tests swap one line to make it bad. Line numbers are in the comments:
// the expected FILE:LINE:COL below count from them.
const std::string kBase =
    "version: 1\n"             // 1
    "model:\n"                 // 2
    "  layers: 24\n"           // 3
    "  hidden: 1024\n"         // 4
    "  heads: 16\n"            // 5
    "  vocab: 51200\n"         // 6
    "  seq_len: 2048\n"        // 7
    "cluster:\n"               // 8
    "  gpu: h100-sxm\n"        // 9
    "  nodes: 2\n"             // 10
    "  gpus_per_node: 8\n"     // 11
    "parallelism:\n"           // 12
    "  tp: 2\n"                // 13
    "  pp: 2\n"                // 14
    "  dp: 4\n"                // 15
    "training:\n"              // 16
    "  global_batch: 64\n";    // 17

// kBase with the line `from` replaced by `to` (which may hold several lines, or be "").
std::string with(const std::string& from, const std::string& to, std::string text = kBase) {
  const auto pos = text.find(from + "\n");
  EXPECT_NE(pos, std::string::npos) << from;
  if (pos == std::string::npos) return text;
  return text.replace(pos, from.size() + 1, to.empty() ? "" : to + "\n");
}

// The full "FILE:LINE:COL: message" text of the InputError, or "no error".
std::string error_of(const std::string& yaml, const std::vector<Override>& overrides = {}) {
  try {
    load_scenario_text(yaml, "t.yaml", overrides);
  } catch (const util::InputError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<Override> sets(const std::vector<std::string>& texts) {
  std::vector<Override> out;
  for (const auto& t : texts) out.push_back(parse_override(t));
  return out;
}

TEST(LoadScenario, BaseIsValidWithDefaults) {
  const Scenario s = load_scenario_text(kBase, "dir/small.yaml");
  EXPECT_EQ(s.name, "small");  // file stem
  EXPECT_EQ(s.version, 1);
  EXPECT_EQ(s.model.ffn_hidden, 4 * 1024);  // gelu default
  EXPECT_EQ(s.model.kv_heads, 16);          // = heads
  EXPECT_EQ(s.model.ffn, model::Ffn::kGelu);
  EXPECT_EQ(s.cluster.gpu.name, "h100-sxm");
  EXPECT_EQ(s.cluster.intra_fabric, hardware::IntraFabric::kNvswitch);
  EXPECT_DOUBLE_EQ(s.cluster.intra_bandwidth_Bps, 450e9);  // h100-sxm NVLink per direction
  EXPECT_DOUBLE_EQ(s.cluster.intra_latency_s, 1e-6);
  EXPECT_DOUBLE_EQ(s.cluster.nic_bandwidth_Bps, 50e9);  // 400Gbps
  EXPECT_EQ(s.cluster.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster.inter_latency_s, 5e-6);
  EXPECT_EQ(s.parallel.cp, 1);
  EXPECT_EQ(s.parallel.schedule, model::Schedule::k1F1B);
  EXPECT_EQ(s.parallel.zero, 0);
  EXPECT_EQ(s.training.steps, 100);
  EXPECT_EQ(s.training.precision, model::Precision::kBf16);
  EXPECT_DOUBLE_EQ(s.training.runtime_reserve_bytes, -1);  // built from its parts (model/memory_data.hpp)
  EXPECT_FALSE(s.training.fp32_main_grads);
  EXPECT_TRUE(s.training.flash_attention);
  EXPECT_TRUE(s.training.tp_comm_overlap);
  EXPECT_FALSE(s.reliability);
  EXPECT_FALSE(s.contention);
  EXPECT_FALSE(s.stragglers);
  EXPECT_EQ(s.fidelity, Fidelity::kAuto);
  EXPECT_TRUE(s.flow_classes);  // engine.flow_classes defaults on
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0], "model.ffn_hidden = 4 * hidden = 4096 (default for gelu)");
}

TEST(LoadScenario, EveryScenarioFileLoads) {
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++count;
    SCOPED_TRACE(entry.path().string());
    Scenario s;
    EXPECT_NO_THROW(s = load_scenario(entry.path().string()));
    EXPECT_EQ(s.name, entry.path().stem().string());  // each file names itself after its file
    EXPECT_EQ(s.parallel.gpus(), s.cluster.gpus());
  }
  EXPECT_GE(count, 7);
}

TEST(LoadScenario, ContractExample405B) {
  const Scenario s =
      load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-405b-16k.yaml");
  EXPECT_EQ(s.cluster.gpus(), 16384);
  EXPECT_EQ(s.parallel.tp, 8);
  EXPECT_EQ(s.parallel.pp, 16);
  EXPECT_EQ(s.parallel.dp, 128);
  EXPECT_EQ(s.parallel.zero, 2);  // FSDP without resharding after forward
  EXPECT_EQ(s.parallel.recompute, model::Recompute::kNone);  // no activation checkpointing at 8K
  EXPECT_TRUE(s.parallel.sequence_parallel);
  EXPECT_FALSE(s.training.tp_comm_overlap);
  EXPECT_EQ(s.training.steps, 1000);
  EXPECT_DOUBLE_EQ(s.training.total_tokens, 15.6e12);
  EXPECT_EQ(s.model.preset, "llama3-405b");
  EXPECT_EQ(s.model.kv_heads, 8);
  EXPECT_DOUBLE_EQ(s.cluster.nic_bandwidth_Bps, 50e9);  // "400Gbps" = 50 GB/s
  EXPECT_TRUE(s.cluster.platform_file.empty());        // platform: null
  // As the Llama 3 paper lays it out: interleaved, 8 chunks per stage, first and last stage one
  // layer fewer (the model's two end chunks hold only the embedding and only the output layer).
  EXPECT_EQ(s.parallel.schedule, model::Schedule::kInterleaved);
  EXPECT_EQ(s.parallel.virtual_stages, 8);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_EQ(s.notes[0], "126 layers over 128 chunks (16 stages x 8): 126 x 1, 2 x 0 (first and last)");
  // The naive layout beside it: plain 1F1B.
  const Scenario naive =
      load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-405b-16k-1f1b.yaml");
  EXPECT_EQ(naive.parallel.schedule, model::Schedule::k1F1B);
  ASSERT_EQ(naive.notes.size(), 1u);
  EXPECT_EQ(naive.notes[0], "126 layers over 16 stages: 14 x 8, 2 x 7 (first and last)");
}

TEST(LoadScenario, ReliabilityPresetLlama3) {
  const Scenario s =
      load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-405b-reliability.yaml");
  ASSERT_TRUE(s.reliability);
  // llama3_405b_reliability_54day: 419 / (54 d * 24 h * 16384 GPUs) per GPU-hour.
  EXPECT_NEAR(s.reliability->failures_per_gpu_hour, 419.0 / (54 * 24 * 16384.0), 1e-15);
  EXPECT_EQ(s.reliability->categories.size(), 18u);
  EXPECT_DOUBLE_EQ(s.reliability->checkpoint_interval_s, 7200);
  EXPECT_DOUBLE_EQ(s.reliability->restart_s, 600);
  EXPECT_DOUBLE_EQ(s.reliability->storage_bandwidth_Bps, 2e12);
}

TEST(LoadScenario, ExtensionsAndInlineGpu) {
  const std::string yaml = with("  gpu: h100-sxm",
                                "  gpu:\n"
                                "    hbm: 96GB\n"
                                "    hbm_bandwidth: 4000GBps\n"
                                "    peak_bf16: 1000Tf\n"
                                "    peak_fp8: 2000Tf\n"
                                "    nvlink_bandwidth: 400GBps") +
                           "  gpu_hour_price: 2.5\n"
                           "  fp32_main_grads: true\n"
                           "  runtime_reserve: 4GiB\n"
                           "  flash_attention: false\n"
                           "  tp_comm_overlap: false\n"
                           "  total_tokens: 1e9\n"
                           "engine:\n"
                           "  fidelity: symmetric\n"
                           "  buckets: 4\n"
                           "  flow_classes: false\n"
                           "stragglers:\n"
                           "  count: 2\n"
                           "  slowdown: 1.2\n"
                           "  jitter: 0.01\n"
                           "contention:\n"
                           "  tenants: 3\n"
                           "  burst: 10s\n"
                           "reliability:\n"
                           "  failures_per_gpu_hour: 1e-5\n"
                           "  checkpoint_write: 30s\n";
  const Scenario s = load_scenario_text(yaml, "t.yaml");
  EXPECT_EQ(s.cluster.gpu.name, "inline");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_bytes, 96e9);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_bf16_flops, 1000e12);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_fp16_flops, 1000e12);  // defaults to bf16
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_fp8_flops, 2000e12);
  EXPECT_DOUBLE_EQ(s.cluster.intra_bandwidth_Bps, 400e9);  // from the GPU's NVLink
  EXPECT_DOUBLE_EQ(s.training.gpu_hour_price, 2.5);
  EXPECT_TRUE(s.training.fp32_main_grads);
  EXPECT_DOUBLE_EQ(s.training.runtime_reserve_bytes, 4.0 * (1 << 30));
  EXPECT_FALSE(s.training.flash_attention);
  EXPECT_FALSE(s.training.tp_comm_overlap);
  EXPECT_DOUBLE_EQ(s.training.total_tokens, 1e9);
  EXPECT_EQ(s.fidelity, Fidelity::kSymmetric);
  EXPECT_EQ(s.gradient_buckets, 4);
  EXPECT_FALSE(s.flow_classes);
  ASSERT_TRUE(s.stragglers);
  EXPECT_EQ(s.stragglers->count, 2);
  EXPECT_DOUBLE_EQ(s.stragglers->slowdown, 1.2);
  ASSERT_TRUE(s.contention);
  EXPECT_EQ(s.contention->tenants, 3);
  EXPECT_DOUBLE_EQ(s.contention->load, 0.5);
  EXPECT_DOUBLE_EQ(s.contention->burst_s, 10);
  EXPECT_DOUBLE_EQ(s.contention->idle_s, 10);  // idle defaults to burst
  ASSERT_TRUE(s.reliability);
  EXPECT_DOUBLE_EQ(s.reliability->failures_per_gpu_hour, 1e-5);
  EXPECT_DOUBLE_EQ(s.reliability->categories.at("all"), 1e-5);
  EXPECT_DOUBLE_EQ(s.reliability->checkpoint_write_s, 30);
}

TEST(LoadScenario, InlineGpuFromCatalogBase) {
  const Scenario s = load_scenario_text(with("  gpu: h100-sxm", "  gpu: {base: h100-sxm, hbm: 96GB}"), "t.yaml");
  EXPECT_DOUBLE_EQ(s.cluster.gpu.hbm_bytes, 96e9);
  EXPECT_DOUBLE_EQ(s.cluster.gpu.peak_bf16_flops, 989.4e12);  // hardware.yaml gpus.H100-SXM5-80GB
}

TEST(LoadScenario, DpDerivedWhenAbsent) {
  const Scenario s = load_scenario_text(with("  dp: 4", ""), "t.yaml");
  EXPECT_EQ(s.parallel.dp, 4);  // 16 GPUs / (tp 2 * cp 1 * pp 2)
  EXPECT_EQ(s.notes.back(), "parallelism.dp = 4 (derived: 16 GPUs / (tp*cp*pp = 4))");
}

TEST(LoadScenario, PresetWithExplicitKeys) {
  std::string yaml = with("  layers: 24\n  hidden: 1024\n  heads: 16\n  vocab: 51200\n  seq_len: 2048",
                          "  preset: llama2-7b\n  layers: 16");
  const Scenario s = load_scenario_text(yaml, "t.yaml");
  EXPECT_EQ(s.model.preset, "llama2-7b");
  EXPECT_EQ(s.model.layers, 16);    // explicit key wins
  EXPECT_EQ(s.model.hidden, 4096);  // from the preset
  EXPECT_EQ(s.model.ffn_hidden, 11008);
  EXPECT_EQ(s.model.ffn, model::Ffn::kSwiglu);
  // And the same through --set, which also reaches keys the file does not have.
  const Scenario o = load_scenario_text(yaml, "t.yaml", sets({"model.seq_len=2048", "model.heads=64"}));
  EXPECT_EQ(o.model.seq_len, 2048);
  EXPECT_EQ(o.model.heads, 64);
  EXPECT_EQ(o.model.kv_heads, 64);  // llama2-7b has no GQA: kv_heads follows heads
}

TEST(LoadScenario, PlatformFileNextToTheScenario) {
  const auto dir = std::filesystem::temp_directory_path() / ("trainsim_config_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "p.xml") << "<platform version=\"4.1\"/>\n";
  const std::string yaml = with("  nodes: 2", "  nodes: 2\n  platform: p.xml");
  const Scenario s = load_scenario_text(yaml, (dir / "s.yaml").string());
  EXPECT_EQ(s.cluster.platform_file, (dir / "p.xml").string());
  EXPECT_EQ(error_of(yaml), "t.yaml:11:13: cluster.platform: cannot read file 'p.xml'");
  std::filesystem::remove_all(dir);
}

TEST(LoadScenario, UnreadableFile) {
  try {
    load_scenario("/nonexistent/x.yaml");
    FAIL();
  } catch (const util::InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/x.yaml: cannot read file");
  }
  try {
    load_scenario(TRAINSIM_SOURCE_DIR);
    FAIL();
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()), std::string(TRAINSIM_SOURCE_DIR) + ": cannot read file");
  }
}

// ---- errors, word for word ----

TEST(ScenarioErrors, YamlSyntax) {
  EXPECT_EQ(error_of(with("  hidden: 1024", "  hidden: 1024: 3")), "t.yaml:4:15: invalid YAML: illegal map value");
  EXPECT_EQ(error_of(with("  heads: 16", "  heads: [16")), "t.yaml:6:8: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(error_of(kBase + "---\nversion: 1\n"), "t.yaml:18:1: expected one YAML document, found another");
  // yaml-cpp 0.7 would loop forever on these (yaml-cpp issue #1040).
  EXPECT_EQ(error_of(",\n"), "t.yaml:1:1: invalid YAML: unexpected ','");
  EXPECT_EQ(error_of("# header\n  , a\nversion: 1\n"), "t.yaml:2:3: invalid YAML: unexpected ','");
  EXPECT_EQ(error_of(kBase + "---\n,\n"), "t.yaml:18:1: expected one YAML document, found another");
  EXPECT_EQ(error_of("- 1\n- 2\n"), "t.yaml:1:1: a scenario must be a map of keys (version, model, cluster, ...), got a list");
}

TEST(ScenarioErrors, UnknownKeys) {
  EXPECT_EQ(error_of(with("  layers: 24", "  layer: 24")), "t.yaml:3:3: unknown key 'layer' in model (did you mean 'layers'?)");
  EXPECT_EQ(error_of(with("cluster:", "clustr:")), "t.yaml:8:1: unknown key 'clustr' at top level (did you mean 'cluster'?)");
  EXPECT_EQ(error_of(kBase + "  colour: red\n"),
            "t.yaml:18:3: unknown key 'colour' in training (valid keys: precision, optimizer, global_batch, steps, "
            "total_tokens, offload, gpu_hour_price, fp32_main_grads, runtime_reserve, flash_attention, tp_comm_overlap, "
            "attention_kernel, optimizer_state_precision, grad_reduce_fp32, fp8_stack, cross_entropy, elementwise, "
            "norm_kernel, activation_kernel)");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  intra_node:\n    bandwith: 1GBps")),
            "t.yaml:12:5: unknown key 'bandwith' in cluster.intra_node (did you mean 'bandwidth'?)");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: 24\n  layers: 25")), "t.yaml:4:3: duplicate key 'layers' in model (first at line 3)");
}

TEST(ScenarioErrors, MissingKeys) {
  EXPECT_EQ(error_of(with("version: 1", "")), "t.yaml:1:1: missing key 'version' at top level");
  EXPECT_EQ(error_of(with("  hidden: 1024", "")), "t.yaml:2:1: missing key 'hidden' in model (or set model.preset)");
  EXPECT_EQ(error_of(with("  global_batch: 64", "  steps: 5")), "t.yaml:16:1: missing key 'global_batch' in training");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: 24\n  ffn: swiglu")),
            "t.yaml:2:1: missing key 'ffn_hidden' in model (required with ffn: swiglu)");
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: {hbm: 80GB}")),
            "t.yaml:9:3: missing key 'hbm_bandwidth' in cluster.gpu (an inline GPU without 'base')");
}

TEST(ScenarioErrors, WrongTypes) {
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: abc")), "t.yaml:3:11: model.layers must be a positive integer, got 'abc'");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: 24.5")), "t.yaml:3:11: model.layers must be a positive integer, got '24.5'");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: [24]")), "t.yaml:3:11: model.layers must be a positive integer, got a list");
  EXPECT_EQ(error_of("version: 1\nmodel: 3\n"), "t.yaml:2:8: model must be a map, got '3'");
  EXPECT_EQ(error_of(kBase + "  fp32_main_grads: yes\n"),
            "t.yaml:18:20: training.fp32_main_grads must be true or false, got 'yes'");
  EXPECT_EQ(error_of(kBase + "  total_tokens: lots\n"), "t.yaml:18:17: training.total_tokens must be a number, got 'lots'");
}

TEST(ScenarioErrors, Units) {
  const std::string nodes = "  nodes: 2";
  EXPECT_EQ(error_of(with(nodes, nodes + "\n  inter_node:\n    latency: 5")),
            "t.yaml:12:14: cluster.inter_node.latency: '5' has no unit");
  EXPECT_EQ(error_of(with(nodes, nodes + "\n  inter_node:\n    nic_bandwidth: 400Gbs")),
            "t.yaml:12:20: cluster.inter_node.nic_bandwidth: '400Gbs': unknown bandwidth unit 'Gbs' (use e.g. 450GBps or 400Gbps)");
  EXPECT_EQ(error_of(with(nodes, nodes + "\n  intra_node:\n    bandwidth: 0GBps")),
            "t.yaml:12:16: cluster.intra_node.bandwidth: bandwidth must be > 0, got '0GBps'");
  EXPECT_EQ(error_of(with(nodes, nodes + "\n  intra_node:\n    latency: -1us")),
            "t.yaml:12:14: cluster.intra_node.latency: time must be >= 0, got '-1us'");
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: {base: h100-sxm, hbm: 0GB}")),
            "t.yaml:9:30: cluster.gpu.hbm must be > 0, got '0GB'");
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: {base: h100-sxm, peak_bf16: 989.4}")),
            "t.yaml:9:36: cluster.gpu.peak_bf16: '989.4' has no unit");
  EXPECT_EQ(error_of(kBase + "  runtime_reserve: 1e30GB\n"),
            "t.yaml:18:20: training.runtime_reserve must be at most 1e18 bytes, got '1e30GB'");
}

TEST(ScenarioErrors, NonFiniteAndHugeValues) {
  EXPECT_EQ(error_of(kBase + "  total_tokens: .nan\n"), "t.yaml:18:17: training.total_tokens must be a finite number, got '.nan'");
  EXPECT_EQ(error_of(kBase + "  total_tokens: -.inf\n"), "t.yaml:18:17: training.total_tokens must be a finite number, got '-.inf'");
  EXPECT_EQ(error_of(kBase + "  total_tokens: 1e400\n"), "t.yaml:18:17: training.total_tokens must be a finite number, got '1e400'");
  EXPECT_EQ(error_of(kBase + "  total_tokens: 1e19\n"), "t.yaml:18:17: training.total_tokens must be in [0, 1e18], got '1e19'");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 99999999999999999999999")),
            "t.yaml:10:10: cluster.nodes must be at most 1048576, got '99999999999999999999999'");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2000000")), "t.yaml:10:10: cluster.nodes must be at most 1048576, got '2000000'");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: -99999999999999999999999")),
            "t.yaml:10:10: cluster.nodes must be a positive integer, got '-99999999999999999999999'");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 0")), "t.yaml:10:10: cluster.nodes must be a positive integer, got '0'");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: -3")), "t.yaml:3:11: model.layers must be a positive integer, got '-3'");
  // tp*cp*pp*dp near their maxima (2^60; 2^70 below) must not overflow into a match.
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 1024\n  pp: 1048576\n  cp: 1048576\n  dp: 1048576",
                          with("  gpus_per_node: 8", "  gpus_per_node: 1024"))),
            "t.yaml:16:7: tp*cp*pp*dp = 1024*1048576*1048576*1048576 = more than 2^62 GPUs, but the cluster has 2 nodes x "
            "1024 gpus_per_node = 2048 GPUs");
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 1\n  pp: 1048576\n  cp: 1048576\n  dp: 1048576")),
            "t.yaml:16:7: tp*cp*pp*dp = 1*1048576*1048576*1048576 = 1152921504606846976 GPUs, but the cluster has 2 nodes x 8 "
            "gpus_per_node = 16 GPUs");
}

TEST(ScenarioErrors, GpuCatalog) {
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: h100-sx")),
            "t.yaml:9:8: unknown GPU 'h100-sx' (did you mean 'h100-sxm'?); known GPUs: a100-40gb, a100-80gb, a800, "
            "h100-sxm, h800, h100-pcie, h200, b200, gb200, mi300x");
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: tpu")),
            "t.yaml:9:8: unknown GPU 'tpu'; known GPUs: a100-40gb, a100-80gb, a800, h100-sxm, h800, h100-pcie, h200, b200, gb200, mi300x");
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: a100-80gb") + "  precision: fp8\n"),
            "t.yaml:18:14: training.precision: GPU 'a100-80gb' has no fp8 peak");
  EXPECT_EQ(error_of(with("  gpu: h100-sxm", "  gpu: h100-pcie\n  intra_node: {fabric: nvswitch}")),
            "t.yaml:10:3: missing key 'bandwidth' in cluster.intra_node (GPU 'h100-pcie' has no nvlink_bandwidth to default to)");
}

TEST(ScenarioErrors, Enums) {
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  schedule: interleave")),
            "t.yaml:16:13: parallelism.schedule must be one of gpipe, 1f1b, interleaved, got 'interleave' (did you mean "
            "'interleaved'?)");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  recompute: some")),
            "t.yaml:16:14: parallelism.recompute must be one of none, selective, selective-op, full, got 'some'");
  EXPECT_EQ(error_of(kBase + "  precision: bf8\n"),
            "t.yaml:18:14: training.precision must be one of fp32, fp16, bf16, fp8, got 'bf8'");
  EXPECT_EQ(error_of(kBase + "  optimizer: lamb\n"), "t.yaml:18:14: training.optimizer must be one of adam, sgd, got 'lamb'");
  EXPECT_EQ(error_of(kBase + "  offload: disk\n"), "t.yaml:18:12: training.offload must be one of none, cpu, nvme, got 'disk'");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  intra_node: {fabric: nvlink}")),
            "t.yaml:11:24: cluster.intra_node.fabric must be one of nvswitch, pcie, nvlink-bridge, got 'nvlink' (did you "
            "mean 'nvlink-bridge'?)");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  inter_node: {topology: fat_tree}")),
            "t.yaml:11:26: cluster.inter_node.topology must be one of fat-tree, rail-optimized, shared, got 'fat_tree' "
            "(did you mean 'fat-tree'?)");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: 24\n  ffn: relu")), "t.yaml:4:8: model.ffn must be one of swiglu, gelu, got 'relu' (did you mean 'gelu'?)");
  EXPECT_EQ(error_of(kBase + "engine: {fidelity: exact}\n"),
            "t.yaml:18:20: engine.fidelity must be one of auto, full, symmetric, got 'exact'");
}

TEST(ScenarioErrors, Ranges) {
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  zero: 4")), "t.yaml:16:9: parallelism.zero must be 0, 1, 2 or 3, got '4'");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  inter_node: {oversubscription: 0.5}")),
            "t.yaml:11:34: cluster.inter_node.oversubscription must be >= 1, got '0.5'");
  EXPECT_EQ(error_of(kBase + "contention: {load: 1}\n"), "t.yaml:18:20: contention.load must be in [0, 1), got '1'");
  EXPECT_EQ(error_of(kBase + "contention: {tenants: -1}\n"),
            "t.yaml:18:23: contention.tenants must be a non-negative integer, got '-1'");
  EXPECT_EQ(error_of(kBase + "contention: {burst: 0s}\n"), "t.yaml:18:21: contention.burst must be > 0, got '0s'");
  EXPECT_EQ(error_of(with("version: 1", "version: 2")), "t.yaml:1:10: version must be 1, got '2'");
  EXPECT_EQ(error_of(kBase + "stragglers: {count: 17}\n"), "t.yaml:18:21: stragglers.count = 17 is more than the cluster's 16 GPUs");
  EXPECT_EQ(error_of(kBase + "stragglers: {slowdown: 0.9}\n"), "t.yaml:18:24: stragglers.slowdown must be in [1, 1000], got '0.9'");
  EXPECT_EQ(error_of(kBase + "reliability: {preset: llama2}\n"),
            "t.yaml:18:23: reliability.preset must be one of llama3, got 'llama2' (did you mean 'llama3'?)");
  EXPECT_EQ(error_of(kBase + "reliability: {checkpoint_interval: 0s}\n"),
            "t.yaml:18:36: reliability.checkpoint_interval must be > 0, got '0s'");
  EXPECT_EQ(error_of(kBase + "reliability:\n  failures_per_gpu_hour: 1e-5\n  categories: {gpu: 2e-5}\n"),
            "t.yaml:19:26: reliability.failures_per_gpu_hour = 1e-5 but reliability.categories add up to 2e-05");
  EXPECT_EQ(error_of(kBase + "reliability:\n  categories: {gpu: -1}\n"),
            "t.yaml:19:21: reliability.categories.gpu must be in [0, 1], got '-1'");
  EXPECT_EQ(error_of(with("  layers: 24", "  preset: llama3-406b")),
            "t.yaml:3:11: unknown model preset 'llama3-406b' (did you mean 'llama3-405b'?); known presets: gpt3-175b, "
            "llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b, llama3-405b, megatron-1.7b, megatron-3.6b, "
            "megatron-7.5b, megatron-18.4b, megatron-39.1b, megatron-76.1b, megatron-145.6b, megatron-310.1b, "
            "megatron-529.6b, megatron-1008b, mixtral-8x7b, mixtral-8x22b, deepseek-v3, qwen3-235b-a22b");
}

TEST(ScenarioErrors, GpuCountMismatch) {
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 8")),
            "t.yaml:15:7: tp*cp*pp*dp = 2*1*2*8 = 32 GPUs, but the cluster has 2 nodes x 8 gpus_per_node = 16 GPUs");
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 2\n  pp: 3")),
            "t.yaml:12:1: tp*cp*pp = 2*1*3 = 6 does not divide the cluster's 2 nodes x 8 gpus_per_node = 16 GPUs");
}

TEST(ScenarioErrors, TensorParallelDivisibility) {
  // tp 16 on 8-GPU nodes: TP stays inside a node.
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 16\n  pp: 1\n  dp: 1")),
            "t.yaml:13:7: parallelism.tp = 16 must divide cluster.gpus_per_node = 8 (tensor parallelism stays inside a node)");
  EXPECT_EQ(error_of(with("  heads: 16", "  heads: 8") + "", {}), "no error");
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 4\n  pp: 2\n  dp: 2"), sets({"model.heads=2", "model.hidden=1024"})),
            "t.yaml:13:7: parallelism.tp = 4 must divide model.heads = 2");
  EXPECT_EQ(error_of(with("  heads: 16", "  heads: 16\n  kv_heads: 6")), "t.yaml:6:13: model.kv_heads = 6 must divide model.heads = 16");
  EXPECT_EQ(error_of(with("  hidden: 1024", "  hidden: 1000")), "t.yaml:5:10: model.heads = 16 must divide model.hidden = 1000");
  // kv_heads 2 with tp 4: 4 % 2 == 0, fine (KV heads replicated); kv_heads 4 with tp 8 too; but 8 KV
  // heads over... use heads 24 / kv 12 with tp 8: neither divides the other.
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 8\n  pp: 2\n  dp: 1"), sets({"model.heads=24", "model.kv_heads=12",
                                                                                         "model.hidden=1536"})),
            "t.yaml:13:7: parallelism.tp = 8 and model.kv_heads = 12 are incompatible (one must divide the other)");
  EXPECT_EQ(error_of(with("  tp: 2\n  pp: 2\n  dp: 4", "  tp: 4\n  pp: 2\n  dp: 2"), sets({"model.kv_heads=2"})), "no error");
  EXPECT_EQ(error_of(with("  layers: 24", "  layers: 24\n  ffn_hidden: 4097")),
            "t.yaml:14:7: parallelism.tp = 2 must divide model.ffn_hidden = 4097");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  sequence_parallel: true"), sets({"model.seq_len=2047"})),
            "t.yaml:16:22: sequence_parallel needs parallelism.tp = 2 to divide the sequence per context rank, 2047");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 2\n  cp: 2"), sets({"model.seq_len=2047"})),
            "t.yaml:16:7: parallelism.cp = 2 must divide model.seq_len = 2047");
}

TEST(ScenarioErrors, PipelineAndBatch) {
  // Only the two end chunks may be empty (embedding alone, output layer and loss alone): L >= n - 2.
  EXPECT_EQ(error_of(with("  pp: 2\n  dp: 4", "  pp: 8\n  dp: 1"), sets({"model.layers=5"})),
            "t.yaml:14:7: model.layers = 5 is fewer than parallelism.pp - 2 = 6 (every stage but the first and the last "
            "needs a layer)");
  EXPECT_EQ(error_of(with("  pp: 2\n  dp: 4", "  pp: 8\n  dp: 1"), sets({"model.layers=6"})), "no error");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  schedule: interleaved\n  virtual_stages: 14")),
            "t.yaml:14:7: model.layers = 24 is fewer than pp * virtual_stages - 2 = 2 * 14 - 2 = 26 (every chunk but "
            "the first and the last needs a layer)");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  schedule: interleaved\n  virtual_stages: 13")), "no error");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  virtual_stages: 2")),
            "t.yaml:16:19: parallelism.virtual_stages = 2 needs schedule: interleaved (got 1f1b)");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  schedule: interleaved")),
            "t.yaml:12:1: schedule: interleaved needs parallelism.virtual_stages >= 2, got 1");
  // 64 / (dp 4 * micro_batch 2) = 8 micro-batches, a multiple of pp 2: fine; 72 / 8 = 9 is not.
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  micro_batch: 2\n  schedule: interleaved\n  virtual_stages: 2")), "no error");
  EXPECT_EQ(error_of(with("  global_batch: 64", "  global_batch: 72"), sets({"parallelism.micro_batch=2",
                                                                              "parallelism.schedule=interleaved",
                                                                              "parallelism.virtual_stages=2"})),
            "--set:2:22: schedule: interleaved needs the micro-batches per step (global_batch / (dp * micro_batch) = 9) to "
            "be a multiple of parallelism.pp = 2");
  EXPECT_EQ(error_of(with("  global_batch: 64", "  global_batch: 66")),
            "t.yaml:17:17: training.global_batch = 66 is not a multiple of dp * micro_batch = 4 * 1 = 4");
  // Uneven split is allowed, with a note.
  const Scenario s = load_scenario_text(with("  layers: 24", "  layers: 25"), "t.yaml");
  EXPECT_EQ(s.notes.back(), "25 layers over 2 stages: 1 x 13, 1 x 12 (first)");
}

// ---- --set overrides ----

TEST(Overrides, ParseOverride) {
  const Override o = parse_override("model.layers=80");
  EXPECT_EQ(o.key, "model.layers");
  EXPECT_EQ(o.value, "80");
  EXPECT_EQ(parse_override("name=a=b").value, "a=b");
  try {
    parse_override("model.layers");
    FAIL();
  } catch (const util::InputError& e) {
    EXPECT_STREQ(e.what(), "--set: expected KEY=VALUE, got 'model.layers'");
  }
  try {
    parse_override("=3");
    FAIL();
  } catch (const util::InputError& e) {
    EXPECT_STREQ(e.what(), "--set: expected KEY=VALUE, got '=3' (empty KEY)");
  }
}

TEST(Overrides, SetIntUnitBoolAndCreateBlock) {
  const Scenario s = load_scenario_text(
      kBase, "t.yaml",
      sets({"model.layers=32", "cluster.inter_node.nic_bandwidth=\"200Gbps\"", "cluster.intra_node.latency=2us",
            "parallelism.sequence_parallel=true", "contention.tenants=4", "training.total_tokens=15.6e12", "name=other",
            "parallelism.overlap_p2p_comm=false", "parallelism.overlap_param_gather=false"}));
  EXPECT_EQ(s.model.layers, 32);
  EXPECT_FALSE(s.parallel.overlap_p2p_comm);      // default true (Megatron-Core's, model/spec.hpp)
  EXPECT_FALSE(s.parallel.overlap_param_gather);  // default true (model/spec.hpp)
  EXPECT_DOUBLE_EQ(s.cluster.nic_bandwidth_Bps, 25e9);
  EXPECT_DOUBLE_EQ(s.cluster.intra_latency_s, 2e-6);
  EXPECT_TRUE(s.parallel.sequence_parallel);
  ASSERT_TRUE(s.contention);  // block created by the override, rest defaulted
  EXPECT_EQ(s.contention->tenants, 4);
  EXPECT_DOUBLE_EQ(s.contention->load, 0.5);
  EXPECT_DOUBLE_EQ(s.training.total_tokens, 15.6e12);
  EXPECT_EQ(s.name, "other");
  // Later overrides win; null removes an optional block.
  const Scenario t = load_scenario_text(kBase + "contention: {tenants: 2}\n", "t.yaml",
                                        sets({"model.layers=32", "model.layers=40", "contention=null"}));
  EXPECT_EQ(t.model.layers, 40);
  EXPECT_FALSE(t.contention);
}

TEST(Overrides, ErrorsPointAtTheSet) {
  // Column of the value in KEY=VALUE: "model.layers=" is 13 characters.
  EXPECT_EQ(error_of(kBase, sets({"model.hidden=1024", "model.layers=abc"})),
            "--set:2:14: model.layers must be a positive integer, got 'abc'");
  // Unknown keys point at the key segment.
  EXPECT_EQ(error_of(kBase, sets({"model.layer=80"})), "--set:1:7: unknown key 'layer' in model (did you mean 'layers'?)");
  EXPECT_EQ(error_of(kBase, sets({"contention.tenant=4"})),
            "--set:1:12: unknown key 'tenant' in contention (did you mean 'tenants'?)");
  EXPECT_EQ(error_of(kBase, sets({"modl.layers=80"})), "--set:1:1: unknown key 'modl' at top level (did you mean 'model'?)");
  EXPECT_EQ(error_of(kBase, sets({"cluster.inter_node.latency=5"})), "--set:1:28: cluster.inter_node.latency: '5' has no unit");
  EXPECT_EQ(error_of(kBase, sets({"cluster.gpu.hbm=96GB"})), "--set:1:9: cannot set cluster.gpu.hbm: cluster.gpu is not a map");
  EXPECT_EQ(error_of(kBase, sets({"model..layers=3"})), "--set:1:7: empty key segment in 'model..layers'");
  EXPECT_EQ(error_of(kBase, sets({"model.layers=[1"})), "--set:1:14: invalid YAML: end of sequence flow not found");
  EXPECT_EQ(error_of(kBase, sets({"model.layers=,"})), "--set:1:14: invalid YAML: unexpected ','");
  EXPECT_EQ(error_of(kBase, sets({"model.layers=1\n---\n2"})), "--set:1:14: expected one YAML document, found another");
  // A cross-key check triggered by an override points at it.
  EXPECT_EQ(error_of(kBase, sets({"parallelism.dp=8"})),
            "--set:1:16: tp*cp*pp*dp = 2*1*2*8 = 32 GPUs, but the cluster has 2 nodes x 8 gpus_per_node = 16 GPUs");
  // A required key removed by an override: reported at the block in the file.
  EXPECT_EQ(error_of(kBase, sets({"training.global_batch=null"})), "t.yaml:16:1: missing key 'global_batch' in training");
}

TEST(Overrides, OverrideOnlyScenario) {
  // An empty file plus overrides: what is missing is reported at the file's start.
  EXPECT_EQ(error_of("", sets({"version=1"})), "t.yaml:1:1: missing key 'model' at top level");
  EXPECT_EQ(error_of("", sets({"version=1", "model.preset=llama2-7b", "cluster.gpu=h100-sxm", "cluster.nodes=1",
                               "training.global_batch=8"})),
            "no error");
}

// Every value of every scenario file swapped for junk: the loader either accepts it or throws an
// InputError located in the file; never another exception, a crash or a hang.
TEST(ScenarioErrors, JunkValuesNeverEscapeAsOtherErrors) {
  const std::vector<std::string> junk = {"abc", "-1", "0", "1e400", "[1]", "{a: 1}", ".nan", "99999999999999999999",
                                         "\"\"", "5", "-.inf", "true", "1e-400", "0x10", "0.5GB"};
  const std::filesystem::path dir = std::filesystem::path(TRAINSIM_SOURCE_DIR) / "scenarios";
  int rejected = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    for (size_t i = 0; i < lines.size(); ++i) {
      const auto colon = lines[i].find(": ");
      if (lines[i].empty() || lines[i][0] == '#' || colon == std::string::npos) continue;
      for (const auto& j : junk) {
        std::string text;
        for (size_t k = 0; k < lines.size(); ++k) text += (k == i ? lines[k].substr(0, colon + 2) + j : lines[k]) + "\n";
        SCOPED_TRACE(entry.path().filename().string() + " line " + std::to_string(i + 1) + " = " + j);
        try {
          load_scenario_text(text, "f.yaml");
        } catch (const util::InputError& e) {
          ++rejected;
          EXPECT_EQ(e.where().file, "f.yaml");
          EXPECT_GT(e.where().line, 0) << e.what();
        } catch (const std::exception& e) {
          ADD_FAILURE() << "not an InputError: " << e.what();
        }
      }
    }
  }
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

// training.attention_kernel: fa1 (FlashAttention-1, also the 2022 Triton kernel llm-foundry ran) and
// training.grad_reduce_fp32 are read as written; anything else is refused with its place.
TEST(LoadScenario, AttentionKernelAndFp32Reduction) {
  const auto sc = load_scenario_text(kBase + "  attention_kernel: fa1\n  grad_reduce_fp32: true\n", "t.yaml", {});
  EXPECT_EQ(sc.training.attention_kernel, "fa1");
  EXPECT_TRUE(sc.training.grad_reduce_fp32);
  EXPECT_NE(error_of(kBase + "  attention_kernel: fa0\n").find("t.yaml:18:21:"), std::string::npos)
      << error_of(kBase + "  attention_kernel: fa0\n");
}

// parallelism.defer_grad_reduce: off unless written; a non-boolean is refused at its value.
TEST(LoadScenario, DeferGradReduce) {
  EXPECT_FALSE(load_scenario_text(kBase, "t.yaml").parallel.defer_grad_reduce);
  EXPECT_TRUE(load_scenario_text(with("  dp: 4", "  dp: 4\n  defer_grad_reduce: true"), "t.yaml").parallel.defer_grad_reduce);
  const std::string bad = error_of(with("  dp: 4", "  dp: 4\n  defer_grad_reduce: sometimes"));
  EXPECT_NE(bad.find("t.yaml:16:22:"), std::string::npos) << bad;
}

TEST(LoadScenario, SpSaveGathered) {
  EXPECT_FALSE(load_scenario_text(kBase, "t.yaml").parallel.sp_save_gathered);
  EXPECT_TRUE(load_scenario_text(with("  dp: 4", "  dp: 4\n  sp_save_gathered: true"), "t.yaml").parallel.sp_save_gathered);
}

// parallelism.recompute_num_layers: a count >= 0, only with recompute: full.
TEST(LoadScenario, RecomputeNumLayers) {
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml").parallel.recompute_num_layers, -1);
  const Scenario ok = load_scenario_text(with("  dp: 4", "  dp: 4\n  recompute: full\n  recompute_num_layers: 3"), "t.yaml");
  EXPECT_EQ(ok.parallel.recompute_num_layers, 3);
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  recompute_num_layers: 3")),
            "t.yaml:16:25: parallelism.recompute_num_layers needs recompute: full (got none)");
  const std::string negative = error_of(with("  dp: 4", "  dp: 4\n  recompute: full\n  recompute_num_layers: -1"));
  EXPECT_NE(negative.find("t.yaml:17:25:"), std::string::npos) << negative;
}

// parallelism.cp_comm_type: Megatron-Core's names for how CP exchanges K and V (model/spec.hpp).
TEST(LoadScenario, CpCommType) {
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml").parallel.cp_comm, model::CpComm::kP2p);
  EXPECT_EQ(load_scenario_text(with("  dp: 4", "  dp: 4\n  cp_comm_type: all_gather"), "t.yaml").parallel.cp_comm,
            model::CpComm::kAllGather);
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml", sets({"parallelism.cp_comm_type=all_gather"})).parallel.cp_comm,
            model::CpComm::kAllGather);
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  cp_comm_type: ring")),
            "t.yaml:16:17: parallelism.cp_comm_type must be one of p2p, all_gather, a2a, got 'ring'");
  // a2a (Ulysses) scatters a TP rank's heads over cp: 16 heads / tp 2 = 8 query and key-value
  // heads, so cp 4 loads; with 4 key-value heads (2 a TP rank) it does not.
  EXPECT_EQ(load_scenario_text(with("  dp: 4", "  dp: 1\n  cp: 4\n  cp_comm_type: a2a"), "t.yaml").parallel.cp_comm,
            model::CpComm::kAllToAll);
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 1\n  cp: 4\n  cp_comm_type: a2a", with("  heads: 16", "  heads: 16\n  kv_heads: 4"))),
            "t.yaml:18:17: parallelism.cp_comm_type a2a scatters the heads over cp = 4: a TP rank's 8 query and 2 "
            "key-value heads must both divide by it");
}

// parallelism.shard_degree: hybrid sharding, a divisor of dp x cp, only with ZeRO.
TEST(LoadScenario, ShardDegree) {
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml").parallel.shard_degree, 0);
  const Scenario ok = load_scenario_text(with("  dp: 4", "  dp: 4\n  zero: 1\n  shard_degree: 2"), "t.yaml");
  EXPECT_EQ(ok.parallel.shard_degree, 2);
  EXPECT_TRUE(ok.parallel.hybrid_shard());
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  zero: 1\n  shard_degree: 3")),
            "t.yaml:17:17: parallelism.shard_degree = 3 must divide dp * cp = 4");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  shard_degree: 2")),
            "t.yaml:16:17: parallelism.shard_degree needs parallelism.zero 1, 2 or 3 (plain DP shards nothing)");
  // 0 is the default written out: the whole dp x cp group (so an override can undo a hybrid).
  EXPECT_EQ(load_scenario_text(with("  dp: 4", "  dp: 4\n  shard_degree: 0"), "t.yaml").parallel.shard_degree, 0);
  const std::string negative = error_of(with("  dp: 4", "  dp: 4\n  zero: 1\n  shard_degree: -2"));
  EXPECT_NE(negative.find("t.yaml:17:17:"), std::string::npos) << negative;
}

// parallelism.activation_offload_layers: Megatron-Core's rules (fewer than the layers, no pipeline,
// no recompute), each refused at the key.
TEST(LoadScenario, ActivationOffloadLayers) {
  const std::string one_stage = with("  pp: 2", "  pp: 1", with("  dp: 4", "  dp: 8"));
  EXPECT_EQ(load_scenario_text(one_stage, "t.yaml").parallel.activation_offload_layers, 0);
  EXPECT_EQ(load_scenario_text(with("  dp: 8", "  dp: 8\n  activation_offload_layers: 20", one_stage), "t.yaml")
                .parallel.activation_offload_layers,
            20);
  EXPECT_EQ(error_of(with("  dp: 8", "  dp: 8\n  activation_offload_layers: 24", one_stage)),
            "t.yaml:16:30: parallelism.activation_offload_layers = 24 must be less than model.layers = 24");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  activation_offload_layers: 4")),
            "t.yaml:16:30: parallelism.activation_offload_layers needs parallelism.pp = 1 (got 2): Megatron offloads no pipeline");
  EXPECT_EQ(error_of(with("  dp: 8", "  dp: 8\n  recompute: selective\n  activation_offload_layers: 4", one_stage)),
            "t.yaml:17:30: parallelism.activation_offload_layers needs recompute: none (got selective)");
}

TEST(LoadScenario, LayersPerStageAsGiven) {
  // kBase: 24 layers, pp 2. One entry per stage.
  const Scenario a = load_scenario_text(with("  dp: 4", "  dp: 4\n  layers_per_stage: [10, 14]"), "t.yaml");
  EXPECT_EQ(a.parallel.layers_per_chunk, (std::vector<int64_t>{10, 14}));
  EXPECT_EQ(a.notes.back(), "layers per stage as given: [10, 14]");
  // Interleaved v = 2 (chunks 0, 2 on stage 0 and 1, 3 on stage 1), per stage: stage 0's 11 layers
  // dealt with its short chunk first (the model's front), stage 1's 13 with its short chunk last.
  const Scenario b = load_scenario_text(
      with("  dp: 4", "  dp: 4\n  schedule: interleaved\n  virtual_stages: 2\n  layers_per_stage: [11, 13]"), "t.yaml");
  EXPECT_EQ(b.parallel.layers_per_chunk, (std::vector<int64_t>{5, 7, 6, 6}));
  // Per chunk (pp * v = 4 entries, model order); the model's first chunk may be empty.
  const Scenario c = load_scenario_text(
      with("  dp: 4", "  dp: 4\n  schedule: interleaved\n  virtual_stages: 2\n  layers_per_stage: [0, 8, 8, 8]"), "t.yaml");
  EXPECT_EQ(c.parallel.layers_per_chunk, (std::vector<int64_t>{0, 8, 8, 8}));
  EXPECT_EQ(c.notes.back(), "layers per stage as given: [8, 16]");
}

TEST(LoadScenario, DropoutAndFp8Stack) {
  EXPECT_FALSE(load_scenario_text(kBase, "t.yaml").model.dropout.has_value());  // gelu default: masks kept
  const Scenario s = load_scenario_text(with("  seq_len: 2048", "  seq_len: 2048\n  dropout: false") +
                                            "  fp8_stack: torchao\n", "t.yaml");
  EXPECT_EQ(s.model.dropout, std::optional<bool>(false));
  EXPECT_TRUE(s.training.fp8_torchao);
  EXPECT_EQ(error_of(kBase + "  fp8_stack: apex\n"),
            "t.yaml:18:14: training.fp8_stack must be one of transformer-engine, torchao, got 'apex'");
}

// training.elementwise: eager | fused (default fused); training.norm_kernel follows it unless given
// (torchtitan 2024: eager ops with its fused_rmsnorm Triton kernel).
TEST(LoadScenario, ElementwiseAndNormKernel) {
  const Scenario f = load_scenario_text(kBase, "t.yaml");
  EXPECT_FALSE(f.training.eager_elementwise);
  EXPECT_FALSE(f.training.eager_norm);
  const Scenario e = load_scenario_text(kBase + "  elementwise: eager\n", "t.yaml");
  EXPECT_TRUE(e.training.eager_elementwise);
  EXPECT_TRUE(e.training.eager_norm);
  EXPECT_TRUE(e.training.eager_activation);
  const Scenario n = load_scenario_text(kBase + "  elementwise: eager\n  norm_kernel: fused\n", "t.yaml");
  EXPECT_TRUE(n.training.eager_elementwise);
  EXPECT_FALSE(n.training.eager_norm);
  const Scenario a = load_scenario_text(kBase + "  activation_kernel: eager\n", "t.yaml");
  EXPECT_FALSE(a.training.eager_elementwise);
  EXPECT_TRUE(a.training.eager_activation);
  EXPECT_EQ(error_of(kBase + "  elementwise: compiled\n"),
            "t.yaml:18:16: training.elementwise must be one of fused, eager, got 'compiled'");
}

// training.cross_entropy: fused | torch | chunked (default fused): what the loss holds.
TEST(LoadScenario, CrossEntropy) {
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml").training.cross_entropy, model::CrossEntropy::kFused);
  EXPECT_EQ(load_scenario_text(kBase + "  cross_entropy: torch\n", "t.yaml").training.cross_entropy,
            model::CrossEntropy::kTorch);
  EXPECT_EQ(load_scenario_text(kBase + "  cross_entropy: chunked\n", "t.yaml").training.cross_entropy,
            model::CrossEntropy::kChunked);
  EXPECT_EQ(error_of(kBase + "  cross_entropy: liger\n"),
            "t.yaml:18:18: training.cross_entropy must be one of fused, torch, chunked, got 'liger'");
}

// training.attention_kernel: default | fa1 | fa2 | fa3 | fa4 | cudnn.
TEST(LoadScenario, AttentionKernel) {
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml").training.attention_kernel, "");
  EXPECT_EQ(load_scenario_text(kBase + "  attention_kernel: cudnn\n", "t.yaml").training.attention_kernel, "cudnn");
  EXPECT_EQ(load_scenario_text(kBase + "  attention_kernel: fa4\n", "t.yaml").training.attention_kernel, "fa4");
  // FA4 has no H100 measurement (cost_tables.yaml): the H100's default, cuDNN, is costed, and a note
  // says so; a kernel the GPU has, or none named, gives no such note.
  const auto kernel_note = [](const Scenario& sc) {
    const auto it = std::find_if(sc.notes.begin(), sc.notes.end(),
                                 [](const std::string& n) { return n.rfind("training.attention_kernel", 0) == 0; });
    return it == sc.notes.end() ? std::string() : *it;
  };
  EXPECT_EQ(kernel_note(load_scenario_text(kBase + "  attention_kernel: fa4\n", "t.yaml")),
            "training.attention_kernel = fa4: no measurement on h100-sxm; its default (cudnn) is costed");
  EXPECT_EQ(kernel_note(load_scenario_text(kBase + "  attention_kernel: fa3\n", "t.yaml")), "");
  EXPECT_EQ(kernel_note(load_scenario_text(kBase, "t.yaml")), "");
  EXPECT_EQ(error_of(kBase + "  attention_kernel: fa5\n"),
            "t.yaml:18:21: training.attention_kernel must be one of default, fa1, fa2, fa3, fa4, cudnn, got 'fa5' "
            "(did you mean 'fa1'?)");
}

TEST(ScenarioErrors, LayersPerStage) {
  const std::string lps = "  dp: 4\n  layers_per_stage: ";  // the list starts at line 16, column 21
  EXPECT_EQ(error_of(with("  dp: 4", lps + "[10, 10]")),
            "t.yaml:16:21: parallelism.layers_per_stage adds up to 20 layers; model.layers = 24");
  EXPECT_EQ(error_of(with("  dp: 4", lps + "[8, 8, 8]")),
            "t.yaml:16:21: parallelism.layers_per_stage has 3 entries; it needs pp = 2 entries (one per stage)");
  EXPECT_EQ(error_of(with("  dp: 4", lps + "12")),
            "t.yaml:16:21: parallelism.layers_per_stage must be a list of layer counts, one per stage or per chunk "
            "(e.g. [7, 8, 8, 7]), got '12'");
  EXPECT_EQ(error_of(with("  dp: 4", lps + "[12, -12]")),
            "t.yaml:16:26: parallelism.layers_per_stage[1] must be a non-negative integer, got '-12'");
  // Only the model's first and last chunk may be empty: chunk 1 of 4 (stage 1's first) may not.
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  schedule: interleaved\n  virtual_stages: 2\n  layers_per_stage: [8, 0, 8, 8]")),
            "t.yaml:18:25: parallelism.layers_per_stage[1] = 0: only the model's first and last chunk may be empty");
  // Per stage with v = 3: stage 0's one layer goes to its last chunk (4), chunk 0 may be empty, chunk 2 not.
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  schedule: interleaved\n  virtual_stages: 3\n  layers_per_stage: [1, 23]")),
            "t.yaml:18:22: parallelism.layers_per_stage[0] = 1 is fewer than virtual_stages = 3: chunk 2 would hold no "
            "layer (only the model's first and last chunk may be empty)");
  // From --set, pointing at the override.
  EXPECT_EQ(error_of(kBase, sets({"parallelism.layers_per_stage=[1,2]"})),
            "--set:1:30: parallelism.layers_per_stage adds up to 3 layers; model.layers = 24");
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

TEST(LoadScenario, PcieTreeAndNvlinkBridge) {
  const Scenario tree = load_scenario_text(
      with("  gpu: h100-sxm", "  gpu: h100-pcie\n  intra_node: {fabric: pcie, pcie_switch_gpus: 4, pcie_switch_uplink: 32GBps, "
                              "sockets: 2, inter_socket_bandwidth: 40GBps}"),
      "t.yaml");
  EXPECT_EQ(tree.cluster.intra_fabric, hardware::IntraFabric::kPcie);
  EXPECT_DOUBLE_EQ(tree.cluster.intra_bandwidth_Bps, 64e9);  // each GPU's x16 link: catalog h100-pcie Gen5
  EXPECT_EQ(tree.cluster.gpus_per_pcie_switch, 4);
  EXPECT_DOUBLE_EQ(tree.cluster.pcie_switch_uplink_Bps, 32e9);
  EXPECT_EQ(tree.cluster.sockets, 2);
  EXPECT_DOUBLE_EQ(tree.cluster.inter_socket_Bps, 40e9);
  const Scenario pairs = load_scenario_text(
      with("  gpu: h100-sxm", "  gpu: h100-pcie\n  intra_node: {fabric: nvlink-bridge, bandwidth: 300GBps, pcie_switch_gpus: 2}"),
      "t.yaml");
  EXPECT_EQ(pairs.cluster.intra_fabric, hardware::IntraFabric::kNvlinkBridge);
  EXPECT_DOUBLE_EQ(pairs.cluster.intra_bandwidth_Bps, 300e9);
}

TEST(ScenarioErrors, PcieTree) {
  const auto intra = [](const std::string& block) { return with("  gpu: h100-sxm", "  gpu: h100-pcie\n  intra_node: " + block); };
  EXPECT_EQ(error_of(intra("{fabric: pcie, pcie_switch_gpus: 3}")),
            "t.yaml:10:48: cluster.intra_node.pcie_switch_gpus = 3 must divide cluster.gpus_per_node = 8");
  EXPECT_EQ(error_of(intra("{fabric: nvswitch, bandwidth: 450GBps, sockets: 2}")),
            "t.yaml:10:54: cluster.intra_node.sockets describes a PCIe tree: it needs fabric: pcie or nvlink-bridge (the "
            "fabric is nvswitch)");
  EXPECT_EQ(error_of(intra("{fabric: pcie, sockets: 2}")),
            "t.yaml:10:39: cluster.intra_node.sockets: 2 needs pcie_switch_gpus (the switches hang under the sockets)");
  EXPECT_EQ(error_of(intra("{fabric: pcie, pcie_switch_gpus: 8, sockets: 2, inter_socket_bandwidth: 40GBps}")),
            "t.yaml:10:60: cluster.intra_node.sockets: 2 needs an even number of PCIe switches, got 1");
  EXPECT_EQ(error_of(intra("{fabric: pcie, pcie_switch_uplink: 32GBps}")),
            "t.yaml:10:30: cluster.intra_node.pcie_switch_uplink needs pcie_switch_gpus (no switches without it)");
  EXPECT_EQ(error_of(intra("{fabric: nvlink-bridge}")),
            "t.yaml:10:3: missing key 'bandwidth' in cluster.intra_node (GPU 'h100-pcie' has no nvlink_bandwidth to default to)");
  EXPECT_EQ(error_of(with("  gpus_per_node: 8", "  gpus_per_node: 3\n  intra_node: {fabric: nvlink-bridge, bandwidth: 300GBps}",
                          with("  gpu: h100-sxm", "  gpu: h100-pcie"))),
            "t.yaml:12:24: cluster.intra_node.fabric: nvlink-bridge joins GPUs in pairs; gpus_per_node = 3 is odd");
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

TEST(LoadScenario, NvlinkDomainFoldsServersIntoOneNode) {
  // 36 trays of 4 GB200 GPUs in 72-GPU NVLink domains: 2 simulated nodes of 72 GPUs, every tray's
  // 4 NICs kept (72 per domain), TP up to the domain allowed.
  const std::string yaml = with("  gpu: h100-sxm", "  gpu: gb200",
                                with("  nodes: 2", "  nodes: 36\n  nvlink_domain: 72",
                                     with("  gpus_per_node: 8", "  gpus_per_node: 4\n  inter_node: {nics_per_node: 4}",
                                          with("  tp: 2", "  tp: 8",
                                               with("  dp: 4", "  dp: 9", with("  global_batch: 64", "  global_batch: 72"))))));
  const Scenario sc = load_scenario_text(yaml, "t.yaml");
  EXPECT_EQ(sc.cluster.nodes, 2);
  EXPECT_EQ(sc.cluster.gpus_per_node, 72);
  EXPECT_EQ(sc.cluster.nics_per_node, 72);
  EXPECT_EQ(sc.cluster.servers_per_domain, 18);
  EXPECT_DOUBLE_EQ(sc.cluster.intra_bandwidth_Bps, 900e9);  // catalog gb200: NVLink5 1.8 TB/s total
  ASSERT_GE(sc.notes.size(), 2u);
  EXPECT_EQ(sc.notes[1], "cluster.nvlink_domain = 72: 36 servers of 4 GPUs form 2 NVLink domains, each simulated as one "
                         "72-GPU node (hosts gpu-<domain>-<gpu>)");
}

TEST(ScenarioErrors, NvlinkDomain) {
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  nvlink_domain: 12")),
            "t.yaml:11:18: cluster.nvlink_domain = 12 must be a multiple of cluster.gpus_per_node = 8 (whole servers per "
            "domain)");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  nvlink_domain: 24")),
            "t.yaml:11:18: cluster.nvlink_domain = 24 GPUs is 3 servers, which must divide cluster.nodes = 2 (whole domains)");
  EXPECT_EQ(error_of(with("  nodes: 2", "  nodes: 2\n  nvlink_domain: 16\n  intra_node: {fabric: pcie}")),
            "t.yaml:11:3: cluster.nvlink_domain needs intra_node.fabric: nvswitch (the domain is one NVLink switch system), "
            "got pcie");
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

// Issue 17's keys: routing, nodes per leaf, link faults, straggler episodes; read, defaulted, and
// refused with the position of the bad value.
TEST(LoadScenario, NoiseMechanismKeys) {
  const auto sc = load_scenario_text(
      with("  gpus_per_node: 8", "  gpus_per_node: 8\n  inter_node:\n    routing: ecmp\n    nodes_per_leaf: 1") +
          "link_faults:\n  degraded: 2\n  flaps_per_link_hour: 0.5\n  flap: 30s\nstragglers:\n  episodes_per_gpu_hour: 2\n"
          "  episode: 2min\n  slowdown: 1.5\n",
      "t.yaml");
  EXPECT_TRUE(sc.cluster.ecmp);
  EXPECT_EQ(sc.cluster.nodes_per_leaf, 1);
  ASSERT_TRUE(sc.link_faults.has_value());
  EXPECT_EQ(sc.link_faults->degraded, 2);
  EXPECT_DOUBLE_EQ(sc.link_faults->degraded_share, 0.5);  // default
  EXPECT_DOUBLE_EQ(sc.link_faults->flaps_per_link_hour, 0.5);
  EXPECT_DOUBLE_EQ(sc.link_faults->flap_s, 30);
  ASSERT_TRUE(sc.stragglers.has_value());
  EXPECT_DOUBLE_EQ(sc.stragglers->episodes_per_gpu_hour, 2);
  EXPECT_DOUBLE_EQ(sc.stragglers->episode_s, 120);
  EXPECT_FALSE(load_scenario_text(kBase, "t.yaml").cluster.ecmp);  // adaptive by default
  EXPECT_EQ(error_of(with("  gpus_per_node: 8", "  gpus_per_node: 8\n  inter_node:\n    routing: ecmpp")),
            "t.yaml:13:14: cluster.inter_node.routing must be one of adaptive, ecmp, got 'ecmpp' (did you mean 'ecmp'?)");
  EXPECT_EQ(error_of(with("  gpus_per_node: 8", "  gpus_per_node: 8\n  inter_node:\n    nodes_per_leaf: 3")),
            "t.yaml:13:21: cluster.inter_node.nodes_per_leaf = 3 must divide cluster.nodes = 2");
  EXPECT_EQ(error_of(kBase + "link_faults:\n  degraded_share: 0\n"), "t.yaml:19:19: link_faults.degraded_share must be in (0, 1], got '0'");
}

// cluster.inter_node.transport: InfiniBand (RoCE alike) by default, AWS EFA on request; a typo is
// refused at its value.
TEST(LoadScenario, InterNodeTransport) {
  EXPECT_EQ(load_scenario_text(kBase, "t.yaml").cluster.transport, hardware::InterTransport::kInfiniband);
  const auto sc = load_scenario_text(with("  gpus_per_node: 8", "  gpus_per_node: 8\n  inter_node:\n    transport: efa"), "t.yaml");
  EXPECT_EQ(sc.cluster.transport, hardware::InterTransport::kEfa);
  EXPECT_EQ(error_of(with("  gpus_per_node: 8", "  gpus_per_node: 8\n  inter_node:\n    transport: ef")),
            "t.yaml:13:16: cluster.inter_node.transport must be one of infiniband, efa, got 'ef' (did you mean 'efa'?)");
}

}  // namespace
}  // namespace trainsim::config

namespace trainsim::config {
namespace {

// model.moe and parallelism.ep (issue 19): what a mixture-of-experts layout must satisfy, each
// refused at the key with the rule.
TEST(ScenarioErrors, MixtureOfExperts) {
  const std::string moe = "  seq_len: 2048\n  moe: {experts: 8, top_k: 2, expert_ffn_hidden: 1024}";
  EXPECT_EQ(error_of(with("  seq_len: 2048", moe)), "no error");
  const Scenario sc = load_scenario_text(with("  seq_len: 2048", moe, with("  dp: 4", "  dp: 4\n  ep: 4")), "t.yaml");
  EXPECT_EQ(sc.model.moe.experts, 8);
  EXPECT_EQ(sc.model.moe.top_k, 2);
  EXPECT_EQ(sc.parallel.ep, 4);
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  ep: 2")), "t.yaml:16:7: parallelism.ep = 2 needs a mixture-of-experts model (model.moe)");
  EXPECT_EQ(error_of(with("  seq_len: 2048", moe, with("  dp: 4", "  dp: 4\n  ep: 3"))),
            "t.yaml:17:7: parallelism.ep = 3 must divide model.moe.experts = 8");
  EXPECT_EQ(error_of(with("  seq_len: 2048", "  seq_len: 2048\n  moe: {experts: 16, expert_ffn_hidden: 1024}",
                          with("  dp: 4", "  dp: 4\n  ep: 8"))),
            "t.yaml:17:7: parallelism.ep = 8 must divide dp * cp = 4 (expert parallelism is carved out of the data-parallel "
            "ranks; parallelism.expert_tp folds it over the tensor-parallel ranks too)");
  // Folded (expert_tp): the expert layers take the stage's tp x cp x dp ranks, ep x expert_tp of them a group.
  const std::string sixteen = "  seq_len: 2048\n  moe: {experts: 16, expert_ffn_hidden: 1024}";
  EXPECT_EQ(error_of(with("  seq_len: 2048", sixteen, with("  dp: 4", "  dp: 4\n  ep: 8\n  expert_tp: 1"))), "no error");
  EXPECT_EQ(error_of(with("  seq_len: 2048", sixteen, with("  dp: 4", "  dp: 4\n  ep: 16\n  expert_tp: 1"))),
            "t.yaml:18:14: parallelism.ep x expert_tp = 16 must divide tp x cp x dp = 8 (the expert layers' ranks are the stage's)");
  EXPECT_EQ(error_of(with("  seq_len: 2048", sixteen, with("  dp: 4", "  dp: 4\n  ep: 2\n  expert_tp: 3"))),
            "t.yaml:18:14: parallelism.expert_tp = 3 must divide tp = 2");
  EXPECT_EQ(error_of(with("  seq_len: 2048", "  seq_len: 2048\n  moe: {experts: 2, top_k: 3, expert_ffn_hidden: 1024}")),
            "t.yaml:8:28: model.moe.top_k must be at most 2, got '3'");
  EXPECT_EQ(error_of(with("  seq_len: 2048", "  seq_len: 2048\n  moe: {experts: 8, expert_ffn_hidden: 1024, first_dense_layers: 24}")),
            "t.yaml:8:66: model.moe.first_dense_layers = 24 leaves no mixture-of-experts layer of model.layers = 24");
  EXPECT_EQ(error_of(with("  seq_len: 2048", "  seq_len: 2048\n  moe: {top_k: 2}")), "t.yaml:8:3: missing key 'experts' in model.moe");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  ep_dispatcher: nccl")),
            "t.yaml:16:18: parallelism.ep_dispatcher must be one of alltoall, deepep, got 'nccl'");
  EXPECT_EQ(error_of(with("  dp: 4", "  dp: 4\n  recompute_modules: [mla_up_proj, mlp]")),
            "t.yaml:16:36: parallelism.recompute_modules[1] must be one of mla_up_proj, layernorm, moe_act, got 'mlp'");
}

}  // namespace
}  // namespace trainsim::config
