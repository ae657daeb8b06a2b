#include "kubelet/claim_slot_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"

namespace liken::kubelet {
namespace {

void SetPrepared(ClaimSlot& slot, bool prepared) {
  absl::MutexLock lock(&slot.mu);
  if (prepared) {
    slot.prepared = PreparedClaim{};
  } else {
    slot.prepared.reset();
  }
}

void SetTombstone(ClaimSlot& slot, uint64_t seq) {
  absl::MutexLock lock(&slot.mu);
  slot.unprepared_at = seq;
}

TEST(ClaimSlotTableTest, AnIdleSlotIsErasedWhenItsOnlyHolderReleasesIt) {
  ClaimSlotTable table;
  auto slot = table.Acquire("a");
  EXPECT_EQ(table.size(), 1u);
  table.Release("a", std::move(slot));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, TwoHoldersOfOneClaimShareTheSlotAndTheLastReleaseErasesIt) {
  ClaimSlotTable table;
  auto first = table.Acquire("a");
  auto second = table.Acquire("a");
  EXPECT_EQ(first.get(), second.get()) << "two calls for one claim must meet on one mutex";
  table.Release("a", std::move(first));
  EXPECT_EQ(table.size(), 1u) << "still held";
  table.Release("a", std::move(second));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, APreparedSlotStaysUntilItsClaimIsUnprepared) {
  ClaimSlotTable table;
  auto slot = table.Acquire("a");
  SetPrepared(*slot, true);
  table.Release("a", std::move(slot));
  table.Sweep();
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.CheckInvariant().ok());
  slot = table.Acquire("a");
  SetPrepared(*slot, false);
  table.Release("a", std::move(slot));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, ATombstoneStaysWhileAnOlderPrepareIsInFlightAndGoesWithIt) {
  ClaimSlotTable table;
  const uint64_t older = table.BeginPrepare();
  const uint64_t unprepare = table.BeginUnprepare();
  ASSERT_LT(older, unprepare);
  auto slot = table.Acquire("a");
  SetTombstone(*slot, unprepare);
  table.Release("a", std::move(slot));
  table.Sweep();
  EXPECT_EQ(table.size(), 1u) << "the older prepare must still find the tombstone";
  EXPECT_TRUE(table.CheckInvariant().ok());
  const uint64_t newer = table.BeginPrepare();  // arrived after the unprepare: does not keep it
  table.EndPrepare(older);
  EXPECT_EQ(table.size(), 0u);
  table.EndPrepare(newer);
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, ATombstoneNoOlderPrepareNeedsGoesAtOnce) {
  ClaimSlotTable table;
  const uint64_t unprepare = table.BeginUnprepare();
  auto slot = table.Acquire("a");
  SetTombstone(*slot, unprepare);
  table.Release("a", std::move(slot));
  EXPECT_EQ(table.size(), 0u);
}

TEST(ClaimSlotTableTest, CheckInvariantFindsAnIdleSlotNoOneHoldsUntilTheSweep) {
  ClaimSlotTable table;
  auto slot = table.Acquire("a");
  auto snapshot = table.Snapshot();  // a refresh pass's copy: not a hold, keeps the slot alive
  ASSERT_EQ(snapshot.size(), 1u);
  table.Release("a", std::move(slot));
  EXPECT_EQ(table.size(), 1u);
  EXPECT_TRUE(table.CheckInvariant().ok()) << "the pass still holds it";
  snapshot.clear();
  auto breach = table.CheckInvariant();
  EXPECT_EQ(breach.code(), absl::StatusCode::kInternal);
  EXPECT_NE(breach.message().find("idle slot a"), std::string::npos) << breach;
  // While calls are in progress it is no breach: it is a sweep candidate, and the next sweep erases it.
  EXPECT_TRUE(table.CheckInvariant(ClaimSlotTable::When::kAnyTime).ok());
  table.Forgotten({});  // the pass ends with a sweep
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, ForgottenClaimsOfAPassAreErasedBySweep) {
  ClaimSlotTable table;
  auto slot = table.Acquire("a");
  SetPrepared(*slot, true);
  table.Release("a", std::move(slot));
  auto snapshot = table.Snapshot();
  SetPrepared(*snapshot[0].second, false);  // another driver instance unprepared it; the pass forgets it
  snapshot.clear();
  table.Forgotten({"a", "never-existed"});
  EXPECT_EQ(table.size(), 0u);
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, ASlotForgottenByAPassButNeverMarkedIsABreachAtAnyTime) {
  ClaimSlotTable table;
  auto slot = table.Acquire("a");
  SetPrepared(*slot, true);
  table.Release("a", std::move(slot));
  table.Sweep();  // a prepared slot is no sweep candidate
  auto snapshot = table.Snapshot();
  SetPrepared(*snapshot[0].second, false);  // forgotten by the pass...
  snapshot.clear();                         // ...which lets go without marking it
  auto breach = table.CheckInvariant(ClaimSlotTable::When::kAnyTime);
  EXPECT_EQ(breach.code(), absl::StatusCode::kInternal);
  EXPECT_NE(breach.message().find("idle slot a"), std::string::npos) << breach;
  table.Forgotten({"a"});
  EXPECT_TRUE(table.CheckInvariant().ok());
}

TEST(ClaimSlotTableTest, SlotLocksTakeEveryMutexAndFreeThemAll) {
  ClaimSlotTable table;
  auto a = table.Acquire("a");
  auto b = table.Acquire("b");
  {
    ClaimSlotLocks locks({b.get(), a.get()});
    a->mu.AssertHeld();
    b->mu.AssertHeld();
  }
  EXPECT_TRUE(a->mu.TryLock());
  a->mu.Unlock();
  EXPECT_TRUE(b->mu.TryLock());
  b->mu.Unlock();
}

// Many calls over few claims, as the kubelet's concurrent prepares and unprepares: each claim's state is only
// changed under its mutex (counted without atomics: a lost update would show), and afterwards exactly the
// prepared claims keep a slot. A lock-order cycle between the two batch orders would hang (ctest's timeout).
TEST(ClaimSlotTableTest, ConcurrentCallsKeepTheInvariant) {
  ClaimSlotTable table;
  constexpr int kThreads = 8, kRounds = 1500, kClaims = 5;
  std::vector<int> changes(kClaims, 0);  // each guarded by its claim's slot mutex
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        const int c = (t + r) % kClaims, d = (t * 7 + r * 3 + 1) % kClaims;
        const std::string uid = absl::StrCat("claim-", c), other = absl::StrCat("claim-", d);
        if (r % 3 == 0) {  // an unprepare of one claim
          const uint64_t seq = table.BeginUnprepare();
          auto slot = table.Acquire(uid);
          {
            absl::MutexLock lock(&slot->mu);
            slot->prepared.reset();
            slot->unprepared_at = std::max(slot->unprepared_at, seq);
            ++changes[c];
          }
          table.Release(uid, std::move(slot));
          table.Sweep();
        } else {  // a prepare of one or two claims, in either order
          const uint64_t seq = table.BeginPrepare();
          std::vector<std::pair<std::string, ClaimSlotTable::Held>> held;
          held.emplace_back(uid, table.Acquire(uid));
          if (d != c) held.emplace_back(other, table.Acquire(other));
          std::vector<ClaimSlot*> slots;
          for (auto& [u, s] : held) slots.push_back(s.get());
          {
            ClaimSlotLocks locks(slots);
            for (auto& [u, s] : held) {
              s->mu.AssertHeld();
              if (s->unprepared_at <= seq) s->prepared = PreparedClaim{};
              ++changes[u == uid ? c : d];
            }
          }
          for (auto& [u, s] : held) table.Release(u, std::move(s));
          table.EndPrepare(seq);
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_TRUE(table.CheckInvariant().ok()) << table.CheckInvariant();
  int total = 0;
  for (int n : changes) total += n;
  int expected = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (int r = 0; r < kRounds; ++r) {
      const int c = (t + r) % kClaims, d = (t * 7 + r * 3 + 1) % kClaims;
      expected += (r % 3 == 0 || d == c) ? 1 : 2;
    }
  }
  EXPECT_EQ(total, expected) << "a change was lost: two calls held one claim at once";
  size_t prepared = 0;
  for (auto& [uid, slot] : table.Snapshot()) {
    absl::MutexLock lock(&slot->mu);
    if (slot->prepared) ++prepared;
  }
  EXPECT_EQ(table.size(), prepared) << "every slot left is a prepared claim's";
}

}  // namespace
}  // namespace liken::kubelet
