#include "collectives/collectives.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace trainsim::collectives {
namespace {

// Ring steps: all-reduce = reduce-scatter then all-gather.
int64_t ring_steps(Kind kind, int64_t n) {
  if (n <= 1) return 0;
  return kind == Kind::kAllReduce ? 2 * (n - 1) : (n - 1);
}

double ring_time(Kind kind, int64_t n, double bytes, const LinkParams& link) {
  if (kind == Kind::kP2p) return link.latency_s + bytes / link.bandwidth_Bps;
  if (n <= 1) return 0;
  return static_cast<double>(ring_steps(kind, n)) * link.latency_s + ring_edge_bytes(kind, n, bytes) / link.bandwidth_Bps;
}

}  // namespace

const char* to_string(Kind k) {
  switch (k) {
    case Kind::kAllReduce: return "all-reduce";
    case Kind::kReduceScatter: return "reduce-scatter";
    case Kind::kAllGather: return "all-gather";
    case Kind::kP2p: return "p2p";
  }
  return "?";
}

const char* to_string(Algorithm a) {
  switch (a) {
    case Algorithm::kRing: return "ring";
    case Algorithm::kTree: return "tree";
    case Algorithm::kHierarchical: return "hierarchical";
  }
  return "?";
}

double ring_edge_bytes(Kind kind, int64_t n, double bytes) {
  if (kind == Kind::kP2p) return bytes;
  if (n <= 1) return 0;
  const double share = static_cast<double>(n - 1) / static_cast<double>(n) * bytes;
  return kind == Kind::kAllReduce ? 2 * share : share;
}

double collective_time(Kind kind, Algorithm algorithm, int64_t n, double bytes, const LinkParams& link) {
  if (algorithm == Algorithm::kTree && kind == Kind::kAllReduce) {
    if (n <= 1) return 0;
    const double depth = std::ceil(std::log2(static_cast<double>(n)));
    return 2 * depth * link.latency_s + 2 * bytes / link.bandwidth_Bps;
  }
  return ring_time(kind, n, bytes, link);
}

double hierarchical_time(Kind kind, int64_t gpus_per_node, int64_t nodes, double bytes, const LinkParams& intra,
                         const LinkParams& inter) {
  if (kind == Kind::kP2p) return ring_time(Kind::kP2p, 2, bytes, nodes > 1 ? inter : intra);
  const double g = static_cast<double>(gpus_per_node);
  const bool reduce = kind == Kind::kAllReduce || kind == Kind::kReduceScatter;
  const bool gather = kind == Kind::kAllReduce || kind == Kind::kAllGather;
  // The inter-node ring per rail carries 1/g of the bytes; the intra-node parts share the NVLink.
  const int64_t parts = (reduce ? 1 : 0) + (gather ? 1 : 0);
  const double intra_bw = static_cast<double>(parts) * ring_edge_bytes(Kind::kAllGather, gpus_per_node, bytes) / intra.bandwidth_Bps;
  const double inter_bw = ring_edge_bytes(kind, nodes, bytes / g) / inter.bandwidth_Bps;
  const double latency = static_cast<double>(parts * ring_steps(Kind::kAllGather, gpus_per_node)) * intra.latency_s +
                         static_cast<double>(ring_steps(kind, nodes)) * inter.latency_s;
  // Pipelined chunk by chunk (NCCL): the latencies add up, the busier link sets the bandwidth term.
  return latency + std::max(intra_bw, inter_bw);
}

std::vector<Flow> aggregated_ring(Kind kind, int64_t n, double bytes) {
  std::vector<Flow> flows;
  if (kind == Kind::kP2p) {
    flows.push_back({0, 1, bytes});
    return flows;
  }
  if (n <= 1) return flows;
  const double per_edge = ring_edge_bytes(kind, n, bytes);
  flows.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) flows.push_back({i, (i + 1) % n, per_edge});
  return flows;
}

std::vector<std::vector<Flow>> stepwise_ring(Kind kind, int64_t n, double bytes) {
  std::vector<std::vector<Flow>> rounds;
  if (kind == Kind::kP2p) {
    rounds.push_back({{0, 1, bytes}});
    return rounds;
  }
  const int64_t steps = ring_steps(kind, n);
  if (steps == 0) return rounds;
  const double chunk = bytes / static_cast<double>(n);
  rounds.reserve(static_cast<size_t>(steps));
  for (int64_t r = 0; r < steps; ++r) {
    std::vector<Flow> round;
    round.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) round.push_back({i, (i + 1) % n, chunk});
    rounds.push_back(std::move(round));
  }
  return rounds;
}

}  // namespace trainsim::collectives
