// Per-key retry delays for the workqueue, and a token bucket for overall rates.
#pragma once

#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace liken {

// Decides how long a failing key waits before its next try.
class RateLimiter {
 public:
  virtual ~RateLimiter() = default;
  // Records one more failure of `key` and returns how long it must wait. Thread-safe.
  virtual absl::Duration When(const std::string& key) = 0;
  // Clears `key`'s failure history (it succeeded). Thread-safe.
  virtual void Forget(const std::string& key) = 0;
  // Number of failures recorded for `key` since the last Forget. Thread-safe.
  virtual int NumRequeues(const std::string& key) = 0;
};

// base * 2^failures, capped at `max`, per key. Thread-safe.
std::unique_ptr<RateLimiter> NewExponentialRateLimiter(absl::Duration base, absl::Duration max);

// The larger of an exponential per-key delay (base..max) and an overall token bucket (qps, burst). Thread-safe.
std::unique_ptr<RateLimiter> NewControllerRateLimiter(Clock* clock, absl::Duration base, absl::Duration max,
                                                      double qps, int burst);

// A token bucket: `burst` tokens, refilled at `qps` per second on `clock`. Thread-safe.
class TokenBucket {
 public:
  // `qps` <= 0 disables limiting (every reservation is immediate). `clock` must outlive the bucket.
  TokenBucket(Clock* clock, double qps, int burst);

  // Takes one token, possibly borrowing from the future; returns how long the caller must wait before
  // using it (zero when one was available). Thread-safe.
  absl::Duration Reserve();

  // Takes one token only if one is available now. Thread-safe.
  bool TryTake();

 private:
  void RefillLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const double qps_;
  const double burst_;
  absl::Mutex mu_;
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_ ABSL_GUARDED_BY(mu_);
};

}  // namespace liken
