// Output files are written whole or not at all: to a temporary file beside the target (created
// with mkstemp, never under a predictable name), then renamed over it, so an interrupted run leaves
// either the old file or the complete new one. A symlink is followed to the file it names; a
// device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is written through, never replaced.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::util {

// Writes all of `content` to the open file `fd`, resuming short writes; false (errno set) when it
// cannot.
bool write_all(int fd, const std::string& content);

// Writes `content` to `path` atomically; "-" writes to standard output. Throws util::InputError
// ("PATH: cannot write: reason", exit 2) when the file cannot be written.
void write_output(const std::string& path, const std::string& content);

// A command's output files, landing together: add() writes each to its temporary (nothing of the
// targets changes yet), commit() renames them all over their targets with SIGINT and SIGTERM held
// off until the last, so a signal never leaves a mixed old/new set. A set destroyed uncommitted
// (an error, an interrupt) removes its temporaries: no *.tmp.* is left behind. "-" is standard
// output; a device or FIFO is written through at commit.
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();
  // Throws util::InputError ("PATH: cannot write: reason") when the temporary cannot be written.
  void add(const std::string& path, std::string content);
  void commit();

 private:
  struct Staged {
    std::string path;
    std::filesystem::path target;
    std::string tmp;      // the temporary, until renamed
    bool direct = false;  // "-", a device or a FIFO: written at commit
    std::string content;  // for direct ones
  };
  std::vector<Staged> files_;
};

// Checks a command's output files before any work starts (issue 21): each `{flag, path}` given
// ("" = not given, "-" = standard output) must not be a directory, must be in an existing, writable
// directory, must not be the input file (`input`, the scenario) and must not repeat another output.
// Throws util::InputError ("--json PATH: is a directory", exit 2) on the first that fails.
void check_outputs(const std::string& input, const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace trainsim::util
