#include "parallel/layout.hpp"

#include <map>

namespace trainsim::parallel {

std::vector<int64_t> RankLayout::dp_group(int64_t pp_i, int64_t tp_i) const {
  std::vector<int64_t> g;
  g.reserve(static_cast<size_t>(dp * cp));
  for (int64_t d = 0; d < dp; ++d)
    for (int64_t c = 0; c < cp; ++c) g.push_back(rank(tp_i, c, d, pp_i));
  return g;
}

namespace {

// Ring edges over `members` (group indices), each carrying `bytes`.
void add_ring(Phase& phase, const std::vector<int64_t>& members, double bytes) {
  const size_t n = members.size();
  if (n < 2 || bytes <= 0) return;
  for (size_t i = 0; i < n; ++i) phase.push_back({members[i], members[(i + 1) % n], bytes});
}

// Ring volume per edge as a multiple of the collective's size S over n members.
double ring_factor(CollectiveKind kind, double n) {
  if (n < 2) return 0;
  return (kind == CollectiveKind::kAllReduce ? 2.0 : 1.0) * (n - 1) / n;
}

}  // namespace

std::vector<Phase> plan_collective(CollectiveKind kind, const std::vector<int64_t>& ranks, const RankLayout& layout,
                                   double bytes) {
  // Group members by node, keeping ring order.
  std::map<int64_t, std::vector<int64_t>> by_node;
  std::vector<int64_t> node_order;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const int64_t node = layout.node(ranks[i]);
    if (!by_node.count(node)) node_order.push_back(node);
    by_node[node].push_back(static_cast<int64_t>(i));
  }
  const size_t q = by_node.begin()->second.size();  // members per node
  const size_t m = node_order.size();                // nodes
  // Members unevenly spread (a stage whose GPUs straddle node boundaries, e.g. 64 per stage on
  // 72-GPU NVLink domains): no per-rail rings; one ring through all, as NCCL would build.
  bool even = true;
  for (const auto& [node, members] : by_node) even = even && members.size() == q;
  std::vector<Phase> phases;
  if (m == 1 || q == 1 || !even) {
    std::vector<int64_t> all(ranks.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
    Phase p;
    add_ring(p, all, ring_factor(kind, static_cast<double>(all.size())) * bytes);
    if (!p.empty()) phases.push_back(std::move(p));
    return phases;
  }
  const double dq = static_cast<double>(q);
  const double dm = static_cast<double>(m);
  auto intra = [&](CollectiveKind k) {
    Phase p;
    for (int64_t node : node_order) add_ring(p, by_node[node], ring_factor(k, dq) * bytes);
    return p;
  };
  auto inter = [&](CollectiveKind k) {
    Phase p;
    for (size_t rail = 0; rail < q; ++rail) {
      std::vector<int64_t> ring;
      for (int64_t node : node_order) ring.push_back(by_node[node][rail]);
      add_ring(p, ring, ring_factor(k, dm) * bytes / dq);
    }
    return p;
  };
  switch (kind) {
    case CollectiveKind::kAllReduce:
      // The intra-node reduce-scatter and all-gather run over the same ring edges: one part
      // carrying both ((q-1)/q S each), as its links see them.
      phases = {intra(CollectiveKind::kAllReduce), inter(CollectiveKind::kAllReduce)};
      break;
    case CollectiveKind::kReduceScatter:
      phases = {intra(CollectiveKind::kReduceScatter), inter(CollectiveKind::kReduceScatter)};
      break;
    case CollectiveKind::kAllGather:
      phases = {inter(CollectiveKind::kAllGather), intra(CollectiveKind::kAllGather)};
      break;
  }
  return phases;
}

}  // namespace trainsim::parallel
