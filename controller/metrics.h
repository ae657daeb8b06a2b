// The daemon's Prometheus metrics: every series exists (at zero) from start-up.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/workqueue.h"
#include "controller/cluster_features.h"
#include "controller/slice_sync.h"
#include "controller/triggers.h"
#include "informers/informer.h"
#include "nodestate/plugin_observer.h"

namespace liken::controller {

// All metrics, and the observer interfaces that report through them: the floors' below, and the kubelet plugin's
// (nodestate::PluginObserver: the plugin, beside the controller, is handed this object by cmd). Thread-safe.
class Metrics final : public WorkQueueObserver,
                      public SliceSyncObserver,
                      public informers::InformerObserver,
                      public UeventObserver,
                      public nodestate::PluginObserver {
 public:
  Metrics();

  // The registry to expose. Thread-safe.
  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // The metrics in the Prometheus text format. Thread-safe.
  std::string Render() const;

  // Results of the latest scan (`left_out`: bound devices a claim would deliver nothing from). Thread-safe.
  void OnScan(size_t published, size_t withheld, size_t unclaimed, size_t left_out, absl::Duration duration);
  // The latest scan's idle USB devices (not authorized, not configured; counted in `left_out` too). Thread-safe.
  void OnIdleUsb(size_t idle);

  // WorkQueueObserver.
  void OnDepth(size_t depth) override;
  void OnRetry() override;
  // SliceSyncObserver.
  void OnSliceWrite(std::string_view operation, std::string_view result) override;
  void OnSliceRefused(std::string_view rule, std::string_view by) override;
  // informers::InformerObserver.
  void OnWatchRestart(const std::string& resource, const std::string& reason) override;
  void OnWatchEvent(const std::string& resource, const std::string& type) override;
  void OnClaimGetFallback() override;
  // UeventObserver.
  void OnUevent(bool acted) override;
  // nodestate::PluginObserver: the kubelet plugin's events. Thread-safe.
  void OnPrepare(const absl::Status& result, absl::Duration duration) override;
  void OnUnprepare(const absl::Status& result, absl::Duration duration) override;
  void OnRebindFailure(absl::string_view usb_interface) override;
  void OnPreparedClaims(size_t count) override;
  void OnRegistration(bool registered, absl::string_view error) override;
  void OnSpecsRefreshed(int count) override;
  void OnUnhealthyClaimedDevices(size_t count) override;
  // The flap damper after a pass: devices damped now, and how often damping started since start-up (a total that
  // only grows; the counter follows it). Call from one thread (the node's pass). Thread-safe.
  void OnFlapDamping(size_t damped_now, size_t starts_total);
  // A pass whose slice write waited for the node's write budget. Thread-safe.
  void OnSliceWriteDeferred();
  // The container runtime's CDI: "enabled", "disabled", "unknown" or "outside_spec_dirs" (others ignored).
  // Thread-safe.
  void OnRuntimeCdi(std::string_view state);
  // A cluster feature's state (ClusterFeatures' change callback); names not in ClusterFeatureNames are ignored.
  // Thread-safe.
  void OnClusterFeature(const std::string& feature, bool served);

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* published_;
  prometheus::Gauge* withheld_;
  prometheus::Gauge* unclaimed_;
  prometheus::Gauge* left_out_;
  prometheus::Gauge* idle_usb_;
  prometheus::Family<prometheus::Counter>* slice_writes_;
  prometheus::Family<prometheus::Counter>* slices_refused_;
  prometheus::Histogram* scan_duration_;
  prometheus::Counter* uevents_seen_;
  prometheus::Counter* uevents_acted_;
  prometheus::Family<prometheus::Counter>* watch_restarts_;
  prometheus::Family<prometheus::Counter>* watch_events_;
  prometheus::Gauge* queue_depth_;
  prometheus::Counter* queue_retries_;
  prometheus::Counter* prepare_ok_;
  prometheus::Counter* prepare_error_;
  prometheus::Counter* unprepare_ok_;
  prometheus::Counter* unprepare_error_;
  prometheus::Histogram* prepare_duration_;
  prometheus::Histogram* unprepare_duration_;
  prometheus::Gauge* prepared_claims_;
  prometheus::Gauge* unhealthy_claimed_;
  prometheus::Counter* cdi_refreshes_;
  prometheus::Counter* rebind_failures_;
  prometheus::Counter* claim_get_fallbacks_;
  prometheus::Gauge* registered_;
  prometheus::Gauge* flapping_;
  prometheus::Counter* flap_damping_starts_;
  prometheus::Counter* slice_writes_deferred_;
  std::map<std::string, prometheus::Gauge*, std::less<>> runtime_cdi_;  // by state; filled in the constructor only
  std::map<std::string, prometheus::Gauge*> cluster_features_;  // by feature; filled in the constructor only
};

// Serves `registry` at http://<address>/metrics. `address` is "host:port" or ":port"; empty returns
// null (metrics off). Unavailable naming the address and why when it cannot listen ("the address is in use").
// Thread-safe.
class MetricsServer {
 public:
  virtual ~MetricsServer() = default;
};
absl::StatusOr<std::unique_ptr<MetricsServer>> StartMetricsServer(const std::string& address,
                                                                  std::shared_ptr<prometheus::Registry> registry);

}  // namespace liken::controller
