// SIGTERM and SIGINT taken synchronously by one thread, so shutdown runs as ordinary code.
#pragma once

#include <signal.h>

#include <functional>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace liken::cmd {

// Blocks SIGTERM and SIGINT in the constructing thread (and so in every thread it starts later) and, once
// started, waits for them on a thread of its own. Thread-safe.
class TerminationSignal {
 public:
  // Blocks the signals. Construct before any other thread exists.
  TerminationSignal();
  // Close().
  ~TerminationSignal();
  TerminationSignal(const TerminationSignal&) = delete;
  TerminationSignal& operator=(const TerminationSignal&) = delete;

  // Starts waiting; `on_signal` runs once, on the waiting thread, with the signal's number, after
  // received() became true. Call once. Thread-safe.
  void Start(std::function<void(int)> on_signal);

  // Ends the waiting thread (without running the callback when no signal came) and joins it: after it
  // returns the callback is not running and will not run. Idempotent. Not thread-safe against itself.
  void Close();

  // True once a signal arrived. Thread-safe.
  bool received() const;

  // Blocks until a signal arrived and `on_signal` returned. Thread-safe.
  void Wait() const;

 private:
  sigset_t signals_;
  std::thread thread_;
  mutable absl::Mutex mu_;
  bool received_ ABSL_GUARDED_BY(mu_) = false;
  bool handled_ ABSL_GUARDED_BY(mu_) = false;
  bool closing_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace liken::cmd
