// Batches (sweep, variance) under stress (issue 21, items 3 and 4): the scenario is read once by
// the parent, so a pipe works and an edit during the batch changes nothing.
// Commands that run in the background are started with fork/exec (their pid is needed) and their
// standard error is read from a file while they run; every one is killed if it outlives its test.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using trainsim::testing::shell;

const std::string kBinary = TRAINSIM_BINARY;
const std::string kTiny = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/tiny-gpt-2node.yaml";

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory of this test's own (mkdtemp), removed by the destructor.
class Scratch {
 public:
  Scratch() {
    std::string tmpl = (fs::temp_directory_path() / "trainsim-batch-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    dir_ = tmpl;
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path operator/(const std::string& name) const { return dir_ / name; }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

// `trainsim ARGS...` started in the background with standard output and error in files.
class Background {
 public:
  Background(const std::vector<std::string>& args, const fs::path& out, const fs::path& err, const fs::path& tmpdir = {})
      : err_(err) {
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!tmpdir.empty()) ::setenv("TMPDIR", tmpdir.c_str(), 1);
      if (std::freopen(err.c_str(), "w", stderr) == nullptr || std::freopen(out.c_str(), "w", stdout) == nullptr) ::_exit(99);
      std::vector<char*> argv = {const_cast<char*>(kBinary.c_str())};
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(kBinary.c_str(), argv.data());
      ::_exit(98);
    }
  }
  ~Background() {
    if (pid_ > 0 && !reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  pid_t pid() const { return pid_; }

  // Waits up to `seconds` for `text` on its standard error; false if it ended or time ran out first.
  bool wait_for(const std::string& text, double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (read_file(err_).find(text) != std::string::npos) return true;
      if (!reaped_ && ::waitpid(pid_, &status_, WNOHANG) == pid_) reaped_ = true;
      if (reaped_) return read_file(err_).find(text) != std::string::npos;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Its exit code once it ends (within `seconds`; else it is killed and -1 returned); 128 + N when
  // a signal N ended it.
  int wait(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!reaped_ && std::chrono::steady_clock::now() < end) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_)
        reaped_ = true;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!reaped_) return -1;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : 128 + WTERMSIG(status_);
  }

 private:
  pid_t pid_ = -1;
  fs::path err_;
  bool reaped_ = false;
  int status_ = 0;
};

// The points' step times of a sweep's JSON report.
std::vector<double> step_times(const nlohmann::json& sweep) {
  std::vector<double> out;
  for (const auto& p : sweep["points"]) out.push_back(p["step_time_s"].get<double>());
  return out;
}

// `sweep /dev/stdin` with the scenario piped in: the parent reads the pipe once and the workers
// simulate its copy (they once reopened /dev/stdin and found it empty). The same report as the file.
TEST(BatchTest, SweepAndVarianceReadTheScenarioFromAPipe) {
  Scratch dir;
  const std::string sweep = " --nodes 1,2 --steps 3 --jobs 2 --quiet --json ";
  const auto from_file = shell(kBinary + " sweep " + kTiny + sweep + (dir / "file.json").string());
  ASSERT_EQ(from_file.code, 0) << from_file.err;
  const auto from_pipe = shell("cat " + kTiny + " | " + kBinary + " sweep /dev/stdin" + sweep + (dir / "pipe.json").string());
  ASSERT_EQ(from_pipe.code, 0) << from_pipe.err;
  const auto file = nlohmann::json::parse(read_file(dir / "file.json"));
  const auto pipe = nlohmann::json::parse(read_file(dir / "pipe.json"));
  ASSERT_EQ(pipe["points"].size(), 2u);
  EXPECT_EQ(step_times(pipe), step_times(file));
  EXPECT_EQ(pipe["scenario"]["name"], "tiny-gpt-2node");

  const auto variance = shell("cat " + kTiny + " | " + kBinary + " variance /dev/stdin --runs 2 --steps 3 --jobs 2 --quiet --json -");
  ASSERT_EQ(variance.code, 0) << variance.err;
  const auto v = nlohmann::json::parse(variance.out);
  ASSERT_EQ(v["runs"].size(), 2u);
  // 2 nodes x 8 H100, tp 2 pp 2 dp 4: the 2-node point of the sweep above, one seed after another.
  EXPECT_EQ(v["runs"][0]["step_time_s"]["mean"].get<double>(), file["points"][1]["step_time_s"].get<double>());

  // A Slurm array's tasks read the scenario later, on their own: a pipe cannot serve them.
  const auto slurm = shell("cat " + kTiny + " | " + kBinary + " sweep /dev/stdin --nodes 1,2 --emit-slurm " + (dir / "s.sbatch").string());
  EXPECT_EQ(slurm.code, 2);
  EXPECT_EQ(slurm.err, "--emit-slurm: the array's tasks read the scenario themselves, so it must be a regular file; /dev/stdin is "
                       "not (save it to a file first)\n");
  EXPECT_FALSE(fs::exists(dir / "s.sbatch"));
}

// The scenario file rewritten (48 layers instead of 24) while the sweep runs: every point is still
// the 24-layer scenario the sweep started with, exactly as a sweep of the untouched file reports.
TEST(BatchTest, ScenarioEditedDuringASweepIsNotMixedIn) {
  Scratch dir;
  const std::string original = read_file(kTiny);
  const fs::path scenario = dir / "s.yaml";
  std::ofstream(scenario, std::ios::binary) << original;
  // Per-step jitter keeps every step simulated (no steady state to replicate): ~0.5 s per point.
  const std::vector<std::string> args = {"--nodes", "1..8", "--steps", "200", "--set", "stragglers.jitter=0.02", "--jobs", "1"};
  std::vector<std::string> edited_run = {"sweep", scenario.string()};
  edited_run.insert(edited_run.end(), args.begin(), args.end());
  edited_run.insert(edited_run.end(), {"--json", (dir / "edited.json").string()});
  Background sweep(edited_run, dir / "out", dir / "err");
  ASSERT_TRUE(sweep.wait_for("run 1/4", 60)) << read_file(dir / "err");
  std::string longer = original;
  const auto at = longer.find("layers: 24");
  ASSERT_NE(at, std::string::npos);
  longer.replace(at, 10, "layers: 48");
  std::ofstream(scenario, std::ios::binary | std::ios::trunc) << longer;
  ASSERT_EQ(sweep.wait(120), 0) << read_file(dir / "err");

  std::string fresh_args;
  for (const auto& a : args) fresh_args += " " + a;
  const auto fresh = shell(kBinary + " sweep " + kTiny + fresh_args + " --quiet --json -");
  ASSERT_EQ(fresh.code, 0) << fresh.err;
  const auto edited = nlohmann::json::parse(read_file(dir / "edited.json"));
  ASSERT_EQ(edited["points"].size(), 4u);
  EXPECT_EQ(step_times(edited), step_times(nlohmann::json::parse(fresh.out)));
}

}  // namespace
