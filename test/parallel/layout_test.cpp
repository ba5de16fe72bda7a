#include "parallel/layout.hpp"

#include <gtest/gtest.h>

namespace trainsim::parallel {
namespace {

TEST(LayoutTest, MegatronOrderTpFastestThenCpDpPp) {
  model::ParallelSpec p;
  p.tp = 8; p.cp = 1; p.dp = 128; p.pp = 16;
  RankLayout l(p, 8);
  // rank = tp_i + tp*(cp_i + cp*(dp_i + dp*pp_i))
  EXPECT_EQ(l.rank(3, 0, 2, 1), 3 + 8 * (2 + 128 * 1));
  // A DP group of TP8 on 8-GPU nodes: one member per node, same local GPU (a rail).
  auto g = l.dp_group(5, 3);
  ASSERT_EQ(g.size(), 128u);
  EXPECT_EQ(l.local(g[0]), 3);
  EXPECT_EQ(l.local(g[127]), 3);
  EXPECT_EQ(l.node(g[1]) - l.node(g[0]), 1);
}

TEST(LayoutTest, RingAllReduceOneMemberPerNode) {
  model::ParallelSpec p;
  p.tp = 8; p.dp = 4;
  RankLayout l(p, 8);
  auto phases = plan_collective(CollectiveKind::kAllReduce, l.dp_group(0), l, 1000.0);
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].size(), 4u);
  // Aggregated ring: each edge carries 2(n-1)/n * S = 2*3/4*1000 = 1500 bytes.
  EXPECT_DOUBLE_EQ(phases[0][0].bytes, 1500.0);
  EXPECT_EQ(phases[0][3].src, 3);
  EXPECT_EQ(phases[0][3].dst, 0);
}

TEST(LayoutTest, HierarchicalAllReduceWhenSeveralMembersPerNode) {
  model::ParallelSpec p;
  p.tp = 2; p.dp = 8;  // 4 DP members per 8-GPU node, 2 nodes
  RankLayout l(p, 8);
  auto phases = plan_collective(CollectiveKind::kAllReduce, l.dp_group(0), l, 800.0);
  ASSERT_EQ(phases.size(), 2u);
  // Intra-node RS and AG on the same edges: 2 nodes x 4-member rings, 2 x (q-1)/q*S = 2 x 3/4*800
  // = 1200 per edge.
  ASSERT_EQ(phases[0].size(), 8u);
  EXPECT_DOUBLE_EQ(phases[0][0].bytes, 1200.0);
  EXPECT_EQ(l.node(l.dp_group(0)[phases[0][0].src]), l.node(l.dp_group(0)[phases[0][0].dst]));
  // Inter-node AR per rail: 4 rails x 2-node rings, 2(m-1)/m * S/q = 1 * 200 = 200 per edge.
  ASSERT_EQ(phases[1].size(), 8u);
  EXPECT_DOUBLE_EQ(phases[1][0].bytes, 200.0);
  EXPECT_NE(l.node(l.dp_group(0)[phases[1][0].src]), l.node(l.dp_group(0)[phases[1][0].dst]));
  // Reduce-scatter: the intra ring (600 per edge) and the inter ring (S/q (m-1)/m = 100).
  const auto rs = plan_collective(CollectiveKind::kReduceScatter, l.dp_group(0), l, 800.0);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_DOUBLE_EQ(rs[0][0].bytes, 600.0);
  EXPECT_DOUBLE_EQ(rs[1][0].bytes, 100.0);
}

TEST(LayoutTest, MembersStraddlingNodesGetOneRing) {
  // TP8 x DP8 = 64 GPUs per stage on 72-GPU NVLink domains: stage 1's DP group has 1 member in
  // domain 0 (GPU 64) and 7 in domain 1, so no per-rail rings: one ring of 8 through all members,
  // each edge 2(n-1)/n S = 2 x 7/8 x 800 = 1400 bytes (it crashed before: rails past the short node).
  model::ParallelSpec p;
  p.tp = 8; p.dp = 8; p.pp = 9;
  RankLayout l(p, 72);
  const auto g = l.dp_group(1);
  ASSERT_EQ(l.node(g[0]), 0);
  ASSERT_EQ(l.node(g[1]), 1);
  const auto phases = plan_collective(CollectiveKind::kAllReduce, g, l, 800.0);
  ASSERT_EQ(phases.size(), 1u);
  ASSERT_EQ(phases[0].size(), 8u);
  EXPECT_DOUBLE_EQ(phases[0][0].bytes, 1400.0);
}

TEST(LayoutTest, SingleMemberGroupHasNoPhases) {
  model::ParallelSpec p;
  p.tp = 8;
  RankLayout l(p, 8);
  EXPECT_TRUE(plan_collective(CollectiveKind::kAllReduce, l.dp_group(0), l, 1e9).empty());
}

}  // namespace
}  // namespace trainsim::parallel
