#include "cli/batch.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "cli/run_command.hpp"
#include "config/scenario.hpp"
#include "util/output.hpp"

extern char** environ;

namespace trainsim::cli {
namespace {

// The signal that stopped the batch (SIGINT or SIGTERM), 0 while none has (StopOnSignal), and
// which of the two StopOnSignal caught (not those the process started with ignored).
volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_caught_int = 0, g_caught_term = 0;

extern "C" void on_batch_stop_signal(int signo) {
  g_stop = signo;
  // A second signal, of either kind, ends the process at once.
  if (g_caught_int) std::signal(SIGINT, SIG_DFL);
  if (g_caught_term) std::signal(SIGTERM, SIG_DFL);
}

// The worker processes of one run_jobs call and its private directory. Whichever way the batch
// ends, the destructor kills the workers still running, reaps them and removes the directory.
class Workers {
 public:
  // A fresh directory (mkdtemp: a new name, mode 0700), never one that happens to exist.
  Workers() {
    const auto tmp = std::filesystem::temp_directory_path();
    std::string tmpl = (tmp / "trainsim-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr)
      throw std::runtime_error("cannot create a temporary directory in " + tmp.string() + ": " + std::strerror(errno));
    dir_ = tmpl;
  }
  ~Workers() {
    kill_all();
    for (const auto& [pid, job] : running_) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  size_t count() const { return running_.size(); }
  bool busy() const { return !running_.empty(); }

  // Starts `args` (args[0] is the program's name) for job `job`: standard error to `err_path`,
  // standard input and output /dev/null, in a new process group. False if it could not start.
  bool start(const std::string& program, std::vector<std::string>& args, const std::string& err_path, size_t job) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
    // A group of its own: the terminal's Ctrl-C (sent to the foreground group) reaches the parent
    // only, which stops the batch; the worker is not killed under it first. kill_all kills the group.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, program.c_str(), &fa, &attr, argv.data(), environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) return false;
    running_[pid] = job;
    return true;
  }

  // A worker that has ended, {job, wait status}, or nothing if none has (never blocks).
  std::optional<std::pair<size_t, int>> reap() {
    for (auto it = running_.begin(); it != running_.end(); ++it) {
      int status = 0;
      const pid_t pid = ::waitpid(it->first, &status, WNOHANG);
      if (pid == 0 || (pid < 0 && errno == EINTR)) continue;
      // pid < 0 otherwise: not our child any more (cannot happen; ECHILD): counted as ended.
      const size_t job = it->second;
      running_.erase(it);
      return std::pair<size_t, int>{job, pid > 0 ? status : 0};
    }
    return std::nullopt;
  }

  // SIGKILL to every running worker (their results are not wanted: nothing to save in them).
  void kill_all() {
    if (killed_) return;
    killed_ = true;
    for (const auto& [pid, job] : running_) kill_group(pid);
  }

 private:
  static void kill_group(pid_t pid) {
    if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
  }

  std::filesystem::path dir_;
  std::map<pid_t, size_t> running_;  // pid -> job index
  bool killed_ = false;
};

}  // namespace

StopOnSignal::StopOnSignal() {
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_batch_stop_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, nullptr, &old_int_);
  ::sigaction(SIGTERM, nullptr, &old_term_);
  g_caught_int = old_int_.sa_handler != SIG_IGN;
  g_caught_term = old_term_.sa_handler != SIG_IGN;
  if (g_caught_int) ::sigaction(SIGINT, &sa, nullptr);
  if (g_caught_term) ::sigaction(SIGTERM, &sa, nullptr);
}

StopOnSignal::~StopOnSignal() {
  ::sigaction(SIGINT, &old_int_, nullptr);
  ::sigaction(SIGTERM, &old_term_, nullptr);
}

int StopOnSignal::received() { return g_stop; }

std::string StopOnSignal::name(int signo) {
  if (signo == SIGINT) return "SIGINT";
  if (signo == SIGTERM) return "SIGTERM";
  return "signal " + std::to_string(signo);
}

int worker_command(const WorkerOptions& w) {
  // A worker never outlives the command that started it (run's advice, sweep, variance, plan): when
  // that process ends, by a signal or otherwise, the kernel sends this one SIGKILL. If it was gone
  // before the call took effect (this process already re-parented), stop now.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (w.parent > 0 && ::getppid() != static_cast<pid_t>(w.parent)) return 1;
  const std::string text = config::read_scenario_file(w.scenario_text_path.empty() ? w.scenario : w.scenario_text_path);
  const auto scenario = config::load_scenario_text(text, w.scenario, parse_overrides(w.sets));
  SimulateOptions so;
  so.steps = w.steps;
  so.seed = w.seed;
  so.replicate = !w.no_replicate;
  so.fidelity = parse_fidelity(w.fidelity);
  Outcome out = simulate_scenario(scenario, so);
  nlohmann::json j;
  j["job"] = job_key(w);
  j["ok"] = out.fits;
  if (!out.fits) {
    j["reason"] = out.infeasible_reason;
    j["report"] = infeasible_json(out);
  } else {
    j["report"] = report::to_json(out.summary);
    std::vector<double> times;
    for (const auto& s : out.run.steps) times.push_back(s.time_s);
    j["step_times"] = times;
  }
  util::write_output(w.out_path, j.dump() + "\n");
  return 0;
}

Job make_job(const WorkerOptions& w) {
  Job job;
  job.args = {w.scenario};
  for (const auto& s : w.sets) {
    job.args.push_back("--set");
    job.args.push_back(s);
  }
  job.args.push_back("--seed");
  job.args.push_back(std::to_string(w.seed));
  if (w.steps > 0) {
    job.args.push_back("--steps");
    job.args.push_back(std::to_string(w.steps));
  }
  if (w.no_replicate) job.args.push_back("--no-replicate");
  if (w.fidelity != "auto") {
    job.args.push_back("--fidelity");
    job.args.push_back(w.fidelity);
  }
  return job;
}

nlohmann::json job_key(const WorkerOptions& w) {
  return {{"scenario", w.scenario}, {"sets", w.sets}, {"seed", w.seed}, {"steps", w.steps}};
}

std::map<std::string, nlohmann::json> read_job_results(const std::string& path) {
  std::map<std::string, nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("job") || !j.contains("ok")) continue;
    std::string key = j["job"].dump();  // before the move below (json's operator= takes its argument by value)
    out[std::move(key)] = std::move(j);
  }
  return out;
}

std::string self_exe(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

int64_t core_count() {
  const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? n : 1;
}

std::vector<JobResult> run_jobs(const std::string& self, const std::vector<Job>& jobs, int64_t parallel,
                                const std::string& scenario_text,
                                const std::function<void(size_t, const JobResult&)>& on_done) {
  if (parallel <= 0) parallel = core_count();
  std::vector<JobResult> results(jobs.size());
  Workers workers;
  const std::string text_path = workers.path("scenario.yaml");
  if (!scenario_text.empty()) util::write_output(text_path, scenario_text);
  const std::string parent = std::to_string(::getpid());
  auto out_of = [&](size_t i) { return workers.path("job-" + std::to_string(i) + ".json"); };
  auto err_of = [&](size_t i) { return workers.path("job-" + std::to_string(i) + ".err"); };
  // What a worker that ended left: its result, or why it has none.
  auto collect = [&](size_t i, int status) {
    JobResult& r = results[i];
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(out_of(i));
    if (r.exit_code == 0 && in) {
      std::stringstream ss;
      ss << in.rdbuf();
      r.result = nlohmann::json::parse(ss.str(), nullptr, false);
      r.ran = !r.result.is_discarded();
    }
    if (!r.ran && g_stop != 0) {
      // Killed because the batch stopped: not a failure of its job. (One that finished first is kept.)
      r.stopped = true;
      r.error = "stopped by " + StopOnSignal::name(g_stop);
      return;
    }
    if (!r.ran) {
      std::ifstream err(err_of(i));
      std::stringstream ss;
      ss << err.rdbuf();
      r.error = ss.str();
      while (!r.error.empty() && (r.error.back() == '\n' || r.error.back() == '\r')) r.error.pop_back();
      if (r.error.empty()) r.error = "worker exited with code " + std::to_string(r.exit_code);
    }
    if (on_done) on_done(i, r);
  };

  size_t next = 0;
  while (next < jobs.size() || workers.busy()) {
    if (g_stop != 0) {
      for (; next < jobs.size(); ++next) {
        results[next].stopped = true;
        results[next].error = "stopped by " + StopOnSignal::name(g_stop) + " before it started";
      }
      workers.kill_all();
    }
    while (next < jobs.size() && static_cast<int64_t>(workers.count()) < parallel) {
      std::vector<std::string> args = {self, "worker"};
      args.insert(args.end(), jobs[next].args.begin(), jobs[next].args.end());
      if (!scenario_text.empty()) {
        args.push_back("--scenario-text");
        args.push_back(text_path);
      }
      args.insert(args.end(), {"--parent", parent, "--out", out_of(next)});
      if (!workers.start(self, args, err_of(next), next)) {
        results[next].error = "cannot start " + self;
        if (on_done) on_done(next, results[next]);
      }
      ++next;
    }
    // Polled, not a blocking wait: a stop signal arriving just before a blocking wait would go
    // unseen until some worker ended, possibly minutes later.
    bool any = false;
    while (const auto ended = workers.reap()) {
      any = true;
      collect(ended->first, ended->second);
    }
    if (!any && workers.busy()) {
      const timespec nap{0, 10'000'000};  // 10 ms; a signal cuts it short
      ::nanosleep(&nap, nullptr);
    }
  }
  return results;
}

}  // namespace trainsim::cli
