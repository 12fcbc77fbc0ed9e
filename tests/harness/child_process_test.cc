// SPDX-License-Identifier: Apache-2.0
// The descriptors the harness owns: closed by their owner on every path, a child started
// paused and released into exec, or killed and reaped when never released.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.h"
#include "common/wait_status.h"
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

// A helper program the harness runs and reads (the dataset's preparation, a torch probe) keeps how
// it ended, so that a crash is named by its signal rather than "exit code -1".
TEST(RunAndCapture, KeepsHowTheProgramEndedAndNamesItsSignal) {
  const CommandOutput exited = run_and_capture({"sh", "-c", "echo hello; exit 3"});
  EXPECT_EQ(exited.exit_code, 3);
  EXPECT_EQ(exited.stdout_text, "hello\n");
  ASSERT_TRUE(exited.wait_status);
  EXPECT_EQ(describe_wait_status(*exited.wait_status), "exited with status 3");
  const CommandOutput aborted = run_and_capture({"sh", "-c", "kill -ABRT $$"});
  EXPECT_EQ(aborted.exit_code, -1);
  ASSERT_TRUE(aborted.wait_status);
  EXPECT_EQ(describe_wait_status(*aborted.wait_status), "was killed by SIGABRT (signal 6, Aborted)");
  EXPECT_EQ(signal_text(SIGKILL), "SIGKILL (signal 9, Killed)");
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
