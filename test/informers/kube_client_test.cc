#include "informers/kube_client.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace liken::informers {
namespace {

TEST(CancellationTest, CancelRunsEachCallbackOnceAndLateSubscribersAtOnce) {
  Cancellation cancel;
  int first = 0, second = 0, late = 0;
  cancel.Subscribe([&] { ++first; });
  int handle = cancel.Subscribe([&] { ++second; });
  cancel.Unsubscribe(handle);
  EXPECT_FALSE(cancel.IsCancelled());
  cancel.Cancel();
  cancel.Cancel();
  EXPECT_TRUE(cancel.IsCancelled());
  cancel.Subscribe([&] { ++late; });
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);  // unsubscribed before the cancel
  EXPECT_EQ(late, 1);
}

// A watch unsubscribes and then frees what its callback captured: Unsubscribe must not return while that callback
// runs on the cancelling thread. The callback asks another thread to unsubscribe it and gives that thread time to
// come back; it must not come back before the callback ends. (A slow machine can only hide a regression here, never
// fail a correct implementation.)
TEST(CancellationTest, UnsubscribeWaitsForItsRunningCallback) {
  Cancellation cancel;
  absl::Notification unsubscribe, unsubscribed;
  std::atomic<bool> callback_running{false};
  std::atomic<bool> returned_while_running{false};
  int handle = cancel.Subscribe([&] {
    callback_running = true;
    unsubscribe.Notify();
    if (unsubscribed.WaitForNotificationWithTimeout(absl::Milliseconds(200))) returned_while_running = true;
    callback_running = false;
  });
  std::thread owner([&] {
    unsubscribe.WaitForNotification();
    cancel.Unsubscribe(handle);
    if (callback_running) returned_while_running = true;
    unsubscribed.Notify();
  });
  cancel.Cancel();
  owner.join();
  EXPECT_FALSE(returned_while_running);
}

}  // namespace
}  // namespace liken::informers
