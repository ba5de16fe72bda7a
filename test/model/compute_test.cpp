#include "model/compute.hpp"

#include <gtest/gtest.h>

#include "hardware/gpu.hpp"

namespace trainsim::model {
namespace {

hardware::ClusterSpec a100_cluster() {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("a100-80gb");
  c.intra_bandwidth_Bps = 300e9;
  c.nic_bandwidth_Bps = 25e9;
  return c;
}

hardware::ClusterSpec h100_cluster() {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.intra_bandwidth_Bps = 450e9;
  c.nic_bandwidth_Bps = 50e9;
  return c;
}

TEST(Gemm, ComputeBoundTimeIsRoofline) {
  const Calibration& c = default_calibration();
  const auto gpu = *hardware::find_gpu("a100-80gb");
  // 8192^3 is compute bound: 2 m n k / (312e12 * e_gemm) + t_kernel.
  const double m = 8192;
  EXPECT_DOUBLE_EQ(gemm_time_s(gpu, Precision::kBf16, m, m, m), 2 * m * m * m / (312e12 * c.gemm_efficiency) + c.gemm_kernel_s);
}

TEST(Gemm, MemoryBoundWhenSkinny) {
  const Calibration& c = default_calibration();
  const auto gpu = *hardware::find_gpu("a100-80gb");
  // m = 1 (a matrix-vector product): bytes (k + k n) * 2 + n * 2 over HBM * e_hbm dominate.
  const double n = 8192, k = 8192;
  const double bytes = (k + k * n) * 2 + n * 2;
  EXPECT_DOUBLE_EQ(gemm_time_s(gpu, Precision::kBf16, 1, n, k), bytes / (2039e9 * c.hbm_efficiency) + c.gemm_kernel_s);
}

TEST(Gemm, EfficiencySaturatesWithSizeAndIsLowerOnTheFasterGpu) {
  const Calibration& c = default_calibration();
  const auto a100 = *hardware::find_gpu("a100-80gb");
  const auto h100 = *hardware::find_gpu("h100-sxm");
  const double small = gemm_efficiency(a100, Precision::kBf16, 512, 512, 512);
  const double large = gemm_efficiency(a100, Precision::kBf16, 16384, 16384, 16384);
  EXPECT_LT(small, 0.5 * large);
  EXPECT_GT(large, 0.99 * c.gemm_efficiency);
  EXPECT_LE(large, c.gemm_efficiency);
  // Same shape, 3x faster GPU: the fixed per-kernel cost weighs more.
  EXPECT_LT(gemm_efficiency(h100, Precision::kBf16, 2048, 2048, 2048), gemm_efficiency(a100, Precision::kBf16, 2048, 2048, 2048));
  // fp8 at the 2x peak with the fp8 factor: large GEMMs reach e_gemm * fp8_gemm_factor of the fp8 peak.
  EXPECT_NEAR(gemm_efficiency(h100, Precision::kFp8, 16384, 16384, 16384), c.gemm_efficiency * c.fp8_gemm_factor, 0.01);
}

TEST(Collectives, IntraNodeBusBandwidthFromNcclMeasurements) {
  const Calibration& c = default_calibration();
  // hardware.yaml nccl_measured: DGX H100 all-reduce busbw 480 GB/s (NVLS) at 8-16 GiB.
  const double s = 8.0 * (1ull << 30);
  const double t = intra_collective_time_s(h100_cluster(), collectives::Kind::kAllReduce, 8, s);
  const double busbw = s * 2 * 7 / 8 / t;
  EXPECT_NEAR(busbw / 1e9, 480, 5);
  // A100 NVLink: achieved 195 of 300 GB/s (sendrecv measurement) for ring collectives.
  EXPECT_DOUBLE_EQ(intra_link(a100_cluster(), collectives::Kind::kAllReduce).bandwidth_Bps, 195e9);
  // In-switch reduction does not help all-gathers.
  EXPECT_DOUBLE_EQ(intra_link(h100_cluster(), collectives::Kind::kAllGather).bandwidth_Bps, 450e9 * c.intra_busbw_factor);
  EXPECT_DOUBLE_EQ(inter_link(h100_cluster()).bandwidth_Bps, 50e9 * c.inter_efficiency);
}

// korthikanti22 Table 4 (published_runs.yaml reference_formulas.korthikanti22.table4_22B_single_layer_ms):
// one layer of the 22B model, b = 4, s = 2048, tp = 8, A100, Megatron-LM 2022 (no flash attention,
// no TP overlap): forward 7.7 ms, backward 11.9 ms; full recompute backward 19.5; selective 13.2.
TEST(LayerTime, Korthikanti22BTable4) {
  ModelSpec m;
  m.layers = 48;
  m.hidden = 6144;
  m.ffn_hidden = 4 * 6144;
  m.heads = 64;
  m.kv_heads = 64;
  m.vocab = 51200;
  m.seq_len = 2048;
  ParallelSpec p;
  p.tp = 8;
  p.micro_batch = 4;
  TrainingSpec t;
  t.flash_attention = false;
  t.tp_comm_overlap = false;
  const LayerTime base = layer_time(m, p, t, a100_cluster());
  EXPECT_NEAR(base.forward_s * 1e3, 7.7, 0.77);
  EXPECT_NEAR(base.backward_s * 1e3, 11.9, 1.19);
  p.recompute = Recompute::kFull;
  const LayerTime full = layer_time(m, p, t, a100_cluster());
  EXPECT_NEAR((full.backward_s + full.recompute_s) * 1e3, 19.5, 1.95);
  p.recompute = Recompute::kSelective;
  const LayerTime sel = layer_time(m, p, t, a100_cluster());
  EXPECT_NEAR((sel.backward_s + sel.recompute_s) * 1e3, 13.2, 1.32);
  // Sequence parallelism splits norms/dropout over TP: the forward gets faster (7.2 ms measured).
  p.recompute = Recompute::kNone;
  p.sequence_parallel = true;
  EXPECT_LT(layer_time(m, p, t, a100_cluster()).forward_s, base.forward_s);
}

TEST(LayerTime, TpOverlapHidesCommunication) {
  ModelSpec m;
  m.layers = 80;
  m.hidden = 8192;
  m.ffn_hidden = 28672;
  m.heads = 64;
  m.kv_heads = 8;
  m.vocab = 32000;
  m.seq_len = 4096;
  m.ffn = Ffn::kSwiglu;
  ParallelSpec p;
  p.tp = 4;
  p.sequence_parallel = true;
  TrainingSpec t;
  t.precision = Precision::kFp8;
  const LayerTime overlapped = layer_time(m, p, t, h100_cluster());
  t.tp_comm_overlap = false;
  const LayerTime exposed = layer_time(m, p, t, h100_cluster());
  EXPECT_GT(exposed.forward_s, overlapped.forward_s);
  EXPECT_DOUBLE_EQ(overlapped.tp_comm_s, 2 * 2 * default_calibration().tp_comm_exposed *
                                             (intra_collective_time_s(h100_cluster(), collectives::Kind::kAllGather, 4, 4096.0 * 8192 * 2) +
                                              intra_collective_time_s(h100_cluster(), collectives::Kind::kReduceScatter, 4, 4096.0 * 8192 * 2)));
}

TEST(Optimizer, AdamIsHbmBound) {
  TrainingSpec t;
  const auto cl = h100_cluster();
  // Adam, bf16 grads: 24 (master, m, v read+write) + 2 (grad) + 2 (bf16 copy) bytes per parameter.
  EXPECT_DOUBLE_EQ(optimizer_time_s(1e9, t, cl), 28e9 / (3350e9 * default_calibration().hbm_efficiency));
  t.fp32_main_grads = true;
  EXPECT_DOUBLE_EQ(optimizer_time_s(1e9, t, cl), 30e9 / (3350e9 * default_calibration().hbm_efficiency));
  t.offload = Offload::kCpu;
  EXPECT_GT(optimizer_time_s(1e9, t, cl), 6e9 / 64e9);  // at least the PCIe transfers
}

}  // namespace
}  // namespace trainsim::model
