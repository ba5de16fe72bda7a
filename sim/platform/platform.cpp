#include "platform/platform.hpp"

#include <signal.h>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <xbt/log.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "platform/tree_zone.hpp"
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
  static void check_routes(const Platform& p, const util::SourceLocation& where);
  // Values SimGrid would take and then abort or deadlock on (issue 21 item 5): a GPU host's speed,
  // a link's bandwidth and latency.
  static void check_values(const sg4::Engine& engine, const Platform& p, const util::SourceLocation& where);
};

namespace {

// Every pair of GPU hosts must be joined by at least one link: SimGrid's Full routing returns an
// empty route for a pair the file forgot, and aborts on the first transfer over it. Up to
// kAllPairsGpus GPUs every ordered pair is checked when the file loads; above, every pair inside a
// node plus each GPU to the same GPU of the next node and of node 0, and the engine checks every
// pair its flows will use before the simulation starts (Platform::require_route).
constexpr int64_t kAllPairsGpus = 256;
// The least a platform file may give (check_values): below these a training step takes longer than
// any run (1 kB/s moves a 1 GB gradient bucket in 12 days), and SimGrid's solver stalls on zero.
constexpr double kMinLinkBps = 1e3;
constexpr double kMinHostSpeed = 1e9;

void check_route(const sg4::Host* a, const sg4::Host* b, const util::SourceLocation& where) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  std::string why;
  try {
    a->route_to(b, links, &latency);
  } catch (const std::exception& e) {
    why = std::string(": ") + e.what();
  }
  if (links.empty())
    throw util::InputError(where, "no route from '" + a->get_name() + "' to '" + b->get_name() + "'" + why +
                                      " (trainsim needs routes between all GPU hosts)");
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool is_yes(const char* v) {
  if (v == nullptr) return false;
  const std::string_view s(v);
  return s == "yes" || s == "true" || s == "1";
}

}  // namespace

void Platform::require_route(const sg4::Host* a, const sg4::Host* b) const {
  if (!platform_file_.empty() && a != b) check_route(a, b, util::SourceLocation{platform_file_});
}

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
  p->nodes_ = c.nodes;
  p->gpus_per_node_ = c.gpus_per_node;
  p->intra_ = std::string(hardware::to_string(c.intra_fabric)) + " " + util::format_bandwidth(c.intra_bandwidth_Bps);
  const TreeZone* zone = TreeZone::create(c, *p->plan_);
  p->gpus_.reserve(static_cast<size_t>(c.gpus()));
  for (int64_t n = 0; n < c.nodes; ++n)
    for (int64_t g = 0; g < c.gpus_per_node; ++g) p->gpus_.push_back(zone->host(n, g));
  p->fabric_links_ = zone->fabric_links();
  p->fabric_cables_ = zone->fabric_cables();
  p->shared_links_ = zone->shared_links();
  engine.seal_platform();
  return p;
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
  check_values(engine, *p, where);
  check_routes(*p, where);

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
  p->fabric_cables_.assign(p->fabric_links_.size(), 1);
  return p;
}

void PlatformBuilder::check_values(const sg4::Engine& engine, const Platform& p, const util::SourceLocation& where) {
  for (const sg4::Host* h : p.gpus_) {
    const double speed = h->get_speed();
    if (!(speed >= kMinHostSpeed && std::isfinite(speed)))
      throw util::InputError(where, "host '" + h->get_name() + "' has speed " + number(speed) +
                                        " flop/s; a GPU host needs a finite speed of at least 1 Gf");
  }
  for (const sg4::Link* l : engine.get_all_links()) {
    const double bw = l->get_bandwidth(), lat = l->get_latency();
    if (!(bw >= kMinLinkBps && std::isfinite(bw)))
      throw util::InputError(where, "link '" + l->get_name() + "' has bandwidth " + number(bw) +
                                        " B/s; links need a finite bandwidth of at least 1 kBps (slower ones never "
                                        "finish a step)");
    if (!(lat >= 0 && std::isfinite(lat)))
      throw util::InputError(where, "link '" + l->get_name() + "' has latency " + number(lat) +
                                        " s; latencies must be finite and not negative");
  }
}

void PlatformBuilder::check_routes(const Platform& p, const util::SourceLocation& where) {
  const int64_t nodes = p.nodes_;
  const int64_t gpn = p.gpus_per_node_;
  if (nodes * gpn <= kAllPairsGpus) {
    for (const sg4::Host* a : p.gpus_)
      for (const sg4::Host* b : p.gpus_)
        if (a != b) check_route(a, b, where);
    return;
  }
  for (int64_t n = 0; n < nodes; ++n)
    for (int64_t g = 0; g < gpn; ++g) {
      for (int64_t h = 0; h < gpn; ++h)
        if (h != g) check_route(p.gpu(n, g), p.gpu(n, h), where);
      if (nodes > 1) check_route(p.gpu(n, g), p.gpu((n + 1) % nodes, g), where);
      if (n != 0) check_route(p.gpu(n, g), p.gpu(0, g), where);
    }
}

std::unique_ptr<sg4::Engine> make_engine(const char* argv0, const std::vector<std::string>& extra_args) {
  if (sg4::Engine::has_instance())
    throw std::logic_error("make_engine: a SimGrid Engine already exists in this process (one per process)");
  // Before the Engine parses its configuration, so that its "Configuration change" lines are quiet too.
  xbt_log_control_set("root.thresh:warning");
  static std::vector<std::string> args;
  args = {argv0 == nullptr ? "trainsim" : argv0, std::string("--cfg=network/model:") + kNetworkModel,
          "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0", "--cfg=cpu/optim:TI"};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  static std::vector<char*> argv;
  argv.clear();
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  // SimGrid's Engine takes SIGINT for itself (print every actor's status, then exit(1)); the
  // process's own disposition wins, so `trainsim run` can stop at a step boundary on Ctrl-C.
  struct sigaction saved {};
  const bool have_saved = ::sigaction(SIGINT, nullptr, &saved) == 0;
  auto engine = std::make_unique<sg4::Engine>(&argc, argv.data());
  if (have_saved) ::sigaction(SIGINT, &saved, nullptr);
  return engine;
}

}  // namespace trainsim::platform
