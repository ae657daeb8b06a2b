// A nodestate::PluginObserver in front of another that also reports the end of each prepare and unprepare, so the daemon
// can act once a burst of kubelet calls is over (give the heap's free pages back) without the plugin knowing.
#pragma once

#include <cstddef>
#include <functional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nodestate/plugin_observer.h"

namespace liken::kubelet {

// Forwards every event to `next` (may be null) and calls `after_call` after each claim's prepare or unprepare
// result. `after_call` must be thread-safe and must not block (a Coalescer's Notify). Thread-safe.
class PluginCallHook final : public nodestate::PluginObserver {
 public:
  // `next` is borrowed and must outlive the hook.
  PluginCallHook(nodestate::PluginObserver* next, std::function<void()> after_call)
      : next_(next), after_call_(std::move(after_call)) {}

  void OnPrepare(const absl::Status& result, absl::Duration duration) override {
    if (next_ != nullptr) next_->OnPrepare(result, duration);
    after_call_();
  }
  void OnUnprepare(const absl::Status& result, absl::Duration duration) override {
    if (next_ != nullptr) next_->OnUnprepare(result, duration);
    after_call_();
  }
  void OnRebindFailure(absl::string_view usb_interface) override {
    if (next_ != nullptr) next_->OnRebindFailure(usb_interface);
  }
  void OnPreparedClaims(size_t count) override {
    if (next_ != nullptr) next_->OnPreparedClaims(count);
  }
  void OnRegistration(bool registered, absl::string_view error) override {
    if (next_ != nullptr) next_->OnRegistration(registered, error);
  }
  void OnUnhealthyClaimedDevices(size_t count) override {
    if (next_ != nullptr) next_->OnUnhealthyClaimedDevices(count);
  }
  void OnSpecsRefreshed(int count) override {
    if (next_ != nullptr) next_->OnSpecsRefreshed(count);
  }

 private:
  nodestate::PluginObserver* const next_;
  const std::function<void()> after_call_;
};

}  // namespace liken::kubelet
