// The platform file is the truth (issue 15, platform/derive.hpp): halving a link or the GPU speed in
// a platform file changes `trainsim run`'s step exactly as the same change in the scenario's
// cluster does, and the run reports what the file overrode. Drives the binary (one Engine per run).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "cli_test_util.hpp"

namespace trainsim::testing {
namespace {

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  size_t n = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()), ++n)
    text.replace(at, from.size(), to);
  EXPECT_GT(n, 0u) << "'" << from << "' not found";
  return text;
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = tmp(name);
  std::ofstream(path) << text;
  return path;
}

// 4 DGX H100 nodes, as h100-ib-4node.xml's header states; TP8 inside the node, DP4 across nodes.
// GPT-3 175B's layer shapes on 4 layers keep the run short.
constexpr const char* kDgx4 = R"(version: 1
name: platform-truth
model: {preset: gpt3-175b, layers: 4}
cluster:
  gpu: GPU
  nodes: NODES
  gpus_per_node: 8
  intra_node: {fabric: FABRIC, bandwidth: "INTRA", latency: "1us"}
  inter_node: {topology: fat-tree, nic_bandwidth: "NIC", nics_per_node: 8, latency: "5us"}
  PLATFORM
parallelism: {tp: 8, pp: 1, dp: DP, micro_batch: 1, zero: 1, sequence_parallel: true}
training: {precision: bf16, global_batch: BATCH, steps: 3}
)";

struct Cluster {
  std::string gpu = "h100-sxm", nodes = "4", fabric = "nvswitch", intra = "450GBps", nic = "400Gbps", platform;
};

std::string scenario_text(const Cluster& c) {
  std::string t = kDgx4;
  const std::string dp = c.nodes;
  t = replaced(t, "GPU", c.gpu);
  t = replaced(t, "NODES", c.nodes);
  t = replaced(t, "FABRIC", c.fabric);
  t = replaced(t, "INTRA", c.intra);
  t = replaced(t, "NIC", c.nic);
  t = replaced(t, "PLATFORM", c.platform.empty() ? "" : "platform: " + c.platform);
  t = replaced(t, "DP", dp);
  t = replaced(t, "BATCH", std::to_string(8 * std::stoi(dp)));
  return t;
}

nlohmann::json run_json(const std::string& name, const Cluster& c) {
  const std::string yaml = write(name + ".yaml", scenario_text(c));
  const std::string json = tmp(name + ".json");
  const Result r = trainsim("run " + yaml + " --quiet --json " + json);
  EXPECT_EQ(r.code, 0) << r.err;
  return nlohmann::json::parse(read_file(json));
}

double step_s(const nlohmann::json& j) { return j["step_time_s"]["mean"].get<double>(); }

const std::string kIb4 = std::string(TRAINSIM_SOURCE_DIR) + "/platforms/h100-ib-4node.xml";
const std::string kPcie = std::string(TRAINSIM_SOURCE_DIR) + "/platforms/pcie-8gpu.xml";

TEST(PlatformTruth, AFileEqualToTheBuilderOverridesNothing) {
  Cluster file;
  file.platform = kIb4;
  const auto f = run_json("same-file", file);
  const auto b = run_json("same-built", Cluster{});
  EXPECT_FALSE(f.contains("platform_overrides"));
  EXPECT_DOUBLE_EQ(step_s(f), step_s(b));
}

// Each halving in the file against the same halving in the scenario: the same step, to the last
// digit JSON prints, and the override listed.
void expect_same_step(const std::string& what, const std::string& xml, const std::string& from, const std::string& to,
                      Cluster builder, Cluster file, const std::string& field) {
  file.platform = write(what + ".xml", replaced(read_file(xml), from, to));
  const auto f = run_json(what + "-file", file);
  const auto b = run_json(what + "-built", builder);
  EXPECT_DOUBLE_EQ(step_s(f), step_s(b)) << what;
  ASSERT_TRUE(f.contains("platform_overrides")) << what;
  EXPECT_EQ(f["platform_overrides"][0]["field"], field) << what;
}

TEST(PlatformTruth, HalvedGpuSpeedIsTheSameAsAHalfSpeedGpu) {
  Cluster slow;
  // The same GPU at half its peaks (catalog h100-sxm: 989.4 bf16, 1978.9 fp8, 494.7 tf32).
  slow.gpu = "{base: h100-sxm, peak_bf16: 494.7Tf, peak_fp16: 494.7Tf, peak_fp8: 989.45Tf, peak_fp32: 247.35Tf}";
  expect_same_step("speed", kIb4, "989.4Tf", "494.7Tf", slow, Cluster{}, "cluster.gpu peak_bf16 (GPU host speed)");
}

TEST(PlatformTruth, HalvedNvswitchPortsAreTheSameAsHalvedIntraBandwidth) {
  Cluster half;
  half.intra = "225GBps";
  expect_same_step("nvlink", kIb4, "450GBps", "225GBps", half, Cluster{}, "cluster.intra_node.bandwidth");
}

TEST(PlatformTruth, HalvedNicsAreTheSameAsHalvedNicBandwidth) {
  Cluster half;
  half.nic = "200Gbps";
  expect_same_step("nic", kIb4, "400Gbps", "200Gbps", half, Cluster{}, "cluster.inter_node.nic_bandwidth per GPU");
}

TEST(PlatformTruth, HalvedPcieBridgeIsTheSameAsHalvedPcieBandwidth) {
  Cluster half;
  half.gpu = "h100-pcie";
  half.nodes = "1";
  half.fabric = "pcie";
  half.intra = "32GBps";
  Cluster file = half;
  file.intra = "64GBps";
  expect_same_step("pcie", kPcie, "64GBps", "32GBps", half, file, "cluster.intra_node.bandwidth");
}

TEST(PlatformTruth, NarrowerPcieSwitchUplinksAreTheSameAsInTheScenario) {
  // hgx-h100-pcie.xml (a Gen5 switch of 4 GPUs per socket, 22 GB/s between sockets) with the switch
  // uplinks cut from 64 to 16 GB/s, below the socket link, so that they limit the TP8 ring: the
  // same step as the scenario's tree with pcie_switch_uplink: 16GBps.
  Cluster tree;
  tree.gpu = "h100-pcie";
  tree.nodes = "1";
  tree.fabric = "pcie";
  tree.intra = R"(64GBps", pcie_switch_gpus: 4, sockets: 2, inter_socket_bandwidth: "22GBps)";
  Cluster narrow = tree;
  narrow.intra = R"(64GBps", pcie_switch_gpus: 4, pcie_switch_uplink: "16GBps", sockets: 2, inter_socket_bandwidth: "22GBps)";
  const std::string xml = std::string(TRAINSIM_SOURCE_DIR) + "/platforms/hgx-h100-pcie.xml";
  const std::string file = write("uplink.xml", replaced(replaced(read_file(xml), R"(id="pcie-switch-0-0" bandwidth="64GBps")",
                                                                 R"(id="pcie-switch-0-0" bandwidth="16GBps")"),
                                                        R"(id="pcie-switch-0-1" bandwidth="64GBps")",
                                                        R"(id="pcie-switch-0-1" bandwidth="16GBps")"));
  Cluster loaded = tree;
  loaded.platform = file;
  const auto f = run_json("uplink-file", loaded);
  const auto b = run_json("uplink-built", narrow);
  const auto wide = run_json("uplink-wide", tree);
  EXPECT_DOUBLE_EQ(step_s(f), step_s(b));
  EXPECT_GT(step_s(b), 1.1 * step_s(wide));  // the uplinks now limit TP: 16 instead of 22 GB/s per flow
  ASSERT_TRUE(f.contains("platform_overrides"));
  EXPECT_EQ(f["platform_overrides"][0]["field"], "cluster.intra_node ring share per flow (GPUs in the ring: bandwidth)");
}

TEST(PlatformTruth, Tp8OnAPcieServerIsInterconnectBoundByItsExposedTpTime) {
  // GPT-3 175B layers, TP8, on 8 H100 PCIe: hgx-h100-pcie.xml (no NVLink: PCIe tree, 22 GB/s
  // between sockets) against the same GPUs on NVSwitch. The step grows by the exposed TP time and
  // nothing else (the GEMMs are the same), and the report names the interconnect.
  Cluster pcie;
  pcie.gpu = "h100-pcie";
  pcie.nodes = "1";
  pcie.platform = std::string(TRAINSIM_SOURCE_DIR) + "/platforms/hgx-h100-pcie.xml";
  pcie.fabric = "pcie";
  pcie.intra = R"(64GBps", pcie_switch_gpus: 4, sockets: 2, inter_socket_bandwidth: "22GBps)";
  Cluster nv = pcie;
  nv.platform.clear();
  nv.fabric = "nvswitch";
  nv.intra = "450GBps";
  const auto p = run_json("tp8-pcie", pcie);
  const auto n = run_json("tp8-nvswitch", nv);
  EXPECT_FALSE(p.contains("platform_overrides"));  // the scenario states the file's tree
  const double tp_p = p["breakdown_s"]["tp_comm"].get<double>(), tp_n = n["breakdown_s"]["tp_comm"].get<double>();
  EXPECT_NEAR(step_s(p) - step_s(n), tp_p - tp_n, 0.01 * (tp_p - tp_n));
  EXPECT_GT(tp_p, 10 * tp_n);
  EXPECT_EQ(p["bottleneck"], "interconnect");
  EXPECT_NE(n["bottleneck"], "interconnect");
}

TEST(PlatformTruth, APcieFileOverridesAnNvswitchScenarioAndSaysSo) {
  // The scenario says NVSwitch at 450 GB/s; the file has one PCIe bridge: TP8 costs what the
  // bridge gives (the same as a pcie scenario), and the console names both overrides.
  Cluster claimed;
  claimed.gpu = "h100-pcie";
  claimed.nodes = "1";
  claimed.platform = kPcie;
  Cluster pcie = claimed;
  pcie.platform.clear();
  pcie.fabric = "pcie";
  pcie.intra = "64GBps";
  const auto f = run_json("claimed-file", claimed);
  const auto b = run_json("claimed-built", pcie);
  EXPECT_DOUBLE_EQ(step_s(f), step_s(b));
  const Result r = trainsim("run " + write("claimed.yaml", scenario_text(claimed)) + " --quiet");
  EXPECT_NE(r.out.find("platform file overrides cluster.intra_node.fabric: nvswitch (scenario) -> pcie (platform file)"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace trainsim::testing
