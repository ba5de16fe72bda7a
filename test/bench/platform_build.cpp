// bench_platform_build GPUS [TOPOLOGY]: builds one DGX H100-like platform of GPUS GPUs (8 per
// node, NVSwitch, 8 x 400 Gbps NICs; TOPOLOGY fat-tree | rail-optimized | shared, default
// fat-tree), or with TOPOLOGY nvl72 a GB200 NVL72 cluster (72-GPU NVLink domains at 900 GB/s per
// GPU, as cluster.nvlink_domain: 72 folds them; a 400 Gbps NIC per GPU, rail-optimised), in a
// fresh process, checks one inter-node transfer, and prints one line:
//   gpus=16384 nodes=2048 topology=fat-tree build_s=2.91 max_rss_mb=140.2 hosts=16384 links=...
// build_s is the wall time of make_engine + Platform::build; max_rss_mb is getrusage's ru_maxrss
// for the whole process (peak), after the build. tools/bench_platform.sh runs the sizes.
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "hardware/gpu.hpp"
#include "platform/platform.hpp"

namespace {

trainsim::hardware::Topology parse_topology(const std::string& s) {
  if (s == "fat-tree") return trainsim::hardware::Topology::kFatTree;
  if (s == "rail-optimized") return trainsim::hardware::Topology::kRailOptimized;
  if (s == "shared") return trainsim::hardware::Topology::kShared;
  std::fprintf(stderr, "bench_platform_build: unknown topology '%s'\n", s.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s GPUS [fat-tree|rail-optimized|shared]\n", argv[0]);
    return 2;
  }
  const long gpus = std::strtol(argv[1], nullptr, 10);
  const std::string topology = argc > 2 ? argv[2] : "fat-tree";
  const bool nvl72 = topology == "nvl72";
  const long per_node = nvl72 ? 72 : 8;
  if (gpus < per_node || gpus % per_node != 0) {
    std::fprintf(stderr, "bench_platform_build: GPUS must be a positive multiple of %ld, got '%s'\n", per_node, argv[1]);
    return 2;
  }

  trainsim::hardware::ClusterSpec c;
  c.gpu = *trainsim::hardware::find_gpu(nvl72 ? "gb200" : "h100-sxm");
  c.nodes = gpus / per_node;
  c.gpus_per_node = per_node;
  c.intra_bandwidth_Bps = nvl72 ? 900e9 : 450e9;
  c.intra_latency_s = 1e-6;
  c.topology = nvl72 ? trainsim::hardware::Topology::kRailOptimized : parse_topology(topology);
  c.nic_bandwidth_Bps = 50e9;
  c.nics_per_node = per_node;
  c.inter_latency_s = 5e-6;
  if (nvl72) {
    c.nvlink_domain = 72;
    c.servers_per_domain = 18;
  }

  const auto t0 = std::chrono::steady_clock::now();
  auto engine = trainsim::platform::make_engine(argv[0]);
  auto platform = trainsim::platform::Platform::build(*engine, c);
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux

  // One transfer first node -> last node (the longest path) to check the platform works.
  const double bytes = 1e9;
  auto comm = simgrid::s4u::Comm::sendto_async(platform->gpu(0, 0), platform->gpu(c.nodes - 1, per_node - 1),
                                               static_cast<uint64_t>(bytes));
  engine->run();
  const double expected = c.inter_latency_s + bytes / c.nic_bandwidth_Bps;
  const double got = comm->get_finish_time();
  if (c.nodes > 1 && std::abs(got - expected) > 1e-3 * expected) {
    std::fprintf(stderr, "bench_platform_build: transfer took %.9f s, expected %.9f s\n", got, expected);
    return 1;
  }

  std::printf("gpus=%ld nodes=%ld topology=%s build_s=%.6f max_rss_mb=%.1f hosts=%zu links=%zu levels=%ld\n", gpus,
              static_cast<long>(c.nodes), topology.c_str(), build_s, rss_mb, engine->get_host_count(),
              engine->get_link_count(), static_cast<long>(platform->plan()->switch_levels()));
  return 0;
}
