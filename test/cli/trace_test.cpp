// Issue 16: the --trace file is valid Chrome trace-event JSON (the format ui.perfetto.dev imports:
// https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU): a process per
// replica with a thread per simulated GPU and its TP and DP streams, step markers, every pipeline
// message a flow from its send to its receive, bubble slices, each DP bucket's collective.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

namespace {

namespace fs = std::filesystem;
using trainsim::testing::scenario;
using trainsim::testing::tmp;
using trainsim::testing::trainsim;

struct Slice {
  double ts, end;
};

TEST(TraceTest, TraceEventFormatWithGpusStepsFlowsAndBubbles) {
  // tiny-gpt-2node: TP2 x PP2 x DP4 on 16 GPUs, 1F1B, 16 micro-batches; full fidelity simulates
  // every replica: 8 GPUs (one per TP group).
  const std::string path = tmp("trace.json");
  auto r = trainsim("run " + scenario("tiny-gpt-2node.yaml") + " --steps 4 --trace-steps 2 --advice 0 --quiet --trace " + path);
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream in(path);
  const auto j = nlohmann::json::parse(in);
  ASSERT_TRUE(j.contains("traceEvents") && j["traceEvents"].is_array());
  const std::set<std::string> phases = {"X", "i", "s", "f", "M"};
  const std::set<std::string> metadata = {"process_name", "process_sort_index", "thread_name", "thread_sort_index"};
  std::map<int64_t, std::string> threads;
  std::map<int64_t, std::vector<Slice>> slices;  // by tid
  std::map<uint64_t, std::pair<const nlohmann::json*, const nlohmann::json*>> flows;
  std::map<std::string, int> by_cat;
  int markers = 0;
  for (const auto& e : j["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e["ph"].is_string()) << e.dump();
    const std::string ph = e["ph"];
    ASSERT_TRUE(phases.count(ph)) << e.dump();
    ASSERT_TRUE(e["pid"].is_number_integer() && e["tid"].is_number_integer()) << e.dump();
    ASSERT_TRUE(e["name"].is_string()) << e.dump();
    if (ph == "M") {
      EXPECT_TRUE(metadata.count(e["name"].get<std::string>())) << e.dump();
      EXPECT_TRUE(e["args"].is_object()) << e.dump();
      if (e["name"] == "thread_name") threads[e["tid"].get<int64_t>()] = e["args"]["name"];
      continue;
    }
    ASSERT_TRUE(e["ts"].is_number() && e["ts"].get<double>() >= 0) << e.dump();
    const double ts = e["ts"].get<double>();
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number() && e["dur"].get<double>() >= 0) << e.dump();
      slices[e["tid"].get<int64_t>()].push_back({ts, ts + e["dur"].get<double>()});
      ++by_cat[e["cat"].get<std::string>()];
    } else if (ph == "i") {
      EXPECT_EQ(e["s"], "g");
      ++markers;
    } else {
      ASSERT_TRUE(e["id"].is_number_integer()) << e.dump();
      auto& f = flows[e["id"].get<uint64_t>()];
      if (ph == "s") {
        EXPECT_EQ(f.first, nullptr) << "flow id started twice: " << e.dump();
        f.first = &e;
      } else {
        EXPECT_EQ(e["bp"], "e");
        EXPECT_EQ(f.second, nullptr) << "flow id finished twice: " << e.dump();
        f.second = &e;
      }
    }
  }
  // Threads: "steps", then per simulated GPU its compute, TP and DP streams.
  EXPECT_EQ(threads.size(), 1u + 8 * 3);
  int gpus = 0;
  for (const auto& [tid, name] : threads)
    if (name.rfind("GPU ", 0) == 0 && name.find("stream") == std::string::npos) ++gpus;
  EXPECT_EQ(gpus, 8);
  // Two traced steps: a slice and a marker each.
  EXPECT_EQ(markers, 2);
  EXPECT_EQ(by_cat["step"], 2);
  // Pipeline messages: 16 micro-batches x (activation + gradient) per replica per step, 4 replicas, 2 steps.
  EXPECT_EQ(flows.size(), 16u * 2 * 4 * 2);
  auto enclosed = [&](const nlohmann::json& e) {
    for (const auto& s : slices[e["tid"].get<int64_t>()])
      if (s.ts <= e["ts"].get<double>() + 1e-6 && e["ts"].get<double>() <= s.end + 1e-6) return true;
    return false;
  };
  for (const auto& [id, f] : flows) {
    ASSERT_NE(f.first, nullptr) << id;
    ASSERT_NE(f.second, nullptr) << id;
    EXPECT_NE((*f.first)["tid"], (*f.second)["tid"]) << id;  // between two GPUs
    EXPECT_LE((*f.first)["ts"].get<double>(), (*f.second)["ts"].get<double>() + 1e-6) << id;
    EXPECT_TRUE(enclosed(*f.first)) << "send end of flow " << id << " has no slice";
    EXPECT_TRUE(enclosed(*f.second)) << "receive end of flow " << id << " has no slice";
  }
  EXPECT_GT(by_cat["bubble"], 0);   // 1F1B fill and drain, and the step end
  EXPECT_GT(by_cat["tp"], 0);       // TP2: the TP stream carries the exposed TP share
  EXPECT_GT(by_cat["dp-sync"], 0);  // each DP bucket's collective on the DP stream
  EXPECT_EQ(by_cat["send"], static_cast<int>(flows.size()));
  EXPECT_EQ(by_cat["recv"], static_cast<int>(flows.size()));
  fs::remove(path);
}

}  // namespace
