// The slice publishing loop end to end over HTTP: RestClient, the slice informer, SliceSync and the
// workqueue worker, as the node's reconciler wires them, against the loopback API server.
#include <gtest/gtest.h>

#include <stop_token>

#include "absl/strings/str_cat.h"
#include "controller/node_reconciler.h"
#include "test/common/fake_clock.h"
#include "test/controller/loopback_fixtures.h"
#include "test/informers/fake_api_server.h"
#include "test/informers/test_util.h"
#include "test/kubelet/fake_scanner.h"

namespace liken::controller {
namespace {

using liken::testing::DriveUntil;
using liken::testing::FakeApiServer;
using liken::testing::FakeClock;
using liken::testing::FakeScanner;
using liken::testing::LoopbackRestClient;
using liken::testing::NoClaims;
using liken::testing::WaitFor;

// `count` shareable USB devices.
discovery::Inventory Devices(int count) {
  discovery::Inventory inventory;
  for (int i = 0; i < count; ++i) {
    discovery::PublishedDevice d;
    d.name = absl::StrCat("dev-", i);
    d.attributes["liken.sh/bus"] = std::string("usb");
    d.allow_multiple_allocations = true;
    inventory.published.push_back(d);
  }
  return inventory;
}

class SlicePublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Upsert("nodes", {{"metadata", {{"name", "node-a"}, {"uid", "node-uid"}}}});
    client_ = *LoopbackRestClient(server_, &clock_);
    scanner_.Set(Devices(2));
    NodeReconcilerOptions options;
    options.node_name = "node-a";
    reconciler_ = std::make_unique<NodeReconciler>(options, client_.get(), &clock_, &scanner_, &devices_, nullptr,
                                                   nullptr, std::stop_token());
  }

  void TearDown() override { reconciler_->Stop(); }

  void Start() { ASSERT_TRUE(reconciler_->Start()); }

  nlohmann::json Slice() { return server_.Object("resourceslices", "node-a-liken.sh"); }

  FakeApiServer server_;
  FakeClock clock_;
  std::unique_ptr<informers::KubeClient> client_;
  FakeScanner scanner_;
  NoClaims devices_;
  std::unique_ptr<NodeReconciler> reconciler_;
};

TEST_F(SlicePublishTest, PublishesThenStaysQuiet) {
  // A server without DRAConsumableCapacity drops allowMultipleAllocations.
  server_.SetWriteMutator([](nlohmann::json* obj) {
    for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
  });
  Start();
  DriveUntil(&clock_, [&] { return !Slice().is_null(); }, absl::Milliseconds(10));
  // Our own write comes back through the watch and triggers passes; none of them writes again.
  DriveUntil(&clock_, [&] { return reconciler_->slices()->Size() == 1 && reconciler_->passes() >= 2; },
             absl::Milliseconds(10));
  int writes = server_.CountWrites();
  for (int i = 0; i < 5; ++i) {
    int passes = reconciler_->passes();
    reconciler_->Enqueue();
    ASSERT_TRUE(WaitFor([&] { return reconciler_->passes() != passes; })) << "pass " << i << " never ran";
  }
  EXPECT_EQ(server_.CountWrites(), writes) << "idle: zero API writes";
  EXPECT_EQ(writes, 1);
}

TEST_F(SlicePublishTest, DeletedByTheKubeletIsPublishedAgain) {
  Start();
  DriveUntil(&clock_, [&] { return !Slice().is_null(); }, absl::Milliseconds(10));
  int64_t generation = Slice()["spec"]["pool"]["generation"];
  server_.Delete("resourceslices", "node-a-liken.sh");  // the kubelet's wipe at its start
  // The watch's DELETED event enqueues a pass right away: no clock movement needed, no resync wait.
  ASSERT_TRUE(WaitFor([&] { return !Slice().is_null(); })) << "the slice was not published again";
  EXPECT_GT(Slice()["spec"]["pool"]["generation"].get<int64_t>(), generation);
}

TEST_F(SlicePublishTest, HotPlugUpdatesTheSliceWithANewGeneration) {
  Start();
  DriveUntil(&clock_, [&] { return !Slice().is_null(); }, absl::Milliseconds(10));
  scanner_.Set(Devices(3));
  reconciler_->Enqueue();  // what the uevent coalescer does
  ASSERT_TRUE(WaitFor([&] { return Slice()["spec"]["devices"].size() == 3; })) << "the hot-plug was not published";
  EXPECT_EQ(Slice()["spec"]["pool"]["generation"], 2);
}

}  // namespace
}  // namespace liken::controller
