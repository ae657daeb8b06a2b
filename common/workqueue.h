// A rate-limited, delaying, deduplicating work queue with the semantics of client-go's workqueue.
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/rate_limiter.h"

namespace liken {

// Receives the queue's figures (for metrics). Called with the queue's lock held: must be quick and must
// not call back into the queue. Implementations must be thread-safe.
class WorkQueueObserver {
 public:
  virtual ~WorkQueueObserver() = default;
  // The number of keys ready to be handed out changed to `depth`.
  virtual void OnDepth(size_t depth) = 0;
  // A key was re-added through AddRateLimited.
  virtual void OnRetry() = 0;
};

// Keys waiting to be processed. A key is queued at most once; a key handed out by Get is not handed out
// again until Done, and a key added meanwhile is handed out once more after Done. Thread-safe.
class WorkQueue {
 public:
  // `clock` must outlive the queue. `observer` may be null; when set it must outlive the queue.
  WorkQueue(Clock* clock, std::unique_ptr<RateLimiter> limiter, WorkQueueObserver* observer = nullptr);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Queues `key` unless it is already queued; ignored after ShutDown. Thread-safe.
  void Add(const std::string& key);

  // Queues `key` once `delay` has passed on the clock; a key already waiting keeps the earlier time.
  // Non-positive delays add at once. Ignored after ShutDown. Thread-safe.
  void AddAfter(const std::string& key, absl::Duration delay);

  // Queues `key` after the rate limiter's delay for it (one more failure recorded). Thread-safe.
  void AddRateLimited(const std::string& key);

  // Clears `key`'s failure history; does not remove it from the queue. Thread-safe.
  void Forget(const std::string& key);

  // Failures recorded for `key` since its last Forget. Thread-safe.
  int NumRequeues(const std::string& key);

  // Blocks until a key is ready and returns it (the caller must call Done with it), or returns nullopt
  // once the queue is shut down and holds no ready key. Thread-safe.
  std::optional<std::string> Get();

  // Like Get, but returns nullopt at once when no key is ready. Thread-safe.
  std::optional<std::string> TryGet();

  // Marks `key` as processed; if it was added while processing, it is queued again. Thread-safe.
  void Done(const std::string& key);

  // Stops accepting keys and wakes all Get callers; delayed keys are dropped, ready ones still handed out.
  // Thread-safe.
  void ShutDown();

  // ShutDown, then waits until every key handed out has been marked Done. Thread-safe.
  void ShutDownWithDrain();

  // True after ShutDown. Thread-safe.
  bool ShuttingDown() const;

  // Keys ready to be handed out (delayed keys that are due are counted). Thread-safe.
  size_t Len();

  // True when `key` is queued (ready, or added again while it is processed) or handed out and not Done yet: a
  // worker will process it without another Add. A key waiting for its delay is not pending. Thread-safe.
  bool Pending(const std::string& key) const;

  // Keys waiting for their delay to pass. Thread-safe.
  size_t NumWaiting() const;

  // The earliest time a delayed key becomes ready, if any. Thread-safe.
  std::optional<absl::Time> NextReadyTime() const;

 private:
  void AddLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PromoteDueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::optional<std::string> PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void ReportDepthLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const std::unique_ptr<RateLimiter> limiter_;
  WorkQueueObserver* const observer_;
  mutable absl::Mutex mu_;
  std::deque<std::string> queue_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> dirty_ ABSL_GUARDED_BY(mu_);       // queued or re-added while processing
  std::set<std::string> processing_ ABSL_GUARDED_BY(mu_);  // handed out, not Done yet
  std::map<std::string, absl::Time> waiting_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<absl::Time, std::string>> waiting_order_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<ScopedClockWaker> waker_;  // declared last: removed first
};

}  // namespace liken
