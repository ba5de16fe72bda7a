#include "model/memory_data.hpp"

#include <gtest/gtest.h>

#include "hardware/gpu.hpp"
#include "model/memory.hpp"
#include "model/presets.hpp"

namespace trainsim::model {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

hardware::ClusterSpec h100_cluster(int64_t nodes) {
  hardware::ClusterSpec c;
  c.gpu = *hardware::find_gpu("h100-sxm");
  c.nodes = nodes;
  c.gpus_per_node = 8;
  return c;
}

TEST(UsableCapacity, CatalogGpusAsTheDriverReportsThemInlineGpusAsGiven) {
  // nvidia-smi memory.total (sim/hardware/data/memory.yaml): H100 80GB HBM3 81,559 MiB, A100
  // 40GB 40,960 MiB: more bytes than the datasheet's decimal 80 / 40 GB.
  EXPECT_DOUBLE_EQ(usable_capacity_bytes(*hardware::find_gpu("h100-sxm")), 81559 * kMiB);
  EXPECT_DOUBLE_EQ(usable_capacity_bytes(*hardware::find_gpu("a100-40gb")), 40960 * kMiB);
  hardware::GpuSpec inline_gpu = *hardware::find_gpu("h100-sxm");
  inline_gpu.hbm_bytes = 96e9;  // a scenario that states its own capacity keeps it
  EXPECT_DOUBLE_EQ(usable_capacity_bytes(inline_gpu), 96e9);
}

TEST(RuntimeReserve, CommunicatorsOfTheLayoutAndTheirBuffers) {
  const MemoryData& d = memory_data();
  const double conn = d.nccl_connection_bytes;
  // NCCL per connection: SIMPLE 4 MiB + LL 512 KiB + LL128 4,915,200 B.
  EXPECT_DOUBLE_EQ(conn, 4194304.0 + 524288.0 + 4915200.0);
  TrainingSpec t;
  ModelSpec m;
  // Llama 3 405B on 16K GPUs, TP8 (in a node) PP16 DP128 (across nodes): TP, DP, model-parallel
  // (tp x pp), world, plus the pipeline's send/receive = 5 communicators.
  ParallelSpec p;
  p.tp = 8, p.pp = 16, p.dp = 128;
  const RuntimeReserve r = runtime_reserve(p, t, m, h100_cluster(2048), 70e9);
  EXPECT_EQ(r.communicators, 5);
  const double per_channel = d.nccl_connections_per_channel * conn;
  EXPECT_DOUBLE_EQ(r.nccl, per_channel * (d.nccl_channels_nvlink + 3 * d.nccl_channels_net) +
                               2 * d.nccl_p2p_channels * conn);
  EXPECT_DOUBLE_EQ(r.fragmentation, d.fragmentation * 70e9);
  EXPECT_GT(r.cuda_context, 0);
  EXPECT_DOUBLE_EQ(r.total(), r.cuda_context + r.workspaces + r.nccl + r.fragmentation);
  // Context parallelism adds its group and the distributed optimizer's DP x CP group: 7.
  p.cp = 2, p.dp = 64;
  EXPECT_EQ(runtime_reserve(p, t, m, h100_cluster(2048), 70e9).communicators, 7);
  // One GPU: no communicator at all.
  EXPECT_EQ(runtime_reserve(ParallelSpec{}, t, m, h100_cluster(1), 1e9).nccl, 0);
  // A lump given in the scenario replaces the parts.
  t.runtime_reserve_bytes = 4e9;
  const RuntimeReserve lump = runtime_reserve(p, t, m, h100_cluster(2048), 70e9);
  EXPECT_DOUBLE_EQ(lump.total(), 4e9);
  EXPECT_EQ(lump.nccl, 0);
}

TEST(RuntimeReserve, Llama3_405bAsMetaRanItFitsAn80GbH100) {
  // Issue 14: TP8 PP16 DP128, interleaved v = 8 (126 layers in 128 chunks), no recompute, seq
  // 8192, FSDP without resharding (ZeRO-2). Stage 1: 8 layers, all 16 x 8 chunk-micro-batches in
  // flight, 0.533 GB per layer: 68.2 GB of activations; 3.19e9 parameters: 6.4 GB of weights.
  ModelSpec m = *find_model_preset("llama3-405b");
  m.layers = 126;
  ParallelSpec p;
  p.tp = 8, p.pp = 16, p.dp = 128, p.micro_batch = 1;
  p.schedule = Schedule::kInterleaved, p.virtual_stages = 8;
  p.zero = 2, p.recompute = Recompute::kNone, p.sequence_parallel = true;
  TrainingSpec t;
  t.global_batch = 2048;
  const auto cluster = h100_cluster(2048);
  const MemoryBreakdown mb = memory_per_gpu(m, p, t, cluster);
  EXPECT_EQ(mb.stage, 1);
  EXPECT_NEAR(mb.activations / 1e9, 128 * 0.5332, 0.1);
  EXPECT_NEAR(mb.weights / 1e9, 6.37, 0.05);
  EXPECT_LE(mb.total(), usable_capacity_bytes(cluster.gpu));
  EXPECT_GT(usable_capacity_bytes(cluster.gpu) - mb.total(), 2e9);  // a margin, not a coin toss
}

}  // namespace
}  // namespace trainsim::model
