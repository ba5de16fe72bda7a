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
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "cli/run_command.hpp"
#include "config/scenario.hpp"
#include "util/output.hpp"

extern char** environ;

namespace trainsim::cli {

int worker_command(const WorkerOptions& w) {
  // A worker never outlives the command that started it (run's advice, sweep, variance): when that
  // process ends, by a signal or otherwise, the kernel sends this one SIGKILL. If it is already
  // gone (re-parented before the call), stop now.
  const pid_t parent = ::getppid();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) return 1;
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
  // A private directory (mkdtemp: fresh, 0700), never one that happens to exist under a known name.
  std::string tmpl = (std::filesystem::temp_directory_path() / "trainsim-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr)
    throw std::runtime_error("cannot create a temporary directory in " +
                             std::filesystem::temp_directory_path().string() + ": " + std::strerror(errno));
  const std::filesystem::path dir = tmpl;
  const std::string text_path = (dir / "scenario.yaml").string();
  if (!scenario_text.empty()) util::write_output(text_path, scenario_text);
  std::map<pid_t, size_t> running;
  size_t next = 0;
  auto out_of = [&](size_t i) { return (dir / ("job-" + std::to_string(i) + ".json")).string(); };
  auto err_of = [&](size_t i) { return (dir / ("job-" + std::to_string(i) + ".err")).string(); };
  while (next < jobs.size() || !running.empty()) {
    while (next < jobs.size() && static_cast<int64_t>(running.size()) < parallel) {
      std::vector<std::string> args = {self, "worker"};
      args.insert(args.end(), jobs[next].args.begin(), jobs[next].args.end());
      if (!scenario_text.empty()) {
        args.push_back("--scenario-text");
        args.push_back(text_path);
      }
      args.push_back("--out");
      args.push_back(out_of(next));
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      posix_spawn_file_actions_t fa;
      posix_spawn_file_actions_init(&fa);
      posix_spawn_file_actions_addopen(&fa, 2, err_of(next).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
      posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
      pid_t pid = 0;
      const int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, argv.data(), environ);
      posix_spawn_file_actions_destroy(&fa);
      if (rc != 0) {
        results[next].error = "cannot start " + self;
        if (on_done) on_done(next, results[next]);
      } else {
        running[pid] = next;
      }
      ++next;
    }
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid <= 0) break;
    auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second;
    running.erase(it);
    JobResult& r = results[i];
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    std::ifstream in(out_of(i));
    if (r.exit_code == 0 && in) {
      std::stringstream ss;
      ss << in.rdbuf();
      r.result = nlohmann::json::parse(ss.str(), nullptr, false);
      r.ran = !r.result.is_discarded();
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
  }
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return results;
}

}  // namespace trainsim::cli
