// The kubelet plugin's events counted in the daemon's metrics. The plugin reports through its own observer
// interface (plugin_observer.h); this adapter, on the kubelet floor that sees both, forwards to
// controller::Metrics, so the controller floor below never includes the kubelet.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "controller/metrics.h"
#include "kubelet/plugin_observer.h"

namespace liken::kubelet {

// Forwards every PluginObserver event to the daemon's metrics. Thread-safe (Metrics is).
class PluginMetrics final : public PluginObserver {
 public:
  // `metrics` must outlive the adapter.
  explicit PluginMetrics(controller::Metrics* metrics) : metrics_(metrics) {}

  void OnPrepare(const absl::Status& result, absl::Duration duration) override {
    metrics_->OnPrepare(result, duration);
  }
  void OnUnprepare(const absl::Status& result, absl::Duration duration) override {
    metrics_->OnUnprepare(result, duration);
  }
  void OnRebindFailure(absl::string_view usb_interface) override { metrics_->OnRebindFailure(usb_interface); }
  void OnPreparedClaims(size_t count) override { metrics_->OnPreparedClaims(count); }
  void OnRegistration(bool registered, absl::string_view error) override {
    metrics_->OnRegistration(registered, error);
  }
  void OnSpecsRefreshed(int count) override { metrics_->OnSpecsRefreshed(count); }
  void OnUnhealthyClaimedDevices(size_t count) override { metrics_->OnUnhealthyClaimedDevices(count); }

 private:
  controller::Metrics* const metrics_;
};

}  // namespace liken::kubelet
