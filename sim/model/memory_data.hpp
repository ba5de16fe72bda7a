// What a training process holds on each GPU besides the model and its activations, and how much
// memory the GPU really offers, from component measurements (sim/hardware/data/memory.yaml,
// compiled in; each figure cites its source there). Pure: no SimGrid, no logging.
#pragma once

#include <map>
#include <string>

#include "hardware/cluster.hpp"
#include "model/spec.hpp"

namespace trainsim::model {

struct MemoryData {
  std::map<std::string, double> driver_bytes;   // catalog key -> total as the driver reports it
  std::map<std::string, double> datasheet_bytes;
  std::map<std::string, double> context_bytes;  // catalog key -> CUDA/HIP context; "default" too
  std::map<std::string, double> workspace_bytes;  // catalog key -> cuBLAS(Lt) + TE workspaces; "default"
  // NCCL: bytes of one connection's buffers (SIMPLE + LL + LL128 protocols), and channels per
  // communicator by the fabric its ranks talk over.
  double nccl_connection_bytes = 0;
  double nccl_connections_per_channel = 0;  // ring send/recv + tree up/down, receive side
  double nccl_channels_nvlink = 0, nccl_channels_pcie = 0, nccl_channels_net = 0;
  double nccl_p2p_channels = 0;             // pipeline send/recv per peer
  double fragmentation = 0;                 // caching allocator: reserved - allocated, / allocated
};
const MemoryData& memory_data();

// What the GPU offers a process: the driver-reported total for a catalog GPU as the catalog gives
// it, else `hbm_bytes` (an inline GPU states what it has).
double usable_capacity_bytes(const hardware::GpuSpec& gpu);

// The runtime reserve from its parts (JSON memory.breakdown.other_*).
struct RuntimeReserve {
  double cuda_context = 0;   // driver context, kernels' modules
  double workspaces = 0;     // cuBLAS/cuBLASLt and Transformer Engine workspaces
  double nccl = 0;           // NCCL buffers of every communicator the layout creates
  int communicators = 0;     // how many
  double fragmentation = 0;  // caching allocator: cached but unusable
  double fixed = -1;         // >= 0: training.runtime_reserve given as one lump (parts are 0)
  double total() const { return fixed >= 0 ? fixed : cuda_context + workspaces + nccl + fragmentation; }
};

// The NCCL communicators a Megatron-style layout opens on one GPU (those that run a collective
// or a send/receive in training) and their buffers: TP, CP, DP (and DP x CP for the distributed
// optimizer when cp > 1), PP (two neighbours), the model-parallel group of the gradient-norm
// all-reduce, the tied-embedding group, and the default (world) group.
RuntimeReserve runtime_reserve(const ParallelSpec& par, const TrainingSpec& train, const ModelSpec& model,
                               const hardware::ClusterSpec& cluster, double allocated_bytes);

}  // namespace trainsim::model
