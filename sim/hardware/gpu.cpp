#include "hardware/gpu.hpp"

#include <array>

namespace trainsim::hardware {
namespace {

constexpr double kT = 1e12;  // TFLOP/s
constexpr double kGB = 1e9;

// Sources: ../shared/reference/hardware.yaml, entry gpus.<id> named on each row.
// NVLink "per GPU" figures there are bidirectional totals; we store per direction (half).
const std::array<GpuSpec, 10> kCatalog = {{
    // gpus.A100-SXM4-40GB: 312 TF dense bf16/fp16, TF32 156, 40 GB, 1555 GB/s, NVLink3 600 GB/s total.
    {"a100-40gb", 40 * kGB, 1555 * kGB, 156 * kT, 312 * kT, 312 * kT, 0, 300 * kGB, 32 * kGB, "a100-40gb"},
    // gpus.A100-SXM4-80GB: 312 TF, 80 GB, 2039 GB/s, 600 GB/s NVLink total.
    {"a100-80gb", 80 * kGB, 2039 * kGB, 156 * kT, 312 * kT, 312 * kT, 0, 300 * kGB, 32 * kGB, "a100-80gb"},
    // A800 SXM4 80GB: the A100 SXM4 80GB with NVLink cut to 400 GB/s both ways (200 a direction),
    // its listed performance the A100 series' own, up to 80 GB HBM2e, 400 W SXM (Reuters' report of
    // NVIDIA's November 2022 statement, read in tweakers.net/nieuws/203182; unverified against the
    // datasheet). The A100 SXM4 80GB's kernel tables and driver capacity apply.
    {"a800", 80 * kGB, 2039 * kGB, 156 * kT, 312 * kT, 312 * kT, 0, 200 * kGB, 32 * kGB, "a100-80gb"},
    // gpus.H100-SXM5-80GB: 989.4 TF bf16, 1978.9 fp8, TF32 494.7, 80 GB, 3350 GB/s, 900 GB/s NVLink total, Gen5 64+64.
    {"h100-sxm", 80 * kGB, 3350 * kGB, 494.7 * kT, 989.4 * kT, 989.4 * kT, 1978.9 * kT, 450 * kGB, 64 * kGB, "h100-sxm"},
    // H800 SXM: the H100 SXM die, memory and PCIe with NVLink cut to 400 GB/s both ways (200 a
    // direction): NVIDIA's H800 figures, read in secondary copies of its datasheet (unverified
    // here); DeepSeek-V3's report (arXiv 2412.19437, Sec. 3.2.2) measures "NVLink ... 160 GB/s,
    // roughly 3.2 times that of IB (50 GB/s)". The H100 SXM's kernel tables and driver capacity apply.
    {"h800", 80 * kGB, 3350 * kGB, 494.7 * kT, 989.4 * kT, 989.4 * kT, 1978.9 * kT, 200 * kGB, 64 * kGB, "h100-sxm"},
    // H100 PCIe (NVIDIA datasheet figures; not in hardware.yaml: unverified here): 756 TF bf16,
    // 1513 fp8, 80 GB HBM2e 2000 GB/s, PCIe Gen5 only (NVLink bridge pairs ignored).
    {"h100-pcie", 80 * kGB, 2000 * kGB, 378 * kT, 756 * kT, 756 * kT, 1513 * kT, 0, 64 * kGB, "h100-pcie"},
    // gpus.H200-SXM-141GB: same die as H100 SXM, 141 GB HBM3e, 4800 GB/s.
    {"h200", 141 * kGB, 4800 * kGB, 494.7 * kT, 989.4 * kT, 989.4 * kT, 1978.9 * kT, 450 * kGB, 64 * kGB, "h200"},
    // gpus."B200-HGX (1000 W)": 2250 TF bf16, 4500 fp8, TF32 1100, 180 GB usable, 8000 GB/s, NVLink5 1.8 TB/s total.
    // Host link Gen5 x16, 64 GB/s a direction, not the die's Gen6 (hardware.yaml "pcie: Gen6"): the
    // link trains at the slower end, and the hosts B200 boards ship in are Gen5. NVIDIA's DGX B200
    // User Guide lists "2 x Intel Xeon 8570 PCIe Gen5 CPUs"; NVIDIA DCGM's diagnostic SKU table
    // (nvvs/diag-skus.yaml.in @72fa3fe, "HGX B200 168GB", id 2909) checks its host copies at
    // min_pci_generation 5.0, width 16; ml-engineering's network/README.md (@744d01e) notes no
    // shipping accelerator attaches at Gen6. Until 2026-12-07: 128 GB/s.
    {"b200", 180 * kGB, 8000 * kGB, 1100 * kT, 2250 * kT, 2250 * kT, 4500 * kT, 900 * kGB, 64 * kGB, "b200"},
    // gpus."B200-in-GB200 (1200 W)": 2500 TF bf16, 5000 fp8, TF32 1250 (dense); HBM3e 8000 GB/s and
    // NVLink5 1.8 TB/s total as B200-HGX; capacity 186 GB = NVIDIA's GB200 NVL72 rack figure (about
    // 13.4 TB of HBM3e over 72 GPUs, via aiwiki.ai/wiki/nvidia_gb200_nvl72; unverified against the
    // datasheet). The same Blackwell die as b200: its measured kernel tables apply (catalog "b200").
    // Its host link is NVLink-C2C to the Grace CPU: host copies run at the rate measured on it
    // (cost_tables.yaml host.link_copy_GBps), not at this x16 figure.
    {"gb200", 186 * kGB, 8000 * kGB, 1250 * kT, 2500 * kT, 2500 * kT, 5000 * kT, 900 * kGB, 128 * kGB, "b200"},
    // gpus.MI300X: 192 GB HBM3 (hardware.yaml); peak FLOPs from AMD's datasheet (not collected in
    // hardware.yaml: unverified here): 1307.4 TF bf16 dense, 2614.9 fp8, 163.4 fp32, 5300 GB/s,
    // Infinity Fabric 896 GB/s aggregate (448 per direction), PCIe Gen5.
    {"mi300x", 192 * kGB, 5300 * kGB, 163.4 * kT, 1307.4 * kT, 1307.4 * kT, 2614.9 * kT, 448 * kGB, 64 * kGB, "mi300x"},
}};

}  // namespace

double GpuSpec::peak_flops(model::Precision p) const {
  switch (p) {
    case model::Precision::kFp32: return peak_fp32_flops;
    case model::Precision::kFp16: return peak_fp16_flops;
    case model::Precision::kBf16: return peak_bf16_flops;
    case model::Precision::kFp8: return peak_fp8_flops;
  }
  return 0;
}

std::optional<GpuSpec> find_gpu(std::string_view key) {
  for (const auto& g : kCatalog)
    if (g.name == key) return g;
  return std::nullopt;
}

std::vector<std::string> gpu_keys() {
  std::vector<std::string> keys;
  for (const auto& g : kCatalog) keys.push_back(g.name);
  return keys;
}

}  // namespace trainsim::hardware
