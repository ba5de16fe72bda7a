// FabricPlan: the inter-node tree as numbers, no SimGrid Engine.
#include "platform/fabric.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "hardware/gpu.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace trainsim::platform {
namespace {

// DGX H100-like nodes: 8 GPUs, 8 x 400 Gbps NICs (hardware.yaml typical_node_injection
// "DGX H100 / Eos": 8 x NDR 400 Gb/s), 5 us between nodes.
hardware::ClusterSpec cluster(int64_t nodes, hardware::Topology topology = hardware::Topology::kFatTree) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.topology = topology;
  c.nic_bandwidth_Bps = 50e9;
  c.nics_per_node = 8;
  c.inter_latency_s = 5e-6;
  return c;
}

std::string input_error(const hardware::ClusterSpec& c) {
  try {
    plan_fabric(c);
  } catch (const util::InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Fabric, LargestDivisorAtMost) {
  EXPECT_EQ(largest_divisor_at_most(2048, 32), 32);
  EXPECT_EQ(largest_divisor_at_most(48, 32), 24);
  EXPECT_EQ(largest_divisor_at_most(37, 32), 1);  // prime
  EXPECT_EQ(largest_divisor_at_most(4, 32), 4);
  EXPECT_EQ(largest_divisor_at_most(1, 32), 1);
}

TEST(Fabric, FatTree2048NodesHasThreeLevels) {
  const FabricPlan p = plan_fabric(cluster(2048));
  ASSERT_EQ(p.levels.size(), 3u);
  EXPECT_EQ(p.switch_levels(), 3);
  // Leaf: 32 ports = 4 whole nodes; 2048 / 4 = 512 leaves.
  EXPECT_EQ(p.levels[0].role, TreeLevelRole::kLeaf);
  EXPECT_EQ(p.levels[0].fan_in, 32);
  EXPECT_EQ(p.levels[0].switches, 512);
  EXPECT_DOUBLE_EQ(p.levels[0].down_link_Bps, 50e9);
  // Aggregation: pods of 32 leaves; each leaf uplink carries 32 ports x 50 GB/s (1:1).
  EXPECT_EQ(p.levels[1].role, TreeLevelRole::kAggregation);
  EXPECT_EQ(p.levels[1].fan_in, 32);
  EXPECT_EQ(p.levels[1].switches, 16);
  EXPECT_DOUBLE_EQ(p.levels[1].down_link_Bps, 1.6e12);
  // Core over the 16 pods: each pod uplink carries its 32 leaves' 1.6 TB/s.
  EXPECT_EQ(p.levels[2].role, TreeLevelRole::kCore);
  EXPECT_EQ(p.levels[2].fan_in, 16);
  EXPECT_EQ(p.levels[2].switches, 1);
  EXPECT_DOUBLE_EQ(p.levels[2].down_link_Bps, 51.2e12);
  EXPECT_DOUBLE_EQ(p.gpu_link_latency_s, 2.5e-6);  // half of 5 us on each end
  EXPECT_FALSE(p.levels[1].shared);
  EXPECT_EQ(p.position(3, 5), 3 * 8 + 5);  // node-major
}

TEST(Fabric, OversubscriptionDividesLeafUplinks) {
  auto c = cluster(8);
  c.oversubscription = 2.0;
  const FabricPlan p = plan_fabric(c);
  ASSERT_EQ(p.levels.size(), 2u);  // 2 leaves of 4 nodes under one spine
  EXPECT_EQ(p.levels[1].fan_in, 2);
  EXPECT_DOUBLE_EQ(p.levels[1].down_link_Bps, 32 * 50e9 / 2);  // 800 GB/s for 1.6 TB/s of ports
}

// cluster.inter_node.nodes_per_leaf places a job as its scheduler did (Crux: 8 hosts, 4 under each
// of 2 ToRs): 2 leaves of 4 nodes x 8 ports, each uplink 32 x 50 GB/s = 32 port-speed cables (ECMP
// hashes onto them). A count that does not divide the nodes is refused, naming the field.
TEST(Fabric, NodesPerLeafPlacesTheJob) {
  auto c = cluster(8);
  c.nodes_per_leaf = 2;
  const FabricPlan p = plan_fabric(c);
  ASSERT_EQ(p.levels.size(), 2u);
  EXPECT_EQ(p.levels[0].switches, 4);
  EXPECT_EQ(p.levels[0].fan_in, 16);
  EXPECT_DOUBLE_EQ(p.levels[1].down_link_Bps, 16 * 50e9);
  EXPECT_EQ(p.levels[1].cables, 16);
  c.nodes_per_leaf = 3;
  EXPECT_NE(input_error(c).find("cluster.inter_node.nodes_per_leaf: 3 must divide cluster.nodes = 8"), std::string::npos)
      << input_error(c);
}

TEST(Fabric, RailOptimizedGroupsOneRailPerLeaf) {
  const FabricPlan p = plan_fabric(cluster(64, hardware::Topology::kRailOptimized));
  EXPECT_TRUE(p.rail_major);
  // 32 nodes' rail g per leaf: 8 rails x 2 leaves each, under one spine.
  EXPECT_EQ(p.levels[0].fan_in, 32);
  EXPECT_EQ(p.levels[0].switches, 16);
  ASSERT_EQ(p.levels.size(), 2u);
  EXPECT_EQ(p.levels[1].fan_in, 16);
  EXPECT_EQ(p.position(5, 3), 3 * 64 + 5);
  std::set<int64_t> seen;
  for (int64_t n = 0; n < 64; ++n)
    for (int64_t g = 0; g < 8; ++g) {
      const int64_t pos = p.position(n, g);
      EXPECT_EQ(p.gpu_at(pos), std::make_pair(n, g));
      seen.insert(pos);
      // Leaf switch pos / 32 holds only rail g.
      EXPECT_EQ(pos / 32 / 2, g);
    }
  EXPECT_EQ(seen.size(), 512u);
}

TEST(Fabric, GpusSharingANicGetANicLevel) {
  auto c = cluster(16);
  c.nics_per_node = 4;
  const FabricPlan p = plan_fabric(c);
  EXPECT_EQ(p.gpus_per_nic, 2);
  EXPECT_EQ(p.rails, 4);
  ASSERT_EQ(p.levels.size(), 3u);
  EXPECT_EQ(p.levels[0].role, TreeLevelRole::kNic);
  EXPECT_EQ(p.levels[0].fan_in, 2);
  EXPECT_EQ(p.levels[0].switches, 64);
  EXPECT_DOUBLE_EQ(p.levels[0].down_link_Bps, 50e9);  // one GPU alone may use the whole NIC
  EXPECT_EQ(p.levels[1].role, TreeLevelRole::kLeaf);
  EXPECT_EQ(p.levels[1].fan_in, 32);  // 8 nodes x 4 NIC ports
  EXPECT_EQ(p.switch_levels(), 2);
}

TEST(Fabric, SeveralNicsPerGpuActAsOnePort) {
  auto c = cluster(2);
  c.nics_per_node = 16;  // e.g. 16 x 200 Gbps (hardware.yaml typical_node_injection OCI BM.GPU.H100.8)
  c.nic_bandwidth_Bps = 25e9;
  const FabricPlan p = plan_fabric(c);
  EXPECT_EQ(p.gpus_per_nic, 1);
  EXPECT_DOUBLE_EQ(p.port_Bps, 50e9);  // 2 x 25 GB/s per GPU
  EXPECT_DOUBLE_EQ(p.levels[0].down_link_Bps, 50e9);
}

TEST(Fabric, SharedHasOneLeafPerNodeAndSharedUplinks) {
  const FabricPlan p = plan_fabric(cluster(4, hardware::Topology::kShared));
  EXPECT_EQ(p.levels[0].fan_in, 8);
  EXPECT_EQ(p.levels[0].switches, 4);
  ASSERT_EQ(p.levels.size(), 2u);
  EXPECT_TRUE(p.levels[1].shared);
  EXPECT_DOUBLE_EQ(p.levels[1].down_link_Bps, 8 * 50e9);
}

TEST(Fabric, PrimeLeafCountStaysTwoLevels) {
  const FabricPlan p = plan_fabric(cluster(37, hardware::Topology::kShared));
  ASSERT_EQ(p.levels.size(), 2u);  // 37 leaves: no pod size divides them, one spine above all
  EXPECT_EQ(p.levels[1].fan_in, 37);
}

TEST(Fabric, OneNodeIsOneLeafSwitch) {
  const FabricPlan p = plan_fabric(cluster(1));
  ASSERT_EQ(p.levels.size(), 1u);
  EXPECT_EQ(p.levels[0].switches, 1);
  EXPECT_EQ(p.switch_levels(), 1);
}

TEST(Fabric, ValidationNamesTheField) {
  auto c = cluster(2);
  c.nics_per_node = 3;
  EXPECT_EQ(input_error(c),
            "cluster.inter_node.nics_per_node: 3 NICs cannot be shared evenly by 8 GPUs per node (use a divisor or a "
            "multiple of gpus_per_node)");
  c = cluster(2);
  c.oversubscription = 0.5;
  EXPECT_EQ(input_error(c), "cluster.inter_node.oversubscription: must be >= 1, got 0.500000");
  c = cluster(2);
  c.intra_latency_s = -1e-6;
  EXPECT_EQ(input_error(c), "cluster.intra_node.latency: must be a finite value >= 0, got -0.000001");
  c = cluster(0);
  EXPECT_EQ(input_error(c), "cluster.nodes: must be >= 1, got 0");
  c = cluster(1 << 20);
  EXPECT_EQ(input_error(c), "cluster.nodes: 1048576 nodes x 8 GPUs exceeds the builder's limit of 4194304 GPUs");
  c = cluster(2);
  c.gpu.peak_bf16_flops = 0;
  EXPECT_EQ(input_error(c), "cluster.gpu: peak bf16 FLOP/s (the GPU hosts' speed): must be a finite value > 0, got 0.000000");
}

TEST(Fabric, DescribeSaysWhatWasPlanned) {
  const std::string port = util::format_bandwidth(50e9);
  EXPECT_EQ(plan_fabric(cluster(8)).describe(),
            "8 nodes x 8 GPUs, 8 ports/node at " + port + ", node-major; 2 switch levels: leaf x2 (fan-in 32, " + port +
                " links) aggregation x1 (fan-in 2, " + util::format_bandwidth(32 * 50e9) + " links)");
}

}  // namespace
}  // namespace trainsim::platform
