#include "kubelet/plugin_metrics.h"

#include <string>

#include <gtest/gtest.h>

namespace liken::kubelet {
namespace {

bool Has(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

TEST(PluginMetricsTest, EveryPluginEventReachesTheDaemonsMetrics) {
  controller::Metrics metrics;
  PluginMetrics adapter(&metrics);
  PluginObserver* observer = &adapter;
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
}  // namespace liken::kubelet
