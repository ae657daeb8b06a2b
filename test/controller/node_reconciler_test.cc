// The node pass in the order its owner runs it: scan → the inventory's holder → desired slices → writes →
// the refresh of prepared claims → the devices present to the claim status writer. Passes run on the test's thread (ProcessOneForTest); the clock is fake.
#include "controller/node_reconciler.h"

#include <filesystem>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "controller/claim_status_controller.h"
#include "nodestate/node_devices.h"
#include "test/common/fake_clock.h"
#include "test/informers/fake_kube_client.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/fake_scanner.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClaimLookup;
using liken::testing::FakeClock;
using liken::testing::FakeKubeClient;
using liken::testing::FakeScanner;
using nodestate::HeldDevice;

// Records what a pass asks of the kubelet side, in order, with the API writes done by then. Thread-safe.
class RecordingDevices final : public nodestate::NodeDevices {
 public:
  explicit RecordingDevices(const FakeKubeClient* client) : client_(client) {}

  void UpdateInventory(const discovery::Inventory& inventory, discovery::ScanClock::time_point) override {
    Record(absl::StrCat("inventory of ", inventory.published.size()));
    std::set<std::string> names;
    for (const auto& d : inventory.published) names.insert(d.name);
    absl::MutexLock lock(&mu_);
    present_ = std::move(names);
  }
  // The names in the inventory held (the last one handed over; none before the first). Thread-safe.
  std::optional<std::set<std::string>> PresentDevices() const override {
    Record("present");
    absl::MutexLock lock(&mu_);
    return present_;
  }
  absl::StatusOr<int> RefreshPreparedClaims() override {
    Record("refresh");
    return 0;
  }
  std::vector<HeldDevice> HeldDevices() const override {
    absl::MutexLock lock(&mu_);
    return held_;
  }
  // What the prepared claims hold from now on. Thread-safe.
  void SetHeld(std::vector<HeldDevice> held) {
    absl::MutexLock lock(&mu_);
    held_ = std::move(held);
  }
  // The calls so far, each with the number of API writes before it. Thread-safe.
  std::vector<std::string> calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  void Record(const std::string& call) const {
    std::string entry = absl::StrCat(call, " after ", client_->Writes().size(), " writes");
    absl::MutexLock lock(&mu_);
    calls_.push_back(std::move(entry));
  }

  const FakeKubeClient* const client_;
  mutable absl::Mutex mu_;
  mutable std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  std::vector<HeldDevice> held_ ABSL_GUARDED_BY(mu_);
  std::optional<std::set<std::string>> present_ ABSL_GUARDED_BY(mu_);
};

discovery::Inventory TwoUsbDevices() {
  discovery::Inventory inventory;
  for (const char* name : {"usb-1-1", "usb-1-2"}) {
    discovery::PublishedDevice d;
    d.name = name;
    d.attributes["liken.sh/bus"] = std::string("usb");
    inventory.published.push_back(d);
  }
  return inventory;
}

class NodeReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u"}}}});
    scanner_.Set(TwoUsbDevices());
  }

  std::unique_ptr<NodeReconciler> NewReconciler(bool taint_unplugged = false, ClusterFeatures* features = nullptr,
                                                ClaimStatusController* statuses = nullptr) {
    NodeReconcilerOptions options;
    options.node_name = "n1";
    options.taint_unplugged = taint_unplugged;
    options.features = features;
    options.claim_statuses = statuses;
    options.unplugged_taint_limit = taint_limit_;
    options.unplugged_memory_dir = memory_dir_;
    return std::make_unique<NodeReconciler>(options, &client_, &clock_, &scanner_, &devices_, nullptr, nullptr,
                                            shutdown_.get_token());
  }

  FakeClock clock_;
  FakeKubeClient client_;
  FakeScanner scanner_;
  RecordingDevices devices_{&client_};
  absl::Duration taint_limit_ = kDefaultUnpluggedTaintLimit;  // NewReconciler's --unplugged-taint-limit
  std::string memory_dir_;                                    // NewReconciler's memory of taint times
  std::stop_source shutdown_;
};

TEST_F(NodeReconcilerTest, APassScansHandsOverPublishesThenRefreshes) {
  auto reconciler = NewReconciler();
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(scanner_.scans(), 1);
  EXPECT_EQ(devices_.calls(), (std::vector<std::string>{"inventory of 2 after 0 writes", "refresh after 1 writes"}));
  nlohmann::json slice = client_.Object(informers::ResourceSlicePath("n1-liken.sh"));
  ASSERT_TRUE(slice.is_object());
  EXPECT_EQ(slice["spec"]["devices"].size(), 2u);
  EXPECT_EQ(slice["spec"]["pool"]["name"], "n1");
  EXPECT_EQ(reconciler->passes(), 1);
}

TEST_F(NodeReconcilerTest, AFailedScanWritesNothingAndStillRefreshesTheClaims) {
  scanner_.SetFailure(absl::InternalError("sysfs is gone"));
  auto reconciler = NewReconciler();
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(devices_.calls(), (std::vector<std::string>{"refresh after 0 writes"}))
      << "the held inventory stays; the claims are refreshed against it";
  EXPECT_TRUE(client_.Writes().empty());
}

TEST_F(NodeReconcilerTest, AFailedWriteStillRefreshesTheClaims) {
  client_.PrependFailure("CREATE", informers::ResourceSlicesPath(), informers::StatusFromHttp(503, "{}"));
  auto reconciler = NewReconciler();
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(devices_.calls(), (std::vector<std::string>{"inventory of 2 after 0 writes", "refresh after 1 writes"}));
  EXPECT_TRUE(client_.Object(informers::ResourceSlicePath("n1-liken.sh")).is_null());
}

TEST_F(NodeReconcilerTest, ShutdownEndsTheRefreshAndStartsNothing) {
  auto reconciler = NewReconciler();
  shutdown_.request_stop();
  EXPECT_FALSE(reconciler->Start()) << "no worker once shutdown was raised";
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(devices_.calls(), (std::vector<std::string>{"inventory of 2 after 0 writes"}))
      << "a new driver pod may own the CDI specs now: no refresh";
  reconciler->Stop();
}

TEST_F(NodeReconcilerTest, ShutdownRaisedBeforeConstructionStopsTheSliceInformer) {
  shutdown_.request_stop();
  auto reconciler = NewReconciler();
  EXPECT_FALSE(reconciler->Start());
  EXPECT_EQ(reconciler->passes(), 0);
  for (const auto& request : client_.Requests()) EXPECT_NE(request.verb, "LIST") << request.path;
}

// The devices of this node's slice, each as "NAME" or "NAME KEY=VALUE:EFFECT@TIME" for its taints.
std::vector<std::string> PublishedDevices(const FakeKubeClient& client) {
  std::vector<std::string> out;
  nlohmann::json slice = client.Object(informers::ResourceSlicePath("n1-liken.sh"));
  if (!slice.is_object()) return out;
  for (const auto& d : slice["spec"]["devices"]) {
    std::string entry = d["name"];
    for (const auto& t : d.value("taints", nlohmann::json::array())) {
      absl::StrAppend(&entry, " ", t.value("key", ""), "=", t.value("value", ""), ":", t.value("effect", ""), "@",
                      t.value("timeAdded", ""));
    }
    if (d.contains("allowMultipleAllocations")) entry += " shared";
    out.push_back(entry);
  }
  return out;
}

// usb-1-2, held by a prepared claim, with a sysfs directory that is gone (`gone`) or still there.
HeldDevice HeldSerial(bool gone) {
  HeldDevice h;
  h.name = "usb-1-2";
  h.attributes["liken.sh/bus"] = std::string("usb");
  h.sysfs_path = gone ? ::testing::TempDir() + "/no-such-device-usb-1-2" : ::testing::TempDir();
  return h;
}

discovery::Inventory OnlyFirstUsbDevice() {
  discovery::Inventory inventory = TwoUsbDevices();
  inventory.published.pop_back();
  return inventory;
}

TEST_F(NodeReconcilerTest, AClaimedDeviceThatWentAwayIsPublishedTaintedUntilItComesBack) {
  auto reconciler = NewReconciler(/*taint_unplugged=*/true);
  devices_.SetHeld({HeldSerial(true)});
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1", "usb-1-2"})) << "present: no taint";

  scanner_.Set(OnlyFirstUsbDevice());  // unplugged
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  const std::string tainted = "usb-1-2 liken.sh/unplugged=device-gone:NoExecute@2023-11-14T22:13:20Z";
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1", tainted}));
  // The kubelet side (prepares, health) gets the scan as it is: the tainted device is not there to prepare, and
  // its health is Unhealthy from the same inventory.
  EXPECT_EQ(devices_.calls()[2], "inventory of 1 after 1 writes");
  EXPECT_EQ(client_.Object(informers::ResourceSlicePath("n1-liken.sh"))["spec"]["devices"][1]["attributes"]["liken.sh/bus"]
                ["string"],
            "usb");

  // A later pass, 40 s on: the same taint, the same time, no write.
  const size_t writes = client_.Writes().size();
  clock_.Advance(absl::Seconds(40));
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1", tainted}));
  EXPECT_EQ(client_.Writes().size(), writes);

  scanner_.Set(TwoUsbDevices());  // plugged back
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1", "usb-1-2"})) << "the taint is removed";
}

// --unplugged-taint-limit 3s with the default resync (10 min): the pass that publishes the taint asks for another at
// the limit, so the device leaves the slice 3 s after its timeAdded (the fake clock's whole second), not at the
// resync. The earlier loop had no pass due until the resync.
TEST_F(NodeReconcilerTest, TheTaintLimitFiresOnATimerNotAtTheNextResync) {
  taint_limit_ = absl::Seconds(3);
  auto reconciler = NewReconciler(/*taint_unplugged=*/true);
  devices_.SetHeld({HeldSerial(true)});
  scanner_.Set(OnlyFirstUsbDevice());
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  ASSERT_EQ(PublishedDevices(client_).size(), 2u) << "published tainted";
  clock_.Advance(absl::Seconds(2));
  EXPECT_FALSE(reconciler->ProcessOneForTest()) << "no pass is due before the limit";
  clock_.Advance(absl::Seconds(1));
  ASSERT_TRUE(reconciler->ProcessOneForTest()) << "a pass at the limit, not at the resync 10 min away";
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"}));
  EXPECT_FALSE(reconciler->ProcessOneForTest()) << "nothing more until the resync";
}

// A restarted daemon remembers when the taint was added (the memory file in the plugin's directory): a device whose
// limit ran out is not published again with a new timeAdded for a whole new limit while the claim still holds it.
// Without the memory (the earlier daemon) the restarted pass published it tainted again at the restart's time.
TEST_F(NodeReconcilerTest, AnExpiredTaintStaysExpiredAcrossARestart) {
  memory_dir_ = absl::StrCat(::testing::TempDir(), "/reconciler-memory-",
                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
  std::filesystem::remove_all(memory_dir_);
  std::filesystem::create_directories(memory_dir_);
  taint_limit_ = absl::Seconds(3);
  devices_.SetHeld({HeldSerial(true)});
  scanner_.Set(OnlyFirstUsbDevice());
  {
    auto reconciler = NewReconciler(/*taint_unplugged=*/true);
    reconciler->Enqueue();
    ASSERT_TRUE(reconciler->ProcessOneForTest());
    ASSERT_EQ(PublishedDevices(client_).size(), 2u);
    clock_.Advance(absl::Seconds(3));
    ASSERT_TRUE(reconciler->ProcessOneForTest());
    ASSERT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"}));
  }
  clock_.Advance(absl::Seconds(30));
  // The restarted daemon's slice informer is not started here: the slice is created afresh from what it decides.
  ASSERT_TRUE(client_.Remove(informers::ResourceSlicePath("n1-liken.sh")));
  auto restarted = NewReconciler(/*taint_unplugged=*/true);
  restarted->Enqueue();
  ASSERT_TRUE(restarted->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"})) << "still expired after the restart";
}

TEST_F(NodeReconcilerTest, ATaintedDeviceLeavesTheSliceWhenNoPreparedClaimHoldsIt) {
  auto reconciler = NewReconciler(/*taint_unplugged=*/true);
  devices_.SetHeld({HeldSerial(true)});
  scanner_.Set(OnlyFirstUsbDevice());
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  ASSERT_EQ(PublishedDevices(client_).size(), 2u);
  devices_.SetHeld({});  // the evicted pod's claim was unprepared
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"}));
}

TEST_F(NodeReconcilerTest, WithoutTheOptionOrTheServersTaintsADeviceThatWentAwayLeavesTheSlice) {
  devices_.SetHeld({HeldSerial(true)});
  scanner_.Set(OnlyFirstUsbDevice());
  {
    auto reconciler = NewReconciler(/*taint_unplugged=*/false);
    reconciler->Enqueue();
    ASSERT_TRUE(reconciler->ProcessOneForTest());
    EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"})) << "the contract's behaviour";
  }
  ClusterFeatures old_release;
  old_release.SetVersion({"v1.35.4", 1, 35});
  auto reconciler = NewReconciler(/*taint_unplugged=*/true, &old_release);
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"}))
      << "a server that drops taints would show the device untainted, as if it were there";
}

TEST_F(NodeReconcilerTest, ADeviceWhoseSysfsDirectoryIsStillThereIsNotTainted) {
  // A libusb program in the pod detached the kernel driver (or an admin unbound it): the device is still plugged in.
  auto reconciler = NewReconciler(/*taint_unplugged=*/true);
  devices_.SetHeld({HeldSerial(false)});
  scanner_.Set(OnlyFirstUsbDevice());
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1"}));
}

// The claim-status step, the pass's last: the devices the held inventory publishes go to the claim status writer,
// whose handler enqueues at once each prepared claim whose device went away or came back; nothing else does.
TEST_F(NodeReconcilerTest, ThePassEndsByTellingTheClaimStatusWriterWhichDevicesArePresent) {
  FakeClaimLookup claims;  // caches no claim: a sync fails and waits for its retry
  ClaimStatusController statuses("liken.sh", "n1", &client_, &claims, &clock_);
  statuses.SetPrepared({"ns1", "serial", "u1", {{"usb-1-2", std::nullopt, {"/dev/ttyUSB0"}}}});
  auto reconciler = NewReconciler(/*taint_unplugged=*/false, nullptr, &statuses);
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(devices_.calls(), (std::vector<std::string>{"inventory of 2 after 0 writes", "refresh after 1 writes",
                                                        "present after 1 writes"}));
  EXPECT_EQ(statuses.DrainForTest(), 0) << "usb-1-2 is present, as assumed before any pass";

  scanner_.Set(OnlyFirstUsbDevice());  // unplugged
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(statuses.DrainForTest(), 1) << "the claim holding usb-1-2 is synced at once";

  scanner_.SetFailure(absl::InternalError("sysfs is gone"));  // the held inventory stays: no news
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(devices_.calls().back(), "present after 2 writes") << "the step runs after a failed scan too";
  EXPECT_EQ(statuses.DrainForTest(), 0);

  scanner_.SetFailure(absl::OkStatus());
  scanner_.Set(TwoUsbDevices());  // plugged back
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(statuses.DrainForTest(), 1) << "the claim holding usb-1-2 is synced again";

  shutdown_.request_stop();
  const size_t calls = devices_.calls().size();
  scanner_.Set(OnlyFirstUsbDevice());
  reconciler->Enqueue();
  ASSERT_TRUE(reconciler->ProcessOneForTest());
  EXPECT_EQ(devices_.calls().size(), calls + 1) << "after shutdown the pass hands over its scan and stops there";
  EXPECT_EQ(statuses.DrainForTest(), 0);
  reconciler->Stop();
  statuses.Stop();
}

// The swap, on the publish side: another unit (serial B2) in the port of the claimed adapter (serial A1). With taints
// on, the claimed device is published tainted with the claim's attributes in place of the other unit, and the
// report names both; the claimed unit back removes the taint.
TEST_F(NodeReconcilerTest, AnotherUnitInAClaimedPortLeavesTheClaimedDeviceGoneAndTainted) {
  const auto with_serial = [](const std::string& serial) {
    discovery::Inventory inventory = TwoUsbDevices();
    inventory.published[1].attributes = {{"liken.sh/bus", std::string("usb")},
                                         {"liken.sh/vendor", std::string("0403")},
                                         {"liken.sh/product", std::string("6001")},
                                         {"liken.sh/serial", serial}};
    return inventory;
  };
  std::vector<std::vector<std::string>> reported;
  NodeReconcilerOptions options;
  options.node_name = "n1";
  options.taint_unplugged = true;
  options.on_device_conditions = [&](const std::vector<std::string>& lines) { reported.push_back(lines); };
  NodeReconciler reconciler(options, &client_, &clock_, &scanner_, &devices_, nullptr, nullptr, shutdown_.get_token());
  HeldDevice held = HeldSerial(false);  // its sysfs directory is there: a unit is plugged into the port
  held.attributes = with_serial("A1").published[1].attributes;
  devices_.SetHeld({held});
  scanner_.Set(with_serial("A1"));
  reconciler.Enqueue();
  ASSERT_TRUE(reconciler.ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1", "usb-1-2"}));
  EXPECT_TRUE(reconciler.DeviceConditions().empty());

  scanner_.Set(with_serial("B2"));  // swapped
  reconciler.Enqueue();
  ASSERT_TRUE(reconciler.ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_),
            (std::vector<std::string>{"usb-1-1", "usb-1-2 liken.sh/unplugged=device-gone:NoExecute@2023-11-14T22:13:20Z"}));
  EXPECT_EQ(client_.Object(informers::ResourceSlicePath("n1-liken.sh"))["spec"]["devices"][1]["attributes"]
                ["liken.sh/serial"]["string"],
            "A1")
      << "published as the claimed unit";
  ASSERT_EQ(reconciler.DeviceConditions().size(), 1u);
  EXPECT_EQ(reconciler.DeviceConditions()[0],
            "usb-1-2: another unit (vendor=0403 product=6001 serial=B2) in the claimed device's place (vendor=0403 "
            "product=6001 serial=A1): the claimed device is gone for its claim");

  scanner_.Set(with_serial("A1"));  // the claimed unit back
  reconciler.Enqueue();
  ASSERT_TRUE(reconciler.ProcessOneForTest());
  EXPECT_EQ(PublishedDevices(client_), (std::vector<std::string>{"usb-1-1", "usb-1-2"})) << "no taint: no eviction";
  EXPECT_TRUE(reconciler.DeviceConditions().empty());
  EXPECT_EQ(reported.size(), 2u) << "told when the lines change, not at every pass";
}

// A device flapping at 10 Hz for 20 s, passes every 100 ms (the worst the coalescer hands over): with damping and the
// write budget on, it costs a few writes; a claim sees it gone; once stable it is published again.
TEST_F(NodeReconcilerTest, AFlappingDeviceIsDampedAndTheWritesBounded) {
  for (const bool damping : {false, true}) {
    FakeKubeClient client;
    client.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u"}}}});
    RecordingDevices devices(&client);
    scanner_.Set(TwoUsbDevices());
    NodeReconcilerOptions options;
    options.node_name = "n1";
    options.flap_damping.enabled = damping;
    options.slice_write_budget.enabled = damping;
    NodeReconciler reconciler(options, &client, &clock_, &scanner_, &devices, nullptr, nullptr, shutdown_.get_token());
    reconciler.Enqueue();
    ASSERT_TRUE(reconciler.ProcessOneForTest());
    const size_t first = client.Writes().size();
    for (int i = 1; i <= 200; ++i) {
      clock_.Advance(absl::Milliseconds(100));
      scanner_.Set(i % 2 == 1 ? OnlyFirstUsbDevice() : TwoUsbDevices());
      reconciler.Enqueue();
      while (reconciler.ProcessOneForTest()) {
      }
    }
    const size_t flapping_writes = client.Writes().size() - first;
    if (!damping) {
      EXPECT_EQ(flapping_writes, 200u) << "every change is a write";
      continue;
    }
    EXPECT_LE(flapping_writes, 3u) << "at most 6 a minute while it flaps";
    EXPECT_EQ(PublishedDevices(client), (std::vector<std::string>{"usb-1-1"})) << "withheld while damped";
    EXPECT_EQ(devices.PresentDevices(), std::set<std::string>{"usb-1-1"}) << "a claim that holds it sees it gone";
    ASSERT_EQ(reconciler.DeviceConditions().size(), 1u);
    EXPECT_EQ(reconciler.DeviceConditions()[0], "usb-1-2: flapping: 200 changes in the last 60 s");
    // Stable (present) from now, and nothing else happens: the pass the damper asked for publishes it again, at most
    // a minute later, in one write.
    clock_.Advance(absl::Seconds(30));
    while (reconciler.ProcessOneForTest()) {
    }
    EXPECT_EQ(PublishedDevices(client), (std::vector<std::string>{"usb-1-1"})) << "30 s stable is not enough";
    clock_.Advance(absl::Seconds(31));
    while (reconciler.ProcessOneForTest()) {
    }
    EXPECT_EQ(PublishedDevices(client), (std::vector<std::string>{"usb-1-1", "usb-1-2"}));
    EXPECT_TRUE(reconciler.DeviceConditions().empty());
    EXPECT_LE(client.Writes().size() - first, 4u);
  }
}

}  // namespace
}  // namespace liken::controller
