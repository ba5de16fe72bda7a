// Hardening (issue 10): extreme values give a clear error or a correct answer, never an overflow,
// a hang or an abort; an interrupted run prints what it has and leaves old output files untouched.
// Every command runs under `timeout 60`, so a hang fails the test (exit 124) instead of the suite.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// This test process's scratch directory, removed when the process ends.
fs::path work_dir() {
  struct Scratch {
    fs::path dir = fs::temp_directory_path() / ("trainsim-hardening-" + std::to_string(::getpid()));
    ~Scratch() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  };
  static const Scratch scratch;
  fs::create_directories(scratch.dir);
  return scratch.dir;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result trainsim(const std::string& args) {
  const std::string err_file = (work_dir() / "stderr").string();
  const std::string cmd = "timeout 60 " + std::string(TRAINSIM_BINARY) + " " + args + " 2>" + err_file;
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = read_file(err_file);
  return r;
}

const std::string kTiny = std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/tiny-gpt-2node.yaml";

// tiny-gpt-2node: 24 layers, hidden 1024, heads 16, vocab 51200, seq 2048, gelu (ffn 4h), tied
// embeddings, learned positions; 2 nodes x 8 h100-sxm, tp 2, pp 2, dp 4, micro-batch 2, batch 128.

TEST(HardeningTest, TenToTheSixteenParametersIsACorrectAnswerNotAnOverflow) {
  // hidden 10^7, heads 10: per layer 4h^2 (attention) + 8h^2 (gelu MLP) = 1.2e15, x 24 layers =
  // 2.88e16; + embedding 51200 * 1e7 + positions 2048 * 1e7 + biases/norms = 28,800,535.6 B.
  auto r = trainsim("memory " + kTiny + " --set model.hidden=10000000 --set model.heads=10");
  EXPECT_EQ(r.code, 1) << r.err;  // does not fit: memory answers with exit 1 (README)
  EXPECT_NE(r.out.find("28800535.6 B parameters"), std::string::npos) << r.out;
  auto run = trainsim("run " + kTiny + " --set model.hidden=10000000 --set model.heads=10 --quiet");
  EXPECT_EQ(run.code, 1) << run.err;
  // weights 2 B x 2.88e16 / (tp 2 * pp 2) = 14,400.56 TB on the busiest GPU, of the 85.5 GB
  // (81,559 MiB) an H100's driver reports.
  EXPECT_NE(run.err.find("does not fit: the busiest GPU needs "), std::string::npos) << run.err;
  EXPECT_NE(run.err.find(" TB of 85.5 GB (weights 14400.56 TB"), std::string::npos) << run.err;
}

TEST(HardeningTest, AMillionLayersAndAMillionNodesAnswerInMemory) {
  // 10^6 layers x 12 * 1024^2 = 1.258e13 + embeddings: 12,596.3 B parameters.
  auto layers = trainsim("memory " + kTiny + " --set model.layers=1000000");
  EXPECT_EQ(layers.code, 1) << layers.err;
  EXPECT_NE(layers.out.find("12596.3 B parameters"), std::string::npos) << layers.out;
  EXPECT_NE(layers.out.find("(500000 layers"), std::string::npos) << layers.out;  // 10^6 / pp 2
  // 2^20 nodes x 1024 GPUs = 2^30 GPUs, dp derived = 2^30 / 4 = 268,435,456: fits (small model).
  auto nodes = trainsim("memory " + kTiny + " --set cluster.nodes=1048576 --set cluster.gpus_per_node=1024 "
                        "--set parallelism.dp= --set training.global_batch=1099511627776 --set parallelism.micro_batch=1");
  EXPECT_EQ(nodes.code, 0) << nodes.err;
  EXPECT_NE(nodes.out.find("1073741824 x h100-sxm"), std::string::npos) << nodes.out;
  EXPECT_NE(nodes.out.find("dp=268435456"), std::string::npos) << nodes.out;
}

TEST(HardeningTest, SequenceOfTenMillionDoesNotFitAndSaysSo) {
  auto r = trainsim("run " + kTiny + " --set model.seq_len=10000000 --quiet");
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("does not fit"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("activations 8.39 TB"), std::string::npos) << r.err;
}

TEST(HardeningTest, HugeBatchDoesNotHangTheMemoryPlanner) {
  // Was a hang: largest_micro_batch counted down from the per-replica batch 2^40 / 4 = 2^38.
  const auto start = std::chrono::steady_clock::now();
  auto r = trainsim("memory " + kTiny + " --set training.global_batch=1099511627776 --set parallelism.micro_batch=1048576");
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.code, 1) << r.err;  // micro-batch 2^20 of 2048 tokens does not fit in 80 GB
  EXPECT_NE(r.out.find("micro-batch 1048576"), std::string::npos) << r.out;
  EXPECT_LT(s, 30.0);
}

struct BadInput {
  std::string args;
  std::string message;  // expected at the start of stderr
};

TEST(HardeningTest, ZeroNegativeNanAndInfAreInputErrors) {
  const BadInput cases[] = {
      {"--set model.layers=0", "--set:1:14: model.layers must be a positive integer, got '0'"},
      {"--set model.layers=-5", "--set:1:14: model.layers must be a positive integer, got '-5'"},
      {"--set model.layers=nan", "--set:1:14: model.layers must be a positive integer, got 'nan'"},
      {"--set model.hidden=99999999999999999999", "--set:1:14: model.hidden must be at most 16777216"},
      {"--set cluster.nodes=-1", "--set:1:15: cluster.nodes must be a positive integer, got '-1'"},
      {"--set cluster.intra_node.bandwidth=nan", "--set:1:30: cluster.intra_node.bandwidth: 'nan' is not a finite bandwidth"},
      {"--set cluster.intra_node.bandwidth=inf", "--set:1:30: cluster.intra_node.bandwidth: 'inf' is not a finite bandwidth"},
      {"--set cluster.intra_node.latency=-1us", "--set:1:28: cluster.intra_node.latency: time must be >= 0, got '-1us'"},
      {"--set contention.load=nan", "--set:1:17: contention.load must be a finite number, got 'nan'"},
      {"--set stragglers.slowdown=inf", "--set:1:21: stragglers.slowdown must be a finite number, got 'inf'"},
      {"--set training.gpu_hour_price=-1", "--set:1:25: training.gpu_hour_price must be in [0, 1e6], got '-1'"},
      {"--set parallelism.micro_batch=1000000000", "--set:1:25: parallelism.micro_batch must be at most 1048576, got '1000000000'"},
      {"--set training.steps=1000000000", "--set:1:16: training.steps must be at most 1000000, got '1000000000'"},
      {"--steps 0", "--steps: Value 0 not in range 1 to 1000000"},
      {"--steps 100000000", "--steps: Value 100000000 not in range 1 to 1000000"},
  };
  for (const auto& c : cases) {
    auto r = trainsim("run " + kTiny + " " + c.args + " --quiet");
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_EQ(r.err.rfind(c.message, 0), 0u) << c.args << "\n" << r.err;
  }
}

TEST(HardeningTest, RunRefusesWhatItCannotSimulateBeforeSimGridSeesIt) {
  const std::string where = kTiny + ": too large to simulate: ";
  // 131,073 nodes x 8 = 1,048,584 GPUs > 2^20 (dp derived: 1,048,584 / 4 = 262,146; batch 2 x dp x 4).
  auto gpus = trainsim("run " + kTiny + " --set cluster.nodes=131073 --set parallelism.dp= "
                       "--set training.global_batch=2097168 --set parallelism.micro_batch=1 --steps 1 --quiet");
  EXPECT_EQ(gpus.code, 2) << gpus.err;
  EXPECT_EQ(gpus.err, where + "1,048,584 GPUs (at most 1,048,576); `trainsim memory` answers for any size\n");
  // Full fidelity on 64 nodes: dp 128 x pp 2 = 256 simulated stages; 10^6 steps x 256 > 2^26.
  auto steps = trainsim("run " + kTiny + " --set cluster.nodes=64 --set parallelism.dp= --set training.global_batch=512 "
                        "--steps 1000000 --fidelity full --quiet");
  EXPECT_EQ(steps.code, 2) << steps.err;
  EXPECT_EQ(steps.err, where + "1,000,000 steps of 256 simulated stages (steps * stages at most 67,108,864); "
                               "use at most --steps 262,144\n");
  // Full fidelity on 8192 nodes: dp 16,384 x pp 2 = 32,768 simulated stages > 16,384.
  auto stages = trainsim("run " + kTiny + " --set cluster.nodes=8192 --set parallelism.dp= --set training.global_batch=16384 "
                         "--set parallelism.micro_batch=1 --steps 1 --fidelity full --quiet");
  EXPECT_EQ(stages.code, 2) << stages.err;
  EXPECT_EQ(stages.err, where + "32,768 simulated pipeline stages (dp * pp with full fidelity; at most 16,384)"
                                "; --fidelity symmetric simulates pp\n");
  // 2^40 / (dp 4 x 1) = 2^38 micro-batches per step on 8 stages: the schedule alone would not fit.
  auto micro = trainsim("run " + kTiny + " --set training.global_batch=1099511627776 --set parallelism.micro_batch=1 --steps 1 --quiet");
  EXPECT_EQ(micro.code, 2) << micro.err;
  EXPECT_EQ(micro.err.rfind(where + "274,877,906,944 micro-batches per step on 8 simulated model chunks", 0), 0u) << micro.err;
}

// Starts `trainsim run` of tiny-gpt-2node for 100,000 steps (minutes) with --json and --csv over
// files that already hold something, sends `signo` after 2 s, and checks what the brief promises:
// the exit code, the statistics so far on stderr, and the old files untouched with no temp files.
void interrupt_run(int signo, int expected_code, const std::string& signal_name) {
  const fs::path dir = work_dir() / ("interrupt-" + signal_name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path json = dir / "out.json", csv = dir / "steps.csv", err = dir / "stderr";
  const std::string old_json = "{\"old\": true}\n", old_csv = "old,csv\n1,2\n";
  std::ofstream(json, std::ios::binary) << old_json;
  std::ofstream(csv, std::ios::binary) << old_csv;

  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::FILE* e = std::freopen(err.c_str(), "w", stderr);
    std::FILE* o = std::freopen("/dev/null", "w", stdout);
    if (e == nullptr || o == nullptr) ::_exit(99);
    ::execl(TRAINSIM_BINARY, TRAINSIM_BINARY, "run", kTiny.c_str(), "--steps", "100000", "--no-replicate", "--quiet", "--json",
            json.c_str(), "--csv", csv.c_str(), static_cast<char*>(nullptr));
    ::_exit(98);
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));
  ASSERT_EQ(::kill(pid, signo), 0);
  // It must stop at the next step boundary: give it 60 s, then kill it and fail.
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 600 && done == 0; ++i) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "trainsim did not stop within 60 s of " << signal_name;
  }
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), expected_code);
  const std::string text = read_file(err);
  // "interrupted after N of 100000 steps (SIGINT); no output files written", N >= 1 after 2 s
  // (a step of this scenario takes ~3 ms in the release build, ~20 ms under ASan).
  const auto at = text.find("interrupted after ");
  ASSERT_NE(at, std::string::npos) << text;
  const long n = std::stol(text.substr(at + 18));
  EXPECT_GE(n, 1) << text;
  EXPECT_LT(n, 100000) << text;
  EXPECT_NE(text.find(" of 100000 steps (" + signal_name + "); no output files written"), std::string::npos) << text;
  EXPECT_NE(text.find("trainsim run: tiny-gpt-2node (16 GPUs"), std::string::npos) << text;  // the summary table
  EXPECT_NE(text.find("step time (mean)"), std::string::npos) << text;
  EXPECT_EQ(read_file(json), old_json);
  EXPECT_EQ(read_file(csv), old_csv);
  for (const auto& entry : fs::directory_iterator(dir))
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  fs::remove_all(dir);
}

TEST(HardeningTest, SigintPrintsTheStepsSoFarExits130AndKeepsOldFiles) { interrupt_run(SIGINT, 130, "SIGINT"); }

TEST(HardeningTest, SigtermPrintsTheStepsSoFarExits143AndKeepsOldFiles) { interrupt_run(SIGTERM, 143, "SIGTERM"); }

}  // namespace

namespace {

// Issue 21 item 2: every output path is checked before anything is simulated. A directory, a
// missing directory, the scenario file itself, or two outputs on one path exit 2 at once with the
// flag and path named; the scenario is left as it was.
TEST(HardeningTest, OutputPathsAreCheckedBeforeSimulating) {
  const fs::path dir = work_dir();
  const std::string before = read_file(kTiny);
  const struct {
    std::string args;
    std::string says;
  } cases[] = {
      {"run " + kTiny + " --steps 2 --json " + dir.string(), "--json " + dir.string() + ": is a directory"},
      {"run " + kTiny + " --steps 2 --csv " + (dir / "missing" / "x.csv").string(), "no such directory"},
      {"run " + kTiny + " --steps 2 --json " + kTiny, "is the scenario file itself"},
      {"run " + kTiny + " --steps 2 --json " + (dir / "a").string() + " --trace " + (dir / "a").string(),
       "--json and --trace name the same file"},
      {"sweep " + kTiny + " --nodes 1..2 --steps 2 --csv " + kTiny, "--csv " + kTiny + ": is the scenario file itself"},
      {"variance " + kTiny + " --runs 2 --steps 2 --json " + dir.string(), "is a directory"},
      {"plan " + kTiny + " --steps 2 --write-best " + (dir / "none" / "b.yaml").string(), "no such directory"},
      // An empty name is an error, not "no output" (it used to be a silent no-op).
      {"run " + kTiny + " --steps 2 --json ''", "--json: empty file name"},
      {"sweep " + kTiny + " --nodes 1..2 --steps 2 --resume ''", "--resume: empty file name"},
      {"variance " + kTiny + " --runs 2 --steps 2 --json ''", "--json: empty file name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = trainsim(c.args + " --quiet");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("step "), std::string::npos);  // nothing simulated
  }
  EXPECT_EQ(read_file(kTiny), before);
  EXPECT_FALSE(fs::exists(dir / "a"));
}

}  // namespace

namespace {

// A platform file of 33 DGX-like nodes (264 GPUs, above the 256 where every pair is checked on
// load) with Full routing: routes inside each node, to the same GPU of the next node and of node 0,
// and back from node 0 (what the load-time sample checks), plus those tp 8 x pp 3 x dp 11 uses
// (each stage's 11-node DP rings, stage to stage 11 nodes on), all but `missing`.
std::string sparse_platform(const fs::path& dir, const std::string& missing) {
  const int nodes = 33, gpn = 8;
  auto host = [](int n, int g) { return "gpu-" + std::to_string(n) + "-" + std::to_string(g); };
  std::ostringstream x;
  x << "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
       "<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n";
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpn; ++g) {
      x << "<host id=\"" << host(n, g) << "\" speed=\"989.4Tf\"/>\n";
      x << "<link id=\"l-" << host(n, g) << "\" bandwidth=\"50GBps\" latency=\"1us\"/>\n";
    }
  std::set<std::pair<std::string, std::string>> done;
  auto route = [&](const std::string& a, const std::string& b) {
    if (a == b || a + ">" + b == missing || !done.insert({a, b}).second) return;
    x << "<route src=\"" << a << "\" dst=\"" << b << "\" symmetrical=\"NO\"><link_ctn id=\"l-" << a
      << "\"/><link_ctn id=\"l-" << b << "\"/></route>\n";
  };
  for (int n = 0; n < nodes; ++n)
    for (int g = 0; g < gpn; ++g) {
      for (int h = 0; h < gpn; ++h) route(host(n, g), host(n, h));
      route(host(n, g), host((n + 1) % nodes, g));
      route(host(n, g), host(0, g));
      route(host(0, g), host(n, g));
      route(host(n, g), host(n / 11 * 11 + (n % 11 + 1) % 11, g));  // a stage's DP ring, wrapping
      route(host(n, g), host((n + 11) % nodes, g));  // pipeline stage to stage
      route(host((n + 11) % nodes, g), host(n, g));
    }
  x << "</zone></platform>\n";
  const fs::path file = dir / "sparse.xml";
  std::ofstream(file) << x.str();
  const fs::path yaml = dir / "sparse.yaml";
  std::ofstream(yaml) << "version: 1\nname: sparse\nmodel: {preset: llama2-7b, layers: 6}\n"
                         "cluster: {gpu: h100-sxm, nodes: 33, gpus_per_node: 8, platform: sparse.xml}\n"
                         "parallelism: {tp: 8, pp: 3, dp: 11}\ntraining: {global_batch: 22}\n";
  return yaml.string();
}

}  // namespace

// Issue 21 item 5: above 256 GPUs the file's routes are sampled on load; a route the run will use
// and the sample does not see (stage 1's first GPU, node 11, to stage 2's, node 22) is caught
// before the simulation starts, exit 2 naming the file and the pair, instead of SimGrid's abort in
// the middle of the run. With the route there, the run goes.
TEST(HardeningTest, EveryRouteTheRunUsesIsCheckedOnALargePlatformFile) {
  const fs::path dir = work_dir();
  const auto bad = trainsim("run " + sparse_platform(dir, "gpu-11-0>gpu-22-0") + " --steps 2 --advice 0 --quiet");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_NE(bad.err.find("sparse.xml: no route from 'gpu-11-0' to 'gpu-22-0'"), std::string::npos) << bad.err;
  const auto good = trainsim("run " + sparse_platform(dir, "") + " --steps 2 --advice 0 --quiet");
  EXPECT_EQ(good.code, 0) << good.err;
}

// Issue 21 item 5: values SimGrid would abort or deadlock on are input errors naming the file and
// the link or host: a bandwidth of 0, negative or too small to ever finish (1e-300 B/s), a GPU
// speed of 0, a negative latency. Each from platforms/h100-ib-4node.xml with one value changed.
TEST(HardeningTest, BadPlatformFileValuesExitTwo) {
  const fs::path dir = work_dir();
  const std::string xml = read_file(std::string(TRAINSIM_SOURCE_DIR) + "/platforms/h100-ib-4node.xml");
  const struct {
    std::string from, to, says;
  } cases[] = {
      {"id=\"nvlink-0-0\" bandwidth=\"450GBps\"", "id=\"nvlink-0-0\" bandwidth=\"0Bps\"", "has bandwidth 0 B/s; links need a finite bandwidth of at least 1 kBps"},
      {"id=\"nvlink-0-0\" bandwidth=\"450GBps\"", "id=\"nvlink-0-0\" bandwidth=\"-5Bps\"", "has bandwidth -5 B/s"},
      {"id=\"nvlink-0-0\" bandwidth=\"450GBps\"", "id=\"nvlink-0-0\" bandwidth=\"1e-300Bps\"", "has bandwidth 1e-300 B/s"},
      {"id=\"gpu-0-0\" speed=\"989.4Tf\"", "id=\"gpu-0-0\" speed=\"0f\"", "host 'gpu-0-0' has speed 0 flop/s"},
      {"latency=\"0.5us\"", "latency=\"-1us\"", "has latency -1e-06 s"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    std::string text = xml;
    const auto at = text.find(c.from);
    ASSERT_NE(at, std::string::npos);
    text.replace(at, c.from.size(), c.to);
    std::ofstream(dir / "bad.xml") << text;
    std::ofstream(dir / "bad.yaml") << "version: 1\nname: bad\nmodel: {preset: llama2-7b, layers: 4}\n"
                                       "cluster: {gpu: h100-sxm, nodes: 4, gpus_per_node: 8, platform: bad.xml}\n"
                                       "parallelism: {tp: 8, dp: 4}\ntraining: {global_batch: 8}\n";
    const auto r = trainsim("run " + (dir / "bad.yaml").string() + " --steps 2 --advice 0 --quiet");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("bad.xml: " ), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

// Issue 21 item 6 end to end: a failure every 22 s against 2-hour checkpoints used to hang for
// minutes and print 125,598 days; now `run` says it does not finish, why, and exits 1 (the JSON
// keeps the reason), at once.
TEST(HardeningTest, ARunThatCanNeverCheckpointDoesNotFinish) {
  const fs::path json = work_dir() / "r.json";
  const auto r = trainsim("run " + std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/llama3-405b-reliability.yaml --steps 3 --advice 0 --quiet" +
                          " --set reliability.preset=null --set reliability.failures_per_gpu_hour=0.01 --set reliability.restart=0s --json " +
                          json.string());
  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_NE(r.err.find("does not finish: a checkpoint every 7200 s"), std::string::npos) << r.err;
  const std::string j = read_file(json);
  EXPECT_NE(j.find("\"finishes\": false"), std::string::npos);
  EXPECT_NE(j.find("\"does_not_finish\""), std::string::npos);
}

// Issue 21 items 7 and 8: bounded memory and no blocking on any input. /dev/zero as the scenario
// stops at 16 MiB (it grew past 4 GB); a --set key of 50,000 parts is refused at its 9th (5 GB
// before); a FIFO as cluster.platform is refused instead of blocking forever on its open.
TEST(HardeningTest, HostileInputsAreBoundedAndNeverBlock) {
  const auto zero = trainsim("run /dev/zero --steps 2 --quiet");
  EXPECT_EQ(zero.code, 2) << zero.err;
  EXPECT_NE(zero.err.find("/dev/zero: larger than 16 MiB"), std::string::npos) << zero.err;
  std::string key = "a";
  for (int i = 1; i < 50000; ++i) key += ".a";
  const auto deep = trainsim("run " + kTiny + " --steps 2 --quiet --set " + key + "=1");
  EXPECT_EQ(deep.code, 2) << deep.err.substr(0, 300);
  EXPECT_NE(deep.err.find("has more than 8 dot-separated parts"), std::string::npos) << deep.err.substr(0, 300);
  const fs::path dir = work_dir();
  const fs::path fifo = dir / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(dir / "f.yaml") << "version: 1\nname: f\nmodel: {preset: llama2-7b, layers: 2}\n"
                                   "cluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8, platform: fifo}\n"
                                   "parallelism: {tp: 8}\ntraining: {global_batch: 8}\n";
  const auto f = trainsim("run " + (dir / "f.yaml").string() + " --steps 2 --quiet");
  EXPECT_EQ(f.code, 2) << f.err;
  EXPECT_NE(f.err.find("cluster.platform: not a regular file 'fifo'"), std::string::npos) << f.err;
}

// Issue 21 item 8, the small ones: each exits 2 with a message that says what is wrong, where.
TEST(HardeningTest, SmallHostileInputsSayWhatIsWrong) {
  const fs::path dir = work_dir();
  auto file = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  const std::string rest = "model: {preset: llama2-7b, layers: 2}\ncluster: {gpu: h100-sxm, nodes: 1, gpus_per_node: 8}\n"
                           "parallelism: {tp: 8}\ntraining: {global_batch: 8}\n";
  const struct {
    std::string args, says;
  } cases[] = {
      {"run " + file("u.yaml", "version: 1\nname: \"bad\xff" "name\"\n" + rest) + " --steps 2", "u.yaml:2:7: name must be UTF-8 text: byte 4 is 0xFF"},
      {"run " + file("c.yaml", "version: 1\nname: \"bad\\x1b[31mname\"\n" + rest) + " --steps 2", "name must not contain control characters (byte 4)"},
      {"run " + kTiny + " --steps 2 --seed -1", "--seed: a seed is a non-negative integer"},
      {"sweep " + kTiny + " --nodes 1,2 --steps 2 --threshold nan", "--threshold: must be a finite number"},
      {"sweep " + kTiny + " --nodes 1,2 --steps 2 --jobs -5", "--jobs: Value -5 not in range 1 to 4096"},
      {"run " + kTiny + " --steps 2 --set cluster.inter_node.nic_bandwidth=0x10GBps", "'0x10GBps' is not a bandwidth (decimal numbers only)"},
      {"run " + file("t.yaml", "version: 1\nname: t\nmodel:\n\tpreset: llama2-7b\n"), "t.yaml:4:1: tab in the indentation: YAML indents with spaces"},
      {"run " + file("n.yaml", std::string("version: 1\nname: t\0x\n", 20)), "n.yaml:2:8: NUL byte: not a text file"},
      {"run " + file("d.yaml", "version: 1\nname: d\nmodel: " + std::string(5000, '[') + std::string(5000, ']') + "\n"),
       "d.yaml:3:72: lists or maps nested more than 64 deep"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.args);
    const auto r = trainsim(c.args + " --quiet");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

// Issue 21 item 8: the same inputs give the same JSON, byte for byte; the host's wall time only
// with --timings.
TEST(HardeningTest, RunJsonIsByteIdenticalForTheSameInputs) {
  const fs::path dir = work_dir();
  for (const char* name : {"a.json", "b.json"})
    ASSERT_EQ(trainsim("run " + kTiny + " --steps 3 --advice 0 --quiet --json " + (dir / name).string()).code, 0);
  EXPECT_EQ(read_file(dir / "a.json"), read_file(dir / "b.json"));
  EXPECT_EQ(read_file(dir / "a.json").find("\"wall_s\""), std::string::npos);
  ASSERT_EQ(trainsim("run " + kTiny + " --steps 3 --advice 0 --quiet --timings --json " + (dir / "c.json").string()).code, 0);
  EXPECT_NE(read_file(dir / "c.json").find("\"wall_s\""), std::string::npos);
}
