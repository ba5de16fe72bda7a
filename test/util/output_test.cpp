// write_output (issue 21, item 1): regular files are replaced atomically through a mkstemp
// temporary; symlinks are followed, never replaced; devices and FIFOs are written through. No test
// here writes to /dev/null or any other system file: a FIFO of the test's own stands in for a device.
#include "util/output.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "util/error.hpp"

namespace trainsim::util {
namespace {

namespace fs = std::filesystem;

class WriteOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "trainsim-output-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  static void put(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  // Names in the directory, to check that no temporary is left behind.
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator())); }
  fs::path dir_;
};

TEST_F(WriteOutputTest, ReplacesARegularFileAndLeavesNoTemporary) {
  const fs::path out = dir_ / "report.json";
  put(out, "old");
  write_output(out.string(), "new content\n");
  EXPECT_EQ(read(out), "new content\n");
  EXPECT_EQ(entries(), 1u);
}

TEST_F(WriteOutputTest, KeepsTheModeOfTheFileItReplaces) {
  const fs::path out = dir_ / "report.json";
  put(out, "old");
  ASSERT_EQ(::chmod(out.c_str(), 0640), 0);
  write_output(out.string(), "x");
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(WriteOutputTest, NewFileGetsTheUmaskMode) {
  const mode_t old = ::umask(022);
  const fs::path out = dir_ / "new.json";
  write_output(out.string(), "x");
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);  // 0666 & ~022, not mkstemp's 0600
}

TEST_F(WriteOutputTest, FollowsASymlinkAndKeepsIt) {
  const fs::path target = dir_ / "real.json";
  const fs::path link = dir_ / "link.json";
  put(target, "old");
  fs::create_symlink("real.json", link);  // relative: resolved from the link's directory
  write_output(link.string(), "through the link");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(target), "through the link");
  EXPECT_EQ(entries(), 2u);
}

TEST_F(WriteOutputTest, ADanglingSymlinkCreatesItsTarget) {
  const fs::path link = dir_ / "link.json";
  fs::create_symlink(dir_ / "later.json", link);
  write_output(link.string(), "created");
  EXPECT_TRUE(fs::is_symlink(fs::symlink_status(link)));
  EXPECT_EQ(read(dir_ / "later.json"), "created");
}

TEST_F(WriteOutputTest, AFifoIsWrittenThroughNotReplaced) {
  const fs::path fifo = dir_ / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Held open for reading (and writing, so neither open blocks); the pipe buffers the report.
  const int fd = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(fd, 0);
  write_output(fifo.string(), "streamed");
  std::array<char, 64> buf{};
  const ssize_t n = ::read(fd, buf.data(), buf.size());
  ::close(fd);
  EXPECT_EQ(std::string(buf.data(), n > 0 ? static_cast<size_t>(n) : 0), "streamed");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced by a regular file";
  EXPECT_EQ(entries(), 1u);
}

TEST_F(WriteOutputTest, APlantedTemporaryNameRedirectsNothing) {
  // The old writer opened PATH.tmp.PID without O_EXCL: a symlink planted there received the report.
  const fs::path out = dir_ / "report.json";
  const fs::path victim = dir_ / "victim";
  put(victim, "precious");
  fs::create_symlink(victim, dir_ / ("report.json.tmp." + std::to_string(::getpid())));
  fs::create_symlink(victim, dir_ / (".report.json.tmp." + std::to_string(::getpid())));
  write_output(out.string(), "report");
  EXPECT_EQ(read(victim), "precious");
  EXPECT_EQ(read(out), "report");
}

TEST_F(WriteOutputTest, ADirectoryIsRefusedWithTheReason) {
  try {
    write_output(dir_.string(), "x");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), dir_.string() + ": cannot write: is a directory");
  }
}

TEST_F(WriteOutputTest, AMissingDirectoryIsAnInputError) {
  const fs::path out = dir_ / "missing" / "report.json";
  try {
    write_output(out.string(), "x");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), out.string() + ": cannot write: No such file or directory");
  }
  EXPECT_EQ(entries(), 0u);
}

TEST_F(WriteOutputTest, AnEmptyPathIsAnInputError) {
  EXPECT_THROW(write_output("", "x"), InputError);
}

// Issue 21 item 2: a command's outputs land together. Staged, nothing of the targets changes; a
// set dropped before its commit (an error, a signal) leaves the old files and no temporary; a
// commit replaces all of them.
TEST_F(WriteOutputTest, AnOutputSetLandsWholeOrNotAtAll) {
  const fs::path json = dir_ / "r.json", csv = dir_ / "r.csv";
  put(json, "old json");
  put(csv, "old csv");
  {
    OutputSet set;
    set.add(json.string(), "new json");
    set.add(csv.string(), "new csv");
    EXPECT_EQ(read(json), "old json");
    EXPECT_EQ(entries(), 4u);  // two targets, two temporaries
  }  // dropped uncommitted
  EXPECT_EQ(read(json), "old json");
  EXPECT_EQ(read(csv), "old csv");
  EXPECT_EQ(entries(), 2u);
  OutputSet set;
  set.add(json.string(), "new json");
  set.add(csv.string(), "new csv");
  set.commit();
  EXPECT_EQ(read(json), "new json");
  EXPECT_EQ(read(csv), "new csv");
  EXPECT_EQ(entries(), 2u);
}

// A signal raised during the commit waits for its end: with SIGINT's handler recording it, both
// files are new when the handler runs (the signal is held off while the set lands).
volatile std::sig_atomic_t g_seen_new = -1;
std::string g_probe;
extern "C" void probe(int) {
  std::ifstream in(g_probe);
  std::string s;
  in >> s;
  g_seen_new = s == "new";
}

TEST_F(WriteOutputTest, ASignalDuringTheCommitWaitsForTheLastFile) {
  const fs::path a = dir_ / "a", b = dir_ / "b";
  put(a, "old");
  put(b, "old");
  g_probe = b.string();
  struct sigaction sa {}, old {};
  sa.sa_handler = probe;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(::sigaction(SIGINT, &sa, &old), 0);
  {
    OutputSet set;
    set.add(a.string(), "new");
    set.add(b.string(), "new");
    // Block, raise (pending), then commit: commit keeps it blocked and restores the mask after the
    // last rename, when it is delivered.
    sigset_t s, prev;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    ::sigprocmask(SIG_BLOCK, &s, &prev);
    ::raise(SIGINT);
    ::sigprocmask(SIG_SETMASK, &prev, nullptr);  // delivered here, before the commit: old files
    EXPECT_EQ(g_seen_new, 0);
    g_seen_new = -1;
    ::sigprocmask(SIG_BLOCK, &s, &prev);
    ::raise(SIGINT);
    set.commit();  // keeps the caller's mask (blocked): nothing delivered yet
    EXPECT_EQ(g_seen_new, -1);
    ::sigprocmask(SIG_SETMASK, &prev, nullptr);
    EXPECT_EQ(g_seen_new, 1);
  }
  ::sigaction(SIGINT, &old, nullptr);
}

}  // namespace
}  // namespace trainsim::util
