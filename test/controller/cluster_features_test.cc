// What the cluster serves: /version, the start-up probe (a dry-run apply) against the loopback API server, the
// gauges, and the node's reconciler on a server that drops allowMultipleAllocations (1.34/1.35 defaults).
#include "controller/cluster_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "controller/metrics.h"
#include "controller/node_reconciler.h"
#include "test/common/fake_clock.h"
#include "test/controller/loopback_fixtures.h"
#include "test/informers/fake_api_server.h"
#include "test/informers/test_util.h"
#include "test/kubelet/fake_scanner.h"

namespace liken::controller {
namespace {

using liken::testing::DriveUntil;
using liken::testing::WaitFor;

// A server with DRAConsumableCapacity off drops the field from every device it stores.
void DropSharing(nlohmann::json* obj) {
  if (!obj->contains("spec") || !(*obj)["spec"].contains("devices")) return;
  for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
}

// A server with DRADeviceTaints off (1.34, 1.35 defaults) drops the devices' taints.
void DropTaints(nlohmann::json* obj) {
  if (!obj->contains("spec") || !(*obj)["spec"].contains("devices")) return;
  for (auto& d : (*obj)["spec"]["devices"]) d.erase("taints");
}

nlohmann::json Version(const std::string& git) {
  std::string minor = git.substr(3, 2);
  return {{"major", "1"}, {"minor", minor}, {"gitVersion", git}};
}

TEST(ServerVersionTest, ParsesMajorAndMinor) {
  auto v = ParseServerVersion({{"major", "1"}, {"minor", "34+"}, {"gitVersion", "v1.34.4-gke.1"}});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->major, 1);
  EXPECT_EQ(v->minor, 34);
  EXPECT_EQ(v->git_version, "v1.34.4-gke.1");
  EXPECT_FALSE(ParseServerVersion({{"major", "1"}}).ok());
  EXPECT_FALSE(ParseServerVersion({{"major", "1"}, {"minor", "x"}}).ok());
  EXPECT_FALSE(ParseServerVersion(nlohmann::json::array()).ok());
}

TEST(ClusterFeaturesTest, ReleaseDefaultsBeforeAnythingIsObserved) {
  std::vector<std::string> changes;
  ClusterFeatures features([&](const std::string& f, const FeatureState& s) {
    changes.push_back(absl::StrCat(f, "=", s.served ? "1" : "0"));
  });
  for (const auto& name : ClusterFeatureNames()) EXPECT_EQ(features.Get(name).source, FeatureSource::kUnknown);
  features.SetVersion({"v1.34.4", 1, 34});
  EXPECT_EQ(changes, (std::vector<std::string>{"render_sharing=0", "node_scoped_claim_status=0", "pod_health=0",
                                               "device_taints=0"}));
  EXPECT_FALSE(features.TaintsServed());
  EXPECT_EQ(features.Get(kFeatureNodeScopedClaimStatus).source, FeatureSource::kRelease);
  // The release's defaults alone never make the diff ignore a field: only an observed drop does.
  EXPECT_FALSE(features.DropsAllowMultipleAllocations());

  changes.clear();
  ClusterFeatures newer([&](const std::string& f, const FeatureState& s) {
    changes.push_back(absl::StrCat(f, "=", s.served ? "1" : "0"));
  });
  newer.SetVersion({"v1.36.3", 1, 36});
  EXPECT_EQ(changes, (std::vector<std::string>{"render_sharing=1", "node_scoped_claim_status=1", "pod_health=1",
                                               "device_taints=1"}));
  EXPECT_TRUE(newer.TaintsServed());
  EXPECT_FALSE(ClusterFeatures().TaintsServed()) << "unknown until the probe answers";
  EXPECT_FALSE(newer.SharingMayBeDropped());
  EXPECT_TRUE(features.SharingMayBeDropped());
  EXPECT_TRUE(ClusterFeatures().SharingMayBeDropped()) << "unknown until the probe answers";
}

TEST(ClusterFeaturesTest, WhatTheServerKeptOverridesTheRelease) {
  ClusterFeatures features;
  features.SetVersion({"v1.35.4", 1, 35});
  // DRAConsumableCapacity turned on by the operator: the field comes back.
  nlohmann::json sent = {{"spec", {{"devices", {{{"name", "a"}, {"allowMultipleAllocations", true}}}}}}};
  features.ObserveSliceWrite(sent, sent);
  EXPECT_TRUE(features.Get(kFeatureRenderSharing).served);
  EXPECT_EQ(features.Get(kFeatureRenderSharing).source, FeatureSource::kObserved);
  features.SetVersion({"v1.35.4", 1, 35});
  EXPECT_TRUE(features.Get(kFeatureRenderSharing).served);
  // A write without shareable devices tells nothing.
  features.ObserveSliceWrite({{"spec", {{"devices", {{{"name", "b"}}}}}}}, {{"spec", {{"devices", {{{"name", "b"}}}}}}});
  EXPECT_TRUE(features.Get(kFeatureRenderSharing).served);
  // The gate turned off again (an API server downgrade): the next write says so.
  features.ObserveSliceWrite(sent, {{"spec", {{"devices", {{{"name", "a"}}}}}}});
  EXPECT_FALSE(features.Get(kFeatureRenderSharing).served);
  EXPECT_TRUE(features.DropsAllowMultipleAllocations());

  nlohmann::json j = features.ToJson();
  EXPECT_EQ(j["version"], "v1.35.4");
  EXPECT_EQ(j["features"]["render_sharing"]["served"], false);
  EXPECT_EQ(j["features"]["render_sharing"]["source"], "observed");
  EXPECT_NE(j["features"]["render_sharing"]["meaning"].get<std::string>().find("same ResourceClaim"),
            std::string::npos);
  EXPECT_EQ(j["features"]["pod_health"]["source"], "release-defaults");
  std::string text = ClusterFeaturesToText(j);
  EXPECT_NE(text.find("Kubernetes v1.35.4"), std::string::npos) << text;
  EXPECT_NE(text.find("render_sharing: NOT served (observed)"), std::string::npos) << text;
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override { client_ = *liken::testing::LoopbackRestClient(server_, &clock_); }

  liken::testing::FakeApiServer server_;
  liken::testing::FakeClock clock_;
  std::unique_ptr<informers::KubeClient> client_;
};

TEST_F(ProbeTest, AServerDroppingTheFieldIsDetectedWithoutStoringAnything) {
  server_.SetVersion(Version("v1.34.4"));
  server_.SetWriteMutator(DropSharing);
  ClusterFeatures features;
  ASSERT_TRUE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &features).ok());
  EXPECT_FALSE(features.Get(kFeatureRenderSharing).served);
  EXPECT_EQ(features.Get(kFeatureRenderSharing).source, FeatureSource::kObserved);
  EXPECT_TRUE(features.DropsAllowMultipleAllocations());
  EXPECT_FALSE(features.Get(kFeatureNodeScopedClaimStatus).served);
  EXPECT_EQ(server_.CountWrites(), 0);
  EXPECT_TRUE(server_.Object("resourceslices", "node-a-liken.sh-probe").is_null());
  bool dry_run = false;
  for (const auto& r : server_.Requests()) {
    if (r.method == "PATCH") dry_run = r.query.count("dryRun") > 0 && r.query.at("dryRun") == "All";
  }
  EXPECT_TRUE(dry_run);
}

TEST_F(ProbeTest, AServerKeepingTheFieldServesSharing) {
  ClusterFeatures features;
  ASSERT_TRUE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &features).ok());
  EXPECT_TRUE(features.Get(kFeatureRenderSharing).served);
  EXPECT_TRUE(features.Get(kFeatureNodeScopedClaimStatus).served);
  EXPECT_FALSE(features.DropsAllowMultipleAllocations());
}

TEST_F(ProbeTest, NoVersionStillProbesAndNeverFails) {
  server_.SetVersion(nullptr);
  server_.SetWriteMutator(DropSharing);
  ClusterFeatures features;
  EXPECT_FALSE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &features).ok());
  EXPECT_TRUE(features.DropsAllowMultipleAllocations());
  EXPECT_EQ(features.Get(kFeaturePodHealth).source, FeatureSource::kUnknown);
}

bool HasLine(const std::string& text, const std::string& line) { return text.find(line + "\n") != std::string::npos; }

// The daemon's wiring on a 1.34 server: probe, gauges, publish once, then no writes; a restarted daemon writes
// nothing either.
TEST_F(ProbeTest, OldReleaseDaemonPublishesOnceAndRestartsWithoutWrites) {
  server_.SetVersion(Version("v1.34.4"));
  server_.SetWriteMutator(DropSharing);
  server_.Upsert("nodes", {{"metadata", {{"name", "node-a"}, {"uid", "node-uid"}}}});
  liken::testing::FakeScanner scanner;
  discovery::Inventory inventory;
  for (int i = 0; i < 2; ++i) {
    discovery::PublishedDevice d;
    d.name = absl::StrCat("gpu-0-render-", i);
    d.attributes["liken.sh/bus"] = std::string("pci");
    d.allow_multiple_allocations = true;
    inventory.published.push_back(d);
  }
  scanner.Set(inventory);
  liken::testing::NoClaims devices;

  for (int run = 0; run < 2; ++run) {
    Metrics metrics;
    // Every gauge exists from start-up, at zero.
    for (const auto& name : ClusterFeatureNames()) {
      EXPECT_TRUE(HasLine(metrics.Render(), absl::StrCat("liken_cluster_feature_served{feature=\"", name, "\"} 0")))
          << name;
    }
    ClusterFeatures features([&](const std::string& f, const FeatureState& s) { metrics.OnClusterFeature(f, s.served); });
    ASSERT_TRUE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &features).ok());
    const int writes_before = server_.CountWrites();
    NodeReconcilerOptions options;
    options.node_name = "node-a";
    options.features = &features;
    NodeReconciler reconciler(options, client_.get(), &clock_, &scanner, &devices, nullptr, &metrics,
                              std::stop_token());
    ASSERT_TRUE(reconciler.Start());
    DriveUntil(&clock_, [&] { return reconciler.slices()->Size() == 1 && reconciler.passes() >= 2; },
               absl::Milliseconds(10));
    for (int i = 0; i < 3; ++i) {
      int passes = reconciler.passes();
      reconciler.Enqueue();
      ASSERT_TRUE(WaitFor([&] { return reconciler.passes() != passes; })) << "pass " << i << " never ran";
    }
    reconciler.Stop();
    EXPECT_EQ(server_.CountWrites() - writes_before, run == 0 ? 1 : 0) << "run " << run;
    EXPECT_FALSE(server_.Object("resourceslices", "node-a-liken.sh")["spec"]["devices"][0].contains(
        "allowMultipleAllocations"));
    const std::string m = metrics.Render();
    EXPECT_TRUE(HasLine(m, "liken_cluster_feature_served{feature=\"render_sharing\"} 0")) << m;
    EXPECT_TRUE(HasLine(m, "liken_cluster_feature_served{feature=\"node_scoped_claim_status\"} 0")) << m;
  }
}

TEST_F(ProbeTest, AServerDroppingTaintsIsDetectedApartFromSharing) {
  server_.SetVersion(Version("v1.36.3"));  // DRADeviceTaints turned off by the operator
  server_.SetWriteMutator(DropTaints);
  std::vector<std::string> changes;
  ClusterFeatures features([&](const std::string& f, const FeatureState& s) {
    changes.push_back(absl::StrCat(f, "=", s.served ? "1" : "0"));
  });
  ASSERT_TRUE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &features).ok());
  EXPECT_FALSE(features.TaintsServed());
  EXPECT_EQ(features.Get(kFeatureDeviceTaints).source, FeatureSource::kObserved);
  EXPECT_TRUE(features.Get(kFeatureRenderSharing).served);
  EXPECT_EQ(server_.CountWrites(), 0);
  // Announced once, as observed; the release's defaults do not override it.
  EXPECT_EQ(std::count(changes.begin(), changes.end(), "device_taints=0"), 1);
  EXPECT_EQ(std::count(changes.begin(), changes.end(), "device_taints=1"), 0);
  EXPECT_NE(features.ToJson()["features"]["device_taints"]["meaning"].get<std::string>().find("Unhealthy"),
            std::string::npos);

  server_.SetWriteMutator(nullptr);
  ClusterFeatures keeping;
  ASSERT_TRUE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &keeping).ok());
  EXPECT_TRUE(keeping.TaintsServed());
  EXPECT_EQ(keeping.Get(kFeatureDeviceTaints).source, FeatureSource::kObserved);
}

// A node whose prepared claim holds usb-1-2, whose sysfs directory is gone.
class HoldsAnUnpluggedDevice final : public nodestate::NodeDevices {
 public:
  void UpdateInventory(const discovery::Inventory&, discovery::ScanClock::time_point) override {}
  absl::StatusOr<int> RefreshPreparedClaims() override { return 0; }
  std::optional<std::set<std::string>> PresentDevices() const override { return std::nullopt; }
  std::vector<nodestate::HeldDevice> HeldDevices() const override {
    nodestate::HeldDevice h;
    h.name = "usb-1-2";
    h.attributes["liken.sh/bus"] = std::string("usb");
    h.sysfs_path = ::testing::TempDir() + "/no-such-sysfs-dir/usb-1-2";
    return {h};
  }
};

// The devices of node-a's slice on the server, "NAME" or "NAME KEY:EFFECT" per taint.
std::vector<std::string> StoredDevices(const liken::testing::FakeApiServer& server) {
  std::vector<std::string> out;
  nlohmann::json slice = server.Object("resourceslices", "node-a-liken.sh");
  if (!slice.is_object()) return out;
  for (const auto& d : slice["spec"]["devices"]) {
    std::string entry = d["name"];
    for (const auto& t : d.value("taints", nlohmann::json::array())) {
      absl::StrAppend(&entry, " ", t.value("key", ""), ":", t.value("effect", ""));
    }
    out.push_back(entry);
  }
  return out;
}

// The daemon with --taint-unplugged-devices against three servers: one that keeps taints (the unplugged claimed
// device is stored tainted), one whose probe said it drops them (1.34/1.35: the device leaves the slice, as the
// contract says, and a pass writes nothing more), and one that drops them although the probe could not tell (the
// first write says so, and the next pass takes the device out).
TEST_F(ProbeTest, TaintingDaemonFallsBackWhereTheServerDropsTaints) {
  server_.Upsert("nodes", {{"metadata", {{"name", "node-a"}, {"uid", "node-uid"}}}});
  liken::testing::FakeScanner scanner;
  discovery::Inventory inventory;
  discovery::PublishedDevice present;
  present.name = "usb-1-1";
  present.attributes["liken.sh/bus"] = std::string("usb");
  inventory.published.push_back(present);
  scanner.Set(inventory);
  HoldsAnUnpluggedDevice devices;
  struct Case {
    std::string name;
    std::string version;
    bool drops_at_probe;
    bool drops_at_write;
    std::vector<std::string> stored;
  };
  const std::vector<Case> cases = {
      {"keeps", "v1.37.2", false, false, {"usb-1-1", "usb-1-2 liken.sh/unplugged:NoExecute"}},
      {"1.34", "v1.34.4", true, true, {"usb-1-1"}},
      {"probe failed", "v1.36.3", false, true, {"usb-1-1"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    server_.Delete("resourceslices", "node-a-liken.sh");
    server_.SetVersion(Version(c.version));
    server_.SetWriteMutator(c.drops_at_probe ? DropTaints : std::function<void(nlohmann::json*)>());
    ClusterFeatures features;
    if (c.name == "probe failed") {
      features.SetVersion({c.version, 1, 36});  // the release's defaults only
    } else {
      ASSERT_TRUE(ProbeClusterFeatures(client_.get(), "node-a", "liken.sh", &features).ok());
    }
    server_.SetWriteMutator(c.drops_at_write ? DropTaints : std::function<void(nlohmann::json*)>());
    NodeReconcilerOptions options;
    options.node_name = "node-a";
    options.features = &features;
    options.taint_unplugged = true;
    NodeReconciler reconciler(options, client_.get(), &clock_, &scanner, &devices, nullptr, nullptr,
                              std::stop_token());
    ASSERT_TRUE(reconciler.Start());
    DriveUntil(&clock_, [&] { return reconciler.passes() >= 1; }, absl::Milliseconds(10));
    // Two more passes: the second sees what the first write told (the daemon's change callback asks for it).
    for (int i = 0; i < 2; ++i) {
      int passes = reconciler.passes();
      reconciler.Enqueue();
      ASSERT_TRUE(WaitFor([&] { return reconciler.passes() != passes; })) << "pass " << i << " never ran";
    }
    const int writes = server_.CountWrites();
    int passes = reconciler.passes();
    reconciler.Enqueue();
    ASSERT_TRUE(WaitFor([&] { return reconciler.passes() != passes; }));
    reconciler.Stop();
    EXPECT_EQ(StoredDevices(server_), c.stored);
    EXPECT_EQ(server_.CountWrites(), writes) << "a settled node writes nothing";
    EXPECT_EQ(features.TaintsServed(), !c.drops_at_write);
  }
}

}  // namespace
}  // namespace liken::controller
