// Where each rank lives. Megatron's default order: TP fastest, then CP, then DP, then PP, so a TP
// group fills (part of) a node and a DP group's members sit on the same local GPU of different
// nodes (the same rail) when tp*cp fills the node.
#pragma once

#include <cstdint>
#include <vector>

#include "model/spec.hpp"

namespace trainsim::parallel {

struct RankLayout {
  int64_t tp = 1, cp = 1, dp = 1, pp = 1;
  int64_t gpus_per_node = 8;

  RankLayout() = default;
  RankLayout(const model::ParallelSpec& p, int64_t gpus_per_node_)
      : tp(p.tp), cp(p.cp), dp(p.dp), pp(p.pp), gpus_per_node(gpus_per_node_) {}

  int64_t rank(int64_t tp_i, int64_t cp_i, int64_t dp_i, int64_t pp_i) const {
    return tp_i + tp * (cp_i + cp * (dp_i + dp * pp_i));
  }
  int64_t node(int64_t rank) const { return rank / gpus_per_node; }
  int64_t local(int64_t rank) const { return rank % gpus_per_node; }

  // The gradient-reduction group of (stage, tp rank): every (cp, dp) pair, in rank order
  // (Megatron's distributed optimizer reduces over DP x CP).
  std::vector<int64_t> dp_group(int64_t pp_i, int64_t tp_i = 0) const;
};

// A collective over a group, as parts of point-to-point edges between group members (indices
// into the group). All the edges of all parts run at once: NCCL pipelines a hierarchical ring
// chunk by chunk, so its intra-node and inter-node parts overlap and the busiest link sets the
// time. Rings are aggregated: one edge carries the whole collective's volume on that ring edge.
struct Edge {
  int64_t src = 0;
  int64_t dst = 0;
  double bytes = 0;
};
using Phase = std::vector<Edge>;

enum class CollectiveKind { kAllReduce, kReduceScatter, kAllGather };

// Ring (one node or one member per node): one part. Hierarchical (what NCCL's multi-channel rings
// achieve on a rail-optimised fabric): an inter-node ring per local GPU index, and the intra-node
// rings of the reduce-scatter and/or all-gather (an all-reduce's two on the same edges: one part).
// `ranks` are global ranks in ring order.
// Members spread unevenly over their nodes get one ring through all of them.
std::vector<Phase> plan_collective(CollectiveKind kind, const std::vector<int64_t>& ranks, const RankLayout& layout,
                                   double bytes);

}  // namespace trainsim::parallel
