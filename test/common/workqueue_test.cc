#include "common/workqueue.h"

#include <thread>

#include <gtest/gtest.h>

#include "common/rate_limiter.h"
#include "test/common/fake_clock.h"

namespace liken {
namespace {

using liken::testing::FakeClock;

std::unique_ptr<WorkQueue> NewQueue(FakeClock* clock) {
  return std::make_unique<WorkQueue>(clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(10)));
}

TEST(WorkQueueTest, DeduplicatesKeys) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->Add("a");
  q->Add("b");
  q->Add("a");
  EXPECT_EQ(q->Len(), 2u);
  EXPECT_EQ(q->TryGet(), "a");
  EXPECT_EQ(q->TryGet(), "b");
  EXPECT_EQ(q->TryGet(), std::nullopt);
}

TEST(WorkQueueTest, KeyInProcessingIsNotHandedOutTwice) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->Add("a");
  ASSERT_EQ(q->TryGet(), "a");
  q->Add("a");
  q->Add("a");
  EXPECT_EQ(q->TryGet(), std::nullopt) << "a second worker must not get a key being processed";
  q->Done("a");
  EXPECT_EQ(q->TryGet(), "a") << "re-added while processing: processed again after Done";
  q->Done("a");
  EXPECT_EQ(q->TryGet(), std::nullopt);
}

TEST(WorkQueueTest, DoneWithoutReAddDoesNotRequeue) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->Add("a");
  ASSERT_EQ(q->TryGet(), "a");
  q->Done("a");
  EXPECT_EQ(q->Len(), 0u);
}

TEST(WorkQueueTest, AddAfterWaitsForTheClock) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->AddAfter("a", absl::Seconds(1));
  EXPECT_EQ(q->TryGet(), std::nullopt);
  EXPECT_EQ(q->NumWaiting(), 1u);
  clock.Advance(absl::Milliseconds(999));
  EXPECT_EQ(q->TryGet(), std::nullopt);
  clock.Advance(absl::Milliseconds(1));
  EXPECT_EQ(q->TryGet(), "a");
  EXPECT_EQ(q->NumWaiting(), 0u);
}

TEST(WorkQueueTest, AddAfterKeepsTheEarlierTime) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->AddAfter("a", absl::Seconds(5));
  q->AddAfter("a", absl::Seconds(1));
  q->AddAfter("a", absl::Seconds(3));
  EXPECT_EQ(q->NumWaiting(), 1u);
  EXPECT_EQ(*q->NextReadyTime(), clock.Now() + absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(q->TryGet(), "a");
  q->Done("a");
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ(q->TryGet(), std::nullopt) << "the later adds were merged into the first";
}

TEST(WorkQueueTest, DelayedKeysComeOutInTimeOrder) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->AddAfter("late", absl::Seconds(3));
  q->AddAfter("early", absl::Seconds(1));
  q->AddAfter("now", absl::ZeroDuration());
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(q->TryGet(), "now");
  EXPECT_EQ(q->TryGet(), "early");
  EXPECT_EQ(q->TryGet(), "late");
}

TEST(WorkQueueTest, RateLimitedBacksOffExponentiallyAndForgetResets) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  absl::Duration expected = absl::Milliseconds(5);
  for (int i = 0; i < 5; ++i) {
    q->AddRateLimited("a");
    EXPECT_EQ(*q->NextReadyTime() - clock.Now(), expected) << "retry " << i;
    clock.Advance(expected - absl::Nanoseconds(1));
    EXPECT_EQ(q->TryGet(), std::nullopt);
    clock.Advance(absl::Nanoseconds(1));
    ASSERT_EQ(q->TryGet(), "a");
    q->Done("a");
    expected *= 2;
  }
  EXPECT_EQ(q->NumRequeues("a"), 5);
  q->Forget("a");
  EXPECT_EQ(q->NumRequeues("a"), 0);
  q->AddRateLimited("a");
  EXPECT_EQ(*q->NextReadyTime() - clock.Now(), absl::Milliseconds(5));
}

TEST(WorkQueueTest, BackoffIsCapped) {
  FakeClock clock;
  auto limiter = NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(1));
  for (int i = 0; i < 100; ++i) limiter->When("k");
  EXPECT_EQ(limiter->When("k"), absl::Seconds(1));
  EXPECT_EQ(limiter->When("other"), absl::Milliseconds(5)) << "per key";
}

TEST(WorkQueueTest, BlockingGetWakesWhenTheClockPassesTheDelay) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->AddAfter("a", absl::Seconds(2));
  std::optional<std::string> got;
  std::thread worker([&] { got = q->Get(); });
  // The worker is blocked; no key is ready until the clock moves.
  while (clock.waiters() == 0) std::this_thread::yield();
  clock.Advance(absl::Seconds(2));
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueTest, BlockingGetWakesOnAdd) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  std::optional<std::string> got;
  std::thread worker([&] { got = q->Get(); });
  q->Add("a");
  worker.join();
  EXPECT_EQ(got, "a");
}

TEST(WorkQueueTest, EarlierAddAfterWakesAWaitingGet) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->AddAfter("late", absl::Hours(1));
  std::optional<std::string> got;
  std::thread worker([&] { got = q->Get(); });
  while (clock.waiters() == 0) std::this_thread::yield();
  q->AddAfter("soon", absl::Seconds(1));
  clock.Advance(absl::Seconds(1));
  worker.join();
  EXPECT_EQ(got, "soon");
}

TEST(WorkQueueTest, ShutDownWakesGetAndRefusesNewKeys) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  std::optional<std::string> got = "unset";
  std::thread worker([&] { got = q->Get(); });
  q->ShutDown();
  worker.join();
  EXPECT_EQ(got, std::nullopt);
  q->Add("a");
  q->AddAfter("b", absl::Seconds(1));
  EXPECT_EQ(q->Len(), 0u);
  EXPECT_EQ(q->NumWaiting(), 0u);
  EXPECT_TRUE(q->ShuttingDown());
}

TEST(WorkQueueTest, ShutDownStillHandsOutReadyKeysThenStops) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->Add("a");
  q->AddAfter("b", absl::Seconds(1));
  q->ShutDown();
  EXPECT_EQ(q->Get(), "a");
  EXPECT_EQ(q->Get(), std::nullopt);
}

TEST(WorkQueueTest, ShutDownWithDrainWaitsForProcessing) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  q->Add("a");
  ASSERT_EQ(q->TryGet(), "a");
  std::atomic<bool> drained{false};
  std::thread stopper([&] {
    q->ShutDownWithDrain();
    drained = true;
  });
  while (!q->ShuttingDown()) std::this_thread::yield();
  EXPECT_FALSE(drained.load());
  q->Done("a");
  stopper.join();
  EXPECT_TRUE(drained.load());
}

TEST(WorkQueueTest, WorkersNeverShareAKey) {
  FakeClock clock;
  auto q = NewQueue(&clock);
  absl::Mutex mu;
  std::set<std::string> in_flight;
  std::atomic<int> violations{0};
  std::atomic<int> processed{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 4; ++w) {
    workers.emplace_back([&] {
      while (auto key = q->Get()) {
        {
          absl::MutexLock lock(&mu);
          if (!in_flight.insert(*key).second) ++violations;
        }
        std::this_thread::yield();
        {
          absl::MutexLock lock(&mu);
          in_flight.erase(*key);
        }
        ++processed;
        q->Done(*key);
      }
    });
  }
  for (int i = 0; i < 2000; ++i) q->Add("k" + std::to_string(i % 3));
  q->ShutDownWithDrain();
  for (auto& t : workers) t.join();
  EXPECT_EQ(violations.load(), 0);
  EXPECT_GE(processed.load(), 1);
}

class CountingObserver : public WorkQueueObserver {
 public:
  void OnDepth(size_t depth) override { last_depth = depth; }
  void OnRetry() override { ++retries; }
  std::atomic<size_t> last_depth{999};
  std::atomic<int> retries{0};
};

TEST(WorkQueueTest, ObserverSeesDepthAndRetries) {
  FakeClock clock;
  CountingObserver observer;
  WorkQueue q(&clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(1)), &observer);
  EXPECT_EQ(observer.last_depth.load(), 0u) << "reported at start-up";
  q.Add("a");
  q.Add("b");
  EXPECT_EQ(observer.last_depth.load(), 2u);
  q.AddRateLimited("c");
  EXPECT_EQ(observer.retries.load(), 1);
  ASSERT_TRUE(q.TryGet());
  EXPECT_EQ(observer.last_depth.load(), 1u);
}

TEST(TokenBucketTest, AllowsBurstThenPaces) {
  FakeClock clock;
  TokenBucket bucket(&clock, 10, 3);
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_FALSE(bucket.TryTake());
  clock.Advance(absl::Milliseconds(100));
  EXPECT_TRUE(bucket.TryTake());
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(100));
  EXPECT_EQ(bucket.Reserve(), absl::Milliseconds(200)) << "reservations queue up";
}

TEST(TokenBucketTest, ZeroQpsMeansUnlimited) {
  FakeClock clock;
  TokenBucket bucket(&clock, 0, 1);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(bucket.Reserve(), absl::ZeroDuration());
}

}  // namespace
}  // namespace liken
