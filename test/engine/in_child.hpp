// Runs a function in a forked child and returns the double it computed: SimGrid allows one Engine
// per process, so a test that compares two simulations runs each in its own child.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

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

}  // namespace trainsim::testing
