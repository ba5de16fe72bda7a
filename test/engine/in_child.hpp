// Runs a function in a forked child and returns the double it computed: SimGrid allows one Engine
// per process, so a test that compares two simulations runs each in its own child.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace trainsim::testing {

// Returns fn()'s value, or -1 when the child could not be started or did not answer.
template <class F>
double in_child(F fn) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    double v = fn();
    (void)!write(fds[1], &v, sizeof v);
    _exit(0);
  }
  close(fds[1]);
  double v = -1;
  if (read(fds[0], &v, sizeof v) != static_cast<ssize_t>(sizeof v)) v = -1;
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return v;
}

// Returns fn()'s vector of doubles, or an empty vector when the child could not be started or did
// not answer.
template <class F>
std::vector<double> in_child_values(F fn) {
  int fds[2];
  if (pipe(fds) != 0) return {};
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    const std::vector<double> v = fn();
    const uint64_t n = v.size();
    bool ok = write(fds[1], &n, sizeof n) == static_cast<ssize_t>(sizeof n);
    for (size_t done = 0; ok && done < n * sizeof(double);) {
      const ssize_t w = write(fds[1], reinterpret_cast<const char*>(v.data()) + done, n * sizeof(double) - done);
      ok = w > 0;
      done += ok ? static_cast<size_t>(w) : 0;
    }
    _exit(ok ? 0 : 1);
  }
  close(fds[1]);
  std::vector<double> v;
  uint64_t n = 0;
  if (read(fds[0], &n, sizeof n) == static_cast<ssize_t>(sizeof n) && n < (uint64_t{1} << 24)) {
    v.resize(n);
    size_t got = 0;
    while (got < n * sizeof(double)) {
      const ssize_t r = read(fds[0], reinterpret_cast<char*>(v.data()) + got, n * sizeof(double) - got);
      if (r <= 0) break;
      got += static_cast<size_t>(r);
    }
    if (got != n * sizeof(double)) v.clear();
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return v;
}

}  // namespace trainsim::testing
