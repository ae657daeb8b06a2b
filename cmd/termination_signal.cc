#include "cmd/termination_signal.h"

#include <pthread.h>

namespace liken::cmd {

TerminationSignal::TerminationSignal() {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
}

TerminationSignal::~TerminationSignal() { Close(); }

void TerminationSignal::Close() {
  if (!thread_.joinable()) return;
  {
    absl::MutexLock lock(&mu_);
    closing_ = true;
    // The thread waits in sigwait: a signal aimed at it ends the wait (it then sees closing_).
    if (!received_) pthread_kill(thread_.native_handle(), SIGTERM);
  }
  thread_.join();
}

void TerminationSignal::Start(std::function<void(int)> on_signal) {
  thread_ = std::thread([this, on_signal = std::move(on_signal)] {
    int sig = 0;
    while (sigwait(&signals_, &sig) != 0) {
    }
    {
      absl::MutexLock lock(&mu_);
      if (closing_) return;
      received_ = true;
    }
    on_signal(sig);
    absl::MutexLock lock(&mu_);
    handled_ = true;
  });
}

bool TerminationSignal::received() const {
  absl::MutexLock lock(&mu_);
  return received_;
}

void TerminationSignal::Wait() const {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&handled_));
}

}  // namespace liken::cmd
