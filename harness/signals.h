// The harness's own Ctrl-C / SIGTERM handling: remember the request, let the run loop
// forward it to the traced child, drain the tracer and close the DB.
#pragma once

namespace ingero::harness {

void install_interrupt_handlers();
bool interrupt_requested();
int interrupt_signal();  // the signal received (SIGINT or SIGTERM), 0 if none

}  // namespace ingero::harness
