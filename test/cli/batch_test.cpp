// Batches (sweep, variance) under stress (issue 21, items 3 and 4): the scenario is read once by
// the parent, so a pipe works and an edit during the batch changes nothing; SIGINT and SIGTERM stop
// a batch cleanly (exit 130/143, the finished points reported and kept, no worker left running, no
// temporary directory left) and a batch killed outright takes its workers with it; a --resume file
// cannot lie (a result is reused only for the same scenario bytes; every line is checked).
// Commands that run in the background are started with fork/exec (their pid is needed) and their
// standard error is read from a file while they run; every one is killed if it outlives its test.
#include "cli_test_util.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <regex>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using trainsim::testing::all_pids;
using trainsim::testing::processes_mentioning;
using trainsim::testing::shell;
using trainsim::testing::read_file;
using trainsim::testing::stat_of;

const std::string kBinary = TRAINSIM_BINARY;
const std::string kTiny = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/tiny-gpt-2node.yaml";

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
      // As from an interactive shell, whatever the test runner's own dispositions (a background
      // job of a script starts with SIGINT ignored, and trainsim keeps an ignored signal ignored).
      std::signal(SIGINT, SIG_DFL);
      std::signal(SIGTERM, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      ::sigprocmask(SIG_SETMASK, &none, nullptr);
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

  // Its exit code once it ends within `seconds`; minus N when signal N ended it (so an exit 130
  // and a death by SIGINT differ); kKilled if it had to be killed for taking too long.
  static constexpr int kKilled = -1000;
  int wait(double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!reaped_ && std::chrono::steady_clock::now() < end) {
      if (::waitpid(pid_, &status_, WNOHANG) == pid_)
        reaped_ = true;
      else
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!reaped_) return kKilled;
    return WIFEXITED(status_) ? WEXITSTATUS(status_) : -WTERMSIG(status_);
  }

 private:
  pid_t pid_ = -1;
  fs::path err_;
  bool reaped_ = false;
  int status_ = 0;
};

// A process as /proc/PID/stat shows it: its start time (clock ticks after boot) tells it from a
// later process given the same pid (pids wrap at 32768 here, and the suite starts many).
struct Proc {
  pid_t pid = 0;
  unsigned long long start = 0;
};

// Whether `p` still runs: the same process (same start time), not a zombie.
bool alive(const Proc& p) {
  char state = 0;
  pid_t parent = 0;
  unsigned long long start = 0;
  return stat_of(p.pid, state, parent, start) && start == p.start && state != 'Z' && state != 'X';
}

// The running children of `parent`.
std::vector<Proc> children_of(pid_t parent) {
  std::vector<Proc> out;
  for (pid_t pid : all_pids()) {
    char state = 0;
    pid_t ppid = 0;
    unsigned long long start = 0;
    if (stat_of(pid, state, ppid, start) && ppid == parent && state != 'Z') out.push_back({pid, start});
  }
  return out;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

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

// Starts `trainsim COMMAND ... --resume FILE --json FILE` with a TMPDIR of its own, waits for its
// first finished point ("run 1/N" on standard error) and for a worker to be running, sends `signo`
// and checks what issue 21 asks: exit 128 + signo; the finished points on standard error, marked
// interrupted; exactly those in the --resume file; the old --json file untouched; no worker alive
// and no trainsim directory left in TMPDIR. Then the same command with the same --resume file
// computes only the points that were not finished.
void interrupt_batch(const std::vector<std::string>& command, size_t points, const std::string& unit, int signo) {
  Scratch dir;
  const fs::path tmpdir = dir / "tmp", resume = dir / "results.jsonl", json = dir / "report.json";
  fs::create_directories(tmpdir);
  std::ofstream(json) << "{\"old\": true}\n";
  std::vector<std::string> args = command;
  args.insert(args.end(), {"--resume", resume.string(), "--json", json.string()});
  const std::string total = std::to_string(points);
  std::vector<Proc> workers;
  int code = -1;
  {
    Background batch(args, dir / "out", dir / "err", tmpdir);
    ASSERT_TRUE(batch.wait_for("run 1/" + total, 60)) << read_file(dir / "err");
    for (int i = 0; i < 100 && workers.empty(); ++i) {
      workers = children_of(batch.pid());
      if (workers.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(workers.empty()) << "no worker running to be stopped";
    ASSERT_EQ(::kill(batch.pid(), signo), 0);
    code = batch.wait(60);
  }
  const std::string err = read_file(dir / "err");
  const std::string name = signo == SIGINT ? "SIGINT" : "SIGTERM";
  EXPECT_EQ(code, 128 + signo) << err;
  EXPECT_NE(err.find(", interrupted by " + name + "\n"), std::string::npos) << err;
  std::smatch m;
  const std::regex finished("\n  ([0-9]+) of " + total + " " + unit + " finished; no output files written; the finished " + unit +
                            " are kept in " + resume.string() + ": the same command computes only the others\n");
  ASSERT_TRUE(std::regex_search(err, m, finished)) << err;
  const size_t kept = std::stoul(m[1]);
  EXPECT_GE(kept, 1u);
  EXPECT_LT(kept, points);
  // The table of what finished: a sweep's rows for the other points say so, a variance lists its seeds.
  auto count = [&](const std::string& what) {
    size_t n = 0;
    for (auto at = err.find(what); at != std::string::npos; at = err.find(what, at + 1)) ++n;
    return n;
  };
  if (unit == "points")
    EXPECT_EQ(count("  not finished (interrupted)\n"), points - kept) << err;
  else
    EXPECT_EQ(count("\n  seed "), kept) << err;
  const auto lines = lines_of(resume);
  EXPECT_EQ(lines.size(), kept);
  for (const auto& line : lines) EXPECT_TRUE(nlohmann::json::parse(line).contains("job")) << line;
  EXPECT_EQ(read_file(json), "{\"old\": true}\n");
  EXPECT_EQ(read_file(dir / "out"), "");  // the report went to standard error; nothing else is written
  for (const Proc& w : workers) EXPECT_FALSE(alive(w)) << "worker " << w.pid << " outlived the batch";
  EXPECT_TRUE(processes_mentioning(tmpdir.string()).empty());
  EXPECT_TRUE(fs::is_empty(tmpdir)) << fs::directory_iterator(tmpdir)->path();

  // The same command again: only the unfinished points are simulated, then the whole report.
  std::string again;
  for (const auto& a : args) again += " " + a;
  const auto rest = shell("TMPDIR=" + tmpdir.string() + " " + kBinary + again);
  ASSERT_EQ(rest.code, 0) << rest.err;
  EXPECT_NE(rest.err.find("run 1/" + std::to_string(points - kept)), std::string::npos) << rest.err;
  EXPECT_EQ(lines_of(resume).size(), points);
  EXPECT_NE(read_file(json), "{\"old\": true}\n");
  EXPECT_TRUE(fs::is_empty(tmpdir));
}

// tiny-gpt-2node at 1, 2, 4, 8, 16 and 32 nodes, two at a time; per-step jitter keeps every step
// simulated, so a point takes 0.3 s (1 node) to 3 s (32 nodes).
const std::vector<std::string> kSweep = {"sweep", kTiny, "--nodes", "1..32", "--steps", "300", "--set", "stragglers.jitter=0.02",
                                         "--jobs", "2"};
// Six seeds, two at a time, every step simulated: about 1 s each.
const std::vector<std::string> kVariance = {"variance", kTiny, "--runs", "6", "--steps", "600", "--no-replicate", "--jobs", "2"};

TEST(BatchTest, SigintStopsASweepKeepingItsFinishedPoints) { interrupt_batch(kSweep, 6, "points", SIGINT); }
TEST(BatchTest, SigtermStopsASweepKeepingItsFinishedPoints) { interrupt_batch(kSweep, 6, "points", SIGTERM); }
TEST(BatchTest, SigintStopsAVarianceKeepingItsFinishedRuns) { interrupt_batch(kVariance, 6, "runs", SIGINT); }
TEST(BatchTest, SigtermStopsAVarianceKeepingItsFinishedRuns) { interrupt_batch(kVariance, 6, "runs", SIGTERM); }

// Issue 20 item 4: `run` starts its advice's workers (here the alternative and the healthy-GPU
// counterfactual that jitter calls for) before its own simulation, so that they use the other
// cores while it runs. Seen from outside: a worker is running while the run's simulation has not
// finished (its progress line "done in" not yet written). A SIGINT then stops the run (exit 130, no
// output written) and its workers with it, leaving nothing in TMPDIR.
TEST(BatchTest, RunSimulatesItsAdviceBesideItselfAndStopsItWithItself) {
  Scratch dir;
  const fs::path tmpdir = dir / "tmp", json = dir / "report.json";
  fs::create_directories(tmpdir);
  std::ofstream(json) << "{\"old\": true}\n";
  std::vector<Proc> workers;
  int code = -1;
  {
    // About 3.5 s of simulation on this machine (more under the sanitizers).
    Background run({"run", kTiny, "--steps", "1000", "--set", "stragglers.jitter=0.02", "--advice", "1", "--json", json.string()},
                   dir / "out", dir / "err", tmpdir);
    for (int i = 0; i < 3000 && workers.empty(); ++i) {
      workers = children_of(run.pid());
      if (workers.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(workers.empty()) << read_file(dir / "err");
    EXPECT_EQ(read_file(dir / "err").find("done in"), std::string::npos) << "the workers started after the simulation";
    ASSERT_EQ(::kill(run.pid(), SIGINT), 0);
    code = run.wait(60);
  }
  const std::string err = read_file(dir / "err");
  EXPECT_EQ(code, 130) << err;
  EXPECT_NE(err.find("interrupted after"), std::string::npos) << err;
  EXPECT_EQ(read_file(json), "{\"old\": true}\n");
  for (const Proc& w : workers) EXPECT_FALSE(alive(w)) << "worker " << w.pid << " outlived the run";
  EXPECT_TRUE(processes_mentioning(tmpdir.string()).empty());
  EXPECT_TRUE(fs::is_empty(tmpdir)) << fs::directory_iterator(tmpdir)->path();
}

// SIGKILL leaves the parent no say: its workers die with it (PR_SET_PDEATHSIG), not simulate on
// under PID 1. (Its private directory stays: nothing can remove it.)
TEST(BatchTest, WorkersDieWithAKilledSweep) {
  Scratch dir;
  const fs::path tmpdir = dir / "tmp";
  fs::create_directories(tmpdir);
  std::vector<Proc> workers;
  {
    Background batch(kSweep, dir / "out", dir / "err", tmpdir);
    ASSERT_TRUE(batch.wait_for("run 1/6", 60)) << read_file(dir / "err");
    for (int i = 0; i < 100 && workers.empty(); ++i) {
      workers = children_of(batch.pid());
      if (workers.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_FALSE(workers.empty());
    ASSERT_EQ(::kill(batch.pid(), SIGKILL), 0);
    EXPECT_EQ(batch.wait(10), -SIGKILL);
  }
  // The kernel sends the workers SIGKILL as their parent dies: give them a moment to go (a large
  // process takes a while to exit, its command line already gone).
  auto any_left = [&] {
    return !processes_mentioning(tmpdir.string()).empty() ||
           std::any_of(workers.begin(), workers.end(), [](const Proc& w) { return alive(w); });
  };
  for (int i = 0; i < 500 && any_left(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(processes_mentioning(tmpdir.string()).empty());
  for (const Proc& w : workers) EXPECT_FALSE(alive(w)) << "worker " << w.pid << " outlived its killed parent";
}

// The --resume file of `sweep tiny-gpt-2node --nodes NODES --steps 3` (one line per point, in
// node order: one point at a time).
std::vector<std::string> resume_lines(const Scratch& dir, const std::string& scenario, const std::string& nodes) {
  const fs::path file = dir / "fresh.jsonl";
  fs::remove(file);
  const auto r = shell(kBinary + " sweep " + scenario + " --nodes " + nodes + " --steps 3 --jobs 1 --quiet --resume " + file.string() +
                       " --json -");
  EXPECT_EQ(r.code, 0) << r.err;
  return lines_of(file);
}

// Issue 21 item 4: the scenario edited (48 layers instead of 24) between two sweeps with one
// --resume file. The second recomputes every point, says so, and reports what a sweep of the
// edited file reports (it once reused the 24-layer points: 0.296 s where 0.486 s was right). Lines
// written before keys carried the scenario's hash count as stale too.
TEST(BatchTest, ResumeRecomputesThePointsOfAnEditedScenario) {
  Scratch dir;
  const fs::path scenario = dir / "s.yaml", resume = dir / "r.jsonl";
  std::string text = read_file(kTiny);
  std::ofstream(scenario, std::ios::binary) << text;
  const fs::path json = dir / "sweep.json";
  const std::string sweep = kBinary + " sweep " + scenario.string() + " --nodes 1,2 --steps 3 --jobs 2 --quiet --json " + json.string();
  auto report = [&] { return step_times(nlohmann::json::parse(read_file(json))); };
  const auto first = shell(sweep + " --resume " + resume.string());
  ASSERT_EQ(first.code, 0) << first.err;
  ASSERT_EQ(lines_of(resume).size(), 2u);
  const auto before = report();

  text.replace(text.find("layers: 24"), 10, "layers: 48");
  std::ofstream(scenario, std::ios::binary | std::ios::trunc) << text;
  const auto fresh = shell(sweep);
  ASSERT_EQ(fresh.code, 0) << fresh.err;
  const auto expected = report();
  const auto resumed = shell(sweep + " --resume " + resume.string());
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_EQ(resumed.err, resume.string() + ": skipped 2 stale results (the scenario changed since they were computed): computing them again\n");
  const auto edited = report();
  EXPECT_EQ(edited, expected);
  for (size_t i = 0; i < 2; ++i) EXPECT_GT(edited[i], 1.4 * before[i]);  // twice the layers: far slower, not the old points
  EXPECT_EQ(lines_of(resume).size(), 4u);
  // Now the file has both versions' points: the edited scenario's are reused, nothing is stale.
  const auto again = shell(sweep + " --resume " + resume.string());
  EXPECT_EQ(again.err, "");
  EXPECT_EQ(report(), edited);

  // A line of an older trainsim (its job without scenario_hash) is never reused: stale.
  auto old = nlohmann::json::parse(lines_of(resume)[3]);
  old["job"].erase("scenario_hash");
  std::ofstream(resume, std::ios::trunc) << old.dump() << "\n";
  const auto older = shell(sweep + " --resume " + resume.string());
  ASSERT_EQ(older.code, 0) << older.err;
  EXPECT_EQ(older.err, resume.string() + ": skipped 1 stale result (the scenario changed since they were computed): computing it again\n");

  // variance keys its runs the same way.
  const std::string variance = kBinary + " variance " + scenario.string() + " --runs 2 --steps 3 --jobs 2 --quiet --json " +
                               json.string() + " --resume " + (dir / "v.jsonl").string();
  ASSERT_EQ(shell(variance).code, 0);
  text.replace(text.find("layers: 48"), 10, "layers: 12");
  std::ofstream(scenario, std::ios::binary | std::ios::trunc) << text;
  const auto v = shell(variance);
  ASSERT_EQ(v.code, 0) << v.err;
  EXPECT_EQ(v.err, (dir / "v.jsonl").string() + ": skipped 2 stale results (the scenario changed since they were computed): computing them again\n");
}

// Every line of a --resume file is checked before anything runs: a bad one exits 2 naming FILE:LINE
// (once a raw JSON exception and exit 3 on every later resume; a mean step of -1 s gave an
// efficiency of 1.4e301). The file is left as it was.
TEST(BatchTest, ResumeRefusesABadLineNamingFileAndLine) {
  Scratch dir;
  const auto good = resume_lines(dir, kTiny, "1");
  ASSERT_EQ(good.size(), 1u);
  const auto line = nlohmann::json::parse(good[0]);
  auto changed = [&](const std::function<void(nlohmann::json&)>& change) {
    auto j = line;
    change(j);
    return j.dump();
  };
  const struct {
    std::string content;
    std::string says;
  } cases[] = {
      {good[0] + "\n{not json\n" + good[0] + "\n", ":2: not JSON (syntax error near column 3)"},
      {good[0] + "\n[1, 2]\n", ":2: not a JSON object"},
      {changed([](auto& j) { j.erase("job"); }) + "\n", ":1: no \"job\" key (the job this line is the result of)"},
      {changed([](auto& j) { j["job"]["seed"] = -3; }) + "\n", ":1: job.seed is -3: must be an integer >= 0"},
      {changed([](auto& j) { j["report"]["step_time_s"]["mean"] = -1; }) + "\n",
       ":1: report.step_time_s.mean is -1: must be a finite number > 0"},
      {changed([](auto& j) { j["report"]["mfu"] = 1.5; }) + "\n", ":1: report.mfu is 1.5: must be in (0, 1]"},
      {changed([](auto& j) { j["report"]["sync_wait"].erase("fraction"); }) + "\n", ":1: no report.sync_wait.fraction"},
      {changed([](auto& j) { j["ok"] = "yes"; }) + "\n", ":1: ok is \"yes\": must be true or false"},
      {changed([](auto& j) { j["step_times"] = nlohmann::json::array(); }) + "\n", ":1: step_times is []: must be a list of step times"},
      {changed([](auto& j) { j["step_times"][1] = 0; }) + "\n", ":1: step_times[1] is 0: must be a finite number > 0"},
      {good[0] + "\n{\"x\": 1e999}\n", ":2: not JSON (a number out of range)"},
  };
  const fs::path file = dir / "bad.jsonl";
  for (const auto& c : cases) {
    SCOPED_TRACE(c.says);
    std::ofstream(file, std::ios::binary | std::ios::trunc) << c.content;
    for (const std::string& command : {" sweep " + kTiny + " --nodes 1,2", " variance " + kTiny + " --runs 2"}) {
      const auto r = shell(kBinary + command + " --steps 3 --jobs 2 --quiet --resume " + file.string());
      EXPECT_EQ(r.code, 2) << command;
      EXPECT_EQ(r.err, file.string() + c.says + "\n") << command;
      EXPECT_EQ(read_file(file), c.content);
    }
  }
}

// kill -9 in the middle of appending a line leaves an incomplete last line: it is dropped with a
// warning, its point computed again, and the file mended (the fragment cut off) before the new
// line goes in. A whole last line that only lacks its newline is kept and given one.
TEST(BatchTest, ResumeDropsAnIncompleteLastLine) {
  Scratch dir;
  const auto good = resume_lines(dir, kTiny, "1,2");
  ASSERT_EQ(good.size(), 2u);
  const fs::path file = dir / "cut.jsonl";
  std::ofstream(file, std::ios::binary) << good[0] << "\n" << good[1].substr(0, good[1].size() / 2);
  const std::string sweep = kBinary + " sweep " + kTiny + " --nodes 1,2 --steps 3 --jobs 2 --json " + (dir / "s.json").string() +
                            " --resume " + file.string();
  const auto r = shell(sweep);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, file.string() + ":2: warning: incomplete last line (its write was cut short) dropped; its result is computed again\n"
                                   "  run 1/1: 2 nodes done\n");
  const auto lines = lines_of(file);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], good[0]);
  EXPECT_EQ(nlohmann::json::parse(lines[1])["nodes"], 2);
  EXPECT_EQ(read_file(file).back(), '\n');

  std::ofstream(file, std::ios::binary | std::ios::trunc) << good[0];  // whole, no newline
  const auto whole = shell(sweep);
  ASSERT_EQ(whole.code, 0) << whole.err;
  EXPECT_EQ(whole.err, "  run 1/1: 2 nodes done\n");
  const auto mended = lines_of(file);
  ASSERT_EQ(mended.size(), 2u);
  EXPECT_EQ(mended[0], good[0]);
  EXPECT_EQ(nlohmann::json::parse(mended[1])["nodes"], 2);
}

}  // namespace
