#include "engine/core/signals.h"

#include <csignal>
#include <initializer_list>

namespace mavg {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void OnStopSignal(int sig) {
  if (sig == SIGINT && g_stop_signal == SIGINT) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
    return;
  }
  g_stop_signal = sig;
}

}  // namespace

void InstallStopSignalHandlers() {
  struct sigaction sa {};
  sa.sa_handler = OnStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  for (int sig : {SIGTERM, SIGUSR1, SIGINT}) sigaction(sig, &sa, nullptr);
}

int StopSignal() { return g_stop_signal; }
void ClearStopRequest() { g_stop_signal = 0; }
void RequestStopForTesting(int signal) { g_stop_signal = signal; }

}  // namespace mavg
