// Fixtures for the controller tests that run against the loopback API server (test/informers/fake_api_server.h):
// a REST client for it, a node without prepared claims, and a bounded wall-clock wait.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>

#include "absl/status/statusor.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "informers/kube_client.h"
#include "informers/rest_client.h"
#include "nodestate/node_devices.h"
#include "test/common/fake_clock.h"
#include "test/informers/fake_api_server.h"

namespace liken::testing {

// A REST client for `server` that neither throttles nor retries (a failure shows at once), waiting on `clock`.
inline absl::StatusOr<std::unique_ptr<informers::KubeClient>> LoopbackRestClient(const FakeApiServer& server,
                                                                                 FakeClock* clock) {
  informers::KubeConfig config;
  config.server = server.url();
  config.qps = 0;
  config.max_retries = 0;
  return informers::NewRestClient(config, clock);
}

// A node without prepared claims.
class NoClaims final : public nodestate::NodeDevices {
 public:
  void UpdateInventory(const discovery::Inventory&, discovery::ScanClock::time_point) override {}
  absl::StatusOr<int> RefreshPreparedClaims() override { return 0; }
  std::vector<nodestate::HeldDevice> HeldDevices() const override { return {}; }
  std::optional<std::set<std::string>> PresentDevices() const override { return std::nullopt; }
};

// Waits (wall clock; the worker and the watch run on their own threads) until `cond` holds or `limit`
// passes; returns `cond`'s last value. A bounded wait turns a hang into a test failure.
template <typename Cond>
bool WaitFor(Cond cond, absl::Duration limit = absl::Seconds(10)) {
  const absl::Time deadline = absl::Now() + limit;
  while (!cond()) {
    if (absl::Now() >= deadline) return cond();
    std::this_thread::yield();
  }
  return true;
}

}  // namespace liken::testing
