// GPU catalog: dense peak FLOP/s per precision, HBM, intra-node links. Figures and their sources
// are in ../shared/reference/hardware.yaml (entry ids cited beside each catalog row in gpu.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/spec.hpp"

namespace trainsim::hardware {

struct GpuSpec {
  std::string name;               // catalog key, or "inline"
  double hbm_bytes = 0;           // capacity
  double hbm_bandwidth_Bps = 0;
  double peak_fp32_flops = 0;     // dense; TF32 tensor-core rate where the GPU has one
  double peak_fp16_flops = 0;     // dense fp16 = bf16 on every GPU here
  double peak_bf16_flops = 0;
  double peak_fp8_flops = 0;      // 0 = not supported
  double nvlink_bandwidth_Bps = 0;  // per GPU, per direction; 0 = no NVLink
  double pcie_bandwidth_Bps = 0;    // x16 link, per direction
  // Catalog key whose measured data (kernel tables, driver capacity, runtime reserve) apply: the
  // entry itself, or the 'base' of an inline GPU (an H100 at another clock keeps H100 kernel
  // efficiencies); "" = none (nearest catalog GPU by peak).
  std::string catalog;

  // Dense peak for the precision. fp8 on a GPU without fp8 returns 0 (config rejects it).
  double peak_flops(model::Precision p) const;
};

// Catalog lookup by key (a100-40gb, a100-80gb, a800, h100-sxm, h800, h100-pcie, h200, b200, gb200, mi300x).
std::optional<GpuSpec> find_gpu(std::string_view key);
std::vector<std::string> gpu_keys();

}  // namespace trainsim::hardware
