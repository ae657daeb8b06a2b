// The metrics endpoint of the daemon: bound in the background, with back-off, while its address is taken, so a
// taken port (the previous driver pod of a rolling update still holds it) never keeps the kubelet plugin down.
#pragma once

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "controller/metrics.h"

namespace liken::controller {

// The waits between a metrics endpoint's attempts to bind.
struct MetricsBackoff {
  absl::Duration initial = absl::Seconds(1);  // before the second attempt
  absl::Duration max = absl::Seconds(30);     // the longest wait; each wait doubles up to it
};

// Binds and serves one metrics address. Start tries once; while that fails, a thread retries with exponential
// back-off (each wait cancellable by Stop) and the endpoint is not ready. Thread-safe.
class MetricsEndpoint {
 public:
  // Starts serving at the address, or fails (Unavailable naming the address and why: "in use").
  using Binder = std::function<absl::StatusOr<std::unique_ptr<MetricsServer>>()>;
  // Called after each attempt with its number (from 1) and result; after a failure, `next` is when the next
  // attempt is due.
  using AttemptListener = std::function<void(int attempt, const absl::Status& result, absl::Time next)>;

  using Backoff = MetricsBackoff;

  // `address` names the endpoint in logs; `clock` must outlive this. `on_attempt` may be empty.
  MetricsEndpoint(std::string address, Binder bind, Clock* clock, Backoff backoff = {},
                  AttemptListener on_attempt = nullptr);
  ~MetricsEndpoint();  // Stop
  MetricsEndpoint(const MetricsEndpoint&) = delete;
  MetricsEndpoint& operator=(const MetricsEndpoint&) = delete;

  // Tries to bind now. On failure logs the error (an error: the metrics endpoint is not ready) and starts the
  // retrying thread. Returns whether it is ready. Call once. Thread-safe.
  bool Start();

  // Stops the retries (a wait in progress ends at once) and closes the endpoint, which waits for its open
  // connections. Idempotent. Thread-safe.
  void Stop();

  // True once the address is bound and served. Thread-safe.
  bool ready() const;

  // How many attempts failed so far. Thread-safe.
  int failures() const;

 private:
  // One attempt; true when bound (or stopped). Logs a failure and sets next_attempt_.
  bool Attempt();
  void Retry(std::stop_token stop);

  const std::string address_;
  const Binder bind_;
  Clock* const clock_;
  const Backoff backoff_;
  const AttemptListener on_attempt_;
  mutable absl::Mutex mu_;
  std::unique_ptr<MetricsServer> server_ ABSL_GUARDED_BY(mu_);
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  int failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Duration delay_ ABSL_GUARDED_BY(mu_);
  absl::Time next_attempt_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<ScopedClockWaker> waker_;
  std::jthread thread_;  // declared last: stopped and joined first
};

}  // namespace liken::controller
