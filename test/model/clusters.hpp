// Clusters the model tests share, each as its datasheet describes it.
#pragma once

#include <cstdint>

#include "hardware/cluster.hpp"
#include "hardware/gpu.hpp"

namespace trainsim::model::testing {

// DGX H100: 8 GPUs on NVSwitch (450 GB/s per direction per GPU), 8 x 400 Gb/s NICs (50 GB/s a GPU).
inline hardware::ClusterSpec dgx_h100(int64_t nodes) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  c.gpus_per_node = 8;
  c.intra_bandwidth_Bps = 450e9;
  c.nic_bandwidth_Bps = 50e9;
  c.nics_per_node = 8;
  return c;
}

}  // namespace trainsim::model::testing
