#include "model/compute.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "collectives/collectives.hpp"
#include "hardware/gpu.hpp"
#include "model/cost_data.hpp"
#include "model/presets.hpp"

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

// kernels.yaml gpus.h100-sxm.gemm.bf16_grid_xla (XLA GPU cost-model table): 4096^3 measured at
// 783.3 TFLOP/s (v2 row). A measured shape is reproduced exactly, times the sustained factor.
TEST(Gemm, AMeasuredShapeGivesItsMeasuredThroughput) {
  const Calibration& c = default_calibration();
  const auto h100 = *hardware::find_gpu("h100-sxm");
  EXPECT_NEAR(gemm_efficiency(h100, Precision::kBf16, 4096, 4096, 4096), 783.3 / 989.4 * c.sustained_compute, 1e-9);
  // 1024 x 1024 x 1024: 246.7 TFLOP/s (v1 row): a small GEMM is a quarter as efficient.
  EXPECT_NEAR(gemm_efficiency(h100, Precision::kBf16, 1024, 1024, 1024), 246.7 / 989.4 * c.sustained_compute, 1e-9);
}

// Past the grid (largest measured dimension 4096) the efficiency approaches the measured plateau
// (ml-engineering MAMF table: H100 SXM bf16 794.5 TF = 0.803) by half the gap per doubling.
TEST(Gemm, LargeShapesApproachTheMeasuredPlateau) {
  const Calibration& c = default_calibration();
  const auto h100 = *hardware::find_gpu("h100-sxm");
  const double edge = 783.3 / 989.4, plateau = 0.803;
  // 8192 x 4096 x 4096: one doubling past the (4096, 4096, 4096) edge.
  EXPECT_NEAR(gemm_efficiency(h100, Precision::kBf16, 8192, 4096, 4096), (plateau - (plateau - edge) / 2) * c.sustained_compute,
              1e-9);
  EXPECT_NEAR(gemm_efficiency(h100, Precision::kBf16, 65536, 65536, 65536) / c.sustained_compute, plateau, 1e-3);
}

// A100 has only its plateau (0.869, MAMF table); its shape dependence is borrowed from the H100
// grid relative to H100's plateau: 4096^3 = 0.869 * (783.3 / 989.4) / 0.803.
TEST(Gemm, AGpuWithoutAGridBorrowsTheShapeDependence) {
  const Calibration& c = default_calibration();
  const auto a100 = *hardware::find_gpu("a100-80gb");
  EXPECT_NEAR(gemm_efficiency(a100, Precision::kBf16, 4096, 4096, 4096), 0.869 * (783.3 / 989.4) / 0.803 * c.sustained_compute,
              1e-9);
  // The generations differ: A100 sustains a larger fraction of its peak than H100 on big GEMMs.
  EXPECT_GT(gemm_efficiency(a100, Precision::kBf16, 16384, 16384, 16384),
            gemm_efficiency(*hardware::find_gpu("h100-sxm"), Precision::kBf16, 16384, 16384, 16384) + 0.05);
}

// The borrowed shape dependence against A100's own measurements (kernels.yaml
// a100.gemm.cross_check_squares: torch.matmul fp16 on M = N = K, triton-lang/triton #3551; fp16 and
// bf16 share A100's 312 TFLOP/s). From 1536 up, the sizes a training step's GEMMs reach, the
// borrowed curve gives each measured point within -11..+17% and their mean within 3%.
TEST(Gemm, TheBorrowedA100ShapesAgreeWithA100sOwnSquares) {
  Calibration isolated = default_calibration();
  isolated.sustained_compute = 1;  // the isolated kernel, as measured
  const auto a100 = *hardware::find_gpu("a100-80gb");
  const double measured_tflops[] = {176.95, 179.98, 172.91, 209.45, 233.02, 221.14, 246.27,
                                    219.49, 244.54, 213.11, 230.76, 247.94, 229.24, 244.27};
  double sum = 0;
  int n = 0;
  for (const double measured : measured_tflops) {
    const double s = 1536 + 128 * n++;
    const double ratio = gemm_efficiency(a100, Precision::kFp16, s, s, s, isolated) * 312 / measured;
    EXPECT_NEAR(ratio, 1.0, 0.20) << s;
    sum += ratio;
  }
  EXPECT_NEAR(sum / n, 1.0, 0.05);
}

// The same borrowed curve against an A100 sweep of a transformer layer's four GEMMs at 8192 tokens
// (kernels.yaml a100.gemm.cross_check_transformer: EleutherAI's log, h = 1024..25600, fp16). The
// log prints each shape's slowest of 200 synced calls, a low-side figure: trainsim's isolated
// kernel (sustained factor 1) runs 8.4% above it at the median shape (mean 12%: the short kernels
// at h <= 2048, where a sync weighs most, and three isolated dips), the middle 80% of shapes 5% to
// 23% above. The bounds say "above, by about what a slowest-of-200 figure leaves out".
TEST(Gemm, TheBorrowedA100ShapesAgreeWithATransformerSweep) {
  Calibration isolated = default_calibration();
  isolated.sustained_compute = 1;
  const auto a100 = *hardware::find_gpu("a100-80gb");
  const YAML::Node sweep = YAML::Load(kernels_yaml())["gpus"]["a100"]["gemm"]["cross_check_transformer"];
  const double m = sweep["m"].as<double>();
  std::vector<double> ratios;
  for (const auto& row : sweep["points"]) {
    const double h = row[0].as<double>();
    const double shapes[4][2] = {{3 * h, h}, {h, h}, {4 * h, h}, {h, 4 * h}};  // (n, k): qkv, out, up, down
    for (int i = 0; i < 4; ++i)
      ratios.push_back(gemm_efficiency(a100, Precision::kFp16, m, shapes[i][0], shapes[i][1], isolated) * 312 /
                       row[i + 1].as<double>());
  }
  ASSERT_EQ(ratios.size(), 100u);
  std::sort(ratios.begin(), ratios.end());
  EXPECT_NEAR(ratios[50], 1.084, 0.01);  // the median
  EXPECT_GT(ratios[10], 1.0);            // the 10th percentile: above the slowest-of-200 figure
  EXPECT_LT(ratios[90], 1.25);           // the 90th
}

// A GEMM is no faster than its least traffic through HBM. Megatron's unfused QK^T for 6 sequences
// x 24 heads of 1024 tokens, head dim 96, on A100 (the Zero Bubble 1.5B layer): (147456 x 96 + 96
// x 1024 + 147456 x 1024) x 2 B = 330.5 MB at 2039 GB/s x 0.86 (the measured stream fraction) =
// 188.5 us, where its 29.0 GFLOP at the curve (0.85 of peak x the sustained factor) would take
// ~136 us. A large GEMM stays on its curve (AGpuWithoutAGridBorrowsTheShapeDependence).
TEST(Gemm, NoFasterThanItsHbmTraffic) {
  const auto a100 = *hardware::find_gpu("a100-80gb");
  const double traffic = (147456.0 * 96 + 96.0 * 1024 + 147456.0 * 1024) * 2;
  EXPECT_NEAR(traffic, 330.5e6, 0.1e6);
  EXPECT_NEAR(gemm_time_s(a100, Precision::kFp16, 147456, 1024, 96), traffic / (2039e9 * 0.86), 1e-9);
  EXPECT_GT(gemm_time_s(a100, Precision::kFp16, 147456, 1024, 96),
            1.3 * 2 * 147456.0 * 1024 * 96 / (312e12 * 0.85 * default_calibration().sustained_compute));
}

TEST(Gemm, Fp8RunsAtItsOwnMeasuredPlateau) {
  const Calibration& c = default_calibration();
  const auto h100 = *hardware::find_gpu("h100-sxm");
  // MAMF fp8 H100 SXM: 1402.6 of 1978.9 TF = 0.709 for the largest shapes.
  EXPECT_NEAR(gemm_efficiency(h100, Precision::kFp8, 65536, 65536, 65536) / c.sustained_compute, 0.709, 2e-3);
}

TEST(Gemm, H100PcieRunsAtItsOwnMeasuredPlateau) {
  // kernels.yaml h100-pcie: torch.mm 495.93 of 756 TF = 0.656 (the SXM part: 0.803 of 989), the SXM
  // grid's shape dependence scaled to it: at every shape the PCIe card's fraction of its peak is
  // 0.656 / 0.803 of the SXM's. fp8: the SXM's 0.709 times the same ratio (0.579).
  const auto pcie = *hardware::find_gpu("h100-pcie");
  const auto sxm = *hardware::find_gpu("h100-sxm");
  for (double n : {1024.0, 4096.0, 16384.0})
    EXPECT_NEAR(gemm_efficiency(pcie, Precision::kBf16, n, n, n) / gemm_efficiency(sxm, Precision::kBf16, n, n, n),
                0.656 / 0.803, 1e-9)
        << n;
  EXPECT_NEAR(gemm_efficiency(pcie, Precision::kBf16, 65536, 65536, 65536) / default_calibration().sustained_compute,
              0.656, 2e-3);
  EXPECT_NEAR(gemm_efficiency(pcie, Precision::kFp8, 65536, 65536, 65536) / default_calibration().sustained_compute,
              0.579, 2e-3);
  // Its attention: the Hopper curves times 0.817 (cost_tables.yaml attention_scale).
  const GpuCostData& p = gpu_cost_data(pcie);
  const GpuCostData& x = gpu_cost_data(sxm);
  EXPECT_NEAR(p.attention_kernel("cudnn").fwd.at(8192) / x.attention_kernel("cudnn").fwd.at(8192), 0.817, 1e-12);
  EXPECT_NEAR(p.attention_kernel("fa2").bwd.at(4096) / x.attention_kernel("fa2").bwd.at(4096), 0.817, 1e-12);
}

TEST(Collectives, IntraNodeTimesFollowTheMeasuredBusBandwidth) {
  // collectives.yaml 8x H200 NVLS all-reduce: 482.26 GB/s busbw at 16 GiB = 1.0717 x 450 GB/s.
  const double s = 16.0 * (1ull << 30);
  const double t = intra_collective_time_s(h100_cluster(), collectives::Kind::kAllReduce, 8, s);
  EXPECT_NEAR(s * 2 * 7 / 8 / t / 1e9, 482.26, 0.5);
  // The H800's NVSwitch reduces in the switch too, at its 200 GB/s a direction: 1.0717 x 200 = 214.3
  // GB/s, where 8 x H800 measured 215 (NVIDIA/nccl #1374; cost_tables.yaml gpus.h100-sxm.nvls).
  hardware::ClusterSpec h800 = h100_cluster();
  h800.gpu = *hardware::find_gpu("h800");
  h800.intra_bandwidth_Bps = h800.gpu.nvlink_bandwidth_Bps;
  EXPECT_NEAR(s * 2 * 7 / 8 / intra_collective_time_s(h800, collectives::Kind::kAllReduce, 8, s) / 1e9, 214.3, 0.5);
  // All-gather has no in-switch reduction: the ring plateau 0.783 x 450 GB/s.
  const double ag = intra_collective_time_s(h100_cluster(), collectives::Kind::kAllGather, 8, s);
  EXPECT_NEAR(s * 7 / 8 / ag / 1e9, 0.783 * 450, 0.5);
  // A100 all-reduce at 128 MiB: 176.92 GB/s measured (ml-engineering A100 table) = 0.5897 x 300.
  const double m = 134217728;
  EXPECT_NEAR(m * 2 * 7 / 8 / intra_collective_time_s(a100_cluster(), collectives::Kind::kAllReduce, 8, m) / 1e9,
              0.5897 * 300, 0.05);
}

TEST(Collectives, APcieBridgeIsSharedByTheGpusThatUseItAtOnce) {
  hardware::ClusterSpec pcie = h100_cluster();
  pcie.intra_fabric = hardware::IntraFabric::kPcie;
  pcie.intra_bandwidth_Bps = 64e9;
  const double s = 1 << 30;
  // Two TP4 groups of the node all-gather at once: 8 ring flows cross the one 64 GB/s bridge, 8 GB/s
  // each; PCIe curve at 1 GiB: 0.726 of that (8 GPUs on Gen5 switches, collectives.yaml); the ring
  // moves 3/4 S.
  EXPECT_NEAR(intra_collective_time_s(pcie, collectives::Kind::kAllGather, 4, s), 0.75 * s / (0.726 * 64e9 / 8), 1e-12);
  // Under PCIe switches of 4 GPUs, each group stays under its switch: each flow has its GPU's x16
  // link (64 GB/s per direction) to itself.
  pcie.gpus_per_pcie_switch = 4;
  EXPECT_NEAR(intra_collective_time_s(pcie, collectives::Kind::kAllGather, 4, s), 0.75 * s / (0.726 * 64e9), 1e-12);
  // A TP8 ring crosses both switch uplinks (32 GB/s here) once each way: the uplink limits.
  pcie.pcie_switch_uplink_Bps = 32e9;
  EXPECT_NEAR(intra_collective_time_s(pcie, collectives::Kind::kAllGather, 8, s), 7.0 / 8 * s / (0.726 * 32e9), 1e-12);
}

TEST(Collectives, NvlinkBridgePairsAreNvlinkOnlyForTp2) {
  // H100 PCIe cards bridged in pairs (300 GB/s per direction, illustrative), pairs joined over a
  // PCIe switch per pair. TP2 stays on the bridge: NVLink curve (no NVLS: no switch) at 300 GB/s.
  hardware::ClusterSpec c = h100_cluster();
  c.gpu = *hardware::find_gpu("h100-pcie");
  c.intra_fabric = hardware::IntraFabric::kNvlinkBridge;
  c.intra_bandwidth_Bps = 300e9;
  c.gpus_per_pcie_switch = 2;
  const double s = 1 << 30;
  hardware::ClusterSpec nvswitch = h100_cluster();
  nvswitch.gpu = c.gpu;  // no NVLS in the PCIe card's data (cost_tables.yaml): the plain NVLink curve
  nvswitch.intra_bandwidth_Bps = 300e9;
  EXPECT_NEAR(intra_collective_time_s(c, collectives::Kind::kAllReduce, 2, s),
              intra_collective_time_s(nvswitch, collectives::Kind::kAllReduce, 2, s), 1e-12);
  // TP4 crosses PCIe between the pairs: each pair's switch uplink (x16, 64 GB/s) carries one flow
  // each way, at the bridged-pairs PCIe curve (0.963 at 1 GiB: 4 A100 PCIe in NV12 pairs), not the
  // all-PCIe ring's (0.726).
  EXPECT_NEAR(intra_collective_time_s(c, collectives::Kind::kAllGather, 4, s), 0.75 * s / (0.963 * 64e9), 1e-12);
}

TEST(Collectives, RingLatencyGrowsWithTheRanks) {
  // NCCL ring, Simple (tuning.cc): 8.4 us + a hop per step; all-reduce over 128 nodes, one rank
  // each: 2 x 127 network steps of 14 us. A 4-byte message costs its latency.
  const double t = inter_collective_time_s(h100_cluster(), collectives::Kind::kAllReduce, 128, 1, 4);
  EXPECT_NEAR(t, 8.4e-6 + 254 * 14e-6, 1e-7);
  const double t16 = inter_collective_time_s(h100_cluster(), collectives::Kind::kAllReduce, 16, 1, 4);
  EXPECT_NEAR(t16, 8.4e-6 + 30 * 14e-6, 1e-7);
  // Across nodes the bytes move at the NIC share and 0.95 efficiency (ConnectX-7: 46-49 of 50 GB/s).
  const double big = 8e9;
  const double bw = inter_collective_time_s(h100_cluster(), collectives::Kind::kReduceScatter, 16, 1, big) -
                    inter_collective_time_s(h100_cluster(), collectives::Kind::kReduceScatter, 16, 1, 4);
  EXPECT_NEAR(bw, 15.0 / 16 * big / (50e9 * 0.95), 1e-3 * bw);
}

// nccl-tests on 8 H100 nodes with 8 x 400 Gb/s each (collectives.yaml 'MULTI-NODE AT SCALE',
// nccl-tests #309): all-reduce bus bandwidth at 8 GiB 320.7 GB/s with NCCL's defaults, 391.4 tuned;
// NVIDIA's reply there: the NICs (400 GB/s) are the limit. The ring's NVLink parts (reduce-scatter
// + all-gather, 2 x 7/8 x S at the NVSwitch ring curve, 0.782 x 450 GB/s at 8 GiB: 42.7 ms) and
// its NIC part (2 x 7/8 x S/8 per rail at 0.95 x 50 GB/s: 39.6 ms) run at once: 42.7 ms plus the
// ring latency (8.4 us + 2 x 56 NVLink steps of 3.4 us + 2 x 7 network steps of 14 us = 0.59 ms),
// 389 GB/s of bus bandwidth; one part after the other would give 82.9 ms, 204 GB/s.
TEST(Collectives, MultiNodeAllReduceIsBoundByTheBusierPartAsMeasured) {
  hardware::ClusterSpec c = h100_cluster();
  c.nodes = 8;
  const double s = 8589934592.0;
  const double t = inter_collective_time_s(c, collectives::Kind::kAllReduce, 64, 8, s);
  const double intra = 2 * 7.0 / 8 * s / (0.7820 * 450e9);
  const double latency = 8.4e-6 + 112 * 3.4e-6 + 14 * 14e-6;
  EXPECT_NEAR(t, intra + latency, 1e-3 * t);
  const double busbw = 2 * 63.0 / 64 * s / t;
  EXPECT_GE(busbw, 320.7e9);        // NCCL's defaults on that cluster
  EXPECT_LE(busbw, 391.4e9 * 1.02); // tuned
  // A slower network makes the NIC part the longer one: 100 Gb/s NICs, 2 x 7/8 x S/8 / (0.95 x
  // 12.5 GB/s) = 158 ms, NVLink's 42.7 ms hidden under it.
  c.nic_bandwidth_Bps = 12.5e9;
  const double slow = inter_collective_time_s(c, collectives::Kind::kAllReduce, 64, 8, s);
  EXPECT_NEAR(slow, 2 * 7.0 / 8 * s / 8 / (0.95 * 12.5e9) + latency, 1e-3 * slow);
}

// The same ring model against AWS's Elastic Fabric Adapter, not InfiniBand (collectives.yaml 'MULTI-NODE
// ON AWS EFA': nccl-tests on p5.48xlarge, 8 x H100 and 4 x 100 Gb/s EFA a GPU, NCCL 2.28.7, 4 to 32
// nodes; crazyguitar/aws-gpu-communication-benchmark). All-reduce from 256 MiB up: the model's bus
// bandwidth is 0.97-1.33 x the measured (optimistic where the sweep dips, 1-2 GiB). All-gather at
// 32 nodes: 32 and 64 MiB take the same 2.7 ms, a latency of ~10 us a rank where NCCL's tuning
// constants (the model's: 3.4 us an NVLink step, 14 us a network step) give 4.7: with the default
// transport (InfiniBand) the model's latency is half of EFA's, so small all-gathers at many nodes
// cost twice what it says there; transport efa (below) takes EFA's measured network step.
TEST(Collectives, MultiNodeRingAgainstAwsEfaMeasurements) {
  hardware::ClusterSpec c = h100_cluster();
  c.nic_bandwidth_Bps = 50e9;  // 4 x 100 Gb/s a GPU
  constexpr double kMiB = 1048576.0;
  auto busbw = [&](collectives::Kind kind, int64_t nodes, double bytes) {
    c.nodes = nodes;
    const int64_t n = nodes * 8;
    // nccl-tests' bus bandwidth: the bytes each ring edge carries (2(n-1)/n S, (n-1)/n S) over the time.
    return collectives::ring_edge_bytes(kind, n, bytes) / inter_collective_time_s(c, kind, n, 8, bytes);
  };
  struct Point {
    int64_t nodes;
    double mib, busbw_GBps;
  };
  const Point all_reduce[] = {
      {4, 256, 273.34},  {4, 512, 278.41},  {4, 1024, 280.30},  {4, 2048, 347.57},  {4, 4096, 354.45},  {4, 8192, 356.99},
      {8, 256, 232.09},  {8, 512, 272.62},  {8, 1024, 274.47},  {8, 2048, 278.15},  {8, 4096, 351.32},  {8, 8192, 355.36},
      {16, 256, 148.11}, {16, 512, 223.80}, {16, 1024, 269.23}, {16, 2048, 270.91}, {16, 4096, 306.15}, {16, 8192, 356.27},
      {32, 256, 137.99}, {32, 512, 156.83}, {32, 1024, 220.08}, {32, 2048, 269.47}, {32, 4096, 302.81}, {32, 8192, 321.10}};
  for (const Point& p : all_reduce) {
    const double ratio = busbw(collectives::Kind::kAllReduce, p.nodes, p.mib * kMiB) / (p.busbw_GBps * 1e9);
    EXPECT_GE(ratio, 0.95) << p.nodes << " nodes, " << p.mib << " MiB";
    EXPECT_LE(ratio, 1.35) << p.nodes << " nodes, " << p.mib << " MiB";
  }
  // All-gather, 32 nodes (256 ranks), 32 MiB: 12.38 GB/s measured, i.e. 255/256 x 32 MiB / 12.38 GB/s
  // = 2.70 ms; the model 1.34 ms, its ring latency (8.4 us + 224 NVLink steps + 31 network steps) 1.20.
  c.nodes = 32;
  const double measured_s = 255.0 / 256 * 32 * kMiB / 12.38e9;
  const double model_s = inter_collective_time_s(c, collectives::Kind::kAllGather, 256, 8, 32 * kMiB);
  EXPECT_NEAR(measured_s / model_s, 2.0, 0.1);
  EXPECT_NEAR(measured_s / 256, 10.5e-6, 0.5e-6);  // per rank of the ring

  // With cluster.inter_node.transport: efa a network step takes the 53 us measured from these
  // all-gathers (cost_tables.yaml efa_net_hop_us) instead of NCCL's 14: every all-gather of the
  // sweep up to 512 MiB, 4 to 32 nodes, within 0.87-1.06 of its measured bus bandwidth (the 1-2 GiB
  // dips 1.1-1.4), and the all-reduces from 512 MiB up within 0.89-1.27. Smaller all-reduces at 16+
  // nodes it prices at 0.2-0.9 of the measured bandwidth: AWS's tuner runs NCCL's tree there, and
  // trainsim's ring stays pessimistic.
  c.transport = hardware::InterTransport::kEfa;
  const Point all_gather[] = {{4, 32, 83.56},  {4, 64, 138.94}, {4, 128, 211.73}, {4, 256, 253.36},  {4, 512, 220.57},
                              {8, 32, 46.29},  {8, 64, 86.80},  {8, 128, 143.66}, {8, 256, 215.43},  {8, 512, 261.26},
                              {16, 32, 24.90}, {16, 64, 46.99}, {16, 128, 87.68}, {16, 256, 144.05}, {16, 512, 219.97},
                              {32, 32, 12.38}, {32, 64, 24.96}, {32, 128, 45.65}, {32, 256, 86.30},  {32, 512, 146.38}};
  for (const Point& p : all_gather) {
    if (p.nodes == 4 && p.mib == 512) continue;  // a dip: 220.6 between 253.4 at 256 MiB and 288.5 at 1 GiB
    const double ratio = busbw(collectives::Kind::kAllGather, p.nodes, p.mib * kMiB) / (p.busbw_GBps * 1e9);
    EXPECT_NEAR(ratio, 1.0, 0.14) << "efa all-gather, " << p.nodes << " nodes, " << p.mib << " MiB";
  }
  for (const Point& p : all_reduce) {
    if (p.mib < 512) continue;
    const double ratio = busbw(collectives::Kind::kAllReduce, p.nodes, p.mib * kMiB) / (p.busbw_GBps * 1e9);
    EXPECT_GE(ratio, 0.85) << "efa all-reduce, " << p.nodes << " nodes, " << p.mib << " MiB";
    EXPECT_LE(ratio, 1.30) << "efa all-reduce, " << p.nodes << " nodes, " << p.mib << " MiB";
  }
  c.nodes = 32;
  EXPECT_LT(busbw(collectives::Kind::kAllReduce, 32, 32 * kMiB), 0.25 * 66.3e9);  // the tree's region: 13 vs 66 GB/s
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
  // Selective recompute re-runs the attention core's forward (QK^T, softmax, dropout, PV): what it
  // adds to the backward, 13.2 - 11.9 = 1.3 ms measured, is that core's time at b 4, s 2048 and 8
  // heads of 96 a GPU. trainsim, with the core at the FlashAttention paper's measured Megatron speed
  // (cost_tables.yaml unfused_attention), 1.29 ms; from its HBM traffic alone, 1.01 ms.
  EXPECT_NEAR(sel.recompute_s * 1e3, 1.3, 0.1);
  EXPECT_DOUBLE_EQ(sel.recompute_s, sel.attention_forward_s);
  // Sequence parallelism splits norms/dropout over TP: the forward gets faster (7.2 ms measured).
  p.recompute = Recompute::kNone;
  p.sequence_parallel = true;
  EXPECT_LT(layer_time(m, p, t, a100_cluster()).forward_s, base.forward_s);
}

// Megatron's unfused attention core (cost_tables.yaml unfused_attention): the FlashAttention
// paper's Megatron call on one A100 40 GB (App. E.5 Table 15, with dropout: fp16, batch 16, 8 heads
// of 64) takes 1.88 ms forward at 1K tokens and 6.56 ms at 2K, and trainsim's layer gives those.
// Its traffic estimate per call: QK^T reads Q and K and writes the scores, (R 64 + 64 s) 2 + 2 R s
// bytes (R = batch x heads x s query rows); PV reads the scores and V and writes the output,
// (R s + 64 s) 2 + 2 R 64; scale+mask+softmax and dropout 9 B per score; at 1555 GB/s x 0.88.
// Measured over estimated is the slowdown, linear in log(s) between the measured lengths.
TEST(LayerTime, UnfusedAttentionRunsAtTheMeasuredMegatronSpeed) {
  auto forward = [](const char* gpu, int64_t s) {
    ModelSpec m;
    m.layers = 1;
    m.hidden = 512;
    m.ffn_hidden = 2048;
    m.heads = 8;
    m.kv_heads = 8;
    m.vocab = 32000;
    m.seq_len = s;
    ParallelSpec p;
    p.micro_batch = 16;
    TrainingSpec t;
    t.precision = Precision::kFp16;
    t.flash_attention = false;
    hardware::ClusterSpec c = a100_cluster();
    c.gpu = *hardware::find_gpu(gpu);
    return layer_time(m, p, t, c).attention_forward_s;
  };
  auto traffic_s = [](double s) {
    const double r = 16 * 8 * s;
    return ((r * 64 + 64 * s) * 2 + 2 * r * s + (r * s + 64 * s) * 2 + 2 * r * 64 + 9 * r * s) / (1555e9 * 0.88);
  };
  EXPECT_NEAR(forward("a100-40gb", 1024), 1.88e-3, 1e-9);
  EXPECT_NEAR(forward("a100-40gb", 2048), 6.56e-3, 1e-9);
  // Halfway in log(s): the mean of the two slowdowns (1.88 / 1.300 ms = 1.446 and 6.56 / 5.150 = 1.274).
  const double mid = std::sqrt(1024.0 * 2048.0);
  const double slow = (1.88e-3 / traffic_s(1024) + 6.56e-3 / traffic_s(2048)) / 2;
  EXPECT_NEAR(slow, 1.360, 0.001);
  EXPECT_NEAR(forward("a100-40gb", static_cast<int64_t>(std::round(mid))), traffic_s(std::round(mid)) * slow,
              2e-3 * traffic_s(mid) * slow);
  // Another GPU keeps the slowdown at its own bandwidth: the 80 GB part (2039 GB/s x 0.86) takes
  // 1.88 ms x 1368.4 / 1753.5 = 1.467 ms.
  EXPECT_NEAR(forward("a100-80gb", 1024), 1.88e-3 * 1555 * 0.88 / (2039 * 0.86), 1e-8);
}

// Transformer Engine's userbuffers run each TP collective of a layer by its own method (v1.8
// initialize_ub defaults; compute.cpp tp_cost). Forward, per layer:
//  - the all-gathers before QKV and MLP-up by ring exchange: the GEMM in tp chunks of its rows, each
//    beside the next chunk's transfer over the copy engines: only the transfers' excess over tp - 1
//    of the chunks shows, plus what the smaller chunks cost;
//  - the reduce-scatters after out-proj and MLP-down by pipeline: the GEMM in 4 chunks, each
//    chunk's reduce-scatter beside the next: the last quarter shows, the rest holds 16 of 132 SMs,
//    plus what the smaller chunks cost.
TEST(LayerTime, TpOverlapHidesCommunicationOnNvlinkButNotOnPcie) {
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
  // Forward: 2 AG + 2 RS of M h bytes (fp8 trains with bf16 activations), exposed without overlap.
  const double bytes = 4096.0 * 8192 * 2;
  const double ag = intra_collective_time_s(h100_cluster(), collectives::Kind::kAllGather, 4, bytes);
  const double rs = intra_collective_time_s(h100_cluster(), collectives::Kind::kReduceScatter, 4, bytes);
  const hardware::GpuSpec& gpu = h100_cluster().gpu;
  auto gemm = [&](double mm, double n, double k) { return gemm_time_s(gpu, Precision::kFp8, mm, n, k); };
  // (m, n, k): QKV 4096 x (8192 + 2 x 1024) / 4 x 8192, out-proj 4096 x 8192 x 2048, MLP-up
  // 4096 x 2 x 28672 / 4 x 8192, MLP-down 4096 x 8192 x 7168.
  const double tax = 16.0 / (132 - 16);
  double fwd = 0;
  for (double n : {2560.0, 14336.0}) {  // ring exchange
    const double whole = gemm(4096, n, 8192);
    fwd += 4 * gemm(1024, n, 8192) - whole + std::max(0.0, ag - whole * 3 / 4);
  }
  for (double k : {2048.0, 7168.0}) {  // pipeline
    const double whole = gemm(4096, 8192, k);
    fwd += 4 * gemm(1024, 8192, k) - whole + rs / 4 + std::max(0.0, rs * 3 / 4 - whole * 3 / 4) +
           tax * std::min(rs * 3 / 4, whole * 3 / 4);
  }
  EXPECT_NEAR(overlapped.forward_s - exposed.forward_s + 2 * (ag + rs), fwd, 1e-12);
  // fp8 GEMMs of this layer (0.16 ms for QKV) are shorter than its collectives (0.20 ms each): the
  // overlap hides only part of them, but never costs more than leaving them exposed.
  EXPECT_LT(overlapped.tp_comm_s, 0.6 * exposed.tp_comm_s);
  // Over PCIe the userbuffer overlap does not apply: the forward collectives are all exposed.
  hardware::ClusterSpec pcie = h100_cluster();
  pcie.intra_fabric = hardware::IntraFabric::kPcie;
  pcie.intra_bandwidth_Bps = 64e9;
  t.tp_comm_overlap = true;
  const LayerTime on_pcie = layer_time(m, p, t, pcie);
  const double pcie_fwd = 2 * (intra_collective_time_s(pcie, collectives::Kind::kAllGather, 4, bytes) +
                               intra_collective_time_s(pcie, collectives::Kind::kReduceScatter, 4, bytes));
  EXPECT_GT(on_pcie.tp_comm_s, pcie_fwd);
}

TEST(LayerTime, SynchronousTpAllReducesAreAllExposed) {
  // No SP, no userbuffers: per layer two all-reduces of s b h 2 bytes after the row-parallel GEMMs
  // in the forward (exposed either way) and two for the column-parallel input gradients in the
  // backward: asynchronous, they hide under the weight-gradient GEMMs (less the SMs they hold);
  // synchronous (Megatron-LM before 2021-08-30), all four show: tp_comm = 4 all-reduces.
  ModelSpec m;
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.vocab = 51200;
  m.seq_len = 2048;
  ParallelSpec p;
  p.tp = 8;
  TrainingSpec t;
  t.tp_comm_overlap = false;
  const LayerTime async = layer_time(m, p, t, h100_cluster());
  t.tp_async_backward = false;
  const LayerTime sync = layer_time(m, p, t, h100_cluster());
  const double ar = intra_collective_time_s(h100_cluster(), collectives::Kind::kAllReduce, 8, 2048.0 * 12288 * 2);
  EXPECT_NEAR(sync.tp_comm_s, 4 * ar, 1e-12);
  EXPECT_LT(async.tp_comm_s, 3 * ar);  // the backward two mostly hidden
  EXPECT_NEAR(sync.forward_s, async.forward_s, 1e-12);
  EXPECT_NEAR(sync.backward_s - async.backward_s, sync.tp_comm_s - async.tp_comm_s, 1e-12);
}

// B200 attention (cost_tables.yaml): cuDNN by default, from cudnn-frontend's B200 benchmark (cuDNN
// 9.13.1, causal, head dim 128): 1419.0 / 1108.7 TFLOP/s forward / backward at 32K over the 2250
// peak; FA4 measured by the benchmark that measured Hopper's kernels (kernels.yaml b200
// measured_2026): 1375.8 / 937.6 at 8K.
TEST(AttentionTables, B200CudnnByDefaultAndFa4Measured) {
  const GpuCostData& b200 = gpu_cost_data(*hardware::find_gpu("b200"));
  EXPECT_EQ(b200.default_attention, "cudnn");
  EXPECT_NEAR(b200.attention_kernel("").fwd.at(32768), 1419.0 / 2250, 0.001);
  EXPECT_NEAR(b200.attention_kernel("").bwd.at(32768), 1108.7 / 2250, 0.001);
  EXPECT_NEAR(b200.attention_kernel("fa4").fwd.at(8192), 1375.8 / 2250, 0.001);
  EXPECT_NEAR(b200.attention_kernel("fa4").bwd.at(8192), 937.6 / 2250, 0.001);
  // Cross-check against an independent measurement: ml-engineering's isolated FA4 (B200) / FA3
  // (H200) forward + backward ratio on its own stack, 1.88 at 8K; the two tables give 1.87.
  const GpuCostData& h100 = gpu_cost_data(*hardware::find_gpu("h100-sxm"));
  auto fwd_bwd = [](const GpuCostData::Attention& k, double peak, double s) {
    return 3.5 / (1 / (k.fwd.at(s) * peak) + 2.5 / (k.bwd.at(s) * peak));
  };
  EXPECT_NEAR(fwd_bwd(b200.attention_kernel("fa4"), 2250, 8192) / fwd_bwd(h100.attention_kernel("fa3"), 989.4, 8192), 1.88, 0.03);
  // A kernel the GPU has no table for takes its default.
  EXPECT_EQ(&b200.attention_kernel("fa2"), &b200.attention_kernel(""));
}

// Hopper's three kernels from one 2026 run on one H100 (kernels.yaml h100-sxm attention
// measured_2026, magi-attn-kernels, causal d128), relative to the 989.4 TFLOP/s dense peak; cuDNN,
// which Transformer Engine prefers on Hopper, by default; beyond the last point (32K) its value.
TEST(AttentionTables, HopperFromOneMeasurementOfFa3CudnnAndFa2) {
  const GpuCostData& h100 = gpu_cost_data(*hardware::find_gpu("h100-sxm"));
  EXPECT_EQ(h100.default_attention, "cudnn");
  EXPECT_NEAR(h100.attention_kernel("").fwd.at(8192), 537.1 / 989.4, 0.001);
  EXPECT_NEAR(h100.attention_kernel("").bwd.at(8192), 426.1 / 989.4, 0.001);
  EXPECT_NEAR(h100.attention_kernel("fa3").fwd.at(32768), 679.5 / 989.4, 0.001);
  EXPECT_NEAR(h100.attention_kernel("fa3").bwd.at(131072), 585.8 / 989.4, 0.001);
  EXPECT_NEAR(h100.attention_kernel("fa2").bwd.at(16384), 322.3 / 989.4, 0.001);
  // Below 4K the FA3 paper's forward bars (16K tokens per batch): 423 TFLOP/s at 1K.
  EXPECT_NEAR(h100.attention_kernel("fa3").fwd.at(1024), 423.0 / 989.4, 0.001);
  // The H200 is the same die: the same tables.
  const GpuCostData& h200 = gpu_cost_data(*hardware::find_gpu("h200"));
  EXPECT_DOUBLE_EQ(h200.attention_kernel("fa3").bwd.at(32768), h100.attention_kernel("fa3").bwd.at(32768));
}

TEST(Optimizer, AdamIsHbmBound) {
  TrainingSpec t;
  const auto cl = h100_cluster();
  // Adam, bf16 grads: 24 (master, m, v read+write) + 2 (grad) + 2 (bf16 copy) bytes per parameter.
  // HBM streaming efficiency 0.90 on Hopper (cost_tables.yaml: gpu-stream triad on H100 PCIe).
  EXPECT_DOUBLE_EQ(optimizer_time_s(1e9, t, cl), 28e9 / (3350e9 * 0.90));
  t.fp32_main_grads = true;
  EXPECT_DOUBLE_EQ(optimizer_time_s(1e9, t, cl), 30e9 / (3350e9 * 0.90));
  // Offloaded (fp32 main grads: 4-byte gradients): the gradients down and the 16-bit weights back
  // over the GPU's PCIe link (4 + 2 bytes per parameter at 0.87 of 64 GB/s, the H100 SXM's Gen5 x16:
  // a pinned copy's measured rate, cost_tables.yaml host.pcie_copy_efficiency), the
  // update on the host at cost_tables.yaml host.cpu_optimizer_GBps (21.0) over 24 + 4 + 2 bytes,
  // and with NVMe the states read in (12 bytes at host.nvme_read_GBps, 2.5) and written back (12 at
  // host.nvme_write_GBps, 1.25): DeepNVMe's measured Gen4 rates per GPU.
  t.offload = Offload::kCpu;
  EXPECT_DOUBLE_EQ(optimizer_time_s(1e9, t, cl), 6e9 / (64e9 * 0.87) + 30e9 / 21.0e9);
  t.offload = Offload::kNvme;
  EXPECT_DOUBLE_EQ(optimizer_time_s(1e9, t, cl), 6e9 / (64e9 * 0.87) + 30e9 / 21.0e9 + 12e9 / 2.5e9 + 12e9 / 1.25e9);
}

TEST(Optimizer, OffloadCostsWhatDeepSpeedMeasuredOnADgxA100) {
  // The measurement host.cpu_optimizer_GBps comes from (cost_tables.yaml, source
  // deepspeed-zenflow-corebinding): DeepSpeed ZeRO-2, bf16, Qwen2.5-1.5B (1.544e9 parameters) on 2
  // A100-SXM4-40GB of a DGX A100, 240 ms per step, 1365 ms with the optimizer on the CPU. What the
  // offload adds to the step is the offloaded optimizer step less the GPU's: 1125 ms, each rank
  // updating half the parameters (bf16 gradients, as DeepSpeed reduces them in bf16).
  hardware::ClusterSpec cl;
  cl.gpu = *hardware::find_gpu("a100-40gb");
  TrainingSpec t;
  const double per_rank = 1.544e9 / 2;
  const double on_gpu = optimizer_time_s(per_rank, t, cl);
  t.offload = Offload::kCpu;
  EXPECT_NEAR(optimizer_time_s(per_rank, t, cl) - on_gpu, 1.365 - 0.240, 0.005);
}

TEST(Optimizer, B200StreamsAtItsDriverBandwidthAndCopiesOverGen5) {
  // HBM: the Hopper triad fraction 0.90 of the bandwidth the B200's driver reports, a 7680-bit bus
  // at 3996 MHz, double data rate: 7680 / 8 x 3996e6 x 2 = 7.672e12 B/s (pytorch/ao#4002), not of
  // the 8 TB/s datasheet figure. Host link: Gen5 x16, 64 GB/s a direction (DGX B200's Gen5 Xeons,
  // DCGM's HGX B200 diagnostic SKU), at the pinned copy's 0.87 (cost_tables.yaml host).
  hardware::ClusterSpec cl;
  cl.gpu = *hardware::find_gpu("b200");
  TrainingSpec t;
  const double hbm = 7680.0 / 8 * 3996e6 * 2 * 0.90;
  EXPECT_NEAR(optimizer_time_s(1e9, t, cl), 28e9 / hbm, 28e9 / hbm * 1e-3);
  t.offload = Offload::kCpu;
  EXPECT_NEAR(optimizer_time_s(1e9, t, cl), 4e9 / (64e9 * 0.87) + 28e9 / 21.0e9, 1e-3);
}

TEST(Optimizer, Gb200CopiesOverNvlinkC2cAtItsMeasuredRate) {
  // GB200's host link is NVLink-C2C: nvbandwidth on Azure ND GB200 v6 measured 201 GB/s host to
  // device and 193 back (cost_tables.yaml host.link_copy_GBps: their mean, 197), where the x16
  // figure at the pinned-copy efficiency would give 128 x 0.87 = 111.
  hardware::ClusterSpec cl;
  cl.gpu = *hardware::find_gpu("gb200");
  EXPECT_NEAR(host_copy_Bps(cl.gpu), 197e9, 1);
  TrainingSpec t;
  t.offload = Offload::kCpu;
  EXPECT_NEAR(optimizer_time_s(1e9, t, cl), 4e9 / 197e9 + 28e9 / 21.0e9, 1e-9);
  // A link the scenario makes twice as fast copies twice as fast (counterfactuals scale it so).
  cl.gpu.pcie_bandwidth_Bps *= 2;
  EXPECT_NEAR(host_copy_Bps(cl.gpu), 394e9, 1);
}

}  // namespace
}  // namespace trainsim::model

namespace trainsim::model {
namespace {

// Issue 13: TP8 GPT-3 175B (s 2048, micro-batch 1, SP, bf16) on 8 x H100 PCIe (one Gen5 bridge,
// 64 GB/s, shared by the node's 8 GPUs) against NVSwitch (450 GB/s per GPU). Alpha-beta of one
// all-gather or reduce-scatter of S = s h 2 bytes on the bridge: (7/8) S / (r x 64e9 / 8), r = the
// PCIe busbw curve at S (cost_tables.yaml: 0.690 at 16 MiB, 0.713 at 64 MiB, log-interpolated).
// Per layer the forward's 4 collectives are exposed (no userbuffers on PCIe) and of the backward's
// 6 at least the 2 row-parallel all-gathers: so 6 to 10 alpha-beta terms, minus what NVSwitch pays.
TEST(LayerTime, TpOverPcieCostsWhatTheBridgeImplies) {
  const ModelSpec m = *find_model_preset("gpt3-175b");
  ParallelSpec p;
  p.tp = 8;
  p.sequence_parallel = true;
  TrainingSpec t;
  hardware::ClusterSpec nv;
  nv.gpu = *hardware::find_gpu("h100-pcie");
  nv.intra_bandwidth_Bps = 450e9;
  hardware::ClusterSpec pcie = nv;
  pcie.intra_fabric = hardware::IntraFabric::kPcie;
  pcie.intra_bandwidth_Bps = 64e9;
  const double s = 2048.0 * 12288 * 2;
  const double f = std::log(s / 16777216.0) / std::log(4.0);
  const double r = 0.690 + f * (0.713 - 0.690);
  const double ab = 7.0 / 8 * s / (r * 64e9 / 8);
  const LayerTime on_nv = layer_time(m, p, t, nv);
  const LayerTime on_pcie = layer_time(m, p, t, pcie);
  const double extra = on_pcie.tp_comm_s - on_nv.tp_comm_s;
  EXPECT_GT(extra, 6 * ab - on_nv.tp_comm_s);
  EXPECT_LT(extra, 10 * ab);
  // The passes grow by exactly that: the GEMMs are the same on both fabrics.
  EXPECT_NEAR((on_pcie.forward_s + on_pcie.backward_s) - (on_nv.forward_s + on_nv.backward_s), extra, 1e-12);
  // And it dominates the layer: the PCIe layer is several times the NVSwitch one.
  EXPECT_GT(on_pcie.forward_s + on_pcie.backward_s, 3 * (on_nv.forward_s + on_nv.backward_s));
}

// Issue 15: the same TP8 layer on a dual-root PCIe tree (platforms/hgx-h100-pcie.xml: a Gen5 switch
// of 4 GPUs under each socket, x16 links of 64 GB/s, 22 GB/s between the sockets: NCCL's Sapphire
// Rapids UPI figure). The TP8 ring crosses the socket link once each way, so each flow gets 22 GB/s
// (the route's narrowest link, one flow per direction): alpha-beta (7/8) S / (r x 22e9), 2.75x less
// than through one 64 GB/s bridge shared by 8 flows.
TEST(LayerTime, TpOverAPcieTreeCostsItsNarrowestRouteLink) {
  const ModelSpec m = *find_model_preset("gpt3-175b");
  ParallelSpec p;
  p.tp = 8;
  p.sequence_parallel = true;
  TrainingSpec t;
  hardware::ClusterSpec nv;
  nv.gpu = *hardware::find_gpu("h100-pcie");
  nv.intra_bandwidth_Bps = 450e9;
  hardware::ClusterSpec tree = nv;
  tree.intra_fabric = hardware::IntraFabric::kPcie;
  tree.intra_bandwidth_Bps = 64e9;
  tree.gpus_per_pcie_switch = 4;
  tree.sockets = 2;
  tree.inter_socket_Bps = 22e9;
  const double s = 2048.0 * 12288 * 2;
  const double f = std::log(s / 16777216.0) / std::log(4.0);
  const double r = 0.690 + f * (0.713 - 0.690);
  const double ab = 7.0 / 8 * s / (r * 22e9);
  EXPECT_NEAR(intra_collective_time_s(tree, collectives::Kind::kAllGather, 8, s), ab, 1e-9 * ab);
  // TP4 stays under one switch: its GPUs' own x16 links, 64 GB/s per flow.
  EXPECT_NEAR(intra_collective_time_s(tree, collectives::Kind::kAllGather, 4, s), 3.0 / 4 * s / (r * 64e9), 1e-9 * ab);
  const LayerTime on_nv = layer_time(m, p, t, nv);
  const LayerTime on_tree = layer_time(m, p, t, tree);
  const double extra = on_tree.tp_comm_s - on_nv.tp_comm_s;
  EXPECT_GT(extra, 6 * ab - on_nv.tp_comm_s);
  EXPECT_LT(extra, 10 * ab);
}

}  // namespace
}  // namespace trainsim::model

namespace trainsim::model {
namespace {

// The FlashAttention-1 class kernel (kernels.yaml fa1, FA2 paper Fig. 7 'FlashAttention' bars) on an
// H100 at s = 2048, causal d128: 108 TF forward + backward, against FA2's forward 0.301 of the
// 989.4 TF peak (cost_tables.yaml): the attention core's forward takes 0.301 / (108 / 989.4) as long,
// and the passes grow by no more than their attention (the GEMMs are the same).
// Fused attention runs at 0.99 of its isolated curve inside a step (cost_tables.yaml
// attention_in_step: NeMo Automodel's nsys of Llama 3.1 70B on 64 H100, cuDNN, 1.02 and 1.07;
// ml-engineering's decomposition on H200 / B200, 0.945 and 0.943), not at the GEMMs' fitted 0.81.
// Llama 3.1 70B's own shape at 4K on one H100 (TP1): causal forward 2 s^2 heads d = 2 x 4096^2 x 64
// x 128 FLOPs a layer at the cuDNN curve's 487.4 TFLOP/s (magi-attn-kernels) x 0.99.
TEST(LayerTime, FusedAttentionRunsAtItsMeasuredInStepSpeed) {
  EXPECT_DOUBLE_EQ(attention_in_step_fraction(), 0.99);
  ModelSpec m = *find_model_preset("llama3-70b");
  m.seq_len = 4096;
  ParallelSpec p;
  TrainingSpec t;  // the default kernel: cuDNN on Hopper
  hardware::ClusterSpec cl;
  cl.gpu = *hardware::find_gpu("h100-sxm");
  cl.intra_bandwidth_Bps = 450e9;
  const double flops = 2.0 * 4096 * 4096 * 64 * 128;
  EXPECT_NEAR(layer_time(m, p, t, cl).attention_forward_s, flops / (487.4e12 * 0.99), flops / (487.4e12 * 0.99) * 0.002);
}

TEST(LayerTime, OlderAttentionKernelsCostTheirMeasuredThroughput) {
  const ModelSpec m = *find_model_preset("gpt3-175b");  // s = 2048
  ParallelSpec p;
  p.tp = 8;
  p.sequence_parallel = true;
  TrainingSpec fa2, fa1;
  fa2.attention_kernel = "fa2";
  fa1.attention_kernel = "fa1";
  hardware::ClusterSpec cl;
  cl.gpu = *hardware::find_gpu("h100-sxm");
  cl.intra_bandwidth_Bps = 450e9;
  const LayerTime a = layer_time(m, p, fa2, cl), b = layer_time(m, p, fa1, cl);
  ASSERT_GT(a.attention_forward_s, 0);
  EXPECT_NEAR(b.attention_forward_s / a.attention_forward_s, 0.301 / (108 / 989.4), 0.01 * 0.301 / (108 / 989.4));
  EXPECT_NEAR(b.forward_s - a.forward_s, b.attention_forward_s - a.attention_forward_s, 1e-12);
  EXPECT_GT(b.backward_s, a.backward_s);
}

// training.elementwise: eager runs a Llama layer's element-wise work one PyTorch kernel per
// operator (cost_tables.yaml elementwise, bytes per element counted from the reference code):
// per token, two RMSNorms at 36 bytes per element instead of 4, RoPE on q and k at 20 instead of 4,
// SwiGLU at 10 per FFN element instead of 6, and the attention output's layout copy (4 per
// element). Llama 3 8B (h 4096, GQA: q + k = 4096 + 1024, FFN 14336), 8,192 tokens, on one H100:
// 8192 x (2 x 32 x 4096 + 16 x 5120 + 4 x 14336 + 4 x 4096) = 3.42 GB more through HBM in the
// forward, twice that in the backward, at 3.35 TB/s x 0.90. GEMMs and attention are unchanged.
TEST(LayerTime, EagerElementwiseCostsTheKernelsItRunsOneByOne) {
  const ModelSpec m = *find_model_preset("llama3-8b");
  ParallelSpec p;
  TrainingSpec fused, eager, eager_fused_norm;
  eager.eager_elementwise = eager.eager_norm = eager.eager_activation = true;
  eager_fused_norm.eager_elementwise = eager_fused_norm.eager_activation = true;  // torchtitan's fused_rmsnorm
  TrainingSpec eager_activation;  // InternLM, nanotron: fused norm and rotary, silu then multiply
  eager_activation.eager_activation = true;
  const hardware::ClusterSpec cl = h100_cluster();
  const LayerTime a = layer_time(m, p, fused, cl), b = layer_time(m, p, eager, cl), c = layer_time(m, p, eager_fused_norm, cl);
  const double tokens = 8192;
  const double extra = tokens * (2 * 32 * 4096.0 + 16 * 5120.0 + 4 * 14336.0 + 4 * 4096.0);
  EXPECT_NEAR(extra, 3.42e9, 0.01e9);
  const double bw = 3.35e12 * 0.90;
  EXPECT_NEAR(b.forward_s - a.forward_s, extra / bw, 1e-3 * extra / bw);
  EXPECT_NEAR(b.backward_s - a.backward_s, 2 * extra / bw, 1e-3 * extra / bw);
  EXPECT_DOUBLE_EQ(b.attention_forward_s, a.attention_forward_s);
  // A fused norm kernel takes the norms' share back: 2 x 32 bytes per element of h.
  EXPECT_NEAR(b.forward_s - c.forward_s, tokens * 2 * 32 * 4096.0 / bw, 1e-3 * extra / bw);
  // The activation alone eager: 4 bytes per FFN element.
  EXPECT_NEAR(layer_time(m, p, eager_activation, cl).forward_s - a.forward_s, tokens * 4 * 14336.0 / bw, 1e-3 * extra / bw);
  // GPT-style layers (LayerNorm, GELU, learned positions) run single kernels either way.
  const ModelSpec gpt = *find_model_preset("gpt3-175b");
  EXPECT_NEAR(layer_time(gpt, p, eager, cl).forward_s - layer_time(gpt, p, fused, cl).forward_s,
              2048 * 4.0 * 12288 / bw, 1e-9);  // the layout copy only
}

}  // namespace
}  // namespace trainsim::model

namespace trainsim::model {
namespace {

// Context parallelism as Llama 3 ran it (Sec. 3.3.2; Transformer Engine AttnFuncWithCPAndKVAllGather,
// model/spec.hpp ParallelSpec::cp_comm): K and V all-gathered before the attention and dK, dV
// reduce-scattered after it, exposed, against ring attention's first step. 405B at 128K, TP8 CP16:
// each CP rank on its own node (one rank a node in the ring, the NIC's 50 GB/s at the measured 0.95).
// Per call (K or V): 131072 tokens x 128 dims (one of the 8 KV heads per TP rank) x 2 B = 32 MiB
// gathered, 15/16 of it over the NIC: 31.5 MB / 47.5 GB/s = 0.662 ms, plus NCCL's ring latency
// 8.4 us + 15 network steps x 14 us = 0.218 ms (cost_tables.yaml collectives.latency_us): 0.880 ms.
TEST(LayerTime, AllGatherContextParallelismExposesItsCollectives) {
  ModelSpec m = *find_model_preset("llama3-405b");
  m.seq_len = 131072;
  ParallelSpec p;
  p.tp = 8;
  p.cp = 16;
  p.sequence_parallel = true;
  TrainingSpec t;
  hardware::ClusterSpec cl = h100_cluster();
  cl.gpus_per_node = 8;
  const LayerTime ring = layer_time(m, p, t, cl);
  p.cp_comm = CpComm::kAllGather;
  const LayerTime gathered = layer_time(m, p, t, cl);
  const double kv = 131072.0 * 2 * 128 * 2;
  const double call = 15.0 / 16 * kv / 2 / (50e9 * 0.95) + (8.4 + 15 * 14.0) * 1e-6;
  EXPECT_NEAR(call, 0.880e-3, 0.001e-3);
  const double ag = inter_collective_time_s(cl, collectives::Kind::kAllGather, 16, 1, kv / 2);
  const double rs = inter_collective_time_s(cl, collectives::Kind::kReduceScatter, 16, 1, kv / 2);
  EXPECT_NEAR(ag, call, 1e-9);
  EXPECT_NEAR(rs, call, 1e-9);
  // Ring attention shows its first step (a 16th of a whole gather) where the attention covers the
  // rest, as it does here (the attention core's forward takes several times the gather).
  const double whole = inter_collective_time_s(cl, collectives::Kind::kAllGather, 16, 1, kv);
  EXPECT_GT(ring.attention_forward_s, 3 * whole);
  EXPECT_NEAR(gathered.forward_s - ring.forward_s, 2 * ag - whole / 15, 1e-9);
  EXPECT_NEAR(gathered.backward_s - ring.backward_s, 2 * ag + 2 * rs - 2 * whole / 15, 1e-9);
  EXPECT_NEAR(gathered.tp_comm_s - ring.tp_comm_s, 4 * ag + 2 * rs - 3 * whole / 15, 1e-9);
}

}  // namespace
}  // namespace trainsim::model

namespace trainsim::model {
namespace {

// Ulysses (cp_comm_type a2a): Llama 2 7B (32 heads, MHA) at 64K on one node, CP8. Each layer's Q,
// K, V and output leave their sequence split all-to-all: a call each of a rank's 8192 tokens x
// 4096 x 2 B = 64 MiB, 7/8 of it to the node's other GPUs at DeepEP's measured 0.78 of the 450 GB/s
// port (cost_tables.yaml all_to_all), 167.3 us, plus NCCL's base and NVLink step latencies (8.4 +
// 3.4 us): 179.1 us; four in the forward and four in the backward (dO, then dQ, dK, dV), exposed.
// The attention then runs on 4 of the 32 heads over the whole sequence: the kernel at 64K, where
// ring attention's chunks run it at 8K.
TEST(LayerTime, UlyssesContextParallelismExchangesAllToAll) {
  ModelSpec m = *find_model_preset("llama2-7b");
  m.seq_len = 65536;
  ParallelSpec p;
  p.cp = 8;
  TrainingSpec t;
  hardware::ClusterSpec cl = h100_cluster();
  cl.gpus_per_node = 8;
  p.cp_comm = CpComm::kAllToAll;
  const LayerTime ulysses = layer_time(m, p, t, cl);
  const double call = 8.4e-6 + 3.4e-6 + 7.0 / 8 * 8192 * 4096 * 2 / (450e9 * 0.78);
  EXPECT_NEAR(call, 179.1e-6, 0.1e-6);
  EXPECT_NEAR(ulysses.tp_comm_s, 8 * call, 1e-9);
  // The same causal work (4 b s^2 h / cp, half executed) at the cuDNN forward curve's 64K point.
  const GpuCostData::Attention& kernel = gpu_cost_data(cl.gpu).attention_kernel("cudnn");
  const double executed = 2.0 * 65536 * 65536 * 4096 / 8;
  EXPECT_NEAR(ulysses.attention_forward_s, executed / (989.4e12 * kernel.fwd.at(65536) * 0.99), 1e-9);
  p.cp_comm = CpComm::kP2p;
  EXPECT_NEAR(layer_time(m, p, t, cl).attention_forward_s, executed / (989.4e12 * kernel.fwd.at(8192) * 0.99), 1e-9);
}

}  // namespace
}  // namespace trainsim::model
