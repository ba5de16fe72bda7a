// Platform::build over SimGrid: every test runs in its own process (gtest_discover_tests) and
// creates ONE Engine; comparisons across two platforms measure the second one in a forked child.
#include "platform/platform.hpp"

#include <gtest/gtest.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <cstdio>
#include <map>
#include <fstream>
#include <string>

#include "platform_test_util.hpp"
#include "util/error.hpp"
#include "util/units.hpp"

namespace trainsim::platform {
namespace {

using testing::dgx_h100_cluster;
using testing::source_path;
using testing::in_child_process;
using testing::run_transfers;
using testing::Transfer;

constexpr double kGB = 1e9;
// Analytic times below are latency + bytes / bandwidth (CM02, factors 1): allow 0.5%.
constexpr double kTolerance = 0.005;

void expect_near_rel(double actual, double expected, double rel = kTolerance) {
  EXPECT_NEAR(actual, expected, rel * expected) << "actual " << actual << " expected " << expected;
}

TEST(Platform, HostNamesAreGpuNodeLocal) {
  EXPECT_EQ(Platform::host_name(12, 3), "gpu-12-3");
  auto engine = make_engine();
  auto c = dgx_h100_cluster(4);
  c.topology = hardware::Topology::kRailOptimized;  // rail-major leaf order: names must still match
  auto p = Platform::build(*engine, c);
  ASSERT_EQ(p->nodes(), 4);
  ASSERT_EQ(p->gpus_per_node(), 8);
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t g = 0; g < 8; ++g) EXPECT_EQ(p->gpu(n, g)->get_name(), Platform::host_name(n, g));
  // Host speed is the GPU's dense bf16 peak (hardware.yaml gpus.H100-SXM5-80GB: 989.4 TFLOP/s).
  EXPECT_DOUBLE_EQ(p->gpu(3, 7)->get_speed(), 989.4e12);
  EXPECT_EQ(engine->get_host_count(), 32u);
}

TEST(Platform, SecondEngineInOneProcessIsRefused) {
  auto engine = make_engine();
  EXPECT_THROW(make_engine(), std::logic_error);
}

TEST(Platform, NvswitchMessageTakesLatencyPlusSizeOverBandwidth) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(1));
  const auto t = run_transfers(*engine, {{p->gpu(0, 0), p->gpu(0, 5), 1 * kGB}});
  expect_near_rel(t[0], 1e-6 + 1 * kGB / 450e9);  // intra_latency + S / per-GPU NVLink bandwidth
}

TEST(Platform, NvswitchGpuSendingToSevenPeersSharesItsOwnLink) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(1));
  std::vector<Transfer> fan_out;
  for (int g = 1; g < 8; ++g) fan_out.push_back({p->gpu(0, 0), p->gpu(0, g), 1 * kGB});
  const auto t = run_transfers(*engine, fan_out);
  // 7 GB leave through gpu-0-0's own 450 GB/s NVLink uplink.
  for (double x : t) expect_near_rel(x, 1e-6 + 7 * kGB / 450e9);
}

hardware::ClusterSpec pcie_gen5_cluster() {
  // hardware.yaml PCIe_x16.Gen5: ~64 GB/s per direction; gpus.h100-pcie (catalog row h100-pcie).
  auto c = dgx_h100_cluster(1);
  c.gpu = *hardware::find_gpu("h100-pcie");
  c.intra_fabric = hardware::IntraFabric::kPcie;
  c.intra_bandwidth_Bps = 64e9;
  return c;
}

TEST(Platform, PcieMessageTakesLatencyPlusSizeOverBridgeBandwidth) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, pcie_gen5_cluster());
  const auto t = run_transfers(*engine, {{p->gpu(0, 2), p->gpu(0, 7), 1 * kGB}});
  expect_near_rel(t[0], 1e-6 + 1 * kGB / 64e9);
}

// Eight GPU pairs at once, each GPU sending to the next one (a ring): the transfers of a ring step.
std::vector<double> ring_step_times(const hardware::ClusterSpec& c, double bytes) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, c);
  std::vector<Transfer> ring;
  for (int g = 0; g < 8; ++g) ring.push_back({p->gpu(0, g), p->gpu(0, (g + 1) % 8), bytes});
  return run_transfers(*engine, ring);
}

TEST(Platform, NvswitchVsPcieOneMessageDifferByTheLinkRatio) {
  const double bytes = 4 * kGB;
  const auto pcie = in_child_process([&] {
    auto engine = make_engine();
    auto p = Platform::build(*engine, pcie_gen5_cluster());
    return run_transfers(*engine, {{p->gpu(0, 0), p->gpu(0, 1), bytes}});
  });
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(1));
  const auto nv = run_transfers(*engine, {{p->gpu(0, 0), p->gpu(0, 1), bytes}});
  // One pair: 450 GB/s NVLink vs 64 GB/s PCIe Gen5 = 7.03x (latency 1 us on both, < 0.1% here).
  expect_near_rel(pcie[0] / nv[0], (1e-6 + bytes / 64e9) / (1e-6 + bytes / 450e9), 0.02);
  EXPECT_NEAR(pcie[0] / nv[0], 450.0 / 64.0, 0.03 * 450.0 / 64.0);
}

TEST(Platform, NvswitchVsPcieEightConcurrentPairs) {
  const double bytes = 1 * kGB;
  const auto pcie = in_child_process([&] { return ring_step_times(pcie_gen5_cluster(), bytes); });
  const auto nv = ring_step_times(dgx_h100_cluster(1), bytes);
  // NVSwitch: each pair has its own 450 GB/s (sender's uplink, receiver's downlink).
  // PCIe: the 8 transfers share one 64 GB/s host bridge, 8 GB/s each. Ratio 8 x 450 / 64 = 56.25.
  for (int g = 0; g < 8; ++g) {
    expect_near_rel(nv[g], 1e-6 + bytes / 450e9);
    expect_near_rel(pcie[g], 1e-6 + 8 * bytes / 64e9);
  }
  expect_near_rel(pcie[0] / nv[0], 8 * 450.0 / 64.0, 0.03);
}

TEST(Platform, InterNodeFatTreeMessageTakesLatencyPlusSizeOverNic) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(8));  // 2 leaves of 4 nodes: crosses the spine
  const auto t = run_transfers(*engine, {{p->gpu(0, 3), p->gpu(7, 3), 1 * kGB}});
  expect_near_rel(t[0], 5e-6 + 1 * kGB / 50e9);  // inter_latency + S / 400 Gbps
}

TEST(Platform, IntraNodeIsFasterThanInterNodeOnOnePlatform) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(2));
  const auto t = run_transfers(*engine, {{p->gpu(0, 0), p->gpu(0, 1), 1 * kGB}, {p->gpu(0, 2), p->gpu(1, 2), 1 * kGB}});
  expect_near_rel(t[0], 1e-6 + 1 * kGB / 450e9);
  expect_near_rel(t[1], 5e-6 + 1 * kGB / 50e9);
  // 450 GB/s NVLink vs 50 GB/s NIC: 9x for a message this size.
  expect_near_rel(t[1] / t[0], (5e-6 + 1 * kGB / 50e9) / (1e-6 + 1 * kGB / 450e9));
}

TEST(Platform, InterNodeLatencyIsEndToEndWhateverTheHops) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(40);
  c.topology = hardware::Topology::kShared;  // 40 leaves > kPodLeaves: leaf, aggregation and core
  auto p = Platform::build(*engine, c);
  ASSERT_EQ(p->plan()->switch_levels(), 3);
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  p->gpu(0, 0)->route_to(p->gpu(39, 0), links, &latency);
  EXPECT_DOUBLE_EQ(latency, 5e-6);
  EXPECT_EQ(links.size(), 6u);  // gpu up, leaf up, aggregation up, aggregation down, leaf down, gpu down
  links.clear();
  latency = 0;
  p->gpu(0, 0)->route_to(p->gpu(0, 1), links, &latency);
  EXPECT_DOUBLE_EQ(latency, 1e-6);
  EXPECT_EQ(links.size(), 2u);  // nvlink-0-0_UP, nvlink-0-1_DOWN
}

// ECMP (issue 17): a fat-tree leaf's uplink of 4 nodes x 8 ports at 50 GB/s over oversubscription 4
// is 8 cables of 50 GB/s; each flow is hashed onto one of them (the same one on every call), and
// the seed moves flows between cables. Two flows on one cable share its 50 GB/s: 1 GB each takes
// 2 x 1 GB / 50 GB/s, twice what the ideally balanced (adaptive) 400 GB/s bundle gives them.
TEST(Platform, EcmpHashesEachFlowOntoOneCable) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(16);  // 4 leaves of 4 nodes
  c.oversubscription = 4;
  c.ecmp = true;
  c.routing_seed = 42;
  auto p = Platform::build(*engine, c);
  ASSERT_EQ(p->plan()->levels[1].cables, 8);
  auto uplink_of = [&](int64_t src_node, int64_t src_gpu, int64_t dst_node, int64_t dst_gpu) {
    std::vector<simgrid::s4u::Link*> links;
    double latency = 0;
    p->gpu(src_node, src_gpu)->route_to(p->gpu(dst_node, dst_gpu), links, &latency);
    EXPECT_EQ(links.size(), 4u);  // gpu up, one leaf-uplink cable up, one cable down, gpu down
    EXPECT_DOUBLE_EQ(links[1]->get_bandwidth(), 32 * 50e9 / 4 / 8);
    return links[1];
  };
  EXPECT_EQ(uplink_of(0, 0, 4, 0), uplink_of(0, 0, 4, 0));  // a flow keeps its cable
  // 32 flows from leaf 0's GPUs to leaf 1's over 8 cables: some cable carries several.
  std::map<simgrid::s4u::Link*, int> load;
  for (int64_t n = 0; n < 4; ++n)
    for (int64_t g = 0; g < 8; ++g) ++load[uplink_of(n, g, n + 4, g)];
  int most = 0;
  for (const auto& [link, flows] : load) most = std::max(most, flows);
  EXPECT_GT(most, 4);  // ideal balancing would put exactly 4 on each
  EXPECT_LE(load.size(), 8u);
  // Two flows that hash onto one cable (32 flows on 8 cables: some pair does) take twice as long as
  // on the bundle.
  std::map<simgrid::s4u::Link*, std::pair<int64_t, int64_t>> first_on;
  std::pair<int64_t, int64_t> a{-1, -1}, b{-1, -1};
  for (int64_t n = 0; n < 4 && a.first < 0; ++n)
    for (int64_t g = 0; g < 8 && a.first < 0; ++g) {
      auto* l = uplink_of(n, g, n + 4, g);
      if (auto it = first_on.find(l); it != first_on.end()) {
        a = it->second;
        b = {n, g};
      } else {
        first_on[l] = {n, g};
      }
    }
  ASSERT_GE(a.first, 0);
  const auto t = run_transfers(*engine, {{p->gpu(a.first, a.second), p->gpu(a.first + 4, a.second), 1 * kGB},
                                         {p->gpu(b.first, b.second), p->gpu(b.first + 4, b.second), 1 * kGB}});
  expect_near_rel(t[0], 5e-6 + 2 * kGB / 50e9, 0.01);
}

TEST(Platform, LongLatencyDoesNotCapBandwidth) {
  // With SimGrid's default TCP-gamma (4 MiB) a 100 us path would be capped at 4 MiB / 200 us =
  // 21 GB/s, below the 50 GB/s NIC; make_engine turns the window cap off.
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.inter_latency_s = 100e-6;
  auto p = Platform::build(*engine, c);
  const auto t = run_transfers(*engine, {{p->gpu(0, 0), p->gpu(1, 0), 1 * kGB}});
  expect_near_rel(t[0], 100e-6 + 1 * kGB / 50e9);
}

TEST(Platform, ExtraEngineArgumentsComeAfterOurs) {
  // Re-enabling SimGrid's 4 MiB TCP window shows the cap make_engine removes by default:
  // rate <= gamma / (2 x route latency) = 4194304 B / 200 us = 20.97 GB/s < 50 GB/s NIC.
  auto engine = make_engine("trainsim", {"--cfg=network/TCP-gamma:4194304"});
  auto c = dgx_h100_cluster(2);
  c.inter_latency_s = 100e-6;
  auto p = Platform::build(*engine, c);
  const auto t = run_transfers(*engine, {{p->gpu(0, 0), p->gpu(1, 0), 1 * kGB}});
  expect_near_rel(t[0], 100e-6 + 1 * kGB / (4194304 / (2 * 100e-6)));
}

TEST(Platform, RailOptimizedMessageStaysOnItsRail) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(8);
  c.topology = hardware::Topology::kRailOptimized;
  auto p = Platform::build(*engine, c);
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  p->gpu(0, 5)->route_to(p->gpu(6, 5), links, &latency);
  EXPECT_EQ(links.size(), 2u);  // rail 5's leaf switch holds GPU 5 of all 8 nodes
  links.clear();
  p->gpu(0, 5)->route_to(p->gpu(6, 4), links, &latency);
  EXPECT_EQ(links.size(), 4u);  // another rail: up to the spine and back down
  const auto t = run_transfers(*engine, {{p->gpu(0, 5), p->gpu(6, 5), 1 * kGB}});
  expect_near_rel(t[0], 5e-6 + 1 * kGB / 50e9);
}

TEST(Platform, SharedTopologyLinksTakeSetBandwidth) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.topology = hardware::Topology::kShared;
  auto p = Platform::build(*engine, c);
  // 2 leaves (one per node) under one spine: each leaf's uplink up + down.
  ASSERT_EQ(p->shared_links().size(), 4u);
  EXPECT_EQ(p->fabric_links().size(), 4u);
  for (auto* l : p->shared_links()) EXPECT_DOUBLE_EQ(l->get_bandwidth(), 8 * 50e9);  // 8 ports x 50 GB/s
  // Tenants take 15/16 of every shared link: 25 GB/s left, below the 50 GB/s NIC.
  for (auto* l : p->shared_links()) l->set_bandwidth(8 * 50e9 / 16);
  const auto t = run_transfers(*engine, {{p->gpu(0, 1), p->gpu(1, 6), 1 * kGB}});
  expect_near_rel(t[0], 5e-6 + 1 * kGB / 25e9);
}

TEST(Platform, SharedTopologyMessageAtFullBandwidth) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.topology = hardware::Topology::kShared;
  auto p = Platform::build(*engine, c);
  const auto t = run_transfers(*engine, {{p->gpu(0, 1), p->gpu(1, 6), 1 * kGB}});
  expect_near_rel(t[0], 5e-6 + 1 * kGB / 50e9);
}

TEST(Platform, SharedLinkBandwidthChangeMidTransferTakesEffect) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.topology = hardware::Topology::kShared;
  auto p = Platform::build(*engine, c);
  // A tenant arrives at t = 10 ms and leaves 25 GB/s of every shared link (the contention engine
  // does this from timers; an actor stands in for one here).
  simgrid::s4u::Actor::create("tenant", p->gpu(0, 7), [&p] {
    simgrid::s4u::this_actor::sleep_for(0.010);
    for (auto* l : p->shared_links()) l->set_bandwidth(25e9);
  });
  const auto t = run_transfers(*engine, {{p->gpu(0, 1), p->gpu(1, 6), 1 * kGB}});
  // Bytes flow from the 5 us latency on: 50 GB/s until 10 ms, then 25 GB/s for the rest.
  const double moved = (0.010 - 5e-6) * 50e9;
  expect_near_rel(t[0], 0.010 + (1 * kGB - moved) / 25e9);
}

TEST(Platform, RailOptimizedWithSharedNicsRoutesThroughTheNic) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(8);
  c.topology = hardware::Topology::kRailOptimized;
  c.nics_per_node = 4;  // GPUs 2k, 2k+1 share NIC k = rail k
  auto p = Platform::build(*engine, c);
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  p->gpu(0, 0)->route_to(p->gpu(5, 1), links, &latency);
  ASSERT_EQ(links.size(), 4u);  // GPU->NIC, NIC->rail-0 leaf, leaf->NIC, NIC->GPU
  EXPECT_EQ(links[0]->get_name(), "gpu-nic-0-0_UP");
  EXPECT_EQ(links[1]->get_name(), "nic-0-0_UP");
  EXPECT_EQ(links[2]->get_name(), "nic-5-0_DOWN");
  EXPECT_EQ(links[3]->get_name(), "gpu-nic-5-1_DOWN");
  EXPECT_DOUBLE_EQ(latency, 5e-6);
}

TEST(Platform, GpuSendingToItselfCopiesAtHbmBandwidth) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(1));
  const auto t = run_transfers(*engine, {{p->gpu(0, 2), p->gpu(0, 2), 1 * kGB}});
  expect_near_rel(t[0], 1 * kGB / 3350e9);  // hardware.yaml gpus.H100-SXM5-80GB hbm_bw_GBps 3350
}

TEST(Platform, DescribeNamesTheFabric) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(1));
  const std::string nic = util::format_bandwidth(50e9);
  EXPECT_EQ(p->describe(), "1 node x 8 GPUs, 8 ports/node at " + nic + ", node-major; 1 switch level: leaf x1 (fan-in 8, " +
                               nic + " links); intra-node nvswitch " + util::format_bandwidth(450e9));
}

TEST(Platform, DedicatedFatTreeHasNoSharedLinks) {
  auto engine = make_engine();
  auto p = Platform::build(*engine, dgx_h100_cluster(8));
  EXPECT_TRUE(p->shared_links().empty());
  EXPECT_EQ(p->fabric_links().size(), 4u);  // 2 leaves, uplink up + down each
}

// Every GPU of pod 0 (nodes 0-3, one leaf switch) exchanges with its twin in pod 1 (nodes 4-7).
std::vector<double> cross_pod_exchange(double oversubscription, double bytes) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(8);
  c.oversubscription = oversubscription;
  auto p = Platform::build(*engine, c);
  std::vector<Transfer> x;
  for (int n = 0; n < 4; ++n)
    for (int g = 0; g < 8; ++g) {
      x.push_back({p->gpu(n, g), p->gpu(n + 4, g), bytes});
      x.push_back({p->gpu(n + 4, g), p->gpu(n, g), bytes});
    }
  return run_transfers(*engine, x);
}

TEST(Platform, OversubscribedFatTreeHalvesCrossPodBandwidth) {
  const double bytes = 1 * kGB;
  const auto full = in_child_process([&] { return cross_pod_exchange(1.0, bytes); });
  const auto half = cross_pod_exchange(2.0, bytes);
  // 1:1: 32 flows per direction through a 32 x 50 GB/s leaf uplink: 50 GB/s each (NIC-bound).
  // 2:1: the uplink carries 800 GB/s: 25 GB/s each.
  for (double t : full) expect_near_rel(t, 5e-6 + bytes / 50e9);
  for (double t : half) expect_near_rel(t, 5e-6 + bytes / 25e9);
  expect_near_rel((half[0] - 5e-6) / (full[0] - 5e-6), 2.0);
}

TEST(Platform, GpusSharingANicShareItsBandwidth) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.nics_per_node = 4;  // GPUs 2k and 2k+1 share NIC k
  c.nic_bandwidth_Bps = 50e9;
  auto p = Platform::build(*engine, c);
  const auto t = run_transfers(*engine, {{p->gpu(0, 0), p->gpu(1, 0), 1 * kGB},
                                         {p->gpu(0, 1), p->gpu(1, 3), 1 * kGB},
                                         {p->gpu(0, 2), p->gpu(1, 5), 1 * kGB}});
  expect_near_rel(t[0], 5e-6 + 2 * kGB / 50e9);  // GPUs 0 and 1: 25 GB/s each on NIC 0
  expect_near_rel(t[1], 5e-6 + 2 * kGB / 50e9);
  expect_near_rel(t[2], 5e-6 + 1 * kGB / 50e9);  // GPU 2 alone on NIC 1
}

// A mixed pattern over 4 DGX H100 nodes: a ring over all 32 GPUs (intra- and inter-node hops),
// plus node 0 GPU 0 fanning out to every other node, plus a reverse inter-node flow.
std::vector<double> mixed_pattern(simgrid::s4u::Engine& engine, const Platform& p) {
  std::vector<Transfer> x;
  for (int64_t i = 0; i < 32; ++i) {
    const int64_t j = (i + 1) % 32;
    x.push_back({p.gpu(i / 8, i % 8), p.gpu(j / 8, j % 8), 0.5 * kGB});
  }
  for (int64_t n = 1; n < 4; ++n) x.push_back({p.gpu(0, 0), p.gpu(n, 0), 0.25 * kGB});
  x.push_back({p.gpu(3, 4), p.gpu(0, 4), 2 * kGB});
  return run_transfers(engine, x);
}

TEST(Platform, LoadedXmlGivesTheSameTimesAsTheBuiltPlatform) {
  const auto built = in_child_process([] {
    auto engine = make_engine();
    auto p = Platform::build(*engine, dgx_h100_cluster(4));
    return mixed_pattern(*engine, *p);
  });
  auto engine = make_engine();
  auto c = dgx_h100_cluster(4);
  c.platform_file = source_path("platforms/h100-ib-4node.xml");
  auto p = Platform::build(*engine, c);
  EXPECT_EQ(p->platform_file(), c.platform_file);
  EXPECT_EQ(p->plan(), nullptr);
  const auto loaded = mixed_pattern(*engine, *p);
  ASSERT_EQ(loaded.size(), built.size());
  for (size_t i = 0; i < loaded.size(); ++i) EXPECT_NEAR(loaded[i], built[i], 1e-9 * built[i]) << "transfer " << i;
  EXPECT_GT(loaded.back(), 2 * kGB / 50e9);  // sanity: the last flow is NIC-bound
}

TEST(Platform, DgxH100XmlMatchesNvswitchTimes) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(1);
  c.platform_file = source_path("platforms/dgx-h100.xml");
  auto p = Platform::build(*engine, c);
  EXPECT_DOUBLE_EQ(p->gpu(0, 0)->get_speed(), 989.4e12);
  std::vector<Transfer> fan_out;
  for (int g = 1; g < 8; ++g) fan_out.push_back({p->gpu(0, 0), p->gpu(0, g), 1 * kGB});
  fan_out.push_back({p->gpu(0, 3), p->gpu(0, 0), 1 * kGB});  // gpu-0-0's receive half is idle
  const auto t = run_transfers(*engine, fan_out);
  for (int g = 0; g < 7; ++g) expect_near_rel(t[g], 1e-6 + 7 * kGB / 450e9);
  expect_near_rel(t[7], 1e-6 + 1 * kGB / 450e9);
}

TEST(Platform, PcieXmlSharesOneBridge) {
  auto engine = make_engine();
  auto c = pcie_gen5_cluster();
  c.platform_file = source_path("platforms/pcie-8gpu.xml");
  auto p = Platform::build(*engine, c);
  EXPECT_DOUBLE_EQ(p->gpu(0, 0)->get_speed(), 756e12);  // catalog h100-pcie bf16 dense
  std::vector<Transfer> ring;
  for (int g = 0; g < 8; ++g) ring.push_back({p->gpu(0, g), p->gpu(0, (g + 1) % 8), 1 * kGB});
  for (double t : run_transfers(*engine, ring)) expect_near_rel(t, 1e-6 + 8 * kGB / 64e9);
}

TEST(Platform, SharedXmlMarksItsSharedLink) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.topology = hardware::Topology::kShared;
  c.platform_file = source_path("platforms/shared-2node.xml");
  auto p = Platform::build(*engine, c);
  ASSERT_EQ(p->shared_links().size(), 2u);  // the inter-node link, both directions
  for (auto* l : p->shared_links()) EXPECT_DOUBLE_EQ(l->get_bandwidth(), 100e9);
  // 8 GPUs of node 0 send to node 1 at once: 8 x 50 GB/s of NICs squeeze into one 100 GB/s link.
  std::vector<Transfer> x;
  for (int g = 0; g < 8; ++g) x.push_back({p->gpu(0, g), p->gpu(1, g), 1 * kGB});
  x.push_back({p->gpu(0, 0), p->gpu(0, 1), 1 * kGB});  // intra-node: NVSwitch, not the shared link
  const auto t = run_transfers(*engine, x);
  for (int g = 0; g < 8; ++g) expect_near_rel(t[g], 5e-6 + 8 * kGB / 100e9);
  expect_near_rel(t[8], 1e-6 + 1 * kGB / 450e9);
}

TEST(Platform, PlatformFileMissingAHostIsAnInputError) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.platform_file = source_path("platforms/dgx-h100.xml");  // one node only
  try {
    Platform::build(*engine, c);
    FAIL() << "expected util::InputError";
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              c.platform_file +
                  ": host 'gpu-1-0' not found: the engine needs hosts gpu-<node>-<gpu> for 2 nodes x 8 GPUs");
    EXPECT_EQ(e.where().file, c.platform_file);
  }
}

TEST(Platform, PlatformFileMissingARouteIsAnInputError) {
  // Full routing answers a forgotten pair with an empty route (an instant transfer): refuse it.
  const std::string path = ::testing::TempDir() + "trainsim-missing-route.xml";
  {
    std::ofstream out(path);
    out << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        << "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n"
        << "<host id=\"gpu-0-0\" speed=\"1Tf\"/>\n<host id=\"gpu-0-1\" speed=\"1Tf\"/>\n"
        << "<host id=\"gpu-0-2\" speed=\"1Tf\"/>\n<link id=\"l\" bandwidth=\"1GBps\" latency=\"1us\"/>\n"
        << "<route src=\"gpu-0-0\" dst=\"gpu-0-1\"><link_ctn id=\"l\"/></route>\n"
        << "<route src=\"gpu-0-1\" dst=\"gpu-0-2\"><link_ctn id=\"l\"/></route>\n"
        << "</zone></platform>\n";
  }
  auto engine = make_engine();
  auto c = dgx_h100_cluster(1);
  c.gpus_per_node = 3;
  c.platform_file = path;
  try {
    Platform::build(*engine, c);
    FAIL() << "expected util::InputError";
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ": no route from 'gpu-0-0' to 'gpu-0-2' (trainsim needs routes between all GPU hosts)");
  }
  std::remove(path.c_str());
}

TEST(Platform, UnreadablePlatformFileIsAnInputError) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(1);
  c.platform_file = "platforms/no-such-file.xml";
  try {
    Platform::build(*engine, c);
    FAIL() << "expected util::InputError";
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "platforms/no-such-file.xml: cannot read the platform file: no such file");
  }
}

TEST(Platform, MalformedPlatformFileIsAnInputError) {
  const std::string path = ::testing::TempDir() + "trainsim-malformed-platform.xml";
  {
    std::ofstream out(path);
    out << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
        << "<platform version=\"4.1\">\n<zone id=\"z\" routing=\"Full\">\n<host id=\"gpu-0-0\" speed=\"1f\"\n"
        << "</zone></platform>\n";
  }
  auto engine = make_engine();
  auto c = dgx_h100_cluster(1);
  c.platform_file = path;
  try {
    Platform::build(*engine, c);
    FAIL() << "expected util::InputError";
  } catch (const util::InputError& e) {
    // SimGrid's parser throws (it does not abort) on malformed XML; its words follow ours.
    const std::string prefix = path + ": SimGrid rejected the platform: Parse error at " + path + ":6";  // the stray <
    EXPECT_EQ(std::string(e.what()).substr(0, prefix.size()), prefix) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Platform, InvalidClusterIsAnInputErrorBeforeSimGridSeesIt) {
  auto engine = make_engine();
  auto c = dgx_h100_cluster(2);
  c.nic_bandwidth_Bps = 0;
  try {
    Platform::build(*engine, c);
    FAIL() << "expected util::InputError";
  } catch (const util::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "cluster.inter_node.nic_bandwidth: must be a finite value > 0, got 0.000000");
  }
  EXPECT_EQ(engine->get_netzone_root(), nullptr);  // nothing reached SimGrid
}

}  // namespace
}  // namespace trainsim::platform
