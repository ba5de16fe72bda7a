#include "engine/flow_classes.hpp"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {
namespace {

// How far below its bandwidth the sum of a link's flows must stay for the link to count as never
// full: far above rounding (SimGrid compares rates to 1e-5 absolute, about 1e-10 of these), far
// below anything a fabric is sized by.
constexpr double kMargin = 1e-6;

}  // namespace

FlowCensus::FlowCensus(const std::vector<ContendedLink>& contended) {
  for (const ContendedLink& c : contended) contended_.emplace(c.link, c);
}

int32_t FlowCensus::link_id(sg4::Link* link) {
  const auto [it, fresh] = link_ids_.emplace(link, static_cast<int32_t>(links_.size()));
  if (fresh) {
    LinkState st;
    st.link = link;
    st.bandwidth_Bps = link->get_bandwidth();
    const auto policy = link->get_sharing_policy();
    st.fatpipe = policy == sg4::Link::SharingPolicy::FATPIPE;
    st.usable = policy == sg4::Link::SharingPolicy::SHARED || st.fatpipe;
    if (const auto c = contended_.find(link); c != contended_.end()) {
      // Negative groups are one link each: distinct from every other link's (groups are >= 0).
      st.group = c->second.group >= 0 ? c->second.group + 1 : c->second.group;
      st.min_share = c->second.min_share;
      if (st.group > 0) st.tenants = c->second.tenants;
    }
    links_.push_back(st);
  }
  return it->second;
}

int32_t FlowCensus::route(sg4::Host* src, sg4::Host* dst) {
  auto& by_dst = route_ids_[src];
  if (const auto it = by_dst.find(dst); it != by_dst.end()) return it->second;
  std::vector<sg4::Link*> path;
  double latency = 0;
  src->route_to(dst, path, &latency);
  RouteState r;
  // The nominal bandwidths: what a flow gets at most (contended links only lose bandwidth).
  r.bottleneck_Bps = std::numeric_limits<double>::infinity();
  for (sg4::Link* l : path) {
    const int32_t id = link_id(l);
    r.links.push_back(id);
    r.bottleneck_Bps = std::min(r.bottleneck_Bps, links_[static_cast<size_t>(id)].bandwidth_Bps);
  }
  // CM02 weighs a flow by its latency; a flow without latency keeps weight 1.
  r.weight = latency > 0 ? latency : 1.0;
  r.lone.latency_s = latency;
  // A route without links (or through a link of another kind) never stands for another.
  r.classable = !path.empty();
  for (int32_t id : r.links) r.classable = r.classable && links_[static_cast<size_t>(id)].usable;
  const auto id = static_cast<int32_t>(routes_.size());
  routes_.push_back(std::move(r));
  by_dst.emplace(dst, id);
  return id;
}

void FlowCensus::add(int64_t owner, int32_t route) {
  if (sealed_) throw std::logic_error("FlowCensus::add after seal");
  if (!added_.emplace(owner, route).second) return;
  const RouteState& r = routes_[static_cast<size_t>(route)];
  for (int32_t id : r.links) {
    LinkState& l = links_[static_cast<size_t>(id)];
    if (!l.owned) {
      l.owned = true;
      l.owner = owner;
      l.min_weight = r.weight;
    } else {
      l.many_owners = l.many_owners || l.owner != owner;
      l.min_weight = std::min(l.min_weight, r.weight);
    }
    if (std::find(l.owners.begin(), l.owners.end(), owner) == l.owners.end()) l.owners.push_back(owner);
    l.sum_Bps += r.bottleneck_Bps;
    l.max_rate_weight = std::max(l.max_rate_weight, r.bottleneck_Bps * r.weight);
  }
}

void FlowCensus::seal() {
  for (LinkState& l : links_) {
    if (!l.usable) continue;
    const double room = l.bandwidth_Bps * l.min_share * (1 - kMargin);
    // A shared link gives its flows at most its bandwidth in all. A fatpipe gives each flow up to
    // its bandwidth, but weighted by latency: the lightest flow's level (bandwidth x its weight)
    // caps every other flow at that level over its own weight.
    l.never_full = l.fatpipe ? l.max_rate_weight <= room * l.min_weight : l.sum_Bps <= room;
  }
  // Signatures: the route's latency and the links that can be the smallest along it, in no order.
  struct Candidate {
    const LinkState* l;
    Bound bound;
  };
  // i is at every instant at most j: its most is at most j's least, or it has no more bandwidth
  // and is crossed by every tenant that crosses j (a link without noise: by none).
  auto by_tenants = [](const LinkState& l) { return l.group == 0 || !l.tenants.empty(); };
  auto hides = [&](const LinkState& i, const LinkState& j) {
    if (i.bandwidth_Bps <= j.bandwidth_Bps * j.min_share) return true;
    return by_tenants(i) && by_tenants(j) && i.bandwidth_Bps <= j.bandwidth_Bps &&
           std::includes(i.tenants.begin(), i.tenants.end(), j.tenants.begin(), j.tenants.end());
  };
  std::vector<Candidate> candidates;
  for (RouteState& r : routes_) {
    if (!r.classable) continue;
    candidates.clear();
    for (int32_t id : r.links) {
      const LinkState& l = links_[static_cast<size_t>(id)];
      if (l.never_full) continue;
      candidates.push_back({&l, {l.bandwidth_Bps, by_tenants(l) ? 0 : l.group, l.tenants}});
    }
    Signature signature{r.lone.latency_s, {}};
    r.lone.links.clear();
    for (size_t j = 0; j < candidates.size(); ++j) {
      bool hidden = false;
      for (size_t i = 0; i < candidates.size() && !hidden; ++i) {
        if (i == j) continue;
        // Of two links alike, the first stands.
        hidden = candidates[i].bound == candidates[j].bound ? i < j : hides(*candidates[i].l, *candidates[j].l);
      }
      if (hidden) continue;
      signature.second.push_back(candidates[j].bound);
      r.lone.links.push_back(candidates[j].l->link);
    }
    std::sort(signature.second.begin(), signature.second.end());
    r.signature = signatures_.emplace(std::move(signature), static_cast<int32_t>(signatures_.size())).first->second;
  }
  sealed_ = true;
}

const LoneRoute& FlowCensus::lone(int32_t route) const {
  if (!sealed_) throw std::logic_error("FlowCensus::lone before seal");
  return routes_[static_cast<size_t>(route)].lone;
}

int32_t FlowCensus::find_route(const sg4::Host* src, const sg4::Host* dst) const {
  const auto by_dst = route_ids_.find(src);
  if (by_dst == route_ids_.end()) return -1;
  const auto it = by_dst->second.find(dst);
  return it == by_dst->second.end() ? -1 : it->second;
}

size_t FlowCensus::never_full_links() const {
  return static_cast<size_t>(std::count_if(links_.begin(), links_.end(), [](const LinkState& l) { return l.never_full; }));
}

std::vector<int32_t> FlowCensus::classify(int64_t owner, const std::vector<int32_t>& routes) const {
  if (!sealed_) throw std::logic_error("FlowCensus::classify before seal");
  std::vector<int32_t> out(routes.size(), -1);
  if (owner < 0) return out;
  scratch_.resize(links_.size(), 0);
  for (int32_t r : routes)
    for (int32_t id : routes_[static_cast<size_t>(r)].links) ++scratch_[static_cast<size_t>(id)];
  for (size_t i = 0; i < routes.size(); ++i) {
    const RouteState& r = routes_[static_cast<size_t>(routes[i])];
    if (r.signature < 0) continue;
    bool alone = true;
    for (int32_t id : r.links) {
      const LinkState& l = links_[static_cast<size_t>(id)];
      const bool own = l.owned && !l.many_owners && l.owner == owner && scratch_[static_cast<size_t>(id)] == 1;
      alone = alone && (l.never_full || own);
    }
    if (alone) out[i] = r.signature;
  }
  for (int32_t r : routes)
    for (int32_t id : routes_[static_cast<size_t>(r)].links) scratch_[static_cast<size_t>(id)] = 0;
  return out;
}

}  // namespace trainsim::engine
