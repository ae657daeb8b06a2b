// The node's budget of slice writes: a uevent storm or a flapping device costs a few writes a minute, not one per
// event, and the last state is always written in the end.
#pragma once

#include "absl/time/time.h"
#include "common/clock.h"

namespace liken::controller {

// How many publishing passes may write slices. A pass whose slices changed writes at once while the budget has a
// write left (`burst`, refilled at `per_minute`) and at least `min_gap` passed since the last write, so a change
// after a quiet spell reaches the API at once; otherwise it waits until both hold and then writes the state of that
// moment (the changes meanwhile fold into it).
struct SliceWriteBudgetOptions {
  bool enabled = true;
  double per_minute = 6;
  double burst = 2;
  absl::Duration min_gap = absl::Seconds(2);
};

// A token bucket with a minimum gap. One pass at a time (the node's worker thread): not thread-safe.
class SliceWriteBudget {
 public:
  // `clock` must outlive the budget. The budget starts full.
  SliceWriteBudget(Clock* clock, SliceWriteBudgetOptions options);

  // Zero when a write may go now (and takes it from the budget); else how long until one may, taking nothing.
  // Not thread-safe.
  absl::Duration TryTake();

 private:
  Clock* const clock_;
  const SliceWriteBudgetOptions options_;
  double tokens_;
  absl::Time refilled_;
  absl::Time last_write_ = absl::InfinitePast();
};

}  // namespace liken::controller
