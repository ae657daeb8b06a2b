#include "kubelet/plugin_call_hook.h"

#include <atomic>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace liken::kubelet {
namespace {

// Records every event it receives, in order.
class RecordingObserver final : public nodestate::PluginObserver {
 public:
  void OnPrepare(const absl::Status& result, absl::Duration) override { events.push_back("prepare " + result.ToString()); }
  void OnUnprepare(const absl::Status& result, absl::Duration) override {
    events.push_back("unprepare " + result.ToString());
  }
  void OnRebindFailure(absl::string_view usb_interface) override {
    events.push_back("rebind " + std::string(usb_interface));
  }
  void OnPreparedClaims(size_t count) override { events.push_back("claims " + std::to_string(count)); }
  void OnRegistration(bool registered, absl::string_view error) override {
    events.push_back(std::string("registration ") + (registered ? "yes" : "no") + " " + std::string(error));
  }
  void OnUnhealthyClaimedDevices(size_t count) override { events.push_back("unhealthy " + std::to_string(count)); }
  void OnSpecsRefreshed(int count) override { events.push_back("refreshed " + std::to_string(count)); }
  std::vector<std::string> events;
};

TEST(PluginCallHookTest, ForwardsEveryEventAndReportsEachPrepareAndUnprepare) {
  RecordingObserver next;
  std::atomic<int> calls{0};
  PluginCallHook hook(&next, [&] { ++calls; });
  hook.OnPrepare(absl::OkStatus(), absl::Milliseconds(1));
  hook.OnPrepare(absl::NotFoundError("gone"), absl::Milliseconds(1));
  EXPECT_EQ(calls.load(), 2) << "a failed prepare ends a call too";
  hook.OnUnprepare(absl::OkStatus(), absl::Milliseconds(1));
  EXPECT_EQ(calls.load(), 3);
  hook.OnRebindFailure("1-1:1.0");
  hook.OnPreparedClaims(4);
  hook.OnRegistration(false, "refused");
  hook.OnUnhealthyClaimedDevices(1);
  hook.OnSpecsRefreshed(2);
  EXPECT_EQ(calls.load(), 3) << "only prepare and unprepare results count as calls";
  EXPECT_EQ(next.events, (std::vector<std::string>{"prepare OK", "prepare NOT_FOUND: gone", "unprepare OK",
                                                   "rebind 1-1:1.0", "claims 4", "registration no refused",
                                                   "unhealthy 1", "refreshed 2"}));
}

TEST(PluginCallHookTest, WorksWithoutANextObserver) {
  std::atomic<int> calls{0};
  PluginCallHook hook(nullptr, [&] { ++calls; });
  hook.OnPrepare(absl::OkStatus(), absl::Milliseconds(1));
  hook.OnUnprepare(absl::OkStatus(), absl::Milliseconds(1));
  hook.OnPreparedClaims(1);
  EXPECT_EQ(calls.load(), 2);
}

}  // namespace
}  // namespace liken::kubelet
