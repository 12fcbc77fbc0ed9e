// SPDX-License-Identifier: Apache-2.0
// Output paths: a regular file (or a new path) is replaced by rename, a FIFO or a character
// device is written in place (as root, `--out /dev/null` once replaced the device with a
// regular file), anything else is refused before anything is written. And the trace DB
// path: only a regular file or a new path, never a symlink or a device.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "common/atomic_file.h"

namespace ingero {
namespace {

namespace fs = std::filesystem;

class OutputPath : public ::testing::Test {
 protected:
  void SetUp() override {
    auto dir = PrivateDir::create("ingero-common-test");
    ASSERT_TRUE(dir.ok());
    dir_.emplace(std::move(*dir));
  }
  std::string file(const std::string& name) const { return dir_->file(name); }
  // The names in the folder, to show that nothing (no temp file) was left behind.
  size_t entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& entry : fs::directory_iterator(dir_->path())) ++n;
    return n;
  }
  static mode_t kind(const std::string& path) {
    struct stat st {};
    EXPECT_EQ(lstat(path.c_str(), &st), 0) << path;
    return st.st_mode & S_IFMT;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // A character device like /dev/null (1, 3), made in the test's folder; root only.
  bool make_null_device(const std::string& path) const {
    return geteuid() == 0 && mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0;
  }
  std::optional<PrivateDir> dir_;
};

TEST_F(OutputPath, ANewOrRegularFileIsReplacedWhole) {
  const std::string path = file("sub/report.md");
  ASSERT_TRUE(write_file_atomically(path, "one").ok());
  ASSERT_TRUE(write_file_atomically(path, "two").ok());
  EXPECT_EQ(read(path), "two");
  EXPECT_EQ(kind(path), S_IFREG);
}

TEST_F(OutputPath, AFifoIsWrittenInPlaceNotReplaced) {
  const std::string fifo = file("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // The read end is open first, so that the write end opens at once; the data waits in the pipe.
  const int reader = open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const Status written = write_file_atomically(fifo, "hello\n");
  char buf[64] = {};
  const ssize_t n = ::read(reader, buf, sizeof buf);
  close(reader);
  EXPECT_TRUE(written.ok()) << (written ? "" : written.error().message);
  EXPECT_EQ(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0), "hello\n");
  EXPECT_EQ(kind(fifo), S_IFIFO);
  EXPECT_EQ(entries(), 1u);
  EXPECT_TRUE(check_writable_path("--out", fifo).ok());
}

TEST_F(OutputPath, ACharacterDeviceIsWrittenInPlaceNotReplaced) {
  const std::string device = file("null");
  if (!make_null_device(device)) GTEST_SKIP() << "needs root to make a character device";
  ASSERT_TRUE(check_writable_path("--out", device).ok());
  const Status written = write_file_atomically(device, "gone\n");
  EXPECT_TRUE(written.ok()) << (written ? "" : written.error().message);
  EXPECT_EQ(kind(device), S_IFCHR);  // still the device, as /dev/null and /dev/stdout must stay
  // Through a symlink, as /dev/stdout reaches its terminal: the link and the device both stay.
  const std::string link = file("stdout");
  fs::create_symlink(device, link);
  EXPECT_TRUE(write_file_atomically(link, "gone\n").ok());
  EXPECT_EQ(kind(link), S_IFLNK);
  EXPECT_EQ(kind(device), S_IFCHR);
  EXPECT_EQ(entries(), 2u);
}

TEST_F(OutputPath, ASymlinkToAFileKeepsTheLinkAndReplacesTheFile) {
  const std::string target = file("real.md");
  const std::string link = file("link.md");
  ASSERT_TRUE(write_file_atomically(target, "old").ok());
  fs::create_symlink(target, link);
  ASSERT_TRUE(check_writable_path("--report", link).ok());
  ASSERT_TRUE(write_file_atomically(link, "new").ok());
  EXPECT_EQ(kind(link), S_IFLNK);
  EXPECT_EQ(read(target), "new");
}

// A link another user planted in a folder they can write: root once renamed its report over the
// file the link named (a 0600 root file became a 0644 report). Refused before any work (exit 2),
// and at the write; the file and the link stay as they were.
TEST_F(OutputPath, ALinkAnotherUserPlantedIsNotFollowed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to own a link as another user (uid 65534)";
  const std::string secret = file("secret");
  ASSERT_TRUE(write_file_atomically(secret, "root only").ok());
  ASSERT_EQ(chmod(secret.c_str(), 0600), 0);
  const std::string shared = file("shared");
  ASSERT_EQ(mkdir(shared.c_str(), 0777), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);  // world-writable, not sticky: the kernel follows links here
  const std::string planted = shared + "/report.md";
  fs::create_symlink(secret, planted);
  ASSERT_EQ(lchown(planted.c_str(), 65534, 65534), 0);
  // Also one hop further: the user's own link to the planted one.
  const std::string mine = file("mine.md");
  fs::create_symlink(planted, mine);
  for (const std::string& path : {planted, mine}) {
    const Status checked = check_writable_path("--report", path);
    ASSERT_FALSE(checked.ok()) << path;
    EXPECT_EQ(checked.error().exit_code, kExitBadInput);
    EXPECT_NE(checked.error().message.find("uid 65534"), std::string::npos) << checked.error().message;
    EXPECT_NE(checked.error().hint.find("remove the link"), std::string::npos) << checked.error().hint;
    const Status written = write_file_atomically(path, "a report");
    ASSERT_FALSE(written.ok()) << path;
    EXPECT_EQ(written.error().exit_code, kExitBadInput);
  }
  EXPECT_EQ(read(secret), "root only");
  struct stat st {};
  ASSERT_EQ(stat(secret.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(kind(planted), S_IFLNK);

  // The same link in a folder only root writes could not have been planted: it is followed.
  ASSERT_EQ(chmod(shared.c_str(), 0755), 0);
  ASSERT_TRUE(write_file_atomically(planted, "a report").ok());
  EXPECT_EQ(read(secret), "a report");
  EXPECT_EQ(kind(planted), S_IFLNK);

  // In a world-writable folder, this user's own link is followed; a device behind another user's is refused.
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  ASSERT_EQ(lchown(planted.c_str(), 0, 0), 0);
  ASSERT_TRUE(write_file_atomically(planted, "again").ok());
  EXPECT_EQ(read(secret), "again");
  const std::string device = file("null");
  if (make_null_device(device)) {
    const std::string to_device = shared + "/out";
    fs::create_symlink(device, to_device);
    ASSERT_EQ(lchown(to_device.c_str(), 65534, 65534), 0);
    EXPECT_FALSE(write_file_atomically(to_device, "x").ok());
  }
}

// /dev/stdout redirected to a file (`> out.md`) is the shell's file: appended to, not replaced.
TEST_F(OutputPath, AFileBehindAProcDescriptorIsAppendedTo) {
  const std::string path = file("stdout.txt");
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, "before\n", 7), 7);
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  const Status written = write_file_atomically(fmt::format("/proc/self/fd/{}", fd), "report\n");
  close(fd);
  EXPECT_TRUE(written.ok()) << (written ? "" : written.error().message);
  EXPECT_EQ(read(path), "before\nreport\n");
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);  // the same file, which the shell's descriptor still names
}

TEST_F(OutputPath, DirectoriesSocketsAndBlockDevicesAreRefused) {
  std::vector<std::string> refused{dir_->path()};
  const std::string socket_path = file("sock");
  const int sock = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  ASSERT_EQ(bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  refused.push_back(socket_path);
  const std::string block = file("disk");
  // A node only: it is never opened (7, 0 is loop0).
  if (geteuid() == 0 && mknod(block.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0) refused.push_back(block);
  const size_t before = entries();
  for (const std::string& path : refused) {
    const Status written = write_file_atomically(path, "x");
    ASSERT_FALSE(written.ok()) << path;
    EXPECT_EQ(written.error().exit_code, kExitBadInput) << path;
    EXPECT_NE(written.error().message.find(path), std::string::npos) << written.error().message;
    EXPECT_FALSE(written.error().hint.empty());
    const Status checked = check_writable_path("--out", path);
    ASSERT_FALSE(checked.ok()) << path;
    EXPECT_EQ(checked.error().exit_code, kExitBadInput);
    EXPECT_EQ(checked.error().message.rfind("--out ", 0), 0u) << checked.error().message;
  }
  EXPECT_NE(write_file_atomically(socket_path, "x").error().message.find("a socket"), std::string::npos);
  EXPECT_EQ(entries(), before);  // no temporary file left beside them
  EXPECT_EQ(kind(socket_path), S_IFSOCK);
  close(sock);
}

TEST_F(OutputPath, ATraceDbPathIsARegularFileOrNew) {
  EXPECT_TRUE(check_writable_db("--db", file("new.db")).ok());
  ASSERT_TRUE(write_file_atomically(file("old.db"), "").ok());
  EXPECT_TRUE(check_writable_db("--db", file("old.db")).ok());

  const std::string fifo = file("pipe");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::string dangling = file("dangling.db");
  fs::create_symlink(file("nowhere/target.db"), dangling);
  const std::string link = file("link.db");
  fs::create_symlink(file("old.db"), link);
  std::vector<std::pair<std::string, std::string>> refused{
      {fifo, "a FIFO"}, {dangling, "symbolic link"}, {link, "symbolic link"}, {dir_->path(), "directory"}};
  const std::string device = file("null");
  if (make_null_device(device)) refused.emplace_back(device, "a character device");
  for (const auto& [path, words] : refused) {
    const Status s = check_writable_db("--db", path);
    ASSERT_FALSE(s.ok()) << path;
    EXPECT_EQ(s.error().exit_code, kExitBadInput);
    EXPECT_NE(s.error().message.find(words), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("--db"), std::string::npos) << s.error().message;
  }
  EXPECT_NE(check_writable_db("--db", link).error().hint.find(file("old.db")), std::string::npos);
  EXPECT_FALSE(fs::exists(file("nowhere")));
}

// mkstemp's 0600 was once replaced by a fixed 0644, whatever the umask.
TEST_F(OutputPath, AFileGetsTheModeTheUmaskGives) {
  for (mode_t mask : {mode_t{077}, mode_t{022}, mode_t{002}}) {
    const mode_t before = umask(mask);
    const std::string path = file("mode.md");
    const Status written = write_file_atomically(path, "x");
    umask(before);
    ASSERT_TRUE(written.ok()) << written.error().message;
    struct stat st {};
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask) << std::oct << mask;
  }
}

// A full disk says so, and what to do: /dev/full answers every write with ENOSPC.
TEST_F(OutputPath, AFullDiskIsNamedWithTheFix) {
  if (access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no writable /dev/full";
  const Status written = write_file_atomically("/dev/full", "x");
  ASSERT_FALSE(written.ok());
  EXPECT_NE(written.error().message.find("/dev/full"), std::string::npos) << written.error().message;
  EXPECT_NE(written.error().hint.find("is full: free space there, or choose another path"), std::string::npos)
      << written.error().hint;
  EXPECT_TRUE(file_write_error("cannot write", "x", EACCES).hint.empty());
}

// /proc passes access(W_OK) for root and refuses only the write: the checks create and remove.
TEST_F(OutputPath, AFolderWhereNothingCanBeCreatedIsRefusedBeforeAnyWork) {
  for (const Status& s : {check_writable_dir("--out", "/proc/x"), check_writable_path("--report", "/proc/x/r.md"),
                          check_writable_path("--report", "/proc/r.md")}) {
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.error().exit_code, kExitBadInput);
    EXPECT_NE(s.error().message.find("/proc"), std::string::npos) << s.error().message;
    EXPECT_NE(s.error().message.find("nothing can be created"), std::string::npos) << s.error().message;
  }
  EXPECT_TRUE(check_writable_dir("--out", file("new/runs")).ok());
  EXPECT_EQ(entries(), 0u);  // the probe is gone, and nothing was created for the new folder
}

// What a process killed with SIGKILL left: its pid is in the name and the process is gone.
TEST_F(OutputPath, StaleEntriesOfGoneOwnersAreRemovedOthersKept) {
  const pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  const std::string stale = file(fmt::format("out.db.partial-{}", gone));
  const std::string stale_wal = stale + "-wal";
  const std::string mine = file(fmt::format("out.db.partial-{}", getpid()));
  const std::string other = file(fmt::format("other.db.partial-{}", gone));
  for (const std::string& path : {stale, stale_wal, mine, other}) ASSERT_TRUE(write_file_atomically(path, "x").ok());
  remove_stale_entries(dir_->path(), "out.db.partial-");
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_wal));
  EXPECT_TRUE(fs::exists(mine));   // its owner runs
  EXPECT_TRUE(fs::exists(other));  // another output's

  // A private folder: removed by the next create() once its owner is gone, unless it was kept.
  const std::string prefix = fmt::format("ingero-stale-test-{}", getpid());
  std::string left, kept;
  for (bool keep : {true, false}) {  // the kept one first: the second create() removes no live owner's
    const pid_t owner = fork();
    if (owner == 0) {
      auto dir = PrivateDir::create(prefix);
      if (!dir) _exit(1);
      if (keep) dir->keep();
      std::ofstream(dir->file("result.json")) << "{}";
      kill(getpid(), SIGKILL);  // no destructor runs
    }
    ASSERT_GT(owner, 0);
    waitpid(owner, nullptr, 0);
  }
  // The children's paths: the folders of this prefix in TMPDIR.
  for (const auto& entry : fs::directory_iterator(fs::temp_directory_path()))
    if (entry.path().filename().string().rfind(prefix + "-", 0) == 0)
      (fs::exists(entry.path() / ".kept") ? kept : left) = entry.path().string();
  ASSERT_FALSE(left.empty());
  ASSERT_FALSE(kept.empty());
  {
    auto next = PrivateDir::create(prefix);
    ASSERT_TRUE(next.ok());
    EXPECT_NE(next->path().find(fmt::format("{}-{}-", prefix, getpid())), std::string::npos) << next->path();
  }
  EXPECT_FALSE(fs::exists(left));
  EXPECT_TRUE(fs::exists(kept + "/result.json"));
  fs::remove_all(kept);
}

}  // namespace
}  // namespace ingero
