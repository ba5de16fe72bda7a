#include "util/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

void write_output(const std::string& path, const std::string& content) {
  if (path == "-") {
    std::fwrite(content.data(), 1, content.size(), stdout);
    std::fflush(stdout);
    return;
  }
  if (path.empty()) fail("''", "empty file name");
  const fs::path target = resolve_target(path);

  struct stat st {};
  const bool exists = ::stat(target.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail(path, "is a directory");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, FIFO or socket is written through, never replaced (/dev/null, /dev/stdout, a pipe).
    const int fd = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) fail(path, std::strerror(errno));
    const bool ok = write_all(fd, content);
    const int saved = errno;
    ::close(fd);
    if (!ok) fail(path, std::strerror(saved));
    return;
  }

  // A regular file (or none yet): a fresh temporary beside the target, created exclusively by
  // mkstemp (so nothing planted under a predictable name can redirect it), then renamed over it.
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(path, std::strerror(errno));
  // mkstemp creates 0600; the output gets the mode the target had, or the usual one for a new file.
  const mode_t mode = exists ? (st.st_mode & 07777) : default_file_mode();
  bool ok = ::fchmod(fd, mode) == 0 && write_all(fd, content);
  int saved = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  if (ok && ::rename(tmpl.c_str(), target.c_str()) != 0) {
    ok = false;
    saved = errno;
  }
  if (!ok) {
    ::unlink(tmpl.c_str());
    fail(path, std::strerror(saved));
  }
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
