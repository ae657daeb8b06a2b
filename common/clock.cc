#include "common/clock.h"

#include "absl/time/clock.h"

namespace liken {
namespace {

class WallClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
  bool AwaitWithDeadline(absl::Mutex* mu, const absl::Condition& cond, absl::Time deadline) override {
    return mu->AwaitWithDeadline(cond, deadline);
  }
  int AddJumpListener(std::function<void()>) override { return 0; }
  void RemoveJumpListener(int) override {}
};

}  // namespace

std::unique_ptr<Clock> NewRealClock() { return std::make_unique<WallClock>(); }

ScopedClockWaker::ScopedClockWaker(Clock* clock, absl::Mutex* mu)
    : clock_(clock), handle_(clock->AddJumpListener([mu] { absl::MutexLock lock(mu); })) {}

ScopedClockWaker::~ScopedClockWaker() { clock_->RemoveJumpListener(handle_); }

}  // namespace liken
