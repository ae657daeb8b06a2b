// The metrics endpoint: a taken address is named and said to be in use, the endpoint is retried with back-off (on
// an injected clock) and is not ready meanwhile, and Stop ends a retry wait at once.
#include "controller/metrics_endpoint.h"

#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"
#include "test/common/fake_clock.h"
#include "test/common/taken_port.h"

namespace liken::controller {
namespace {

using ::liken::testing::FakeClock;
using ::liken::testing::TakenPort;
using ::testing::HasSubstr;

// What the endpoint reported after each attempt. Thread-safe.
class Attempts {
 public:
  MetricsEndpoint::AttemptListener Listener() {
    return [this](int attempt, const absl::Status& result, absl::Time next) {
      absl::MutexLock lock(&mu_);
      seen_.push_back({attempt, result, next});
    };
  }
  struct Seen {
    int attempt;
    absl::Status result;
    absl::Time next;
  };
  // Blocks until `n` attempts were reported (no timing: a broken endpoint hangs until ctest's timeout).
  Seen WaitFor(int n) {
    absl::MutexLock lock(&mu_);
    struct Pred {
      Attempts* a;
      int n;
      bool Eval() const ABSL_NO_THREAD_SAFETY_ANALYSIS { return static_cast<int>(a->seen_.size()) >= n; }
    } pred{this, n};
    mu_.Await(absl::Condition(&pred, &Pred::Eval));
    return seen_[n - 1];
  }

 private:
  absl::Mutex mu_;
  std::vector<Seen> seen_ ABSL_GUARDED_BY(mu_);
};

TEST(MetricsEndpointTest, ATakenAddressIsNamedAndSaidToBeInUse) {
  TakenPort taken;
  Metrics m;
  auto server = StartMetricsServer(taken.address(), m.registry());
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(server.status().message(), HasSubstr(taken.address()));
  EXPECT_THAT(server.status().message(), HasSubstr("in use"));
  EXPECT_THAT(server.status().message(), ::testing::Not(HasSubstr("CivetServer")));
}

TEST(MetricsEndpointTest, RetriesWithBackoffUntilThePortIsFreeAndIsNotReadyMeanwhile) {
  TakenPort taken;
  Metrics m;
  FakeClock clock;
  Attempts attempts;
  const std::string address = taken.address();
  MetricsEndpoint endpoint(
      address, [&] { return StartMetricsServer(address, m.registry()); }, &clock,
      {.initial = absl::Seconds(1), .max = absl::Seconds(4)}, attempts.Listener());
  const absl::Time t0 = clock.Now();
  EXPECT_FALSE(endpoint.Start());
  EXPECT_FALSE(endpoint.ready());
  auto first = attempts.WaitFor(1);
  EXPECT_THAT(first.result.message(), HasSubstr("in use"));
  EXPECT_EQ(first.next, t0 + absl::Seconds(1));
  // Each wait doubles, up to the cap: 1, 2, 4, 4 s.
  for (auto [n, wait] : std::vector<std::pair<int, absl::Duration>>{
           {2, absl::Seconds(2)}, {3, absl::Seconds(4)}, {4, absl::Seconds(4)}}) {
    clock.Advance(attempts.WaitFor(n - 1).next - clock.Now());
    auto seen = attempts.WaitFor(n);
    EXPECT_EQ(seen.next - clock.Now(), wait) << "attempt " << n;
    EXPECT_FALSE(endpoint.ready());
  }
  taken.Free();
  clock.Advance(attempts.WaitFor(4).next - clock.Now());
  auto bound = attempts.WaitFor(5);
  EXPECT_TRUE(bound.result.ok()) << bound.result;
  EXPECT_TRUE(endpoint.ready());
  EXPECT_EQ(endpoint.failures(), 4);
  endpoint.Stop();
  EXPECT_FALSE(endpoint.ready());
}

TEST(MetricsEndpointTest, StopEndsAWaitForTheNextAttemptAtOnce) {
  FakeClock clock;  // never advanced: the retry waits for ever unless Stop ends it
  Attempts attempts;
  int binds = 0;
  MetricsEndpoint endpoint(
      "127.0.0.1:1",
      [&]() -> absl::StatusOr<std::unique_ptr<MetricsServer>> {
        ++binds;
        return absl::UnavailableError("cannot serve metrics at 127.0.0.1:1: in use");
      },
      &clock, {}, attempts.Listener());
  EXPECT_FALSE(endpoint.Start());
  attempts.WaitFor(1);
  endpoint.Stop();  // returns: the wait was cancelled
  EXPECT_EQ(binds, 1);
  EXPECT_FALSE(endpoint.ready());
}

TEST(MetricsEndpointTest, AFreeAddressIsReadyAtOnce) {
  Metrics m;
  FakeClock clock;
  std::string address;
  {
    TakenPort probe;  // a free port: taken, then freed
    address = probe.address();
  }
  MetricsEndpoint endpoint(address, [&] { return StartMetricsServer(address, m.registry()); }, &clock);
  EXPECT_TRUE(endpoint.Start());
  EXPECT_TRUE(endpoint.ready());
  EXPECT_EQ(endpoint.failures(), 0);
}

}  // namespace
}  // namespace liken::controller
