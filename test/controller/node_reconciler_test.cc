// The node pass in the order its owner runs it: scan → the inventory's holder → desired slices → writes →
// the refresh of prepared claims. Passes run on the test's thread (ProcessOneForTest); the clock is fake.
#include "controller/node_reconciler.h"

#include <stop_token>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "test/common/fake_clock.h"
#include "test/informers/fake_kube_client.h"
#include "test/kubelet/fake_scanner.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClock;
using liken::testing::FakeKubeClient;
using liken::testing::FakeScanner;

// Records what a pass asks of the kubelet side, in order, with the API writes done by then. Thread-safe.
class RecordingDevices final : public NodeDevices {
 public:
  explicit RecordingDevices(const FakeKubeClient* client) : client_(client) {}

  void UpdateInventory(const discovery::Inventory& inventory, discovery::ScanClock::time_point) override {
    Record(absl::StrCat("inventory of ", inventory.published.size()));
  }
  absl::StatusOr<int> RefreshPreparedClaims() override {
    Record("refresh");
    return 0;
  }
  // The calls so far, each with the number of API writes before it. Thread-safe.
  std::vector<std::string> calls() const {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  void Record(const std::string& call) {
    std::string entry = absl::StrCat(call, " after ", client_->Writes().size(), " writes");
    absl::MutexLock lock(&mu_);
    calls_.push_back(std::move(entry));
  }

  const FakeKubeClient* const client_;
  mutable absl::Mutex mu_;
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
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

  std::unique_ptr<NodeReconciler> NewReconciler() {
    NodeReconcilerOptions options;
    options.node_name = "n1";
    return std::make_unique<NodeReconciler>(options, &client_, &clock_, &scanner_, &devices_, nullptr, nullptr,
                                            shutdown_.get_token());
  }

  FakeClock clock_;
  FakeKubeClient client_;
  FakeScanner scanner_;
  RecordingDevices devices_{&client_};
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

}  // namespace
}  // namespace liken::controller
