#include "util/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "util/error.hpp"

namespace trainsim::util {
namespace {

namespace fs = std::filesystem;

// Symlinks are followed this many times at most (Linux's MAXSYMLINKS).
constexpr int kMaxSymlinks = 40;

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw InputError(path + ": cannot write: " + why);
}

// The file a write to `path` lands on: symlinks followed to their final target (which may not
// exist yet), relative targets taken from the link's own directory.
fs::path resolve_target(const std::string& path) {
  fs::path p = path;
  for (int i = 0; i < kMaxSymlinks; ++i) {
    std::error_code ec;
    if (!fs::is_symlink(fs::symlink_status(p, ec))) return p;
    fs::path next = fs::read_symlink(p, ec);
    if (ec) fail(path, ec.message());
    p = next.is_absolute() ? next : p.parent_path() / next;
  }
  fail(path, "too many levels of symbolic links");
}

// Permission bits a new file gets from open(..., 0666) under the process's umask.
mode_t default_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

bool write_all(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

OutputSet::~OutputSet() {
  for (const auto& f : files_)
    if (!f.tmp.empty()) ::unlink(f.tmp.c_str());
}

void OutputSet::add(const std::string& path, std::string content) {
  Staged f;
  f.path = path;
  if (path == "-") {
    f.direct = true;
    f.content = std::move(content);
    files_.push_back(std::move(f));
    return;
  }
  if (path.empty()) fail("''", "empty file name");
  f.target = resolve_target(path);
  struct stat st {};
  const bool exists = ::stat(f.target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail(path, "is a directory");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket is written through at commit, never replaced (/dev/null, a pipe).
    f.direct = true;
    f.content = std::move(content);
    files_.push_back(std::move(f));
    return;
  }
  // A regular file (or none yet): a fresh temporary beside the target, created exclusively by
  // mkstemp (so nothing planted under a predictable name can redirect it), renamed over it at commit.
  const fs::path dir = f.target.has_parent_path() ? f.target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + f.target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(path, std::strerror(errno));
  f.tmp = tmpl;
  files_.push_back(f);  // from here the destructor removes the temporary on any failure
  // mkstemp creates 0600; the output gets the mode the target had, or the usual one for a new file.
  const mode_t mode = exists ? (st.st_mode & 07777) : default_file_mode();
  bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, content);
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (!ok) fail(path, std::strerror(saved));
}

void OutputSet::commit() {
  // SIGINT and SIGTERM wait until every file is in place: the set lands whole. A signal that came
  // meanwhile is delivered when they are unblocked, to whatever handler the command has.
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  ::sigprocmask(SIG_BLOCK, &stop, &old);
  std::string error;
  for (auto& f : files_) {
    if (!error.empty()) break;
    if (f.path == "-") {
      std::fwrite(f.content.data(), 1, f.content.size(), stdout);
      std::fflush(stdout);
    } else if (f.direct) {
      const int fd = ::open(f.target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
      const bool ok = fd >= 0 && write_all(fd, f.content);
      const int saved = errno;
      if (fd >= 0) ::close(fd);
      if (!ok) error = f.path + ": cannot write: " + std::strerror(saved);
    } else if (::rename(f.tmp.c_str(), f.target.c_str()) == 0) {
      f.tmp.clear();
    } else {
      error = f.path + ": cannot write: " + std::strerror(errno);
    }
  }
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
  if (!error.empty()) throw InputError(error);
}

void write_output(const std::string& path, const std::string& content) {
  OutputSet set;
  set.add(path, content);
  set.commit();
}

void check_outputs(const std::string& input, const std::vector<std::pair<std::string, std::string>>& outputs) {
  std::error_code ec;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [flag, path] = outputs[i];
    if (path.empty() || path == "-") continue;
    const std::string what = flag + " " + path;
    if (fs::is_directory(path, ec)) throw InputError(what + ": is a directory");
    fs::path dir = fs::path(path).parent_path();
    if (dir.empty()) dir = ".";
    if (!fs::is_directory(dir, ec)) throw InputError(what + ": no such directory " + dir.string());
    if (::access(dir.c_str(), W_OK) != 0) throw InputError(what + ": directory " + dir.string() + " is not writable");
    if (!input.empty() && fs::exists(path, ec) && fs::equivalent(path, input, ec)) throw InputError(what + ": is the scenario file itself");
    for (size_t j = 0; j < i; ++j) {
      const std::string& other = outputs[j].second;
      if (other.empty() || other == "-") continue;
      if (other == path || (fs::exists(path, ec) && fs::exists(other, ec) && fs::equivalent(path, other, ec)))
        throw InputError(outputs[j].first + " and " + flag + " name the same file, " + path);
    }
  }
}

}  // namespace trainsim::util
