// Ring collectives as SimGrid flows on a built platform: the step-by-step form (2(n-1) rounds of n
// flows of S/n) and the aggregated form the engine uses (one round of n flows of 2(n-1)/n x S) give
// the same time, and both match the alpha-beta cost. Each form runs in its own forked process
// (one SimGrid Engine per process).
#include <gtest/gtest.h>

#include "in_child.hpp"
#include <simgrid/s4u.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>

#include "collectives/collectives.hpp"
#include "platform/platform.hpp"

namespace trainsim {
namespace {

namespace sg4 = simgrid::s4u;

hardware::ClusterSpec cluster(int64_t nodes) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.nic_bandwidth_Bps = 50e9;  // 400 Gb/s per GPU
  c.nics_per_node = 8;
  c.inter_latency_s = 5e-6;
  return c;
}

// Simulated time of the rounds (each round's flows at once, rounds one after the other) between
// GPU 0 of each node: one member per node, as a DP group of TP8 replicas.
double simulate_rounds(int64_t nodes, const std::vector<std::vector<collectives::Flow>>& rounds) {
  auto engine = platform::make_engine();
  auto plat = platform::Platform::build(*engine, cluster(nodes));
  double end = -1;
  sg4::Actor::create("ring", plat->gpu(0, 0), [&] {
    for (const auto& round : rounds) {
      std::vector<sg4::CommPtr> comms;
      for (const auto& f : round)
        comms.push_back(sg4::Comm::sendto_async(plat->gpu(f.src, 0), plat->gpu(f.dst, 0), static_cast<uint64_t>(f.bytes)));
      sg4::Comm::wait_all(comms);
    }
    end = sg4::Engine::get_clock();
  });
  engine->run();
  return end;
}

using trainsim::testing::in_child;

TEST(CollectiveFlowsTest, AggregatedRingMatchesStepwiseRingAndAlphaBeta) {
  const int64_t n = 8;
  const double bytes = 1 << 30;  // 1 GiB all-reduce over 8 nodes
  const double stepwise = in_child([&] { return simulate_rounds(n, collectives::stepwise_ring(collectives::Kind::kAllReduce, n, bytes)); });
  const double aggregated =
      in_child([&] { return simulate_rounds(n, {collectives::aggregated_ring(collectives::Kind::kAllReduce, n, bytes)}); });
  // alpha-beta: 2(n-1) steps x (alpha + S/n / B); latency = 5 us end to end per step.
  const double expected = collectives::collective_time(collectives::Kind::kAllReduce, collectives::Algorithm::kRing, n, bytes,
                                                       {5e-6, 50e9});
  EXPECT_NEAR(expected, 2.0 * 7 * (5e-6 + bytes / 8 / 50e9), 1e-12);
  EXPECT_NEAR(stepwise, expected, 0.005 * expected);
  // The aggregated form pays the latency once instead of 2(n-1) times: 13 x 5 us less.
  EXPECT_NEAR(aggregated, expected - 13 * 5e-6, 0.005 * expected);
  // Bandwidth terms agree to 0.01%; only the 2(n-1)-1 latencies differ (0.17% of a 1 GiB ring here).
  EXPECT_NEAR(aggregated + 13 * 5e-6, stepwise, 1e-4 * stepwise);
}

}  // namespace
}  // namespace trainsim
