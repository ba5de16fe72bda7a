#include "model/memory_data.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "model/cost_data.hpp"

namespace trainsim::model {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::map<std::string, double> mib_map(const YAML::Node& node, const char* field) {
  std::map<std::string, double> out;
  for (auto it = node.begin(); it != node.end(); ++it) {
    const YAML::Node v = it->second;
    if (v.IsMap() && v[field]) out[it->first.as<std::string>()] = v[field].as<double>() * kMiB;
  }
  return out;
}

MemoryData load() {
  const YAML::Node root = YAML::Load(memory_yaml());
  MemoryData d;
  d.driver_bytes = mib_map(root["capacity"], "driver_mib");
  for (auto it = root["capacity"].begin(); it != root["capacity"].end(); ++it)
    d.datasheet_bytes[it->first.as<std::string>()] = it->second["datasheet_gb"].as<double>() * 1e9;
  const YAML::Node rt = root["runtime"];
  d.context_bytes = mib_map(rt["cuda_context"], "mib");
  d.workspace_bytes = mib_map(rt["workspaces"], "mib");
  const YAML::Node nccl = rt["nccl"];
  d.nccl_connection_bytes = nccl["simple_buffer_bytes"].as<double>() + nccl["ll_buffer_bytes"].as<double>() +
                            nccl["ll128_buffer_bytes"].as<double>();
  d.nccl_connections_per_channel = nccl["connections_per_channel"]["value"].as<double>();
  d.nccl_channels_nvlink = nccl["channels"]["nvlink"].as<double>();
  d.nccl_channels_pcie = nccl["channels"]["pcie"].as<double>();
  d.nccl_channels_net = nccl["channels"]["net"].as<double>();
  d.nccl_p2p_channels = nccl["channels"]["p2p_per_peer"].as<double>();
  d.fragmentation = rt["allocator_fragmentation"]["fraction"].as<double>();
  return d;
}

double by_gpu(const std::map<std::string, double>& m, const std::string& key) {
  auto it = m.find(key);
  if (it == m.end()) it = m.find("default");
  return it == m.end() ? 0 : it->second;
}

}  // namespace

const MemoryData& memory_data() {
  static const MemoryData data = load();
  return data;
}

double usable_capacity_bytes(const hardware::GpuSpec& gpu) {
  const MemoryData& d = memory_data();
  const std::string& key = gpu.catalog.empty() ? gpu.name : gpu.catalog;
  const auto driver = d.driver_bytes.find(key);
  const auto sheet = d.datasheet_bytes.find(key);
  // A catalog GPU whose capacity the scenario did not change: what its driver reports.
  if (driver != d.driver_bytes.end() && sheet != d.datasheet_bytes.end() && gpu.hbm_bytes == sheet->second)
    return driver->second;
  return gpu.hbm_bytes;
}

RuntimeReserve runtime_reserve(const ParallelSpec& par, const TrainingSpec& train, const ModelSpec& model,
                               const hardware::ClusterSpec& cluster, double allocated_bytes) {
  RuntimeReserve r;
  if (train.runtime_reserve_bytes >= 0) {
    r.fixed = train.runtime_reserve_bytes;
    return r;
  }
  const MemoryData& d = memory_data();
  const std::string& key = cluster.gpu.catalog.empty() ? cluster.gpu.name : cluster.gpu.catalog;
  r.cuda_context = by_gpu(d.context_bytes, key);
  r.workspaces = by_gpu(d.workspace_bytes, key);

  // Ranks are laid out tp fastest, then cp, dp, pp (Megatron): a group whose ranks span more than
  // a node talks over the network.
  const int64_t gpn = std::max<int64_t>(cluster.gpus_per_node, 1);
  auto channels = [&](int64_t span) {
    if (span > gpn) return d.nccl_channels_net;
    return cluster.intra_fabric == hardware::IntraFabric::kPcie ? d.nccl_channels_pcie : d.nccl_channels_nvlink;
  };
  auto collective = [&](int64_t size, int64_t span) {
    if (size <= 1) return;
    ++r.communicators;
    r.nccl += channels(span) * d.nccl_connections_per_channel * d.nccl_connection_bytes;
  };
  const int64_t tp = par.tp, cp = par.cp, dp = par.dp, pp = par.pp;
  collective(tp, tp);
  collective(cp, tp * cp);
  collective(dp, tp * cp * dp);
  if (cp > 1) collective(dp * cp, tp * cp * dp);  // the distributed optimizer's DP x CP group
  collective(tp * pp, tp * cp * dp * pp);         // model-parallel: gradient-norm all-reduce
  if (pp > 1 && model.tied_embeddings) collective(2, tp * cp * dp * pp);
  collective(par.gpus(), par.gpus());             // default (world) group
  if (pp > 1) {
    // Pipeline send/receive: its own communicator, connections to the previous and next stage.
    ++r.communicators;
    r.nccl += 2 * d.nccl_p2p_channels * d.nccl_connection_bytes;
  }
  r.fragmentation = d.fragmentation * allocated_bytes;
  return r;
}

}  // namespace trainsim::model
