#include "collectives/collectives.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace trainsim::collectives {
namespace {

const LinkParams kLink{1e-6, 100e9};  // 1 us, 100 GB/s

TEST(CollectiveTime, RingAllReduce) {
  // 2(n-1) a + 2(n-1)/n S/B = 14 us + 1.75 * 1e9 / 1e11 = 14e-6 + 0.0175
  EXPECT_DOUBLE_EQ(collective_time(Kind::kAllReduce, Algorithm::kRing, 8, 1e9, kLink), 14e-6 + 0.0175);
}

TEST(CollectiveTime, RingReduceScatterAndAllGather) {
  // (n-1) a + (n-1)/n S/B = 3 us + 0.75 * 4e8 / 1e11 = 3e-6 + 0.003
  EXPECT_DOUBLE_EQ(collective_time(Kind::kReduceScatter, Algorithm::kRing, 4, 4e8, kLink), 3e-6 + 0.003);
  EXPECT_DOUBLE_EQ(collective_time(Kind::kAllGather, Algorithm::kRing, 4, 4e8, kLink), 3e-6 + 0.003);
}

TEST(CollectiveTime, TreeAllReduce) {
  // 2 ceil(log2 16) a + 2 S/B = 8 us + 2 * 1e9 / 1e11
  EXPECT_DOUBLE_EQ(collective_time(Kind::kAllReduce, Algorithm::kTree, 16, 1e9, kLink), 8e-6 + 0.02);
  // ceil(log2 5) = 3
  EXPECT_DOUBLE_EQ(collective_time(Kind::kAllReduce, Algorithm::kTree, 5, 1e9, kLink), 6e-6 + 0.02);
}

TEST(CollectiveTime, P2pAndSingleRank) {
  EXPECT_DOUBLE_EQ(collective_time(Kind::kP2p, Algorithm::kRing, 2, 1e8, kLink), 1e-6 + 1e-3);
  EXPECT_EQ(collective_time(Kind::kAllReduce, Algorithm::kRing, 1, 1e9, kLink), 0.0);
  EXPECT_EQ(collective_time(Kind::kAllReduce, Algorithm::kTree, 1, 1e9, kLink), 0.0);
}

TEST(CollectiveTime, Hierarchical) {
  const LinkParams intra{1e-6, 400e9};
  const LinkParams inter{5e-6, 50e9};
  // 8 GPUs x 4 nodes, S = 8e9, pipelined (every latency, the busier link's bytes):
  // intra RS and AG: 7 steps x 1 us each, 7/8 * 8e9 / 4e11 = 0.0175 s each on the same NVLink;
  // inter AR of S/8 = 1e9 over 4 nodes: 6 x 5 us, 1.5 * 1e9 / 5e10 = 0.03 s.
  EXPECT_NEAR(hierarchical_time(Kind::kAllReduce, 8, 4, 8e9, intra, inter), 14e-6 + 30e-6 + std::max(0.035, 0.03), 1e-15);
  // RS: intra RS (7 us, 0.0175) with the inter RS of 1e9 over 4 (3 x 5 us, 0.75 * 1e9 / 5e10 = 0.015).
  EXPECT_NEAR(hierarchical_time(Kind::kReduceScatter, 8, 4, 8e9, intra, inter), 7e-6 + 15e-6 + 0.0175, 1e-15);
  EXPECT_NEAR(hierarchical_time(Kind::kAllGather, 8, 4, 8e9, intra, inter), 7e-6 + 15e-6 + 0.0175, 1e-15);
  // A slow network: the NIC sets the time (inter AR 1.5e9 / 1e10 = 0.15 s against 0.035 on NVLink).
  EXPECT_NEAR(hierarchical_time(Kind::kAllReduce, 8, 4, 8e9, intra, LinkParams{5e-6, 10e9}), 44e-6 + 0.15, 1e-15);
  // One node: the intra ring all-reduce.
  EXPECT_NEAR(hierarchical_time(Kind::kAllReduce, 8, 1, 8e9, intra, inter),
              collective_time(Kind::kAllReduce, Algorithm::kRing, 8, 8e9, intra), 1e-15);
  // One GPU per node: the inter ring.
  EXPECT_NEAR(hierarchical_time(Kind::kAllReduce, 1, 4, 8e9, intra, inter),
              collective_time(Kind::kAllReduce, Algorithm::kRing, 4, 8e9, inter), 1e-15);
}

TEST(CollectiveTime, HierarchicalWithOneLinkKindIsTheFlatRing) {
  EXPECT_DOUBLE_EQ(collective_time(Kind::kAllReduce, Algorithm::kHierarchical, 8, 1e9, kLink),
                   collective_time(Kind::kAllReduce, Algorithm::kRing, 8, 1e9, kLink));
  // Tree has no RS/AG in NCCL: the ring formula.
  EXPECT_DOUBLE_EQ(collective_time(Kind::kAllGather, Algorithm::kTree, 8, 1e9, kLink),
                   collective_time(Kind::kAllGather, Algorithm::kRing, 8, 1e9, kLink));
}

TEST(RingEdgeBytes, PerKind) {
  EXPECT_DOUBLE_EQ(ring_edge_bytes(Kind::kAllReduce, 4, 1000), 1500);  // 2 * 3/4 * 1000
  EXPECT_DOUBLE_EQ(ring_edge_bytes(Kind::kReduceScatter, 4, 1000), 750);
  EXPECT_DOUBLE_EQ(ring_edge_bytes(Kind::kAllGather, 5, 1000), 800);
  EXPECT_DOUBLE_EQ(ring_edge_bytes(Kind::kP2p, 2, 1000), 1000);
  EXPECT_EQ(ring_edge_bytes(Kind::kAllReduce, 1, 1000), 0.0);
}

TEST(AggregatedRing, OneRoundOfNFlows) {
  const auto flows = aggregated_ring(Kind::kAllReduce, 4, 1000);
  ASSERT_EQ(flows.size(), 4u);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(flows[i].src, i);
    EXPECT_EQ(flows[i].dst, (i + 1) % 4);
    EXPECT_DOUBLE_EQ(flows[i].bytes, 1500);  // 2(n-1)/n S
  }
  EXPECT_DOUBLE_EQ(aggregated_ring(Kind::kAllGather, 4, 1000)[3].bytes, 750);
  EXPECT_TRUE(aggregated_ring(Kind::kAllReduce, 1, 1000).empty());
  const auto p2p = aggregated_ring(Kind::kP2p, 2, 1000);
  ASSERT_EQ(p2p.size(), 1u);
  EXPECT_EQ(p2p[0].src, 0);
  EXPECT_EQ(p2p[0].dst, 1);
}

TEST(StepwiseRing, RoundsAndChunks) {
  const auto ar = stepwise_ring(Kind::kAllReduce, 4, 1000);
  ASSERT_EQ(ar.size(), 6u);  // 2(n-1)
  for (const auto& round : ar) {
    ASSERT_EQ(round.size(), 4u);
    for (const auto& f : round) EXPECT_DOUBLE_EQ(f.bytes, 250);  // S/n
  }
  EXPECT_EQ(ar[2][3].src, 3);
  EXPECT_EQ(ar[2][3].dst, 0);
  EXPECT_EQ(stepwise_ring(Kind::kReduceScatter, 4, 1000).size(), 3u);  // n-1
  EXPECT_TRUE(stepwise_ring(Kind::kAllGather, 1, 1000).empty());
}

TEST(StepwiseRing, SameEdgeVolumeAsAggregated) {
  // Every edge carries the same total either way, for every kind and group size.
  for (Kind k : {Kind::kAllReduce, Kind::kReduceScatter, Kind::kAllGather}) {
    for (int64_t n : {2, 3, 8, 13}) {
      const double bytes = 1.234e9;
      double per_edge = 0;
      for (const auto& round : stepwise_ring(k, n, bytes)) per_edge += round[0].bytes;
      EXPECT_NEAR(per_edge, aggregated_ring(k, n, bytes)[0].bytes, 1e-6 * bytes) << to_string(k) << " n=" << n;
    }
  }
}

TEST(StepwiseRing, RoundTimesAddUpToAlphaBeta) {
  // With every round taking a + (S/n)/B, the stepwise ring reproduces collective_time exactly.
  const double bytes = 3.2e9;
  const int64_t n = 8;
  const auto rounds = stepwise_ring(Kind::kAllReduce, n, bytes);
  double t = 0;
  for (const auto& round : rounds) t += kLink.latency_s + round[0].bytes / kLink.bandwidth_Bps;
  EXPECT_NEAR(t, collective_time(Kind::kAllReduce, Algorithm::kRing, n, bytes, kLink), 1e-12);
}

}  // namespace
}  // namespace trainsim::collectives
