#include "platform/platform.hpp"

#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>
#include <xbt/log.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "util/error.hpp"
#include "util/units.hpp"

namespace sg4 = simgrid::s4u;

namespace trainsim::platform {

// Turns a ClusterSpec or a platform file into a Platform (the only writer of its fields).
class PlatformBuilder {
 public:
  static std::unique_ptr<Platform> from_cluster(sg4::Engine& engine, const hardware::ClusterSpec& cluster);
  static std::unique_ptr<Platform> from_file(sg4::Engine& engine, const hardware::ClusterSpec& cluster);

 private:
  static void add_intra_node(sg4::NetZone* zone, Platform& p, const hardware::ClusterSpec& c, int64_t node);
  static void tune_fabric_links(sg4::Engine& engine, Platform& p);
};

namespace {

// SimGrid's fat-tree names its links "link_from_<child id>_<parent id>_<serial>[_UP|_DOWN]".
constexpr std::string_view kFatTreeLinkPrefix = "link_from_";

// The fat-tree element id of the child end of a fat-tree link, or -1 for any other link.
int64_t fat_tree_child_id(std::string_view name) {
  if (name.substr(0, kFatTreeLinkPrefix.size()) != kFatTreeLinkPrefix) return -1;
  name.remove_prefix(kFatTreeLinkPrefix.size());
  int64_t id = -1;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end == name.data() + name.size() || *end != '_') return -1;
  return id;
}

bool is_yes(const char* v) {
  if (v == nullptr) return false;
  const std::string_view s(v);
  return s == "yes" || s == "true" || s == "1";
}

}  // namespace

std::string Platform::host_name(int64_t node, int64_t local) {
  return "gpu-" + std::to_string(node) + "-" + std::to_string(local);
}

std::string Platform::describe() const {
  if (!plan_) {
    return "platform file " + platform_file_ + ": " + std::to_string(nodes_) + " nodes x " +
           std::to_string(gpus_per_node_) + " GPUs, " + std::to_string(shared_links_.size()) + " shared links";
  }
  return plan_->describe() + "; intra-node " + intra_;
}

std::unique_ptr<Platform> Platform::build(sg4::Engine& engine, const hardware::ClusterSpec& cluster) {
  if (engine.get_netzone_root() != nullptr)
    throw std::logic_error("Platform::build: the engine already holds a platform (one per Engine)");
  if (cluster.platform_file.empty()) return PlatformBuilder::from_cluster(engine, cluster);
  return PlatformBuilder::from_file(engine, cluster);
}

std::unique_ptr<Platform> PlatformBuilder::from_cluster(sg4::Engine& engine, const hardware::ClusterSpec& c) {
  auto p = std::make_unique<Platform>();
  p->plan_ = plan_fabric(c);  // validates every value SimGrid will see
  const FabricPlan& plan = *p->plan_;
  p->nodes_ = c.nodes;
  p->gpus_per_node_ = c.gpus_per_node;
  p->gpus_.assign(static_cast<size_t>(c.gpus()), nullptr);
  p->intra_ = std::string(hardware::to_string(c.intra_fabric)) + " " + util::format_bandwidth(c.intra_bandwidth_Bps);

  std::vector<unsigned int> down;
  for (const auto& level : plan.levels) down.push_back(static_cast<unsigned int>(level.fan_in));
  const std::vector<unsigned int> ones(down.size(), 1);
  const sg4::FatTreeParams params(static_cast<unsigned int>(down.size()), down, ones, ones);

  const double speed = c.gpu.peak_bf16_flops;
  Platform& platform = *p;
  auto leaf = [&platform, &plan, speed](sg4::NetZone* zone, const std::vector<unsigned long>& /*coord*/,
                                        unsigned long id) {
    const auto [node, local] = plan.gpu_at(static_cast<int64_t>(id));
    sg4::Host* host = zone->create_host(Platform::host_name(node, local), speed);
    // The fat-tree finds a leaf by its netpoint id: it must be the element id.
    if (host->get_netpoint()->id() != id)
      throw std::logic_error("Platform::build: host " + host->get_name() + " got netpoint id " +
                             std::to_string(host->get_netpoint()->id()) + ", expected " + std::to_string(id));
    platform.gpus_[static_cast<size_t>(node * plan.gpus_per_node + local)] = host;
    return std::make_pair(host->get_netpoint(), static_cast<simgrid::kernel::routing::NetPoint*>(nullptr));
  };
  // Zone-wide link values are those of the GPUs' own links; upper levels are retuned below.
  sg4::NetZone* zone =
      sg4::create_fatTree_zone("fabric", nullptr, params, sg4::ClusterCallbacks(leaf), plan.levels.front().down_link_Bps,
                               plan.gpu_link_latency_s, sg4::Link::SharingPolicy::SPLITDUPLEX);
  if (c.gpus_per_node > 1)
    for (int64_t n = 0; n < c.nodes; ++n) add_intra_node(zone, *p, c, n);
  zone->seal();
  tune_fabric_links(engine, *p);
  engine.seal_platform();
  return p;
}

void PlatformBuilder::add_intra_node(sg4::NetZone* zone, Platform& p, const hardware::ClusterSpec& c,
                                     int64_t node) {
  const int64_t g = c.gpus_per_node;
  const auto np = [&p, node, g](int64_t local) { return p.gpus_[static_cast<size_t>(node * g + local)]->get_netpoint(); };
  if (c.intra_fabric == hardware::IntraFabric::kNvswitch) {
    std::vector<sg4::Link*> up(static_cast<size_t>(g));
    std::vector<sg4::Link*> down(static_cast<size_t>(g));
    for (int64_t l = 0; l < g; ++l) {
      const std::string name = "nvlink-" + std::to_string(node) + "-" + std::to_string(l);
      up[l] = zone->create_link(name + "_UP", c.intra_bandwidth_Bps)->set_latency(c.intra_latency_s / 2);
      down[l] = zone->create_link(name + "_DOWN", c.intra_bandwidth_Bps)->set_latency(c.intra_latency_s / 2);
    }
    for (int64_t a = 0; a < g; ++a)
      for (int64_t b = 0; b < g; ++b)
        if (a != b)
          zone->add_bypass_route(np(a), np(b), nullptr, nullptr,
                                 {sg4::LinkInRoute(up[a]), sg4::LinkInRoute(down[b])});
  } else {
    sg4::Link* bridge = zone->create_link("pcie-" + std::to_string(node), c.intra_bandwidth_Bps)
                            ->set_latency(c.intra_latency_s)
                            ->set_sharing_policy(sg4::Link::SharingPolicy::SHARED);
    for (int64_t a = 0; a < g; ++a)
      for (int64_t b = 0; b < g; ++b)
        if (a != b) zone->add_bypass_route(np(a), np(b), nullptr, nullptr, {sg4::LinkInRoute(bridge)});
  }
}

void PlatformBuilder::tune_fabric_links(sg4::Engine& engine, Platform& p) {
  const FabricPlan& plan = *p.plan_;
  // Element ids: GPUs 0..N-1; switches from 2N-1 downwards, level by level bottom-up.
  const int64_t n = plan.gpus();
  std::vector<int64_t> first_id;  // lowest id of each switch level
  int64_t next = 2 * n - 1;
  for (const auto& level : plan.levels) {
    next -= level.switches;
    first_id.push_back(next + 1);
  }
  for (sg4::Link* link : engine.get_all_links()) {
    const int64_t child = fat_tree_child_id(link->get_name());
    if (child < n) continue;  // not a fat-tree link, or a GPU's own link (already right)
    size_t child_level = 0;   // switch level of the child, 0-based: levels[child_level + 1] is above it
    while (child_level < first_id.size() && child < first_id[child_level]) ++child_level;
    if (child_level + 1 >= plan.levels.size())
      throw std::logic_error("Platform::build: unexpected fat-tree link " + link->get_name());
    const TreeLevel& above = plan.levels[child_level + 1];
    link->set_bandwidth(above.down_link_Bps);
    link->set_latency(0);
    if (above.role == TreeLevelRole::kAggregation || above.role == TreeLevelRole::kCore)
      p.fabric_links_.push_back(link);
    if (above.shared) p.shared_links_.push_back(link);
  }
}

std::unique_ptr<Platform> PlatformBuilder::from_file(sg4::Engine& engine, const hardware::ClusterSpec& c) {
  const std::string& path = c.platform_file;
  const util::SourceLocation where{path};
  if (c.nodes < 1 || c.gpus_per_node < 1 || c.nodes > kMaxGpus / c.gpus_per_node)
    throw util::InputError(where, "the cluster needs 1 to " + std::to_string(kMaxGpus) + " GPUs, got " +
                                      std::to_string(c.nodes) + " nodes x " + std::to_string(c.gpus_per_node));
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw util::InputError(where, "cannot read the platform file: no such file");
  {
    std::ifstream in(path);
    if (!in) throw util::InputError(where, std::string("cannot read the platform file: ") + std::strerror(errno));
  }
  try {
    engine.load_platform(path);
    // SimGrid computes Floyd/Dijkstra routes when sealing, which run() would do only later: seal
    // now so that maestro can start transfers (and route_to works) before run().
    engine.seal_platform();
  } catch (const std::exception& e) {
    throw util::InputError(where, std::string("SimGrid rejected the platform: ") + e.what());
  }

  auto p = std::make_unique<Platform>();
  p->platform_file_ = path;
  p->nodes_ = c.nodes;
  p->gpus_per_node_ = c.gpus_per_node;
  p->gpus_.reserve(static_cast<size_t>(c.gpus()));
  for (int64_t n = 0; n < c.nodes; ++n) {
    for (int64_t g = 0; g < c.gpus_per_node; ++g) {
      const std::string name = Platform::host_name(n, g);
      sg4::Host* host = engine.host_by_name_or_null(name);
      if (host == nullptr)
        throw util::InputError(where, "host '" + name + "' not found: the engine needs hosts gpu-<node>-<gpu> for " +
                                          std::to_string(c.nodes) + " nodes x " + std::to_string(c.gpus_per_node) +
                                          " GPUs");
      p->gpus_.push_back(host);
    }
  }
  // A SPLITDUPLEX link keeps its properties on the pair (which get_all_links does not list); its
  // traffic runs on the <name>_UP / <name>_DOWN halves, which are listed.
  constexpr std::string_view kUp = "_UP";
  for (sg4::Link* link : engine.get_all_links()) {
    if (is_yes(link->get_property("shared"))) {
      p->shared_links_.push_back(link);
      continue;
    }
    const std::string& name = link->get_name();
    if (name.size() <= kUp.size() || name.compare(name.size() - kUp.size(), kUp.size(), kUp) != 0) continue;
    const sg4::SplitDuplexLink* pair = nullptr;
    try {
      pair = engine.split_duplex_link_by_name(name.substr(0, name.size() - kUp.size()));
    } catch (const std::invalid_argument&) {
      continue;  // a plain link whose name happens to end in _UP
    }
    if (is_yes(pair->get_property("shared"))) {
      p->shared_links_.push_back(pair->get_link_up());
      p->shared_links_.push_back(pair->get_link_down());
    }
  }
  p->fabric_links_ = p->shared_links_;
  return p;
}

std::unique_ptr<sg4::Engine> make_engine(const char* argv0) {
  if (sg4::Engine::has_instance())
    throw std::logic_error("make_engine: a SimGrid Engine already exists in this process (one per process)");
  // Before the Engine parses its configuration, so that its "Configuration change" lines are quiet too.
  xbt_log_control_set("root.thresh:warning");
  static std::vector<std::string> args;
  args = {argv0 == nullptr ? "trainsim" : argv0, std::string("--cfg=network/model:") + kNetworkModel,
          "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0"};
  static std::vector<char*> argv;
  argv.clear();
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return std::make_unique<sg4::Engine>(&argc, argv.data());
}

}  // namespace trainsim::platform
