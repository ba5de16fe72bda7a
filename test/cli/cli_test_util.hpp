// Helpers for tests that drive the trainsim binary: run a command line, capture its exit code,
// standard output and standard error; find scenarios; name scratch files.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

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

inline std::string scenario(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/scenarios/" + name; }

}  // namespace trainsim::testing
