// engine.flow_classes on shipped scenarios at full size: the per-step records and the console
// report are the same with and without flow classes (engine/flow_classes.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli_test_util.hpp"

namespace trainsim::testing {
namespace {

// The console report without its last line's wall time ("... in 1.2 s").
std::string without_wall(const std::string& console) {
  std::string out;
  std::istringstream in(console);
  for (std::string line; std::getline(in, line);)
    if (line.find("simulated (") == std::string::npos) out += line + "\n";
  return out;
}

void expect_same_run(const std::string& args) {
  const std::string on = tmp("on.csv"), off = tmp("off.csv");
  const Result a = trainsim("run " + args + " --advice 0 --quiet --csv " + on);
  const Result b = trainsim("run " + args + " --advice 0 --quiet --csv " + off + " --set engine.flow_classes=false");
  ASSERT_EQ(a.code, 0) << a.err;
  ASSERT_EQ(b.code, 0) << b.err;
  EXPECT_EQ(read_file(on), read_file(off));
  EXPECT_EQ(without_wall(a.out), without_wall(b.out));
  EXPECT_GT(read_file(on).size(), 100u);
  std::filesystem::remove_all(scratch());
}

TEST(FlowClassesCli, Llama3On16kGpusWithTenants) {
  // Tenants busy and idle for 1 s at a time: link bandwidths change within each 7 s step.
  expect_same_run(scenario("llama3-405b-16k.yaml") +
                  " --steps 3 --set contention.tenants=4 --set contention.load=0.5 --set contention.burst=1s"
                  " --set contention.idle=1s");
}

TEST(FlowClassesCli, DeepSeekV3AtDp1024) {
  expect_same_run(scenario("deepseek-v3-2048.yaml") +
                  " --steps 3 --no-replicate --set cluster.nodes=2048 --set parallelism.dp=1024");
}

}  // namespace
}  // namespace trainsim::testing
