// Helpers for tests that drive the trainsim binary: run a command line, capture its exit code,
// standard output and standard error; find scenarios; name scratch files.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trainsim::testing {

struct Result {
  int code = -1;    // exit code (-1 when the process did not exit normally)
  std::string out;  // standard output
  std::string err;  // standard error
};

// A scratch directory private to this test process.
inline std::filesystem::path scratch() {
  const auto dir = std::filesystem::temp_directory_path() / ("trainsim-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

inline std::string tmp(const std::string& name) { return (scratch() / name).string(); }

// Runs a shell command line; standard output and standard error captured separately.
inline Result shell(const std::string& cmd) {
  const std::string err_file = tmp("stderr");
  Result r;
  FILE* p = popen((cmd + " 2>" + err_file).c_str(), "r");
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

// `trainsim ARGS`.
inline Result trainsim(const std::string& args) { return shell(std::string(TRAINSIM_BINARY) + " " + args); }

// The whole of a file ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::string scenario(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name; }

// The contents of a /proc file, or "" once its process is gone: a process may exit between the
// listing of /proc and the read, and then read() fails with ESRCH (which std::ifstream's iterator
// turns into an exception: BatchTest.WorkersDieWithAKilledSweep failed so under ASan).
inline std::string read_proc(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n <= 0) {
      if (n < 0) out.clear();
      break;
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// /proc/PID/stat's state, parent and start time (fields 3, 4 and 22; the command name before them,
// in parentheses, may hold spaces). The start time (clock ticks after boot) tells a process from a
// later one given the same pid.
inline bool stat_of(pid_t pid, char& state, pid_t& parent, unsigned long long& start) {
  const std::string text = read_proc("/proc/" + std::to_string(pid) + "/stat");
  const auto close = text.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream in(text.substr(close + 1));
  long ppid = 0;
  in >> state >> ppid;
  std::string skip;
  for (int field = 5; field < 22; ++field) in >> skip;
  in >> start;
  parent = static_cast<pid_t>(ppid);
  return static_cast<bool>(in);
}

inline std::vector<pid_t> all_pids() {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

// The running processes (not zombies) whose command line mentions `text`: a batch's workers name
// its private directory in their arguments, so this finds them even once re-parented.
inline std::vector<pid_t> processes_mentioning(const std::string& text) {
  std::vector<pid_t> out;
  for (pid_t pid : all_pids()) {
    std::string cmdline = read_proc("/proc/" + std::to_string(pid) + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    char state = 0;
    pid_t parent = 0;
    unsigned long long start = 0;
    if (cmdline.find(text) != std::string::npos && stat_of(pid, state, parent, start) && state != 'Z') out.push_back(pid);
  }
  return out;
}

}  // namespace trainsim::testing
