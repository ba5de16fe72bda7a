// Collective operations: their alpha-beta cost and the network flows they put on the fabric.
//
// Conventions (as nccl-tests): `bytes` S is the size of the whole buffer: the all-reduce buffer, the
// reduce-scatter INPUT (each rank ends with S/n), the all-gather OUTPUT (each rank starts with S/n),
// the p2p message. `n` ranks take part. Link parameters are per rank, per direction:
//
//     rank 0 --> rank 1 --> ... --> rank n-1 --+      ring: every rank sends to the next one
//        ^-------------------------------------+
//
// Ring (bandwidth-optimal):  all-reduce  2(n-1) a + 2(n-1)/n S/B
//                            RS or AG     (n-1) a +  (n-1)/n S/B
// Tree (NCCL double binary tree, pipelined): all-reduce 2 ceil(log2 n) a + 2 S/B; RS/AG have no tree
//   algorithm in NCCL and use the ring formula.
// Hierarchical over `nodes` x `gpus_per_node` ranks (node-major):
//   all-reduce = intra RS (g ranks, S) + inter all-reduce ring per rail (N nodes, S/g) + intra AG;
//   RS = intra RS + inter RS per rail (S/g);  AG = inter AG per rail (S/g) + intra AG.
// p2p: a + S/B. n = 1 costs nothing.
// Pure: no SimGrid, no logging.
#pragma once

#include <cstdint>
#include <vector>

namespace trainsim::collectives {

enum class Kind { kAllReduce, kReduceScatter, kAllGather, kP2p };
enum class Algorithm { kRing, kTree, kHierarchical };

const char* to_string(Kind k);
const char* to_string(Algorithm a);

// One hop of the fabric as a rank sees it: per-message latency and achieved bandwidth per direction.
struct LinkParams {
  double latency_s = 0;      // alpha: per step of the algorithm
  double bandwidth_Bps = 1;  // beta^-1: per rank, per direction; REQUIRES > 0
};

// Time of one collective over n ranks on uniform links. kHierarchical given one link kind is the flat
// ring (use hierarchical_time for two link kinds). REQUIRES: n >= 1, bytes >= 0; p2p ignores n.
double collective_time(Kind kind, Algorithm algorithm, int64_t n, double bytes, const LinkParams& link);

// Hierarchical collective over nodes x gpus_per_node ranks: intra-node parts on `intra`, the
// inter-node ring per rail on `inter`, pipelined as NCCL runs them: every part's ring latency, plus
// the bandwidth term of the busier link (the intra parts of an all-reduce share it). With nodes = 1
// this is the intra ring; with gpus_per_node = 1 the inter ring. p2p: one message over inter
// (nodes > 1) or intra.
// REQUIRES: gpus_per_node >= 1, nodes >= 1.
double hierarchical_time(Kind kind, int64_t gpus_per_node, int64_t nodes, double bytes, const LinkParams& intra,
                         const LinkParams& inter);

// Bytes that cross EACH ring edge over the whole collective: all-reduce 2(n-1)/n S, RS/AG (n-1)/n S,
// p2p S; 0 when n = 1.
double ring_edge_bytes(Kind kind, int64_t n, double bytes);

// A point-to-point transfer between two members of the group (indices 0..n-1 into the group).
struct Flow {
  int64_t src = 0;
  int64_t dst = 0;
  double bytes = 0;
};

// ONE round of n concurrent flows i -> (i+1) mod n, each carrying ring_edge_bytes(kind, n, bytes).
// On equal links its duration equals the ring alpha-beta bandwidth term (latency counted once instead
// of per step); it stays cheap at 16K ranks. p2p: the single flow 0 -> 1 of S. n = 1: no flow.
std::vector<Flow> aggregated_ring(Kind kind, int64_t n, double bytes);

// The ring step by step: 2(n-1) (all-reduce) or n-1 (RS/AG) rounds, each of n flows i -> (i+1) mod n
// of S/n; a round starts when the previous one has finished. For small groups and for checking
// aggregated_ring. p2p: one round with the flow 0 -> 1. n = 1: no round.
std::vector<std::vector<Flow>> stepwise_ring(Kind kind, int64_t n, double bytes);

}  // namespace trainsim::collectives
