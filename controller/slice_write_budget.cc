#include "controller/slice_write_budget.h"

#include <algorithm>

namespace liken::controller {

SliceWriteBudget::SliceWriteBudget(Clock* clock, SliceWriteBudgetOptions options)
    : clock_(clock), options_(options), tokens_(options.burst), refilled_(clock->Now()) {}

absl::Duration SliceWriteBudget::TryTake() {
  if (!options_.enabled || options_.per_minute <= 0) return absl::ZeroDuration();
  const absl::Time now = clock_->Now();
  const absl::Duration per_token = absl::Minutes(1) / options_.per_minute;
  if (now > refilled_) {
    tokens_ = std::min(options_.burst, tokens_ + absl::FDivDuration(now - refilled_, per_token));
    refilled_ = now;
  }
  absl::Duration wait = absl::ZeroDuration();
  if (now - last_write_ < options_.min_gap) wait = options_.min_gap - (now - last_write_);
  if (tokens_ < 1) wait = std::max(wait, per_token * (1 - tokens_));
  if (wait > absl::ZeroDuration()) return wait;
  tokens_ -= 1;
  last_write_ = now;
  return absl::ZeroDuration();
}

}  // namespace liken::controller
