#include "cli/batch.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "cli/run_command.hpp"
#include "config/scenario.hpp"
#include "util/error.hpp"
#include "util/hash.hpp"
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
  WorkerOptions keyed = w;
  keyed.scenario_hash = scenario_hash(text, scenario);  // of what this worker simulates, not what it was told
  SimulateOptions so;
  so.steps = w.steps;
  so.seed = w.seed;
  so.replicate = !w.no_replicate;
  so.fidelity = parse_fidelity(w.fidelity);
  Outcome out = simulate_scenario(scenario, so);
  nlohmann::json j;
  j["job"] = job_key(keyed);
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

std::string scenario_hash(const std::string& text, const config::Scenario& scenario) {
  uint64_t h = util::fnv1a64(text);
  if (!scenario.cluster.platform_file.empty()) {
    // The platform file is the truth about the cluster (platform/derive.hpp): its bytes count too.
    std::ifstream in(scenario.cluster.platform_file, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    h = util::fnv1a64(ss.str(), util::fnv1a64(std::string_view("\0platform\0", 10), h));
  }
  return "fnv1a64:" + util::hex64(h);
}

nlohmann::json job_key(const WorkerOptions& w) {
  nlohmann::json key = {{"scenario", w.scenario}, {"scenario_hash", w.scenario_hash}, {"sets", w.sets}, {"seed", w.seed}, {"steps", w.steps}};
  // Only when not the defaults: a key written before these options existed still says what it was.
  if (w.fidelity != "auto") key["fidelity"] = w.fidelity;
  if (w.no_replicate) key["no_replicate"] = true;
  return key;
}

namespace {

// The value at the dotted `path` ("report.step_time_s.mean") of `j`, or nullptr.
const nlohmann::json* find_path(const nlohmann::json& j, const std::string& path) {
  const nlohmann::json* at = &j;
  size_t from = 0;
  while (true) {
    const size_t dot = path.find('.', from);
    const std::string key = path.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!at->is_object() || !at->contains(key)) return nullptr;
    at = &(*at)[key];
    if (dot == std::string::npos) return at;
    from = dot + 1;
  }
}

enum class Range { kPositive, kNonNegative, kFraction, kShare };

// Checks one line of a --resume file (read_resume_file): throws util::InputError("WHERE: ...").
class LineCheck {
 public:
  LineCheck(const nlohmann::json& line, std::string where) : line_(line), where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& what) const { throw util::InputError(where_ + ": " + what); }

  const nlohmann::json& need(const std::string& path) const {
    const nlohmann::json* v = find_path(line_, path);
    if (v == nullptr) fail("no " + path);
    return *v;
  }
  bool has(const std::string& path) const { return find_path(line_, path) != nullptr; }

  void string(const std::string& path) const {
    if (!need(path).is_string()) fail(path + " is " + need(path).dump() + ": must be a string");
  }
  void boolean(const std::string& path) const {
    if (!need(path).is_boolean()) fail(path + " is " + need(path).dump() + ": must be true or false");
  }
  void count(const std::string& path) const {
    const auto& v = need(path);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<int64_t>() >= 0))
      fail(path + " is " + v.dump() + ": must be an integer >= 0");
  }
  void number(const std::string& path, Range range) const { number_value(path, need(path), range); }

  void number_value(const std::string& path, const nlohmann::json& v, Range range) const {
    static const char* const kMust[] = {"a finite number > 0", "a finite number >= 0", "in [0, 1]", "in (0, 1]"};
    const double x = v.is_number() ? v.get<double>() : std::nan("");
    const bool ok = range == Range::kPositive      ? std::isfinite(x) && x > 0
                    : range == Range::kNonNegative ? std::isfinite(x) && x >= 0
                    : range == Range::kFraction    ? x >= 0 && x <= 1
                                                   : x > 0 && x <= 1;
    if (!ok) fail(path + " is " + v.dump() + ": must be " + kMust[static_cast<int>(range)]);
  }

 private:
  const nlohmann::json& line_;
  std::string where_;
};

// What sweep and variance read from a result (a worker's, as it wrote it): the job it answers; for a
// feasible one the report's times, rates and shares, each finite and in range, and the step times.
void check_result_line(const nlohmann::json& line, const std::string& where) {
  const LineCheck c(line, where);
  if (!line.is_object()) c.fail("not a JSON object");
  if (!line.contains("job")) c.fail("no \"job\" key (the job this line is the result of)");
  if (!line["job"].is_object()) c.fail("job is " + line["job"].dump() + ": must be an object");
  c.string("job.scenario");
  const auto& sets = c.need("job.sets");
  if (!sets.is_array() || !std::all_of(sets.begin(), sets.end(), [](const nlohmann::json& s) { return s.is_string(); }))
    c.fail("job.sets is " + sets.dump() + ": must be a list of strings");
  c.count("job.seed");
  c.count("job.steps");
  if (c.has("job.fidelity")) c.string("job.fidelity");
  if (c.has("job.no_replicate")) c.boolean("job.no_replicate");
  if (!c.has("job.scenario_hash")) return;  // an older trainsim's: never matches a job now
  c.string("job.scenario_hash");
  c.boolean("ok");
  if (!line["ok"].get<bool>()) {
    c.string("reason");
    if (!c.need("report").is_object()) c.fail("report is " + line["report"].dump() + ": must be an object");
    return;
  }
  for (const char* k : {"mean", "min", "max", "p50", "p90", "p99"}) c.number(std::string("report.step_time_s.") + k, Range::kPositive);
  c.number("report.step_time_s.std", Range::kNonNegative);
  c.number("report.tokens_per_s", Range::kPositive);
  c.number("report.tflops_per_gpu", Range::kPositive);
  c.number("report.mfu", Range::kShare);
  for (const char* k : {"compute", "tp_comm", "exposed_comm", "bubble", "optimizer"})
    c.number(std::string("report.breakdown_s.") + k, Range::kNonNegative);
  c.number("report.sync_wait.fraction", Range::kFraction);
  c.number("report.projection.days", Range::kPositive);
  c.number("report.projection.days_with_failures", Range::kPositive);
  c.number("report.projection.goodput", Range::kShare);
  c.number("report.projection.total_steps", Range::kPositive);
  c.string("report.bottleneck");
  c.string("report.bottleneck_reason");
  if (c.has("report.steps_replicated")) c.count("report.steps_replicated");
  if (c.has("report.micro_batches")) c.count("report.micro_batches");
  const auto& steps = c.need("step_times");
  if (!steps.is_array() || steps.empty()) c.fail("step_times is " + steps.dump().substr(0, 40) + ": must be a list of step times");
  for (size_t i = 0; i < steps.size(); ++i) c.number_value("step_times[" + std::to_string(i) + "]", steps[i], Range::kPositive);
}

}  // namespace

ResumeFile read_resume_file(const std::string& path) {
  ResumeFile out;
  std::ifstream in(path, std::ios::binary);
  if (!in) return out;  // none yet: nothing finished
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  size_t at = 0;
  for (int number = 1; at < text.size(); ++number) {
    const size_t begin = at;
    const size_t newline = text.find('\n', begin);
    const bool whole = newline != std::string::npos;
    const std::string line = text.substr(begin, (whole ? newline : text.size()) - begin);
    at = whole ? newline + 1 : text.size();
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = path + ":" + std::to_string(number);
    nlohmann::json j;
    std::string bad;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      bad = "not JSON (syntax error near column " + std::to_string(e.byte) + ")";
    } catch (const nlohmann::json::exception&) {
      bad = "not JSON (a number out of range)";  // 1e999: nlohmann::json's out_of_range
    }
    if (!bad.empty() && !whole) {
      out.warnings.push_back(where + ": warning: incomplete last line (its write was cut short) dropped; its result is computed again");
      out.cut_at = begin;
      break;
    }
    if (!bad.empty()) throw util::InputError(where + ": " + bad);
    check_result_line(j, where);
    std::string key = j["job"].dump();  // before the move below (json's operator= takes its argument by value)
    out.results[std::move(key)] = std::move(j);
    out.newline_missing = !whole;
  }
  return out;
}

size_t stale_results(const ResumeFile& file, const std::vector<WorkerOptions>& work) {
  auto unhashed = [](nlohmann::json key) {
    key.erase("scenario_hash");
    return key.dump();
  };
  std::set<std::string> computed;  // the jobs in the file, whatever scenario bytes they were computed from
  for (const auto& [key, line] : file.results) computed.insert(unhashed(line["job"]));
  size_t stale = 0;
  for (const auto& w : work) {
    const nlohmann::json key = job_key(w);
    if (file.results.count(key.dump()) == 0 && computed.count(unhashed(key)) > 0) ++stale;
  }
  return stale;
}

void say_what_resumes(const std::string& path, const ResumeFile& file, const std::vector<WorkerOptions>& work) {
  for (const auto& w : file.warnings) std::fprintf(stderr, "%s\n", w.c_str());
  if (const size_t stale = stale_results(file, work); stale > 0)
    std::fprintf(stderr, "%s: skipped %zu stale result%s (the scenario changed since they were computed): computing %s again\n",
                 path.c_str(), stale, stale == 1 ? "" : "s", stale == 1 ? "it" : "them");
}

ResumeWriter::ResumeWriter(std::string path, const ResumeFile& read)
    : path_(std::move(path)), cut_at_(read.cut_at), newline_missing_(read.newline_missing) {}

ResumeWriter::~ResumeWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ResumeWriter::append(const nlohmann::json& line) {
  if (path_.empty()) return;
  std::string text = line.dump() + "\n";
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd_ < 0) throw util::InputError(path_ + ": cannot write: " + std::strerror(errno));
    struct stat st {};
    if (cut_at_ && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd_, static_cast<off_t>(*cut_at_)) != 0)
      throw util::InputError(path_ + ": cannot write: " + std::strerror(errno));
    if (newline_missing_) text.insert(0, "\n");
  }
  if (!util::write_all(fd_, text)) throw util::InputError(path_ + ": cannot write: " + std::strerror(errno));
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
                                const std::function<void(size_t, const JobResult&)>& on_done,
                                const BatchControl* control) {
  if (parallel <= 0) parallel = core_count();
  auto stopping = [control] { return g_stop != 0 || (control != nullptr && control->cancel.load()); };
  auto stop_reason = [] { return g_stop != 0 ? "stopped by " + StopOnSignal::name(g_stop) : std::string("stopped"); };
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
    if (!r.ran && stopping()) {
      // Killed because the batch stopped: not a failure of its job. (One that finished first is kept.)
      r.stopped = true;
      r.error = stop_reason();
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
    if (stopping()) {
      for (; next < jobs.size(); ++next) {
        results[next].stopped = true;
        results[next].error = stop_reason() + " before it started";
      }
      workers.kill_all();
    }
    if (control != nullptr && control->parallel.load() > 0) parallel = control->parallel.load();
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
