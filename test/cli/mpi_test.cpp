// Batches across machines (issue 9): `mpirun -np 2 trainsim sweep|variance` writes the same report
// as the one-process run, and a --emit-slurm job array merged afterwards writes it too.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "cli/mpi_batch.hpp"

namespace {

namespace fs = std::filesystem;
using trainsim::cli::SweepOptions;

// Safety net: an in-process batch below that wrongly starts a job spawns /proc/self/exe, i.e. this
// test binary, as `test_cli worker ...`; exit at once instead of running the suite recursively.
const bool kNotAWorker = [] {
  std::ifstream cmdline("/proc/self/cmdline");
  std::string arg0, arg1;
  std::getline(cmdline, arg0, '\0');
  std::getline(cmdline, arg1, '\0');
  if (arg1 == "worker") std::_Exit(97);
  return true;
}();
using trainsim::cli::VarianceOptions;

using trainsim::testing::Result;
using trainsim::testing::scratch;
using trainsim::testing::shell;

const std::string kBinary = TRAINSIM_BINARY;
const std::string kMpirun = "mpirun --allow-run-as-root --oversubscribe -np ";

using trainsim::testing::scenario;
using trainsim::testing::tmp;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The report without wall-clock keys (they differ between any two runs).
nlohmann::json without_wall_clock(nlohmann::json j) {
  if (j.is_object()) {
    j.erase("wall_s");
    for (auto& [k, v] : j.items()) v = without_wall_clock(v);
  } else if (j.is_array()) {
    for (auto& v : j) v = without_wall_clock(v);
  }
  return j;
}

nlohmann::json report(const std::string& path) { return without_wall_clock(nlohmann::json::parse(slurp(path))); }

bool have_mpirun() {
#ifndef TRAINSIM_HAVE_MPI
  return false;
#else
  return std::system("command -v mpirun >/dev/null 2>&1") == 0;
#endif
}

#define SKIP_WITHOUT_MPI() \
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not available or trainsim built without MPI (TRAINSIM_MPI=OFF)"

const std::string kSweep = " sweep " + scenario("tiny-gpt-2node.yaml") + " --nodes 1..4 --steps 3";
const std::string kVariance = " variance " + scenario("shared-tenants.yaml") + " --runs 4 --steps 5";

TEST(MpiTest, SweepOverTwoRanksWritesTheOneProcessReport) {
  SKIP_WITHOUT_MPI();
  const auto one = shell(kBinary + kSweep + " --jobs 1 --json " + tmp("s1.json") + " --csv " + tmp("s1.csv"));
  ASSERT_EQ(one.code, 0) << one.err;
  const auto two = shell(kMpirun + "2 " + kBinary + kSweep + " --json " + tmp("s2.json") + " --csv " + tmp("s2.csv"));
  ASSERT_EQ(two.code, 0) << two.err;
  // --nodes 1..4 is 1, 2, 4: three points, point i on rank i % 2, so rank 1 ran the 2-node point.
  EXPECT_NE(two.err.find("3 points over 2 MPI ranks"), std::string::npos) << two.err;
  EXPECT_NE(two.err.find("2 nodes (rank 1) done"), std::string::npos) << two.err;
  EXPECT_EQ(report(tmp("s2.json")), report(tmp("s1.json")));
  EXPECT_EQ(report(tmp("s2.json"))["points"].size(), 3u);
  EXPECT_EQ(slurp(tmp("s2.csv")), slurp(tmp("s1.csv")));
  EXPECT_EQ(two.out, one.out);  // the console table, once (rank 1 prints nothing)
}

TEST(MpiTest, VarianceOverTwoRanksWritesTheOneProcessReport) {
  SKIP_WITHOUT_MPI();
  const auto one = shell(kBinary + kVariance + " --jobs 1 --json " + tmp("v1.json"));
  ASSERT_EQ(one.code, 0) << one.err;
  const auto two = shell(kMpirun + "2 " + kBinary + kVariance + " --json " + tmp("v2.json"));
  ASSERT_EQ(two.code, 0) << two.err;
  // 4 seeds + the dedicated-fabric run (shared-tenants has a contention block) = 5 jobs.
  EXPECT_NE(two.err.find("5 runs over 2 MPI ranks"), std::string::npos) << two.err;
  const auto j = report(tmp("v2.json"));
  EXPECT_EQ(j, report(tmp("v1.json")));
  ASSERT_EQ(j["runs"].size(), 4u);
  EXPECT_EQ(j["runs"][3]["seed"], 4);
  EXPECT_TRUE(j.contains("dedicated"));
  EXPECT_EQ(two.out, one.out);
}

// `plan` shares its shortlist's simulations over the ranks: the same report as one process.
TEST(MpiTest, PlanOverTwoRanksWritesTheOneProcessReport) {
  SKIP_WITHOUT_MPI();
  const std::string plan = " plan " + scenario("tiny-gpt-2node.yaml") + " --steps 3 --top 3 --quiet";
  const auto one = shell(kBinary + plan + " --jobs 1 --json " + tmp("p1.json"));
  ASSERT_EQ(one.code, 0) << one.err;
  const auto two = shell(kMpirun + "2 " + kBinary + plan + " --json " + tmp("p2.json"));
  ASSERT_EQ(two.code, 0) << two.err;
  const auto j = report(tmp("p2.json"));
  EXPECT_EQ(j, report(tmp("p1.json")));
  EXPECT_EQ(j["layouts"].size(), 4u);  // the 3 best and the layout as written
  EXPECT_EQ(std::count(two.out.begin(), two.out.end(), '#'), std::count(one.out.begin(), one.out.end(), '#'));  // one table
}

TEST(MpiTest, RankZeroAppendsEveryRanksPointsToTheResumeFile) {
  SKIP_WITHOUT_MPI();
  const std::string results = tmp("resume.jsonl");
  fs::remove(results);
  const auto two = shell(kMpirun + "2 " + kBinary + kSweep + " --quiet --resume " + results + " --json " + tmp("r2.json"));
  ASSERT_EQ(two.code, 0) << two.err;
  std::ifstream in(results);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) ++lines;
  EXPECT_EQ(lines, 3);  // one line per point, whichever rank ran it
  // A later run with the same file recomputes nothing ("point" progress lines) and reports the same.
  const auto again = shell(kBinary + kSweep + " --jobs 1 --resume " + results + " --json " + tmp("r1.json"));
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(again.err.find("point "), std::string::npos) << again.err;
  EXPECT_EQ(report(tmp("r1.json")), report(tmp("r2.json")));
}

// Runs every array task of a --emit-slurm script the way Slurm would (SLURM_ARRAY_TASK_ID=i).
void run_array(const std::string& script, int tasks) {
  for (int i = 0; i < tasks; ++i) {
    const auto r = shell("SLURM_ARRAY_TASK_ID=" + std::to_string(i) + " bash " + script);
    ASSERT_EQ(r.code, 0) << "task " << i << ": " << r.err;
  }
}

TEST(MpiTest, EmitSlurmSweepArrayMergesIntoTheOneProcessReport) {
  const auto one = shell(kBinary + kSweep + " --jobs 1 --json " + tmp("e1.json") + " --csv " + tmp("e1.csv"));
  ASSERT_EQ(one.code, 0) << one.err;
  SweepOptions opt;
  opt.scenario = scenario("tiny-gpt-2node.yaml");
  opt.nodes = "1..4";
  opt.steps = 3;
  opt.json_path = tmp("e2.json");
  opt.csv_path = tmp("e2.csv");
  const std::string script = tmp("sweep.sbatch");
  fs::remove_all(tmp("sweep-results"));
  ASSERT_EQ(trainsim::cli::emit_sweep_slurm(opt, script, kBinary), 0);
  const std::string text = slurp(script);
  EXPECT_NE(text.find("#SBATCH --array=0-2\n"), std::string::npos) << text;  // 3 points: tasks 0..2
  EXPECT_NE(text.find("--out \"$RESULTS/$SLURM_ARRAY_TASK_ID.json\""), std::string::npos);
  EXPECT_FALSE(fs::exists(tmp("e2.json")));  // nothing simulated yet
  run_array(script, 3);
  EXPECT_TRUE(fs::exists(tmp("sweep-results/2.json")));
  const auto merge = shell("bash " + script + " merge");
  ASSERT_EQ(merge.code, 0) << merge.err;
  EXPECT_EQ(merge.err.find("point "), std::string::npos) << merge.err;  // the merge simulated nothing
  EXPECT_EQ(report(tmp("e2.json")), report(tmp("e1.json")));
  EXPECT_EQ(slurp(tmp("e2.csv")), slurp(tmp("e1.csv")));
  EXPECT_EQ(merge.out, one.out);
}

TEST(MpiTest, EmitSlurmVarianceArrayMergesIntoTheOneProcessReport) {
  const auto one = shell(kBinary + kVariance + " --jobs 1 --json " + tmp("w1.json"));
  ASSERT_EQ(one.code, 0) << one.err;
  VarianceOptions opt;
  opt.scenario = scenario("shared-tenants.yaml");
  opt.runs = 4;
  opt.steps = 5;
  opt.json_path = tmp("w2.json");
  opt.quiet = true;
  const std::string script = tmp("variance.sh");
  fs::remove_all(tmp("variance-results"));
  ASSERT_EQ(trainsim::cli::emit_variance_slurm(opt, script, kBinary), 0);
  const std::string text = slurp(script);
  EXPECT_NE(text.find("#SBATCH --array=0-4\n"), std::string::npos) << text;  // 4 seeds + dedicated run
  EXPECT_NE(text.find("'contention.tenants=0'"), std::string::npos);        // task 4: the dedicated fabric
  run_array(script, 5);
  // The merge step's report, in-process from the concatenated results (no job left to simulate).
  std::string all;
  for (int i = 0; i < 5; ++i) all += slurp(tmp("variance-results/" + std::to_string(i) + ".json"));
  std::ofstream(tmp("variance-results/all.jsonl")) << all;
  ASSERT_EQ(trainsim::cli::variance_command(opt, kBinary.c_str(), tmp("variance-results/all.jsonl")), 0);
  EXPECT_EQ(report(tmp("w2.json")), report(tmp("w1.json")));
}

TEST(MpiTest, EmitSlurmRefusesABatchWithNothingToSimulate) {
  SweepOptions opt;
  opt.scenario = scenario("tiny-gpt-2node.yaml");
  opt.nodes = "3";  // dp = 6: global_batch 128 is not a multiple of dp * micro_batch = 12, so no job to run
  const auto r = shell(kBinary + " sweep " + opt.scenario + " --nodes 3 --steps 3 --jobs 1 --json -");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_FALSE(nlohmann::json::parse(r.out)["points"][0]["feasible"].get<bool>()) << r.out;
  EXPECT_THROW(trainsim::cli::emit_sweep_slurm(opt, tmp("none.sbatch"), kBinary), std::exception);
}

TEST(MpiTest, ShellQuoteSurvivesQuotesAndSpaces) {
  EXPECT_EQ(trainsim::cli::shell_quote("it's a b"), "'it'\\''s a b'");
  const auto r = shell("printf '%s' " + trainsim::cli::shell_quote("it's $HOME `x`"));
  EXPECT_EQ(r.out, "it's $HOME `x`");
}

TEST(MpiTest, LauncherWorldSizeReadsOpenMpiAndPmiEnvironment) {
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("PMI_SIZE");
  EXPECT_EQ(trainsim::cli::launcher_world_size(), 1);
  ::setenv("PMI_SIZE", "6", 1);
  EXPECT_EQ(trainsim::cli::launcher_world_size(), 6);
  ::setenv("OMPI_COMM_WORLD_SIZE", "3", 1);  // Open MPI's variable is read first
  EXPECT_EQ(trainsim::cli::launcher_world_size(), 3);
  ::unsetenv("OMPI_COMM_WORLD_SIZE");
  ::unsetenv("PMI_SIZE");
}

}  // namespace
