// Time as the daemon sees it: an injected clock, so tests drive time instead of sleeping.
#pragma once

#include <functional>
#include <memory>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace liken {

// A source of time that can also block until a deadline on itself.
class Clock {
 public:
  virtual ~Clock() = default;

  // Returns the current time on this clock. Thread-safe.
  virtual absl::Time Now() const = 0;

  // With `mu` held, waits until `cond` is true or this clock reaches `deadline`; returns `cond`'s value.
  // Callers must have registered a jump listener that locks `mu` (see AddJumpListener) so that a fake
  // clock's jumps wake them. Thread-safe.
  virtual bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline) = 0;

  // Registers `listener`, called (with no clock lock held) after the clock jumps forward; the real clock
  // never calls it. The listener must not call Add/RemoveJumpListener. Returns a handle. Thread-safe.
  virtual int AddJumpListener(std::function<void()> listener) = 0;

  // Unregisters a listener; when it returns, the listener is not running and will not run. Thread-safe.
  virtual void RemoveJumpListener(int handle) = 0;
};

// Returns a clock reading the wall clock (absl::Now). Thread-safe.
std::unique_ptr<Clock> NewRealClock();

// Registers a jump listener on construction that locks `mu` (waking its Await calls), removes it on
// destruction. Not copyable. Thread-safe.
class ScopedClockWaker {
 public:
  ScopedClockWaker(Clock* clock, absl::Mutex* mu);
  ~ScopedClockWaker();
  ScopedClockWaker(const ScopedClockWaker&) = delete;
  ScopedClockWaker& operator=(const ScopedClockWaker&) = delete;

 private:
  Clock* clock_;
  int handle_;
};

}  // namespace liken
