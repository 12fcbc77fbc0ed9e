// SPDX-License-Identifier: Apache-2.0
// The descriptors the harness owns: closed by their owner on every path, a child started
// paused and released into exec, or killed and reaped when never released.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.h"
#include "harness/child_process.h"

namespace ingero::harness {
namespace {

bool is_open(int fd) { return fcntl(fd, F_GETFD) != -1 || errno != EBADF; }

TEST(UniqueFd, ClosesOnDestructionResetAndMoveAssignmentButNotOnRelease) {
  auto pipe = make_pipe(O_CLOEXEC);
  ASSERT_TRUE(pipe);
  const int r = pipe->read.get(), w = pipe->write.get();
  {
    UniqueFd moved(std::move(pipe->read));
    EXPECT_FALSE(pipe->read);
    EXPECT_TRUE(is_open(r));
  }
  EXPECT_FALSE(is_open(r));
  UniqueFd other;
  other = std::move(pipe->write);
  EXPECT_TRUE(is_open(w));
  auto second = make_pipe(O_CLOEXEC);
  ASSERT_TRUE(second);
  const int r2 = second->read.get();
  other = std::move(second->read);  // the old one is closed, the new one kept
  EXPECT_FALSE(is_open(w));
  EXPECT_TRUE(is_open(r2));
  const int released = other.release();
  EXPECT_EQ(released, r2);
  other.reset();
  EXPECT_TRUE(is_open(r2));
  close(released);
}

TEST(PausedChild, NeverReleasedIsKilledAndReapedWithItsPipesClosed) {
  pid_t pid = -1;
  {
    auto child = PausedChild::spawn({"true"});
    ASSERT_TRUE(child.ok()) << child.error().message;
    pid = child->pid();
  }
  EXPECT_EQ(waitpid(pid, nullptr, WNOHANG), -1);  // already reaped
  EXPECT_EQ(errno, ECHILD);
}

TEST(PausedChild, ReleasedRunsAndAMissingCommandIsAnErrorNamingIt) {
  auto child = PausedChild::spawn({"true"});
  ASSERT_TRUE(child.ok());
  ASSERT_TRUE(child->release().ok());
  int status = 0;
  ASSERT_EQ(waitpid(child->pid(), &status, 0), child->pid());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  auto missing = PausedChild::spawn({"/nonexistent/ingero-no-such-command"});
  ASSERT_TRUE(missing.ok());
  Status released = missing->release();
  ASSERT_FALSE(released.ok());
  EXPECT_EQ(released.error().exit_code, 127);
  EXPECT_NE(released.error().message.find("ingero-no-such-command"), std::string::npos);
}

}  // namespace
}  // namespace ingero::harness
