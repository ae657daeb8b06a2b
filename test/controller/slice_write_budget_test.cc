// The node's slice-write budget on a fake clock: a change after a quiet spell is written at once; a burst of changes
// costs a few writes, the last always written when the budget allows.
#include "controller/slice_write_budget.h"

#include <gtest/gtest.h>

#include "test/common/fake_clock.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClock;

TEST(SliceWriteBudgetTest, AChangeAfterAQuietSpellIsWrittenAtOnce) {
  FakeClock clock;
  SliceWriteBudget budget(&clock, SliceWriteBudgetOptions{});
  EXPECT_EQ(budget.TryTake(), absl::ZeroDuration()) << "an unplug";
  clock.Advance(absl::Seconds(3));
  EXPECT_EQ(budget.TryTake(), absl::ZeroDuration()) << "a plug 3 s later";
  clock.Advance(absl::Minutes(1));
  EXPECT_EQ(budget.TryTake(), absl::ZeroDuration()) << "the budget refills";
}

TEST(SliceWriteBudgetTest, AStormOfChangesCostsThreeWritesAtMost) {
  // 50 adapters plugged at once: the coalescer hands a pass every 250 ms for 5 s; each pass would write.
  FakeClock clock;
  SliceWriteBudget budget(&clock, SliceWriteBudgetOptions{});
  int writes = 0;
  for (int pass = 0; pass < 20; ++pass) {
    if (budget.TryTake() == absl::ZeroDuration()) ++writes;
    clock.Advance(absl::Milliseconds(250));
  }
  // Then the queued pass writes the last state.
  absl::Duration wait = budget.TryTake();
  EXPECT_GT(wait, absl::ZeroDuration());
  clock.Advance(wait);
  EXPECT_EQ(budget.TryTake(), absl::ZeroDuration());
  ++writes;
  EXPECT_LE(writes, 3) << "a storm writes the first state, one more within the burst, and the last";
}

TEST(SliceWriteBudgetTest, SustainedChangesAreHeldToTheRatePerMinute) {
  FakeClock clock;
  SliceWriteBudget budget(&clock, SliceWriteBudgetOptions{});
  int writes = 0;
  for (int pass = 0; pass < 10 * 60 * 5; ++pass) {  // 5 minutes of a change every 100 ms
    if (budget.TryTake() == absl::ZeroDuration()) ++writes;
    clock.Advance(absl::Milliseconds(100));
  }
  EXPECT_LE(writes, 2 + 6 * 5) << "the burst, then 6 a minute";
  EXPECT_GE(writes, 6 * 5);
}

TEST(SliceWriteBudgetTest, OffNeverWaits) {
  FakeClock clock;
  SliceWriteBudget budget(&clock, SliceWriteBudgetOptions{.enabled = false});
  for (int i = 0; i < 100; ++i) EXPECT_EQ(budget.TryTake(), absl::ZeroDuration());
}

}  // namespace
}  // namespace liken::controller
