// Helpers for the platform tests: run transfers from maestro, run a measurement in a child process
// (one SimGrid Engine per process, so comparing two platforms needs a second process).
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hardware/cluster.hpp"
#include "hardware/gpu.hpp"

namespace trainsim::platform::testing {

struct Transfer {
  simgrid::s4u::Host* from;
  simgrid::s4u::Host* to;
  double bytes;
};

// A path inside the source tree (platforms/..., scenarios/...).
inline std::string source_path(const std::string& rel) { return std::string(TRAINSIM_SOURCE_DIR) + "/" + rel; }

// Starts every transfer at time 0 from maestro, runs the engine, returns each finish time (s).
inline std::vector<double> run_transfers(simgrid::s4u::Engine& engine, const std::vector<Transfer>& transfers) {
  std::vector<simgrid::s4u::CommPtr> comms;
  for (const auto& t : transfers) {
    if (t.bytes <= 0) throw std::invalid_argument("run_transfers: a 0-byte sendto never completes");
    comms.push_back(simgrid::s4u::Comm::sendto_async(t.from, t.to, static_cast<uint64_t>(t.bytes)));
  }
  engine.run();
  std::vector<double> finish;
  for (const auto& c : comms) {
    if (c->get_state() != simgrid::s4u::Activity::State::FINISHED)
      throw std::runtime_error("run_transfers: a transfer did not finish");
    finish.push_back(c->get_finish_time());
  }
  return finish;
}

// Runs `measure` in a forked child (which may create its own Engine) and returns its result.
// REQUIRES: called before this process creates an Engine (fork copies SimGrid's globals).
inline std::vector<double> in_child_process(const std::function<std::vector<double>()>& measure) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    int status = 0;
    try {
      const std::vector<double> r = measure();
      const uint64_t n = r.size();
      if (write(fds[1], &n, sizeof n) != static_cast<ssize_t>(sizeof n)) status = 3;
      if (n > 0 && write(fds[1], r.data(), n * sizeof(double)) != static_cast<ssize_t>(n * sizeof(double)))
        status = 3;
    } catch (...) {
      status = 2;
    }
    close(fds[1]);
    _exit(status);
  }
  close(fds[1]);
  uint64_t n = 0;
  std::vector<double> r;
  if (read(fds[0], &n, sizeof n) == static_cast<ssize_t>(sizeof n)) {
    r.resize(n);
    size_t got = 0;
    auto* bytes = reinterpret_cast<char*>(r.data());
    while (got < n * sizeof(double)) {
      const ssize_t k = read(fds[0], bytes + got, n * sizeof(double) - got);
      if (k <= 0) break;
      got += static_cast<size_t>(k);
    }
    if (got != n * sizeof(double)) r.clear();
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || r.size() != n)
    throw std::runtime_error("in_child_process: the child failed");
  return r;
}

// A DGX H100-like cluster: h100-sxm, 8 GPUs per node on NVSwitch (450 GB/s per direction, 1 us),
// 8 x 400 Gbps NICs, 5 us between nodes (hardware.yaml: gpus.H100-SXM5-80GB, NVSwitch.gen3_DGX_H100,
// InfiniBand_per_port.NDR, typical_node_injection "DGX H100 / Eos").
inline hardware::ClusterSpec dgx_h100_cluster(int64_t nodes) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.intra_fabric = hardware::IntraFabric::kNvswitch;
  c.intra_bandwidth_Bps = 450e9;
  c.intra_latency_s = 1e-6;
  c.topology = hardware::Topology::kFatTree;
  c.nic_bandwidth_Bps = 400e9 / 8;
  c.nics_per_node = 8;
  c.inter_latency_s = 5e-6;
  c.oversubscription = 1.0;
  return c;
}

}  // namespace trainsim::platform::testing
