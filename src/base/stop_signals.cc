#include "base/stop_signals.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

namespace tf {
namespace {

sigset_t StopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

void BlockStopSignals() {
  sigset_t set = StopSignals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int WaitForStopSignal() {
  sigset_t set = StopSignals();
  int sig = 0;
  sigwait(&set, &sig);
  return sig;
}

void RaiseStopSignal() { ::kill(::getpid(), SIGTERM); }

}  // namespace tf
