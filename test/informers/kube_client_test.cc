#include "informers/kube_client.h"

#include <atomic>
#include <functional>
#include <memory>
#include <stop_token>
#include <thread>

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"

namespace liken::informers {
namespace {

// Cancellation is std::stop_source/std::stop_token (KubeClient::List and Watch, NewRestClient): the REST client
// joins the client's and the caller's tokens with one std::stop_callback each. These pin the guarantees it
// relies on.
using Callback = std::stop_callback<std::function<void()>>;

TEST(CancellationTest, CancelRunsEachCallbackOnceAndLateSubscribersAtOnce) {
  std::stop_source cancel;
  int first = 0, second = 0, late = 0;
  Callback first_callback(cancel.get_token(), [&] { ++first; });
  auto second_callback = std::make_unique<Callback>(cancel.get_token(), [&] { ++second; });
  second_callback.reset();
  EXPECT_FALSE(cancel.stop_requested());
  cancel.request_stop();
  cancel.request_stop();
  EXPECT_TRUE(cancel.stop_requested());
  Callback late_callback(cancel.get_token(), [&] { ++late; });
  EXPECT_EQ(first, 1);
  EXPECT_EQ(second, 0);  // unsubscribed before the cancel
  EXPECT_EQ(late, 1);
}

TEST(CancellationTest, ADefaultTokenNeverStops) {
  std::stop_token never;
  int runs = 0;
  Callback callback(never, [&] { ++runs; });
  EXPECT_FALSE(never.stop_possible());
  EXPECT_FALSE(never.stop_requested());
  EXPECT_EQ(runs, 0);
}

// A watch unsubscribes and then frees what its callback captured: Unsubscribe must not return while that callback
// runs on the cancelling thread. The callback asks another thread to unsubscribe it and gives that thread time to
// come back; it must not come back before the callback ends. (A slow machine can only hide a regression here, never
// fail a correct implementation.)
TEST(CancellationTest, UnsubscribeWaitsForItsRunningCallback) {
  std::stop_source cancel;
  absl::Notification unsubscribe, unsubscribed;
  std::atomic<bool> callback_running{false};
  std::atomic<bool> returned_while_running{false};
  auto callback = std::make_unique<Callback>(cancel.get_token(), [&] {
    callback_running = true;
    unsubscribe.Notify();
    if (unsubscribed.WaitForNotificationWithTimeout(absl::Milliseconds(200))) returned_while_running = true;
    callback_running = false;
  });
  std::thread owner([&] {
    unsubscribe.WaitForNotification();
    callback.reset();  // unsubscribes
    if (callback_running) returned_while_running = true;
    unsubscribed.Notify();
  });
  cancel.request_stop();
  owner.join();
  EXPECT_FALSE(returned_while_running);
}

}  // namespace
}  // namespace liken::informers
