// derive_cluster (platform/derive.hpp): what a platform file says replaces the scenario's cluster
// numbers. Each test creates one Engine (one process per test, gtest_discover_tests).
#include "platform/derive.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "hardware/intra_node.hpp"
#include "platform/platform.hpp"
#include "platform_test_util.hpp"

namespace trainsim::platform {
namespace {

using testing::dgx_h100_cluster;
using testing::source_path;

// A copy of a shipped platform file with every `from` replaced by `to`, in the test's temp dir.
std::string variant(const std::string& rel, const std::string& from, const std::string& to, const std::string& name) {
  std::ifstream in(source_path(rel));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  size_t replaced = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
    ++replaced;
  }
  EXPECT_GT(replaced, 0u) << from << " not in " << rel;
  const std::string path = ::testing::TempDir() + "trainsim-derive-" + name + ".xml";
  std::ofstream(path) << text;
  return path;
}

DerivedCluster derive_from(hardware::ClusterSpec c, const std::string& file) {
  c.platform_file = file;
  auto engine = make_engine();
  auto p = Platform::build(*engine, c);
  return derive_cluster(*p, c);
}

TEST(DeriveCluster, AFileThatIsTheBuiltPlatformChangesNothing) {
  // h100-ib-4node.xml states the cluster it equals (its header): nothing to override.
  const auto d = derive_from(dgx_h100_cluster(4), source_path("platforms/h100-ib-4node.xml"));
  EXPECT_TRUE(d.overrides.empty()) << describe(d.overrides.front());
  EXPECT_EQ(d.cluster.intra_fabric, hardware::IntraFabric::kNvswitch);
  EXPECT_DOUBLE_EQ(d.cluster.intra_bandwidth_Bps, 450e9);
  EXPECT_DOUBLE_EQ(d.cluster.nic_bandwidth_per_gpu_Bps(), 50e9);
}

TEST(DeriveCluster, HalvedHostSpeedScalesEveryPeakAndKeepsTheKernelTables) {
  const auto d = derive_from(dgx_h100_cluster(4),
                             variant("platforms/h100-ib-4node.xml", "989.4Tf", "494.7Tf", "speed"));
  ASSERT_EQ(d.overrides.size(), 1u);
  EXPECT_EQ(d.overrides[0].field, "cluster.gpu peak_bf16 (GPU host speed)");
  // Catalog h100-sxm: bf16 989.4, fp8 1978.9, tf32 494.7 TFLOP/s, all halved.
  EXPECT_DOUBLE_EQ(d.cluster.gpu.peak_bf16_flops, 494.7e12);
  EXPECT_DOUBLE_EQ(d.cluster.gpu.peak_fp16_flops, 494.7e12);
  EXPECT_DOUBLE_EQ(d.cluster.gpu.peak_fp8_flops, 1978.9e12 / 2);
  EXPECT_DOUBLE_EQ(d.cluster.gpu.peak_fp32_flops, 494.7e12 / 2);
  EXPECT_EQ(d.cluster.gpu.catalog, "h100-sxm");
  EXPECT_DOUBLE_EQ(d.cluster.gpu.hbm_bandwidth_Bps, 3350e9);  // not in a platform file
}

TEST(DeriveCluster, HalvedNvlinkPortsHalveThePerGpuBandwidth) {
  const auto d = derive_from(dgx_h100_cluster(4),
                             variant("platforms/h100-ib-4node.xml", "450GBps", "225GBps", "nvlink"));
  ASSERT_EQ(d.overrides.size(), 1u);
  EXPECT_EQ(d.overrides[0].field, "cluster.intra_node.bandwidth");
  EXPECT_EQ(d.cluster.intra_fabric, hardware::IntraFabric::kNvswitch);  // each ring flow has its own ports
  EXPECT_DOUBLE_EQ(d.cluster.intra_bandwidth_Bps, 225e9);
}

TEST(DeriveCluster, HalvedNicsHalveThePerGpuNetworkShare) {
  const auto d = derive_from(dgx_h100_cluster(4),
                             variant("platforms/h100-ib-4node.xml", "400Gbps", "200Gbps", "nic"));
  ASSERT_EQ(d.overrides.size(), 1u);
  EXPECT_EQ(d.overrides[0].field, "cluster.inter_node.nic_bandwidth per GPU");
  EXPECT_DOUBLE_EQ(d.cluster.nic_bandwidth_per_gpu_Bps(), 25e9);  // 200 Gb/s = 25 GB/s per GPU
  EXPECT_EQ(d.overrides[0].yaml, "50.0 GB/s");
  EXPECT_EQ(d.overrides[0].file, "25.0 GB/s");
}

TEST(DeriveCluster, OneSharedBridgeIsAPcieFabricWhateverTheScenarioSaid) {
  // The scenario claims NVSwitch at 450 GB/s; pcie-8gpu.xml has one 64 GB/s bridge that all 8 ring
  // flows cross (8 GB/s each): the cost model gets pcie at 64 GB/s, shared by the node's 8 GPUs.
  auto c = dgx_h100_cluster(1);
  c.gpu = *hardware::find_gpu("h100-pcie");
  const auto d = derive_from(c, source_path("platforms/pcie-8gpu.xml"));
  EXPECT_EQ(d.cluster.intra_fabric, hardware::IntraFabric::kPcie);
  EXPECT_DOUBLE_EQ(d.cluster.intra_bandwidth_Bps, 64e9);
  EXPECT_DOUBLE_EQ(d.cluster.intra_latency_s, 1e-6);
  ASSERT_EQ(d.overrides.size(), 2u);
  EXPECT_EQ(describe(d.overrides[0]), "cluster.intra_node.fabric: nvswitch (scenario) -> pcie (platform file)");
  EXPECT_EQ(describe(d.overrides[1]), "cluster.intra_node.bandwidth: 450.0 GB/s (scenario) -> 64.0 GB/s (platform file)");
}

TEST(DeriveCluster, LatencyIsTheLongestRingRoute) {
  const auto d = derive_from(dgx_h100_cluster(4),
                             variant("platforms/h100-ib-4node.xml", "latency=\"0.5us\"", "latency=\"2us\"", "lat"));
  ASSERT_EQ(d.overrides.size(), 1u);
  EXPECT_DOUBLE_EQ(d.cluster.intra_latency_s, 4e-6);  // 2 us on each GPU's port, two ports per route
}

// One source of truth for the intra-node fabric: the routes the builder makes (tree_zone.cpp) give,
// through derive_cluster's measurement on SimGrid, exactly the ring shares the cost model computes
// (hardware::ring_share) for every group size and stride; nothing is overridden.
void expect_builder_agrees_with_cost_model(const hardware::ClusterSpec& c) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, c);
  const auto d = derive_cluster(*p, c);
  EXPECT_TRUE(d.overrides.empty()) << describe(d.overrides.front());
  EXPECT_TRUE(d.cluster.ring_shares.empty());
}

hardware::ClusterSpec pcie_tree() {
  // 8 x H100 PCIe, dual-root: 2 sockets, a PCIe switch of 4 GPUs under each, Gen5 x16 (64 GB/s)
  // GPU links, 32 GB/s inter-socket (illustrative).
  auto c = dgx_h100_cluster(2);
  c.gpu = *hardware::find_gpu("h100-pcie");
  c.intra_fabric = hardware::IntraFabric::kPcie;
  c.intra_bandwidth_Bps = 64e9;
  c.gpus_per_pcie_switch = 4;
  c.sockets = 2;
  c.inter_socket_Bps = 32e9;
  return c;
}

TEST(DeriveCluster, BuiltNvswitchMatchesTheCostModel) { expect_builder_agrees_with_cost_model(dgx_h100_cluster(2)); }

TEST(DeriveCluster, BuiltPcieBridgeMatchesTheCostModel) {
  auto c = dgx_h100_cluster(1);
  c.intra_fabric = hardware::IntraFabric::kPcie;
  c.intra_bandwidth_Bps = 64e9;
  expect_builder_agrees_with_cost_model(c);
}

TEST(DeriveCluster, BuiltPcieTreeMatchesTheCostModel) { expect_builder_agrees_with_cost_model(pcie_tree()); }

TEST(DeriveCluster, BuiltNvlinkBridgePairsMatchTheCostModel) {
  auto c = pcie_tree();
  c.intra_fabric = hardware::IntraFabric::kNvlinkBridge;
  c.intra_bandwidth_Bps = 300e9;
  c.gpus_per_pcie_switch = 2;
  expect_builder_agrees_with_cost_model(c);
}

TEST(DeriveCluster, APcieTreeFileTheBuilderCannotMakeGivesItsMeasuredShares) {
  // The tree's file read against a scenario that claims NVSwitch: no built fabric of the nearest
  // kind (NVSwitch ports or one bridge) gives its shares, so the measured ones are kept and reported.
  auto engine = make_engine();
  auto built = pcie_tree();
  auto p = Platform::build(*engine, built);
  auto claimed = dgx_h100_cluster(2);
  claimed.gpu = built.gpu;
  const auto d = derive_cluster(*p, claimed);
  ASSERT_FALSE(d.cluster.ring_shares.empty());
  // Overridden: the ring shares, and the inter-node latency (the tree's GPUs reach their NICs over
  // their own PCIe links, 0.5 us each end: 5 -> 6 us).
  ASSERT_EQ(d.overrides.size(), 2u);
  EXPECT_EQ(d.overrides[0].field, "cluster.intra_node ring share per flow (GPUs in the ring: bandwidth)");
  EXPECT_EQ(describe(d.overrides[1]), "cluster.inter_node.latency: 5 us (scenario) -> 6 us (platform file)");
  // TP4 under one switch: each flow has its own x16 link; TP8 crosses the 32 GB/s socket link once
  // each way; every share the cost model now uses is the tree's.
  for (int64_t n : {2, 4, 8}) {
    EXPECT_DOUBLE_EQ(hardware::ring_share(d.cluster, n).per_flow_Bps, hardware::ring_share(built, n).per_flow_Bps) << n;
    EXPECT_FALSE(hardware::ring_share(d.cluster, n).nvlink_only);
  }
  EXPECT_DOUBLE_EQ(hardware::ring_share(built, 4).per_flow_Bps, 64e9);
  EXPECT_DOUBLE_EQ(hardware::ring_share(built, 8).per_flow_Bps, 32e9);
}

}  // namespace
}  // namespace trainsim::platform
