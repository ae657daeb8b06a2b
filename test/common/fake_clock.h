// A clock that moves only when a test tells it to.
#pragma once

#include <atomic>
#include <functional>
#include <map>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/clock.h"

namespace liken::testing {

// Fake Clock: Now() starts at a fixed instant and changes only through Advance(). Thread-safe.
class FakeClock final : public Clock {
 public:
  FakeClock() : now_ns_(absl::ToUnixNanos(absl::FromUnixSeconds(1700000000))) {}

  absl::Time Now() const override { return absl::FromUnixNanos(now_ns_.load()); }

  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline) override {
    waiters_.fetch_add(1);
    struct Pred {
      const absl::Condition* cond;
      const FakeClock* clock;
      absl::Time deadline;
      bool Eval() const { return cond->Eval() || clock->Now() >= deadline; }
    } pred{&cond, this, deadline};
    mu->Await(absl::Condition(&pred, &Pred::Eval));
    waiters_.fetch_sub(1);
    return cond.Eval();
  }

  int AddJumpListener(std::function<void()> listener) override {
    absl::MutexLock lock(&listeners_mu_);
    listeners_[++next_handle_] = std::move(listener);
    return next_handle_;
  }

  void RemoveJumpListener(int handle) override {
    absl::MutexLock lock(&listeners_mu_);
    listeners_.erase(handle);
  }

  // Moves time forward by `d` and wakes every waiter. Thread-safe.
  void Advance(absl::Duration d) {
    now_ns_.fetch_add(absl::ToInt64Nanoseconds(d));
    absl::MutexLock lock(&listeners_mu_);
    for (auto& [handle, listener] : listeners_) listener();
  }

  // Number of threads blocked in AwaitWithDeadline right now. Thread-safe.
  int waiters() const { return waiters_.load(); }

 private:
  std::atomic<int64_t> now_ns_;
  std::atomic<int> waiters_{0};
  absl::Mutex listeners_mu_;
  std::map<int, std::function<void()>> listeners_ ABSL_GUARDED_BY(listeners_mu_);
  int next_handle_ ABSL_GUARDED_BY(listeners_mu_) = 0;
};

}  // namespace liken::testing
