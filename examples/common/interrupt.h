// examples/common/interrupt.h — Ctrl-C as "stop after this step, save, exit cleanly".
//
// The first SIGINT only sets a flag that the training loop polls between steps; the loop
// then saves a checkpoint and returns normally. The handler restores the default action,
// so a second Ctrl-C stops the program at once (for a loop that is stuck).
#pragma once

namespace tg::examples {

/// Installs the SIGINT handler (idempotent).
void install_stop_handler();
/// True once Ctrl-C was pressed (or request_stop() was called).
bool stop_requested();
/// Sets the flag by hand: what the handler does, for tests and for --max-seconds limits.
void request_stop();

}  // namespace tg::examples
