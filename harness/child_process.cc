// SPDX-License-Identifier: Apache-2.0
#include "harness/child_process.h"

#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "harness/signals.h"

namespace ingero::harness {

namespace {

// This process's environment with env's variables set; built before fork, since the child of a
// threaded process may only make async-signal-safe calls.
std::vector<std::string> child_environment(const PausedChild::Environment& env) {
  std::vector<std::string> entries;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [key, value] : env) replaced |= key == name;
    if (!replaced) entries.push_back(entry);
  }
  for (const auto& [key, value] : env) entries.push_back(key + "=" + value);
  return entries;
}

}  // namespace

Result<PausedChild> PausedChild::spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  const bool own_group = options.own_group;
  const std::optional<std::string>& output_path = options.output_path;
  if (argv.empty()) return Error::bad_input("no command to run", "put the command after --");
  UniqueFd output;
  if (output_path) {
    output.reset(open(output_path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!output) return Error::failure(fmt::format("creating {}: {}", *output_path, std::strerror(errno)));
  }
  auto go = make_pipe(O_CLOEXEC);
  if (!go) return Error::failure(std::string("pipe: ") + std::strerror(errno));
  auto err = make_pipe(O_CLOEXEC);
  if (!err) return Error::failure(std::string("pipe: ") + std::strerror(errno));
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const std::vector<std::string> environment = child_environment(options.env);
  std::vector<char*> cenv;
  for (const auto& e : environment) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) return Error::failure(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    // The child execs or _exits: no destructor runs here, and every call is async-signal-safe.
    if (options.dies_with_parent) prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);
    if (own_group) setpgid(0, 0);
    if (output && (dup2(output.get(), STDOUT_FILENO) < 0 || dup2(output.get(), STDERR_FILENO) < 0)) _exit(127);
    // The harness may have blocked or caught signals; the child starts as the harness was
    // started (a signal ignored then, as nohup's SIGHUP, stays ignored).
    restore_startup_signals();
    close(go->write.get());
    close(err->read.get());
    char byte;
    ssize_t n;
    do {
      n = read(go->read.get(), &byte, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1) _exit(127);  // the parent gave up before releasing us
    if (options.run_as) {
      const Credentials& user = *options.run_as;
      if (setgroups(user.groups.size(), user.groups.data()) == 0 && setgid(user.gid) == 0 && setuid(user.uid) == 0)
        execvpe(cargv[0], cargv.data(), cenv.data());
    } else {
      execvpe(cargv[0], cargv.data(), cenv.data());
    }
    int e = errno;
    // Should this write fail too, the parent still sees exit code 127: the command did not start.
    ssize_t ignored = write(err->write.get(), &e, sizeof(e));
    (void)ignored;
    _exit(127);
  }
  go->read.reset();
  err->write.reset();
  output.reset();
  // Also from this side, so that the group exists before anyone signals it.
  if (own_group) setpgid(pid, pid);
  return PausedChild(pid, std::move(go->write), std::move(err->read), argv[0]);
}

PausedChild::PausedChild(PausedChild&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      go_fd_(std::move(other.go_fd_)),
      exec_error_fd_(std::move(other.exec_error_fd_)),
      command_(std::move(other.command_)) {}

PausedChild::~PausedChild() {
  if (go_fd_) {
    // Never released: closing the pipe makes it exit; reap it.
    go_fd_.reset();
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      int status;
      while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
      }
    }
  }
}

Status PausedChild::release() {
  char go = 1;
  ssize_t w = write(go_fd_.get(), &go, 1);
  go_fd_.reset();
  if (w != 1) return Error::failure("could not release the child process");
  int e = 0;
  ssize_t n;
  do {
    n = read(exec_error_fd_.get(), &e, sizeof(e));
  } while (n < 0 && errno == EINTR);
  exec_error_fd_.reset();
  if (n == sizeof(e)) {
    int status;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return Error{127, fmt::format("cannot run '{}': {}", command_, std::strerror(e)),
                 "check the command name and that it is executable"};
  }
  return {};
}

CommandOutput run_and_capture(const std::vector<std::string>& argv) {
  CommandOutput out;
  if (argv.empty()) return out;
  auto pipe = make_pipe(O_CLOEXEC);
  if (!pipe) return out;
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) return out;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    restore_startup_signals();
    dup2(pipe->write.get(), STDOUT_FILENO);  // dup2 clears close-on-exec on the copy
    if (int devnull = open("/dev/null", O_WRONLY); devnull >= 0) dup2(devnull, STDERR_FILENO);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  pipe->write.reset();
  char buf[4096];
  for (;;) {
    const ssize_t n = read(pipe->read.get(), buf, sizeof buf);
    if (n > 0) out.stdout_text.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) break;
  }
  pipe->read.reset();
  int status = 0;
  pid_t waited = -1;
  while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited == pid) out.wait_status = status;
  if (waited == pid && WIFEXITED(status)) out.exit_code = WEXITSTATUS(status);
  return out;
}

}  // namespace ingero::harness
