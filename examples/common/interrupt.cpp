// examples/common/interrupt.cpp — see interrupt.h.
#include "examples/common/interrupt.h"

#include <csignal>

namespace tg::examples {
namespace {

// Only a lock-free atomic or volatile sig_atomic_t may be written by a signal handler.
volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_sigint(int) {
  g_stop = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the program the usual way
}

}  // namespace

void install_stop_handler() { std::signal(SIGINT, on_sigint); }
bool stop_requested() { return g_stop != 0; }
void request_stop() { g_stop = 1; }

}  // namespace tg::examples
