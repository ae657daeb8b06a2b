#include "controller/metrics.h"

#include <string>

#include <gtest/gtest.h>

#include "nodestate/plugin_observer.h"

namespace liken::controller {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(MetricsTest, EverySeriesExistsAtZeroFromStartUp) {
  Metrics m;
  std::string text = m.Render();
  for (const char* line : {
           "liken_published_devices 0", "liken_withheld_devices 0", "liken_unclaimed_devices 0",
           "liken_left_out_devices 0", "liken_idle_usb_devices 0",
           "liken_slice_writes_total{operation=\"create\",result=\"success\"} 0",
           "liken_slice_writes_total{operation=\"update\",result=\"conflict\"} 0",
           "liken_slice_writes_total{operation=\"delete\",result=\"error\"} 0",
           "liken_slices_refused_total{by=\"server\",rule=\"ResourceSliceMaxDevicesWithTaintsOrConsumesCounters\"} 0",
           "liken_slices_refused_total{by=\"driver\",rule=\"ResourceSliceMaxDevices\"} 0",
           "liken_scan_duration_seconds_count 0",
           "liken_uevents_total{acted=\"true\"} 0", "liken_uevents_total{acted=\"false\"} 0",
           "liken_watch_restarts_total{reason=\"gone\",resource=\"resourceslices\"} 0",
           "liken_watch_restarts_total{reason=\"timeout\",resource=\"pods\"} 0",
           "liken_watch_events_total{resource=\"pods\",type=\"ADDED\"} 0",
           "liken_watch_events_total{resource=\"resourceslices\",type=\"BOOKMARK\"} 0",
           "liken_workqueue_depth 0", "liken_workqueue_retries_total 0",
           "liken_prepare_total{result=\"success\"} 0", "liken_prepare_total{result=\"error\"} 0",
           "liken_unprepare_total{result=\"success\"} 0", "liken_prepare_duration_seconds_count 0",
           "liken_unprepare_duration_seconds_count 0", "liken_prepared_claims 0", "liken_unhealthy_claimed_devices 0",
           "liken_runtime_cdi{state=\"enabled\"} 0", "liken_runtime_cdi{state=\"disabled\"} 0",
           "liken_runtime_cdi{state=\"unknown\"} 0", "liken_runtime_cdi{state=\"outside_spec_dirs\"} 0",
           "liken_cdi_refreshes_total 0",
           "liken_rebind_failures_total 0", "liken_claim_get_fallbacks_total 0", "liken_flapping_devices 0",
           "liken_flap_damping_starts_total 0", "liken_slice_writes_deferred_total 0"}) {
    EXPECT_TRUE(Has(text, line)) << "missing: " << line << "\n" << text;
  }
}

TEST(MetricsTest, ObserversMoveTheSeries) {
  Metrics m;
  m.OnScan(5, 2, 1, 4, absl::Milliseconds(3));
  m.OnIdleUsb(2);
  m.OnSliceWrite("update", "conflict");
  m.OnSliceRefused("ResourceSliceMaxDevicesWithTaintsOrConsumesCounters", "server");
  m.OnWatchRestart("pods", "gone");
  m.OnWatchEvent("pods", "MODIFIED");
  m.OnWatchEvent("pods", "MODIFIED");
  m.OnWatchEvent("pods", "SOMETHING-ELSE");
  m.OnUevent(true);
  m.OnUevent(false);
  m.OnUevent(false);
  m.OnDepth(4);
  m.OnRetry();
  m.OnPrepare(absl::OkStatus(), absl::Milliseconds(2));
  m.OnPrepare(absl::InternalError("x"), absl::Milliseconds(2));
  m.OnUnprepare(absl::OkStatus(), absl::Milliseconds(1));
  m.OnPreparedClaims(7);
  m.OnSpecsRefreshed(3);
  m.OnRebindFailure("1-4:1.0");
  m.OnClaimGetFallback();
  m.OnClaimGetFallback();
  m.OnRuntimeCdi("enabled");
  m.OnRuntimeCdi("disabled");
  m.OnRuntimeCdi("sideways");  // not a state: ignored
  m.OnFlapDamping(1, 2);
  m.OnFlapDamping(1, 3);  // the total the damper counts: the counter follows it
  m.OnSliceWriteDeferred();
  std::string text = m.Render();
  for (const char* line : {
           "liken_published_devices 5", "liken_withheld_devices 2", "liken_unclaimed_devices 1",
           "liken_left_out_devices 4", "liken_idle_usb_devices 2",
           "liken_slice_writes_total{operation=\"update\",result=\"conflict\"} 1",
           "liken_slices_refused_total{by=\"server\",rule=\"ResourceSliceMaxDevicesWithTaintsOrConsumesCounters\"} 1",
           "liken_watch_restarts_total{reason=\"gone\",resource=\"pods\"} 1", "liken_uevents_total{acted=\"true\"} 1",
           "liken_watch_events_total{resource=\"pods\",type=\"MODIFIED\"} 2",
           "liken_uevents_total{acted=\"false\"} 2", "liken_workqueue_depth 4", "liken_workqueue_retries_total 1",
           "liken_prepare_total{result=\"success\"} 1", "liken_prepare_total{result=\"error\"} 1",
           "liken_prepare_duration_seconds_count 2", "liken_unprepare_total{result=\"success\"} 1",
           "liken_prepared_claims 7", "liken_cdi_refreshes_total 3", "liken_rebind_failures_total 1",
           "liken_scan_duration_seconds_count 1", "liken_claim_get_fallbacks_total 2",
           "liken_runtime_cdi{state=\"enabled\"} 0", "liken_runtime_cdi{state=\"disabled\"} 1",
           "liken_runtime_cdi{state=\"unknown\"} 0", "liken_flapping_devices 1",
           "liken_flap_damping_starts_total 3", "liken_slice_writes_deferred_total 1"}) {
    EXPECT_TRUE(Has(text, line)) << "missing: " << line << "\n" << text;
  }
  EXPECT_EQ(text.find("SOMETHING-ELSE"), std::string::npos) << "an unknown event type gets no series";
}

TEST(MetricsTest, EmptyAddressTurnsTheEndpointOff) {
  Metrics m;
  auto server = StartMetricsServer("", m.registry());
  ASSERT_TRUE(server.ok());
  EXPECT_EQ(*server, nullptr);
}

// The kubelet plugin reports through nodestate::PluginObserver, which cmd hands this object as.
TEST(MetricsTest, EveryPluginEventReachesTheDaemonsMetrics) {
  Metrics metrics;
  nodestate::PluginObserver* observer = &metrics;
  observer->OnPrepare(absl::OkStatus(), absl::Milliseconds(2));
  observer->OnPrepare(absl::InternalError("x"), absl::Milliseconds(2));
  observer->OnUnprepare(absl::OkStatus(), absl::Milliseconds(1));
  observer->OnRebindFailure("1-4:1.0");
  observer->OnPreparedClaims(7);
  observer->OnRegistration(true, "");
  observer->OnSpecsRefreshed(3);
  observer->OnUnhealthyClaimedDevices(2);
  std::string text = metrics.Render();
  for (const char* line : {"liken_prepare_total{result=\"success\"} 1", "liken_prepare_total{result=\"error\"} 1",
                           "liken_prepare_duration_seconds_count 2", "liken_unprepare_total{result=\"success\"} 1",
                           "liken_unprepare_duration_seconds_count 1", "liken_rebind_failures_total 1",
                           "liken_prepared_claims 7", "liken_kubelet_registered 1", "liken_cdi_refreshes_total 3",
                           "liken_unhealthy_claimed_devices 2"}) {
    EXPECT_TRUE(Has(text, line)) << "missing: " << line << "\n" << text;
  }
}

}  // namespace
}  // namespace liken::controller
