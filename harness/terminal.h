// SPDX-License-Identifier: Apache-2.0
// The controlling terminal, lent to a launched job as a shell lends it: the job runs in a
// process group of its own (so that a signal reaches all it starts), which the terminal would
// treat as a background job, stopping its input(), pdb or login prompt with SIGTTIN. While the
// job runs its group is the terminal's foreground (Ctrl-C and Ctrl-Z reach it); after, the
// terminal comes back to the harness.
#pragma once

#include <sys/types.h>

#include <optional>

#include "common/unique_fd.h"

namespace ingero::harness {

class TerminalLoan {
 public:
  // Empty when this process has no controlling terminal.
  static std::optional<TerminalLoan> open();
  TerminalLoan(TerminalLoan&& other) noexcept;
  TerminalLoan& operator=(TerminalLoan&&) = delete;
  ~TerminalLoan();  // takes the terminal back

  // Makes job_group the terminal's foreground, when this process is in the foreground now
  // (a harness started with & lends nothing it does not hold).
  void lend_to(pid_t job_group);
  // Back to this process's group, if it was lent.
  void take_back();
  // The job stopped on a terminal stop signal (Ctrl-Z, or SIGTTIN/SIGTTOU): takes the
  // terminal back and stops this process with that signal too, so that the shell above shows
  // it stopped; once continued (fg or bg), lends the terminal again when it is in the
  // foreground, and continues the job. A job is never left stopped behind a running harness.
  void relay_stop(pid_t job_group, int stop_signal);

 private:
  explicit TerminalLoan(UniqueFd tty) : tty_(std::move(tty)) {}
  bool in_foreground() const;
  UniqueFd tty_;
  bool lent_ = false;
};

// Whether a stop signal is the terminal's (Ctrl-Z, background input or output), as opposed to
// SIGSTOP, which someone sent on purpose and which is left alone.
bool is_terminal_stop(int sig);

}  // namespace ingero::harness
