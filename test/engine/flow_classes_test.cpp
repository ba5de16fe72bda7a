// Flow classes (engine/flow_classes.hpp): simulating one DP flow per class gives the step times of
// simulating every flow, on each kind of fabric, with and without tenants changing link bandwidths
// under the flows. Each run is a forked child (one SimGrid Engine per process).
#include "engine/flow_classes.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include "engine/step_engine.hpp"
#include "platform/platform.hpp"
#include "in_child.hpp"

namespace trainsim::engine {
namespace {

using trainsim::testing::in_child_values;

std::string source_path(const std::string& rel) { return std::string(TRAINSIM_SOURCE_DIR) + "/" + rel; }

config::Scenario scenario(int64_t nodes, int64_t tp, int64_t pp, int64_t dp, int64_t micro_batches) {
  config::Scenario sc;
  sc.name = "flow-classes";
  sc.cluster.gpu = *hardware::find_gpu("h100-sxm");
  sc.cluster.nodes = nodes;
  sc.cluster.gpus_per_node = 8;
  sc.cluster.intra_bandwidth_Bps = 450e9;
  sc.cluster.intra_latency_s = 1e-6;
  sc.cluster.inter_latency_s = 5e-6;
  sc.cluster.nic_bandwidth_Bps = 50e9;
  sc.cluster.nics_per_node = 8;
  sc.parallel.tp = tp;
  sc.parallel.pp = pp;
  sc.parallel.dp = dp;
  sc.parallel.schedule = model::Schedule::k1F1B;
  sc.training.global_batch = micro_batches * dp;
  return sc;
}

// Tenants whose busy and idle periods (2 ms) are shorter than a step, so link bandwidths change
// while DP flows are in flight; each takes `load` of the links it crosses while busy.
void add_tenants(config::Scenario& sc, int64_t tenants = 4, double load = 0.6) {
  config::ContentionSpec c;
  c.tenants = tenants;
  c.load = load;
  c.burst_s = 2e-3;
  c.idle_s = 2e-3;
  sc.contention = c;
}

model::StepCosts costs(int64_t pp, int64_t m) {
  model::StepCosts c;
  c.micro_batches = m;
  for (int64_t s = 0; s < pp; ++s) {
    model::StageCost st;
    model::ChunkCost ch;
    ch.forward_s = 1e-3;
    ch.backward_s = 2e-3;
    ch.activation_bytes = 20e6;
    ch.param_count = 1e6;
    st.chunks.push_back(ch);
    st.grad_bytes = 400e6;
    st.param_bytes = 200e6;
    c.stages.push_back(st);
  }
  c.tokens_per_step = 1;
  c.model_flops_per_step = 1;
  return c;
}

// The fabric the FlowCensus tests build: a fat-tree of 8 nodes, 2 a leaf (leaf uplinks of 800 GB/s).
hardware::ClusterSpec census_fabric() {
  auto sc = scenario(8, 8, 1, 8, 1);
  sc.cluster.nodes_per_leaf = 2;
  return sc.cluster;
}

// FlowCensus on census_fabric(), GPU 0 of each node: which edges it classes, and into which class.
// `contended`: (link name, group, lowest share, tenants crossing it) of links whose bandwidth
// changes during the run.
struct Noisy {
  std::string link;
  int64_t group = 0;
  double min_share = 0;
  std::vector<int64_t> tenants = {};
};
using Contended = std::vector<Noisy>;
std::vector<double> census_answers(const Contended& contended) {
  auto engine = platform::make_engine();
  auto plat = platform::Platform::build(*engine, census_fabric());
  auto g = [&](int64_t node, int64_t gpu = 0) { return plat->gpu(node, gpu); };
  std::vector<ContendedLink> links;
  for (const Noisy& n : contended) links.push_back({simgrid::s4u::Link::by_name(n.link), n.group, n.min_share, n.tenants});
  FlowCensus c(links);
  const int32_t r01 = c.route(g(0), g(1)), r23 = c.route(g(2), g(3)), r12 = c.route(g(1), g(2)),
                r12_gpu1 = c.route(g(1, 1), g(2, 1)), r04 = c.route(g(0), g(4)), r45 = c.route(g(4), g(5)),
                r67 = c.route(g(6), g(7));
  for (int32_t r : {r01, r23, r12, r45, r67}) c.add(0, r);
  c.add(1, r12_gpu1);                         // another actor over the same leaf uplinks
  c.add(FlowCensus::stage_actor(0), r04);     // a pipeline transfer out of GPU 0's NIC
  c.seal();
  std::vector<double> out;
  for (const auto& [owner, routes] : std::vector<std::pair<int64_t, std::vector<int32_t>>>{
           {0, {r01, r23, r45, r67}}, {0, {r12}}, {1, {r12_gpu1}}, {0, {r23, r23}}})
    for (int32_t k : c.classify(owner, routes)) out.push_back(k);
  out.push_back(static_cast<double>(c.never_full_links()));
  return out;
}

TEST(FlowCensusTest, ClassesEdgesAloneOnTheirLinks) {
  const auto v = in_child_values([] { return census_answers({}); });
  ASSERT_EQ(v.size(), 9u);
  // 0->1 shares GPU 0's NIC with the pipeline transfer (100 GB/s on 50): simulated. 2->3, 4->5 and
  // 6->7 are alone, over alike routes (a NIC up, a NIC down): one class.
  EXPECT_EQ(v[0], -1);
  EXPECT_GE(v[1], 0);
  EXPECT_EQ(v[2], v[1]);
  EXPECT_EQ(v[3], v[1]);
  // 1->2 crosses leaf uplinks that another actor's edge crosses too, but 100 of 800 GB/s: never
  // full, so both edges are alone. A never-full link is never the smallest, and the switches add
  // no latency (a built fabric's latency is on the GPU's links): alike to the NIC-to-NIC routes.
  EXPECT_GE(v[4], 0);
  EXPECT_EQ(v[4], v[1]);
  EXPECT_EQ(v[5], v[4]);
  // The same route twice in one phase: the two flows share their NICs.
  EXPECT_EQ(v[6], -1);
  EXPECT_EQ(v[7], -1);
  // Never full: leaf 0's uplink (the two 1->2 edges and the transfer 0->4: 150 of 800 GB/s), leaf
  // 1's downlink and leaf 2's; a NIC carrying one flow is full (its own bottleneck).
  EXPECT_EQ(v[8], 3);
}

// What decides a lone flow's rate is the smallest bandwidth along its route at each instant: which
// link it is on the route does not matter, nor does a link that is never the smallest.
TEST(FlowCensusTest, ALoneFlowIsAlikeToAnotherWhoseSmallestLinksAreAlike) {
  // Tenant 0 and 1 cross the NIC into GPU 3 and the NIC out of GPU 4; tenant 0 alone the NIC into
  // GPU 5 and out of GPU 6; tenant 1 alone the NIC into GPU 7. 2->3 and 4->5 are one class: each
  // has a link both tenants cross (into 3; out of 4), and the link 4->5 also crosses (tenant 0's)
  // never has less bandwidth than it. 6->7 crosses tenant 0's link and tenant 1's: either can be
  // the smaller, another class.
  const auto v = in_child_values([] {
    return census_answers({{"nic-3-0_DOWN", 0, 0.05, {0, 1}}, {"nic-4-0_UP", 0, 0.05, {0, 1}},
                           {"nic-5-0_DOWN", 1, 0.05, {0}}, {"nic-6-0_UP", 1, 0.05, {0}}, {"nic-7-0_DOWN", 2, 0.05, {1}}});
  });
  ASSERT_EQ(v.size(), 9u);
  EXPECT_GE(v[1], 0);
  EXPECT_EQ(v[2], v[1]);
  EXPECT_GE(v[3], 0);
  EXPECT_NE(v[3], v[1]);
  // Without the tenant lists (groups known only by number) nothing is hidden: three classes.
  const auto g = in_child_values([] {
    return census_answers({{"nic-3-0_DOWN", 0, 0.05}, {"nic-4-0_UP", 0, 0.05}, {"nic-5-0_DOWN", 1, 0.05},
                           {"nic-6-0_UP", 1, 0.05}, {"nic-7-0_DOWN", 2, 0.05}});
  });
  ASSERT_EQ(g.size(), 9u);
  EXPECT_GE(g[2], 0);
  EXPECT_NE(g[2], g[1]);
  EXPECT_NE(g[3], g[1]);
  EXPECT_NE(g[3], g[2]);
}

// A link whose least bandwidth is at least another's most on the route is never the smaller: leaf
// 0's uplink (800 GB/s), crossed by one actor's edges 1->2 and 0->3 in two phases (100 GB/s of
// bottlenecks), with tenants that can take it down to a tenth (80): it can be full, so it is not
// never full, but 1->2 is alone on it in its phase and its NICs (50) are always the smaller. 1->2
// is then alike to 4->5 (NICs only). Down to a twentieth (40) it can be the smaller: another class.
std::vector<double> uplink_answers(double min_share) {
  auto engine = platform::make_engine();
  auto plat = platform::Platform::build(*engine, census_fabric());
  auto g = [&](int64_t node) { return plat->gpu(node, 0); };
  FlowCensus c({{simgrid::s4u::Link::by_name("leaf-0-uplink_UP"), 0, min_share, {0}}});
  const int32_t r12 = c.route(g(1), g(2)), r03 = c.route(g(0), g(3)), r45 = c.route(g(4), g(5));
  for (int32_t r : {r12, r03, r45}) c.add(0, r);
  c.seal();
  return {static_cast<double>(c.classify(0, {r12})[0]), static_cast<double>(c.classify(0, {r45})[0]),
          static_cast<double>(c.never_full_links())};
}

TEST(FlowCensusTest, ALinkNeverTheSmallestDoesNotSplitClasses) {
  const auto tenth = in_child_values([] { return uplink_answers(0.1); });
  ASSERT_EQ(tenth.size(), 3u);
  EXPECT_GE(tenth[0], 0);
  EXPECT_EQ(tenth[0], tenth[1]);
  const auto twentieth = in_child_values([] { return uplink_answers(0.05); });
  ASSERT_EQ(twentieth.size(), 3u);
  EXPECT_GE(twentieth[0], 0);
  EXPECT_NE(twentieth[0], twentieth[1]);
  // In both the uplink can fill (the never-full links are the same: the other switch links).
  EXPECT_EQ(tenth[2], twentieth[2]);
}

TEST(FlowCensusTest, LinksWhoseBandwidthChangesClassOnlyWithinTheirGroup) {
  // The NICs into GPUs 3 and 5 change together (group 0: the same tenants), the one into GPU 7
  // otherwise (group 1). An edge alone on its links is still classed, but alike only to edges
  // whose changing links are in the same groups: 2->3 and 4->5 one class, 6->7 another.
  const auto w = in_child_values([] {
    return census_answers({{"nic-3-0_DOWN", 0, 0.05}, {"nic-5-0_DOWN", 0, 0.05}, {"nic-7-0_DOWN", 1, 0.05}});
  });
  ASSERT_EQ(w.size(), 9u);
  EXPECT_GE(w[1], 0);
  EXPECT_EQ(w[2], w[1]);
  EXPECT_GE(w[3], 0);
  EXPECT_NE(w[3], w[1]);
  // Links each a group of its own (faults): 2->3 and 4->5 classed apart.
  const auto f = in_child_values([] { return census_answers({{"nic-3-0_DOWN", -1, 0.05}, {"nic-5-0_DOWN", -2, 0.05}}); });
  ASSERT_EQ(f.size(), 9u);
  EXPECT_GE(f[1], 0);
  EXPECT_GE(f[2], 0);
  EXPECT_NE(f[2], f[1]);
  // Leaf 0's uplink carries 150 GB/s of bottlenecks: still never full if it keeps half of its 800
  // (the two 1->2 edges one class, 3 links never full), not if it can drop to a tenth (80).
  const auto half = in_child_values([] { return census_answers({{"leaf-0-uplink_UP", 0, 0.5}}); });
  ASSERT_EQ(half.size(), 9u);
  EXPECT_GE(half[4], 0);
  EXPECT_EQ(half[5], half[4]);
  EXPECT_EQ(half[8], 3);
  const auto tenth = in_child_values([] { return census_answers({{"leaf-0-uplink_UP", 0, 0.1}}); });
  ASSERT_EQ(tenth.size(), 9u);
  EXPECT_EQ(tenth[4], -1);
  EXPECT_EQ(tenth[5], -1);
  EXPECT_EQ(tenth[8], 2);
}

// The run's DP flows classed and started, then per step its time and the critical GPU's parts.
std::vector<double> run(config::Scenario sc, bool classes, config::Fidelity fidelity) {
  sc.flow_classes = classes;
  EngineOptions o;
  o.steps = 4;
  o.replicate = false;
  o.fidelity = fidelity;
  o.buckets = 2;
  const auto r = simulate(sc, costs(sc.parallel.pp, sc.training.global_batch / sc.parallel.dp), o);
  std::vector<double> out{static_cast<double>(r.dp_flows_classed), static_cast<double>(r.dp_flows_started)};
  for (const auto& s : r.steps)
    for (double v : {s.time_s, s.exposed_comm_s, s.bubble_s, s.compute_s, s.sync_wait_s}) out.push_back(v);
  return out;
}

// How many flows the run's classes stand for: exactly the census's, or at least (bandwidths that
// change during the run: a phase that starts when none will change before it ends is classed by
// the rates its flows start with too, Simulation::reclass) and at most `most`.
struct Classed {
  double least = 0;
  double most = -1;  // < 0: exactly `least`
};

// With and without classes: the same step times (to 1e-9 relative), every flow simulated without
// them, and `classed` flows of the run stood for by their class with them. Returns the step time.
double expect_same_steps(const config::Scenario& sc, Classed classed,
                         config::Fidelity fidelity = config::Fidelity::kSymmetric) {
  const auto with = in_child_values([&] { return run(sc, true, fidelity); });
  const auto without = in_child_values([&] { return run(sc, false, fidelity); });
  EXPECT_EQ(with.size(), 2 + 4 * 5u);
  if (with.size() != 2 + 4 * 5u || without.size() != with.size()) return -1;
  EXPECT_EQ(without[0], 0);
  if (classed.most < 0) {
    EXPECT_EQ(with[0], classed.least);
  } else {
    EXPECT_GE(with[0], classed.least);
    EXPECT_LE(with[0], classed.most);
  }
  // Every DP edge is either started or stood for.
  EXPECT_EQ(with[0] + with[1], without[1]);
  for (size_t i = 2; i < with.size(); ++i)
    EXPECT_NEAR(with[i], without[i], 1e-9 * std::fabs(without[i]) + 1e-15) << "value " << (i - 2) % 5 << " of step " << (i - 2) / 5;
  // The steps took time (a stalled run would compare equal too).
  EXPECT_GT(without[2], 5e-3);
  return without[2 + 5];
}

// Tenants that do act on the run: its step differs from the same run without them.
void expect_tenants_matter(double with_tenants, double without) { EXPECT_GT(std::fabs(with_tenants - without), 1e-6 * without); }

// Fat-tree, 32 nodes (8 leaves of 4 nodes), TP8 PP2 DP16, 2 buckets: each stage's 16-node ring
// crosses four leaves, twice a step. The two edges at the pipeline's GPU share its NIC with the
// pipeline transfers; the 14 others are alone (a leaf uplink carries one ring edge and at most
// one transfer: never full), in one class (within a leaf or across leaves: the NICs are the
// smallest links, the switches add no latency): 13 of them classed per ring, 2 stages x 2 buckets
// x 4 steps.
TEST(FlowClassesTest, FatTree) {
  const double quiet = expect_same_steps(scenario(32, 8, 2, 16, 4), {13 * 16});
  auto sc = scenario(32, 8, 2, 16, 4);
  add_tenants(sc);
  // The leaf uplinks change bandwidth: the 4 edges across leaves are simulated, and of the 12
  // within a leaf the 11 away from the pipeline's GPU are one class.
  expect_tenants_matter(expect_same_steps(sc, {10 * 16}), quiet);
}

// One tenant that takes 0.4 of the uplinks it crosses leaves them 0.6 of their 200 GB/s a rail:
// 120, above the 100 GB/s a ring edge and a transfer can put on one, so they are never full and
// the tenant changes nothing: the classes and the steps of the run without it.
TEST(FlowClassesTest, FatTreeTenantWithinTheHeadroom) {
  auto sc = scenario(32, 8, 2, 16, 4);
  const double quiet = expect_same_steps(sc, {13 * 16});
  add_tenants(sc, 1, 0.4);
  EXPECT_EQ(expect_same_steps(sc, {13 * 16}), quiet);
}

// No pipeline (TP8 DP32, 32 nodes, 8 leaves of 4): each leaf's uplinks carry one ring edge, so
// an edge between leaves is alone on them; without tenants every edge is one class: 31 classed
// a ring, 2 buckets x 4 steps. One tenant at 0.9 leaves an uplink it crosses 20 of its 200 GB/s,
// under the edge's 50: full, yet alone, so the edge is classed with the edges whose uplinks the
// tenant crosses alike. Of the four kinds of leaf-to-leaf route (the tenant on the uplink out,
// on the downlink in, on both, on neither: this placement has all four) the first three have
// the tenant's links as their smallest, the last and the routes within a leaf the NICs: 2 flows
// a ring, 30 classed; phases that start and end while the tenant is idle are one class (31). At
// 0.7 the uplinks keep 60 GB/s, never full: all classed as without the tenant, the same steps.
TEST(FlowClassesTest, TenantGroupsClassEdgesAloneOnChangingLinks) {
  auto sc = scenario(32, 8, 1, 32, 4);
  const double quiet = expect_same_steps(sc, {31 * 8});
  add_tenants(sc, 1, 0.9);
  expect_tenants_matter(expect_same_steps(sc, {30 * 8, 31 * 8}), quiet);
  sc.contention->load = 0.7;
  EXPECT_EQ(expect_same_steps(sc, {31 * 8}), quiet);
}

// The tenant of the test above, busy or idle for a whole run (periods of 1,000 s, far longer than
// the run; its state at the start is its seed's draw): while idle the links keep their bandwidth,
// no phase can see it change, and every edge is one class as without the tenant (31 classed a
// ring), with the quiet run's steps; while busy its links are the smallest of 3 kinds of route: 2
// classes (30 classed) and slower steps.
TEST(FlowClassesTest, AQuietTenantCostsNoFlows) {
  auto sc = scenario(32, 8, 1, 32, 4);
  const double quiet = expect_same_steps(sc, {31 * 8});
  add_tenants(sc, 1, 0.9);
  sc.contention->burst_s = 1000;
  sc.contention->idle_s = 1000;
  sc.contention->seed = 1;  // starts idle
  EXPECT_EQ(expect_same_steps(sc, {31 * 8}), quiet);
  sc.contention->seed = 2;  // starts busy
  expect_tenants_matter(expect_same_steps(sc, {30 * 8}), quiet);
}

TEST(FlowClassesTest, FatTreeOversubscribed) {
  // Leaf uplinks at a quarter: 50 GB/s a rail, full with a ring edge and a transfer, so the edge
  // leaving the pipeline GPU's leaf is simulated too.
  auto sc = scenario(32, 8, 2, 16, 4);
  sc.cluster.oversubscription = 4;
  expect_same_steps(sc, {12 * 16});
}

TEST(FlowClassesTest, FatTreeFullFidelity) {
  // Every replica has its own communication actor sending one edge a phase: nothing to class, the
  // census must still leave the run as it was.
  expect_same_steps(scenario(8, 8, 2, 4, 4), {0}, config::Fidelity::kFull);
}

// Rail-optimised, 64 nodes (two leaves of 32 per rail), TP8 DP64, no pipeline: the 64-edge ring
// crosses leaves twice; one class (within a leaf or across, the NICs are the smallest links), 63
// edges classed per ring, 2 buckets x 4 steps.
TEST(FlowClassesTest, RailOptimized) {
  auto sc = scenario(64, 8, 1, 64, 2);
  sc.cluster.topology = hardware::Topology::kRailOptimized;
  expect_same_steps(sc, {63 * 8});
  // Leaf uplinks at 1/16 (100 GB/s for the 32 rails' ports): the rails may compete, every TP
  // rank's ring is simulated (8 rails), still one class.
  sc.cluster.oversubscription = 16;
  const double quiet = expect_same_steps(sc, {63 * 8 * 8});
  // With tenants on the uplinks, each ring's 2 edges across leaves are simulated, the 62 inside
  // them are one class.
  add_tenants(sc);
  expect_tenants_matter(expect_same_steps(sc, {61 * 8 * 8}), quiet);
}

// Shared fabric, 16 nodes, TP2 DP64: hierarchical rings (4 members a node), the inter-node rings
// over the shared aggregation links.
// The intra-node rings (16 nodes x 4 edges, an all-reduce's reduce-scatter and all-gather on the
// same edges: one part) are classed, all but one; the inter-node rings share each node's uplink
// (4 rings at 50 GB/s on 100) and are simulated: 63 per bucket, 2 buckets x 4 steps.
TEST(FlowClassesTest, Shared) {
  auto sc = scenario(16, 2, 1, 64, 4);
  sc.cluster.topology = hardware::Topology::kShared;
  sc.cluster.oversubscription = 2;
  const double quiet = expect_same_steps(sc, {63 * 8});
  add_tenants(sc);
  expect_tenants_matter(expect_same_steps(sc, {63 * 8}), quiet);
}

// Platform files: 64 DGX H100 on two rail-optimised pods (every rail simulated: a file's rails may
// compete), and two nodes joined by one shared link.
TEST(FlowClassesTest, PlatformFile) {
  // 8 rails x 2 stages x 2 buckets x 4 steps rings of 32 edges, all but 160 classed.
  auto sc = scenario(64, 8, 2, 32, 4);
  sc.cluster.platform_file = source_path("platforms/h100-rail-2pod.xml");
  expect_same_steps(sc, {8 * 2 * 2 * 4 * 32 - 160});
}

TEST(FlowClassesTest, PlatformFileSharedLink) {
  // TP2 DP8 on two nodes: rings of 4 in each node (classed: 2 x 4 - 1 = 7 per all-reduce, 2 rails
  // x 2 buckets x 4 steps = 112) and between the nodes over the one shared link (simulated).
  auto sc = scenario(2, 2, 1, 8, 4);
  sc.cluster.platform_file = source_path("platforms/shared-2node.xml");
  const double quiet = expect_same_steps(sc, {112});
  add_tenants(sc);
  expect_tenants_matter(expect_same_steps(sc, {112}), quiet);
}

// Pipeline transfers timed (Simulation::timed_transfer), then per step its time and the critical
// GPU's parts.
std::vector<double> run_timed(config::Scenario sc, bool classes) {
  sc.flow_classes = classes;
  EngineOptions o;
  o.steps = 4;
  o.replicate = false;
  o.fidelity = config::Fidelity::kSymmetric;  // one pipeline: its transfers meet no other replica's
  const auto r = simulate(sc, costs(sc.parallel.pp, sc.training.global_batch / sc.parallel.dp), o);
  std::vector<double> out{static_cast<double>(r.p2p_transfers_timed)};
  for (const auto& s : r.steps)
    for (double v : {s.time_s, s.exposed_comm_s, s.bubble_s, s.compute_s, s.sync_wait_s}) out.push_back(v);
  return out;
}

// With classes, a pipeline transfer that nothing else can share a link with, from its start to
// its end, at bandwidths that do not change meanwhile, is timed (latency + bytes / rate) instead
// of simulated: the steps are those of simulating every transfer (to 1e-9 relative), and some are
// timed. Fat-tree, TP8 PP2 DP16, 32 nodes, 8 micro-batches: 2 x 8 transfers a step, each into a
// NIC no other transfer enters; those while the receiving stage's DP ring runs (its edge into that
// NIC) are simulated.
TEST(FlowClassesTest, PipelineTransfersAloneAreTimed) {
  auto check = [](const config::Scenario& sc) {
    const auto with = in_child_values([&] { return run_timed(sc, true); });
    const auto without = in_child_values([&] { return run_timed(sc, false); });
    ASSERT_EQ(with.size(), 1 + 4 * 5u);
    ASSERT_EQ(without.size(), with.size());
    EXPECT_EQ(without[0], 0);
    EXPECT_GT(with[0], 0);
    EXPECT_LT(with[0], 4 * 2 * 8);
    for (size_t i = 1; i < with.size(); ++i)
      EXPECT_NEAR(with[i], without[i], 1e-9 * std::fabs(without[i]) + 1e-15) << "value " << (i - 1) % 5 << " of step " << (i - 1) / 5;
    EXPECT_GT(without[1], 5e-3);
  };
  auto sc = scenario(32, 8, 2, 16, 8);
  check(sc);
  add_tenants(sc);  // bandwidths that change: timed only between two changes
  check(sc);
}

}  // namespace
}  // namespace trainsim::engine
