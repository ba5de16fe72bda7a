// Other tenants and link faults (engine/contention.hpp): the groups contended_links() reports are
// what the daemons do to the links. Each run is a forked child (one SimGrid Engine per process).
#include "engine/contention.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <simgrid/s4u.hpp>

#include "in_child.hpp"
#include "platform/platform.hpp"

namespace trainsim::engine {
namespace {

using trainsim::testing::in_child_values;

// 32 DGX H100 nodes, 4 a leaf: 8 leaves, each uplink a link per direction (16 fabric links).
config::Scenario scenario() {
  config::Scenario sc;
  sc.name = "contention";
  sc.cluster.gpu = *hardware::find_gpu("h100-sxm");
  sc.cluster.nodes = 32;
  sc.cluster.gpus_per_node = 8;
  sc.cluster.nodes_per_leaf = 4;
  sc.cluster.intra_bandwidth_Bps = 450e9;
  sc.cluster.intra_latency_s = 1e-6;
  sc.cluster.inter_latency_s = 5e-6;
  sc.cluster.nic_bandwidth_Bps = 50e9;
  sc.cluster.nics_per_node = 8;
  config::ContentionSpec c;
  c.tenants = 4;
  c.load = 0.3;
  c.burst_s = 2e-3;
  c.idle_s = 2e-3;
  sc.contention = c;
  return sc;
}

// Starts the scenario's noise, samples every contended link's share of its bandwidth every 0.25 ms
// for 50 ms, and returns, flattened: the number of links, then per link its group, its lowest
// share allowed (min_share), the lowest share seen, and whether every sample equalled the first
// link of its group's (1) or not (0); then the number of distinct shares seen at one instant.
std::vector<double> sample_groups(const config::Scenario& sc) {
  auto engine = platform::make_engine();
  auto plat = platform::Platform::build(*engine, sc.cluster);
  const std::vector<ContendedLink> links = contended_links(sc, *plat, 1);
  std::vector<double> nominal;
  for (const auto& c : links) nominal.push_back(c.link->get_bandwidth());
  start_contention(sc, *plat, 1);
  std::vector<double> lowest(links.size(), 1.0), alike(links.size(), 1.0);
  double most_distinct = 0;
  simgrid::s4u::Actor::create("sampler", plat->gpu(0, 0), [&] {
    for (int i = 0; i < 200; ++i) {
      simgrid::s4u::this_actor::sleep_for(0.25e-3);
      std::map<int64_t, double> first;  // group -> share of its first link
      std::set<double> shares;
      for (size_t k = 0; k < links.size(); ++k) {
        const double share = links[k].link->get_bandwidth() / nominal[k];
        lowest[k] = std::min(lowest[k], share);
        shares.insert(share);
        const auto [it, fresh] = first.emplace(links[k].group, share);
        if (!fresh && it->second != share) alike[k] = 0;
      }
      most_distinct = std::max(most_distinct, static_cast<double>(shares.size()));
    }
  });
  engine->run();
  std::vector<double> out{static_cast<double>(links.size())};
  for (size_t k = 0; k < links.size(); ++k)
    for (double v : {static_cast<double>(links[k].group), links[k].min_share, lowest[k], alike[k]}) out.push_back(v);
  out.push_back(most_distinct);
  return out;
}

TEST(ContendedLinksTest, LinksOfAGroupAlwaysHaveTheSameShare) {
  const auto v = in_child_values([] { return sample_groups(scenario()); });
  ASSERT_GE(v.size(), 2u);
  const auto n = static_cast<size_t>(v[0]);
  ASSERT_EQ(v.size(), 2 + 4 * n);
  // Each tenant crosses each of the 16 uplink directions with probability 1/2: the links some
  // tenant crosses, grouped by which tenants (at most 2^4 - 1 non-empty sets).
  EXPECT_GT(n, 8u);
  EXPECT_LE(n, 16u);
  std::set<double> groups;
  for (size_t k = 0; k < n; ++k) {
    const double group = v[1 + 4 * k], min_share = v[2 + 4 * k], lowest = v[3 + 4 * k], alike = v[4 + 4 * k];
    groups.insert(group);
    EXPECT_GE(group, 0) << "link " << k;  // tenants placed for the whole run: shared groups
    EXPECT_EQ(alike, 1) << "link " << k << " left its group's share";
    // Busy tenants at 0.3 each: 1 - 0.3 x (tenants crossing it), which the sampling reaches.
    EXPECT_GE(lowest, min_share - 1e-12) << "link " << k;
    EXPECT_LT(lowest, 1) << "link " << k;
    double nearest = 1;
    for (int crossing = 1; crossing <= 4; ++crossing)
      nearest = std::min(nearest, std::fabs(min_share - std::max(0.05, 1 - 0.3 * crossing)));
    EXPECT_LT(nearest, 1e-12) << min_share;
  }
  EXPECT_LE(groups.size(), 15u);
  EXPECT_GE(groups.size(), 4u);
  // The groups do differ from one another while the run goes.
  EXPECT_GE(v[1 + 4 * n], 3);
}

TEST(ContendedLinksTest, JobsAndFaultsMakeEachLinkAGroupOfItsOwn) {
  for (int which : {0, 1}) {
    const auto v = in_child_values([which] {
      auto sc = scenario();
      if (which == 0) {
        sc.contention->job_duration_s = 5e-3;  // each job draws its links anew
        sc.contention->job_gap_s = 1e-3;
      } else {
        config::LinkFaultSpec f;
        f.flaps_per_link_hour = 1;
        sc.link_faults = f;
      }
      return sample_groups(sc);
    });
    ASSERT_GE(v.size(), 2u);
    const auto n = static_cast<size_t>(v[0]);
    ASSERT_EQ(v.size(), 2 + 4 * n);
    EXPECT_EQ(n, 16u) << which;  // every uplink direction: a job may cross any, a cable may flap
    std::set<double> groups;
    for (size_t k = 0; k < n; ++k) {
      EXPECT_LT(v[1 + 4 * k], 0) << which;
      EXPECT_EQ(v[2 + 4 * k], 0.05) << which;  // down to contention.cpp's floor
      groups.insert(v[1 + 4 * k]);
    }
    EXPECT_EQ(groups.size(), n) << which;
  }
}

// Starts the scenario's noise and samples every noisy link's bandwidth every 0.05 ms for 50 ms with
// the calendar's next change. Returns: the samples at which some bandwidth had changed since the
// previous sample although the calendar had promised no change until after now; the samples with
// a change; the samples at which the calendar promised a quiet future (next change after now).
std::vector<double> sample_calendar(const config::Scenario& sc) {
  auto engine = platform::make_engine();
  auto plat = platform::Platform::build(*engine, sc.cluster);
  std::vector<simgrid::s4u::Link*> links;
  for (const auto* set : {&plat->fabric_links(), &plat->shared_links()}) links.insert(links.end(), set->begin(), set->end());
  const std::shared_ptr<const NoiseCalendar> calendar = start_contention(sc, *plat, 1);
  double broken = 0, changed = 0, quiet = 0;
  simgrid::s4u::Actor::create("sampler", plat->gpu(0, 0), [&] {
    std::vector<double> before;
    double promised = 0;  // no bandwidth changes before this instant
    for (int i = 0; i < 1000; ++i) {
      simgrid::s4u::this_actor::sleep_for(0.05e-3);
      const double now = simgrid::s4u::Engine::get_clock();
      std::vector<double> bw;
      for (auto* l : links) bw.push_back(l->get_bandwidth());
      if (!before.empty() && bw != before) {
        ++changed;
        if (now < promised) ++broken;
      }
      before = bw;
      promised = calendar->next_change();
      if (promised > now) ++quiet;
    }
  });
  engine->run();
  return {broken, changed, quiet};
}

// The calendar never promises quiet while a daemon is about to change a bandwidth: every change
// the sampling sees comes at or after the next change the calendar gave at the sample before.
// Tenants (bursts of 2 ms, so changes come every ~0.5 ms), tenants with jobs, and flapping cables.
TEST(NoiseCalendarTest, NoBandwidthChangesBeforeTheNextChangeItGives) {
  for (int which : {0, 1, 2}) {
    const auto v = in_child_values([which] {
      auto sc = scenario();
      if (which == 1) {
        sc.contention->job_duration_s = 5e-3;
        sc.contention->job_gap_s = 1e-3;
      } else if (which == 2) {
        sc.contention.reset();
        config::LinkFaultSpec f;
        f.flaps_per_link_hour = 3.6e6;  // 1,000 a second a link: 16 links, a flap every ~60 us
        f.flap_s = 0.2e-3;
        sc.link_faults = f;
      }
      return sample_calendar(sc);
    });
    ASSERT_EQ(v.size(), 3u) << which;
    EXPECT_EQ(v[0], 0) << which;
    // Changes were seen (the check had something to check), and quiet was promised between them.
    EXPECT_GE(v[1], 20) << which;
    EXPECT_GE(v[2], 100) << which;
  }
}

TEST(ContendedLinksTest, NothingWithoutTenantsOrFaults) {
  const auto v = in_child_values([] {
    auto sc = scenario();
    sc.contention.reset();
    return sample_groups(sc);
  });
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], 0);
}

}  // namespace
}  // namespace trainsim::engine
