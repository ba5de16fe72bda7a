#include "engine/contention.hpp"

#include <simgrid/s4u.hpp>

#include <algorithm>
#include <memory>
#include <random>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace trainsim::engine {
namespace {

// The load every tenant currently puts on each shared link, and the links' own bandwidth.
struct SharedState {
  std::vector<sg4::Link*> links;
  std::vector<double> nominal_Bps;
  std::vector<double> load;
};

// A link never drops below this share of its bandwidth: a fabric whose links went to zero would
// stall every flow on them (and SimGrid rejects a zero bandwidth).
constexpr double kMinShare = 0.05;

void apply(SharedState& st, size_t i) {
  const double share = std::max(kMinShare, 1.0 - st.load[i]);
  st.links[i]->set_bandwidth(st.nominal_Bps[i] * share);
}

class Tenant {
 public:
  Tenant(std::shared_ptr<SharedState> st, std::vector<size_t> links, const config::ContentionSpec& spec, uint64_t seed)
      : st_(std::move(st)), links_(std::move(links)), spec_(spec), rng_(seed) {}

  void operator()() {
    sg4::this_actor::get_host();  // runs on a GPU host; it only sleeps and changes link bandwidths
    std::exponential_distribution<double> busy(1.0 / std::max(1e-9, spec_.burst_s));
    std::exponential_distribution<double> idle(1.0 / std::max(1e-9, spec_.idle_s));
    // Start in the stationary state: busy with probability burst / (burst + idle).
    std::bernoulli_distribution starts_busy(spec_.burst_s / (spec_.burst_s + spec_.idle_s));
    bool on = starts_busy(rng_);
    for (;;) {
      for (size_t i : links_) {
        st_->load[i] += on ? spec_.load : 0.0;
        apply(*st_, i);
      }
      sg4::this_actor::sleep_for(on ? busy(rng_) : idle(rng_));
      if (on)
        for (size_t i : links_) {
          st_->load[i] -= spec_.load;
          apply(*st_, i);
        }
      on = !on;
    }
  }

 private:
  std::shared_ptr<SharedState> st_;
  std::vector<size_t> links_;
  config::ContentionSpec spec_;
  std::mt19937_64 rng_;
};

}  // namespace

void start_contention(const config::Scenario& scenario, const platform::Platform& platform, uint64_t seed) {
  if (!scenario.contention || scenario.contention->tenants <= 0) return;
  // The `shared` topology (or a platform file) names its shared links; on a fat-tree or a
  // rail-optimised fabric other tenants cross the switch uplinks (aggregation/spine layer).
  const auto& links = platform.shared_links().empty() ? platform.fabric_links() : platform.shared_links();
  if (links.empty()) return;
  const auto& spec = *scenario.contention;
  auto st = std::make_shared<SharedState>();
  st->links = links;
  for (auto* l : st->links) st->nominal_Bps.push_back(l->get_bandwidth());
  st->load.assign(st->links.size(), 0.0);
  // Which links each tenant crosses: each shared link with probability 1/2 (at least one), drawn
  // from the contention seed mixed with the run seed, so seeds give different placements.
  std::mt19937_64 rng(spec.seed * 0x9E3779B97F4A7C15ULL ^ seed);
  std::bernoulli_distribution crosses(0.5);
  std::uniform_int_distribution<size_t> any(0, st->links.size() - 1);
  for (int64_t t = 0; t < spec.tenants; ++t) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < st->links.size(); ++i)
      if (st->links.size() == 1 || crosses(rng)) mine.push_back(i);
    if (mine.empty()) mine.push_back(any(rng));
    auto actor = sg4::Actor::create("tenant-" + std::to_string(t), platform.gpu(0, 0),
                                    Tenant(st, std::move(mine), spec, rng()));
    actor->daemonize();
  }
}

}  // namespace trainsim::engine
