#include "engine/contention.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {
namespace {

// What every noise source currently does to each link it touches: the tenants' load, and the share
// a fault leaves (1 healthy, degraded_share, ~0 while down), over the link's own bandwidth.
struct SharedState {
  std::vector<sg4::Link*> links;
  std::vector<double> nominal_Bps;
  std::vector<double> load;
  std::vector<double> fault;  // product of the faults' shares on this link
  std::vector<int64_t> down;  // flaps under way
  std::shared_ptr<NoiseCalendar> calendar = std::make_shared<NoiseCalendar>();
};

// A daemon's place in the calendar: entered at its creation (it acts as soon as it runs), moved to
// each instant it will wake before it sleeps (after it applied what it changed on waking).
class Wake {
 public:
  explicit Wake(std::shared_ptr<NoiseCalendar> calendar)
      : calendar_(std::move(calendar)), entry_(calendar_->enter(sg4::Engine::get_clock())) {}
  void sleep_for(double seconds) {
    const NoiseCalendar::Entry next = calendar_->enter(sg4::Engine::get_clock() + seconds);
    calendar_->leave(entry_);
    entry_ = next;
    sg4::this_actor::sleep_for(seconds);
  }

 private:
  std::shared_ptr<NoiseCalendar> calendar_;
  NoiseCalendar::Entry entry_;
};

// A link never drops below this share of its bandwidth: a fabric whose links went to zero would
// stall every flow on them (and SimGrid rejects a zero bandwidth).
constexpr double kMinShare = 0.05;

void apply(SharedState& st, size_t i) {
  const double share = std::max(kMinShare, (1.0 - st.load[i]) * st.fault[i]);
  st.links[i]->set_bandwidth(st.nominal_Bps[i] * share);
}

// The state over these links (one entry per distinct link).
std::shared_ptr<SharedState> state_of(const std::vector<sg4::Link*>& links) {
  auto st = std::make_shared<SharedState>();
  st->links = links;
  for (auto* l : st->links) st->nominal_Bps.push_back(l->get_bandwidth());
  st->load.assign(st->links.size(), 0.0);
  st->fault.assign(st->links.size(), 1.0);
  st->down.assign(st->links.size(), 0);
  return st;
}

class Tenant {
 public:
  // `links`: the placement of a tenant present for the whole run; `candidates`: the links a job may
  // cross (each with probability 1/2, at least one), drawn anew per job when jobs come and go.
  Tenant(std::shared_ptr<SharedState> st, std::vector<size_t> links, std::vector<size_t> candidates,
         const config::ContentionSpec& spec, double start_hour, uint64_t seed)
      : st_(std::move(st)),
        links_(std::move(links)),
        candidates_(std::move(candidates)),
        spec_(spec),
        start_hour_(start_hour),
        rng_(seed),
        wake_(st_->calendar) {}

  void operator()() {
    sg4::this_actor::get_host();  // runs on a GPU host; it only sleeps and changes link bandwidths
    if (spec_.job_duration_s <= 0) {
      burst(spec_.load, std::numeric_limits<double>::infinity());
      return;
    }
    std::exponential_distribution<double> lifetime(1.0 / spec_.job_duration_s);
    std::uniform_real_distribution<double> mix(0.5, 1.5);
    std::bernoulli_distribution crosses(0.5);
    std::uniform_int_distribution<size_t> any(0, candidates_.size() - 1);
    // Start in the stationary state: a job present with probability duration / (duration + gap).
    std::bernoulli_distribution present(spec_.job_duration_s / (spec_.job_duration_s + spec_.job_gap_s));
    bool job = present(rng_);
    for (;;) {
      if (job) {
        links_.clear();
        for (size_t i : candidates_)
          if (candidates_.size() == 1 || crosses(rng_)) links_.push_back(i);
        if (links_.empty()) links_.push_back(candidates_[any(rng_)]);
        burst(std::min(1.0, spec_.load * mix(rng_)), sg4::Engine::get_clock() + lifetime(rng_));
      } else {
        wake_.sleep_for(std::exponential_distribution<double>(1.0 / spec_.job_gap_s)(rng_));
      }
      job = !job;
    }
  }

 private:
  // Busy and idle periods (exponential, means burst and idle) taking `load` of the links while
  // busy (times the time of day's factor, re-read every kDiurnalStep_s), until `until` (simulated
  // seconds).
  void burst(double load, double until) {
    std::exponential_distribution<double> busy(1.0 / std::max(1e-9, spec_.burst_s));
    std::exponential_distribution<double> idle(1.0 / std::max(1e-9, spec_.idle_s));
    // Start in the stationary state: busy with probability burst / (burst + idle).
    std::bernoulli_distribution starts_busy(spec_.burst_s / (spec_.burst_s + spec_.idle_s));
    const bool diurnal = spec_.diurnal_amplitude > 0;
    bool on = starts_busy(rng_);
    for (;;) {
      const double now = sg4::Engine::get_clock();
      if (now >= until) return;
      double left = std::min(on ? busy(rng_) : idle(rng_), until - now);
      if (!on) {
        wake_.sleep_for(left);
      } else {
        while (left > 0) {
          const double taken = diurnal ? std::min(1.0, load * config::diurnal_factor(spec_, start_hour_, sg4::Engine::get_clock())) : load;
          const double slice = diurnal ? std::min(left, config::kDiurnalStep_s) : left;
          for (size_t i : links_) {
            st_->load[i] += taken;
            apply(*st_, i);
          }
          wake_.sleep_for(slice);
          for (size_t i : links_) {
            st_->load[i] -= taken;
            apply(*st_, i);
          }
          left -= slice;
        }
      }
      on = !on;
    }
  }

  std::shared_ptr<SharedState> st_;
  std::vector<size_t> links_;
  std::vector<size_t> candidates_;
  config::ContentionSpec spec_;
  double start_hour_;
  std::mt19937_64 rng_;
  Wake wake_;
};

}  // namespace

namespace {

bool has_tenants(const config::Scenario& scenario) { return scenario.contention && scenario.contention->tenants > 0; }
bool has_faults(const config::Scenario& scenario) {
  return scenario.link_faults && (scenario.link_faults->degraded > 0 || scenario.link_faults->flaps_per_link_hour > 0);
}

// Every link a noise source touches, once each: the fabric links (faults; tenants on a dedicated
// fabric) and the shared links (tenants on a shared one). Tens of thousands of links under ECMP at
// 16K GPUs: deduplicated through a set, not searched.
std::vector<sg4::Link*> noisy_links(const platform::Platform& platform) {
  std::vector<sg4::Link*> all;
  std::unordered_set<sg4::Link*> seen;
  for (const auto* links : {&platform.fabric_links(), &platform.shared_links()})
    for (auto* l : *links)
      if (seen.insert(l).second) all.push_back(l);
  return all;
}

// Each link of noisy_links() -> its index there.
std::unordered_map<sg4::Link*, size_t> index_links(const std::vector<sg4::Link*>& all) {
  std::unordered_map<sg4::Link*, size_t> index;
  for (size_t i = 0; i < all.size(); ++i) index.emplace(all[i], i);
  return index;
}

// The links the tenants cross, as indices into noisy_links(): for each tenant, each of its
// candidate links (the platform's shared links, else its switch uplinks: aggregation/spine layer)
// with probability 1/2 (at least one), drawn from the contention seed mixed with the run seed, so
// seeds give different placements. Also returns each tenant's seed for its own draws.
struct TenantPlacement {
  std::vector<size_t> candidates;
  std::vector<std::vector<size_t>> links;
  std::vector<uint64_t> seeds;
};
TenantPlacement place_tenants(const config::Scenario& scenario, const platform::Platform& platform,
                              const std::unordered_map<sg4::Link*, size_t>& index, uint64_t seed) {
  TenantPlacement out;
  const auto& links = platform.shared_links().empty() ? platform.fabric_links() : platform.shared_links();
  const auto& spec = *scenario.contention;
  std::mt19937_64 rng(spec.seed * 0x9E3779B97F4A7C15ULL ^ seed);
  std::bernoulli_distribution crosses(0.5);
  std::uniform_int_distribution<size_t> any(0, links.empty() ? 0 : links.size() - 1);
  for (auto* l : links) out.candidates.push_back(index.at(l));
  for (int64_t t = 0; t < spec.tenants && !links.empty(); ++t) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < links.size(); ++i)
      if (links.size() == 1 || crosses(rng)) mine.push_back(out.candidates[i]);
    if (mine.empty()) mine.push_back(out.candidates[any(rng)]);
    out.links.push_back(std::move(mine));
    out.seeds.push_back(rng());
  }
  return out;
}

}  // namespace

std::vector<ContendedLink> contended_links(const config::Scenario& scenario, const platform::Platform& platform,
                                           uint64_t seed) {
  std::vector<ContendedLink> out;
  if (!has_tenants(scenario) && !has_faults(scenario)) return out;
  const std::vector<sg4::Link*> all = noisy_links(platform);
  const auto index = index_links(all);
  // Per link, the tenants crossing it (as a set, the group key), or a group of its own.
  std::vector<std::vector<int64_t>> crossed_by(all.size());
  std::vector<bool> alone(all.size(), false);
  double take = 0;  // the most a busy tenant takes of a link: its load at the diurnal peak, at most 1
  if (has_tenants(scenario)) {
    const auto& spec = *scenario.contention;
    take = std::min(1.0, spec.load * (1 + std::max(0.0, spec.diurnal_amplitude)));
    const TenantPlacement placement = place_tenants(scenario, platform, index, seed);
    if (spec.job_duration_s > 0) {
      for (size_t i : placement.candidates) alone[i] = true;
    } else {
      for (size_t t = 0; t < placement.links.size(); ++t)
        for (size_t i : placement.links[t]) crossed_by[i].push_back(static_cast<int64_t>(t));
    }
  }
  if (has_faults(scenario))
    for (auto* l : platform.fabric_links()) alone[index.at(l)] = true;
  std::map<std::vector<int64_t>, int64_t> groups;
  for (size_t i = 0; i < all.size(); ++i) {
    if (alone[i]) {
      out.push_back({all[i], -1 - static_cast<int64_t>(i), kMinShare, {}});  // negative: no other link shares it
    } else if (!crossed_by[i].empty()) {
      const double lowest = std::max(kMinShare, 1 - take * static_cast<double>(crossed_by[i].size()));
      out.push_back({all[i], groups.emplace(crossed_by[i], static_cast<int64_t>(groups.size())).first->second, lowest, crossed_by[i]});
    }
  }
  return out;
}

std::shared_ptr<const NoiseCalendar> start_contention(const config::Scenario& scenario, const platform::Platform& platform,
                                                     uint64_t seed) {
  const bool tenants = has_tenants(scenario);
  const bool faults = has_faults(scenario);
  if (!tenants && !faults) return nullptr;
  const std::vector<sg4::Link*> all = noisy_links(platform);
  if (all.empty()) return nullptr;
  const auto index = index_links(all);
  auto st = state_of(all);
  auto index_of = [&](sg4::Link* l) { return index.at(l); };

  if (tenants) {
    const auto& spec = *scenario.contention;
    TenantPlacement placement = place_tenants(scenario, platform, index, seed);
    for (size_t t = 0; t < placement.links.size(); ++t) {
      auto actor = sg4::Actor::create("tenant-" + std::to_string(t), platform.gpu(0, 0),
                                      Tenant(st, std::move(placement.links[t]), placement.candidates, spec,
                                             config::diurnal_start_hour(spec, seed), placement.seeds[t]));
      actor->daemonize();
    }
  }

  if (faults && !platform.fabric_links().empty()) {
    const auto spec = *scenario.link_faults;
    const auto& links = platform.fabric_links();
    // The physical cables behind each fabric link (1 for a lone cable); a link standing for c
    // cables loses 1/c of its capacity per faulty cable.
    std::vector<double> cables;
    for (size_t i = 0; i < links.size(); ++i)
      cables.push_back(static_cast<double>(i < platform.fabric_cables().size() ? std::max<int64_t>(platform.fabric_cables()[i], 1) : 1));
    auto cable_share = [cables](size_t i, double share) { return 1.0 - (1.0 - share) / cables[i]; };
    std::mt19937_64 rng(seed * 0xD1B54A32D192ED03ULL + 3);
    // Degraded cables for the whole run, drawn per seed (with replacement: two on one bundle is
    // two of its cables).
    std::uniform_int_distribution<size_t> pick(0, links.size() - 1);
    for (int64_t k = 0; k < spec.degraded; ++k) {
      const size_t i = pick(rng);
      const size_t j = index_of(links[i]);
      st->fault[j] *= cable_share(i, spec.degraded_share);
      apply(*st, j);
    }
    if (spec.flaps_per_link_hour > 0) {
      // Flaps over all physical cables: a Poisson stream; each takes one cable down for a while.
      const double total_cables = std::accumulate(cables.begin(), cables.end(), 0.0);
      const double rate = spec.flaps_per_link_hour * total_cables / 3600.0;
      auto gen = std::make_shared<std::mt19937_64>(rng());
      std::vector<size_t> idx;
      for (auto* l : links) idx.push_back(index_of(l));
      auto wake = std::make_shared<Wake>(st->calendar);
      sg4::Actor::create("link-flaps", platform.gpu(0, 0), [st, gen, rate, spec, idx, cable_share, cables, wake] {
        std::exponential_distribution<double> gap(rate);
        std::exponential_distribution<double> length(1.0 / spec.flap_s);
        // A cable is picked in proportion to its bundle's cables.
        std::discrete_distribution<size_t> which(cables.begin(), cables.end());
        for (;;) {
          wake->sleep_for(gap(*gen));
          const size_t i = which(*gen);
          const size_t j = idx[i];
          // The bundle without that cable (a lone cable keeps kMinShare: its flows crawl, not stall).
          const double down_share = std::max(kMinShare, cable_share(i, 0.0));
          const double duration = length(*gen);
          st->fault[j] *= down_share;
          apply(*st, j);
          // Its end is in the calendar from now, until the cable is back.
          const NoiseCalendar::Entry back = st->calendar->enter(sg4::Engine::get_clock() + duration);
          sg4::Actor::create("flap", sg4::this_actor::get_host(), [st, j, down_share, duration, back] {
            sg4::this_actor::sleep_for(duration);
            st->fault[j] /= down_share;
            apply(*st, j);
            st->calendar->leave(back);
          })->daemonize();
        }
      })->daemonize();
    }
  }
  return st->calendar;
}

}  // namespace trainsim::engine
