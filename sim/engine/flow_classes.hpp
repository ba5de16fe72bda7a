// Flow classes (issue 20 item 2): of the edges of one collective phase, those whose flows are alone
// on the network and identical are simulated once, one flow per class standing for all of them.
//
// Why that is exact. SimGrid's CM02 model shares a link by weighted max-min (each flow's weight is
// its route's latency) and finishes a flow `latency + bytes / rate` after it starts. A flow whose
// every link is
//   - its own: no other flow the run can have in flight at the same time crosses it (a
//     communication actor runs its phases one after the other, so only the other edges of the same
//     phase and every other actor's flows count), or
//   - never full: the route bottlenecks of every flow that may ever cross it add up to less than
//     its bandwidth (then no max-min allocation saturates it, whoever is in flight),
// gets the same rate as if it were the only flow on the platform: the smallest of its links'
// bandwidths at each instant (and CM02's TCP window bound, a function of the route's latency).
// The order of the links does not matter, nor does a link that can never be the smallest: a never
// full link, or one whose bandwidth is at every instant at least another's on the route. Two such
// flows started together with the same bytes over routes with the same latency and the same links
// that can be the smallest therefore finish at the same instant, and a phase waits for the last
// of its flows. Links whose bandwidth changes during the run (tenants, faults):
//   - one is never full when the flows' bottlenecks add up to less than the lowest bandwidth it
//     can have (then what it has at any instant does not matter);
//   - otherwise, two routes are alike through it only if the other route's link is in its group:
//     links the same tenants cross, whose bandwidths change together, to the same share at the
//     same instants (the same floating-point operations), so two flows alone on them still see
//     the same rate at every instant;
//   - a link crossed by a superset of another's tenants, with no more bandwidth, is at every
//     instant at most the other (each tenant only takes bandwidth away), so it hides the other;
//   - at run time, while no bandwidth will change before a phase's alone flows end at the rates
//     they start with (NoiseCalendar), those rates are their rates throughout: flows alike in
//     latency, bytes and starting rate are one class for that phase (Simulation's CommActor).
// Leaving out such a flow changes nobody else's rate either (max-min decomposes over flows that share no
// saturated link). Anything the census cannot prove this way is simulated as before.
//
// The same reasoning times a pipeline transfer without simulating it (Simulation::timed_transfer):
// a blocking transfer none of whose links that can be full has another owner (owners()) with a
// flow in flight or able to start one before the transfer would end, at bandwidths no daemon
// changes before then, ends latency + bytes / rate after it starts; its sender waits that long.
//
// What differs in floating point: flows coupled through a never-full link are re-solved together
// by SimGrid's lazy updates, which re-derives their finish dates (now + remaining / rate) in the
// last bits; the representative's date is derived once. Links of different groups reach the same
// share through different sums of the tenants' loads, equal to the last bit or not. Differences
// stay at rounding level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace trainsim::engine {

// A link whose bandwidth changes while the run goes, and its group: links of one group (group >= 0)
// always have the same share of their own bandwidth; a negative group is shared with no other link.
// min_share: the lowest share of its bandwidth it can have during the run.
struct ContendedLink {
  simgrid::s4u::Link* link = nullptr;
  int64_t group = -1;
  double min_share = 0;
  std::vector<int64_t> tenants;  // group >= 0: the tenants that cross it, ascending (what keys the group)
};

// What decides the rate of a flow alone on its links (FlowCensus::lone): the route's latency, and
// the links that can be the smallest along it (read their bandwidth now for the rate now).
struct LoneRoute {
  double latency_s = 0;
  std::vector<simgrid::s4u::Link*> links;
};

// Every flow the run may start, by who starts it, and the classes of a phase's edges.
// Usage: add() every flow the run can put on the network, seal(), then classify() phases.
class FlowCensus {
 public:
  // The owner of flows started by stage actor i (pipeline transfers, expert-parallel exchanges):
  // negative, never a communication actor's.
  static constexpr int64_t stage_actor(int64_t i) { return -1 - i; }

  // `contended`: links whose bandwidth changes while the run goes (contention.hpp's tenants and
  // link faults), with their groups; a flow over one is classed only while alone on it, and only
  // with flows over a link of its group. Bandwidths are read now: call after every static change
  // (the engine's 1/tp scaling) and before any dynamic one.
  explicit FlowCensus(const std::vector<ContendedLink>& contended);

  // A route between two hosts, computed once (SimGrid's route_to); returns its id.
  int32_t route(simgrid::s4u::Host* src, simgrid::s4u::Host* dst);
  // A flow `owner` may start over `route`: owner >= 0 is a communication actor, whose flows of one
  // phase run together and whose phases run one after the other; stage_actor(i) otherwise.
  // REQUIRES: not sealed.
  void add(int64_t owner, int32_t route);
  // Decides which links are never full. REQUIRES: every flow of the run added.
  void seal();

  // For the edges of one phase that `owner` sends (their routes, in order): each edge's class, or
  // -1 when it must be simulated as it is. Edges of one class have identical routes as far as max-min
  // and latency can tell; give them equal bytes to stand for one another. REQUIRES: sealed.
  std::vector<int32_t> classify(int64_t owner, const std::vector<int32_t>& routes) const;

  // The route of an edge classify() classed (its class >= 0): what its rate depends on.
  // REQUIRES: sealed.
  const LoneRoute& lone(int32_t route) const;

  // Timed pipeline transfers (Simulation::timed_transfer): the route between two hosts if the
  // census has it (-1 otherwise), whether a flow over it can be alone (classable), its links, which
  // of them can never be full, and every owner whose flows may cross a link. REQUIRES: sealed.
  int32_t find_route(const simgrid::s4u::Host* src, const simgrid::s4u::Host* dst) const;
  bool classable(int32_t route) const { return routes_[static_cast<size_t>(route)].signature >= 0; }
  const std::vector<int32_t>& route_links(int32_t route) const { return routes_[static_cast<size_t>(route)].links; }
  bool never_full(int32_t link) const { return links_[static_cast<size_t>(link)].never_full; }
  const std::vector<int64_t>& owners(int32_t link) const { return links_[static_cast<size_t>(link)].owners; }

  // Links seen so far, and how many of them can never be full (after seal()).
  size_t links() const { return links_.size(); }
  size_t never_full_links() const;

 private:
  struct LinkState {
    simgrid::s4u::Link* link = nullptr;
    double bandwidth_Bps = 0;
    bool fatpipe = false;
    bool usable = true;        // a shared or fatpipe link
    double min_share = 1;      // the lowest share of its bandwidth it can have (ContendedLink)
    std::vector<int64_t> tenants;  // group > 0: the tenants that cross it (ContendedLink::tenants)
    int64_t group = 0;         // contended: its group (ContendedLink); 0 when its bandwidth stays
    int64_t owner = 0;         // the one owner of every flow over it (valid when !many_owners)
    bool owned = false;        // some flow added
    bool many_owners = false;
    std::vector<int64_t> owners;  // every owner of a flow over it, in the order first added
    double sum_Bps = 0;        // sum of the bottleneck bandwidths of the flows that may cross it
    double max_rate_weight = 0;  // max over those flows of bottleneck x weight (fatpipe check)
    double min_weight = 0;     // min over those flows of their max-min weight
    bool never_full = false;   // decided by seal()
  };
  struct RouteState {
    std::vector<int32_t> links;
    double bottleneck_Bps = 0;  // smallest bandwidth along the route (what the flow gets at most)
    double weight = 1;          // CM02's sharing penalty: the route's latency (1 when there is none)
    bool classable = false;     // a route with links, all shared or fatpipe
    int32_t signature = -1;     // id of its key (seal()): latency, and the links that can be the smallest
    LoneRoute lone;             // the same, as links (seal())
  };
  // A link that can be the smallest on a route: its bandwidth, and what changes it: the tenants that
  // cross it (none: a link whose bandwidth stays), or else its group (faults, tenant jobs: a group
  // of its own, negative; a group known without its tenants).
  using Bound = std::tuple<double, int64_t, std::vector<int64_t>>;
  using Signature = std::pair<double, std::vector<Bound>>;
  int32_t link_id(simgrid::s4u::Link* link);

  std::unordered_map<const simgrid::s4u::Link*, ContendedLink> contended_;
  std::unordered_map<const simgrid::s4u::Link*, int32_t> link_ids_;  // looked up, never iterated
  std::vector<LinkState> links_;
  std::unordered_map<const simgrid::s4u::Host*, std::unordered_map<const simgrid::s4u::Host*, int32_t>> route_ids_;
  std::vector<RouteState> routes_;
  std::map<Signature, int32_t> signatures_;
  std::set<std::pair<int64_t, int32_t>> added_;  // (owner, route) pairs already counted
  bool sealed_ = false;
  mutable std::vector<int32_t> scratch_;  // per link: uses within the phase being classified
};

}  // namespace trainsim::engine
