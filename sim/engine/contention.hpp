// Other tenants on the inter-node fabric. Each tenant alternates idle and busy periods
// (exponentially distributed, seeded); while busy it takes `load` of the bandwidth of the shared
// links it crosses. Modelled by changing those links' bandwidth from timers (Link::set_bandwidth,
// ~0.2 us a call: far cheaper than thousands of tenant flows), so our DP and PP flows get what is
// left through SimGrid's max-min sharing.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include "config/scenario.hpp"
#include "engine/flow_classes.hpp"
#include "platform/platform.hpp"

namespace trainsim::engine {

// When a link's bandwidth may next change. Every noise daemon (tenant, link flap) holds one entry: the
// instant it next wakes, entered before it sleeps and left only once it has applied what it changes
// on waking, so no bandwidth changes before next_change() (at next_change() itself it may).
class NoiseCalendar {
 public:
  using Entry = std::multiset<double>::iterator;
  Entry enter(double at) { return wakes_.insert(at); }
  void leave(Entry e) { wakes_.erase(e); }
  double next_change() const { return wakes_.empty() ? std::numeric_limits<double>::infinity() : *wakes_.begin(); }

 private:
  std::multiset<double> wakes_;
};

// Starts one daemon actor per tenant (they die with the last stage actor). The links: the
// platform's shared links, else its switch uplinks (fat-tree / rail-optimised). Also the link
// faults (config::LinkFaultSpec) on the switch uplinks: degraded cables set once, flaps from a
// daemon. Tenants and faults act on one state per link: bandwidth = nominal x max(5%, (1 - load) x
// fault share). A bundle of c cables (adaptive routing) loses 1/c per faulty cable. No-op without
// tenants or faults, or on a single-node platform. Returns the daemons' calendar (null when none
// was started).
std::shared_ptr<const NoiseCalendar> start_contention(const config::Scenario& scenario, const platform::Platform& platform,
                                                     uint64_t seed);

// The links whose bandwidth start_contention(scenario, platform, seed) changes during the run, each
// with its group (ContendedLink). Tenants placed for the whole run set every link they share to the
// same share of its bandwidth at the same instants, so the links the same tenants cross form a
// group; a link under faults (each cable its own), or crossed by tenants that come and go (each
// job draws its links anew), is a group of its own. Links nothing changes are left out.
std::vector<ContendedLink> contended_links(const config::Scenario& scenario, const platform::Platform& platform,
                                           uint64_t seed);

}  // namespace trainsim::engine
