// The slice publishing loop end to end over HTTP: RestClient, the slice informer, SliceSync and the
// workqueue worker, against the loopback API server.
#include <gtest/gtest.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "controller/slice_controller.h"
#include "informers/forwarding_handler.h"
#include "controller/slice_sync.h"
#include "controller/workqueue.h"
#include "informers/informer.h"
#include "informers/rest_client.h"
#include "test/controller/fake_clock.h"
#include "test/informers/fake_api_server.h"
#include "test/informers/test_util.h"

namespace liken::controller {
namespace {

using liken::testing::DriveUntil;
using liken::testing::FakeApiServer;
using liken::testing::FakeClock;

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

class SlicePublishTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.Upsert("nodes", {{"metadata", {{"name", "node-a"}, {"uid", "node-uid"}}}});
    informers::KubeConfig config;
    config.server = server_.url();
    config.qps = 0;
    config.max_retries = 0;
    client_ = *informers::NewRestClient(config, &clock_);
    queue_ = std::make_unique<WorkQueue>(&clock_, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(1)));
    informers::InformerOptions options;
    options.resource = "resourceslices";
    options.path = informers::ResourceSlicesPath();
    options.field_selector = "spec.nodeName=node-a,spec.driver=liken.sh";
    informer_ = std::make_unique<informers::Informer>(client_.get(), &clock_, options, &handler_);
    sync_ = std::make_unique<SliceSync>("node-a", "liken.sh", client_.get(), informer_->store(), [this] {
      return absl::StatusOr<std::vector<apis::ResourceSlice>>(Desired());
    });
    controller_ = std::make_unique<SliceController>(sync_.get(), queue_.get(), absl::Seconds(60));
    handler_.set_target(controller_.get());  // the daemon's wiring
  }

  void TearDown() override {
    controller_->Stop();
    informer_->Stop();
  }

  std::vector<apis::ResourceSlice> Desired() {
    absl::MutexLock lock(&mu_);
    apis::ResourceSlice s;
    s.metadata.name = "node-a-liken.sh";
    s.pool.name = "node-a";
    for (int i = 0; i < devices_; ++i) {
      apis::SliceDevice d;
      d.name = absl::StrCat("dev-", i);
      d.attributes["liken.sh/bus"] = std::string("usb");
      d.allow_multiple_allocations = true;
      s.devices.push_back(d);
    }
    return {s};
  }

  void Start() {
    informer_->Start();
    informer_->WaitForSync();
    controller_->Start();
  }

  nlohmann::json Slice() { return server_.Object("resourceslices", "node-a-liken.sh"); }

  FakeApiServer server_;
  FakeClock clock_;
  std::unique_ptr<informers::KubeClient> client_;
  std::unique_ptr<WorkQueue> queue_;
  informers::ForwardingHandler handler_;
  std::unique_ptr<informers::Informer> informer_;
  std::unique_ptr<SliceSync> sync_;
  std::unique_ptr<SliceController> controller_;
  absl::Mutex mu_;
  int devices_ ABSL_GUARDED_BY(mu_) = 2;
};

TEST_F(SlicePublishTest, PublishesThenStaysQuiet) {
  // A server without DRAConsumableCapacity drops allowMultipleAllocations.
  server_.SetWriteMutator([](nlohmann::json* obj) {
    for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
  });
  Start();
  DriveUntil(&clock_, [&] { return !Slice().is_null(); }, absl::Milliseconds(10));
  // Our own write comes back through the watch and triggers passes; none of them writes again.
  DriveUntil(&clock_, [&] { return informer_->store()->Size() == 1 && queue_->Len() == 0 && controller_->passes() >= 2; },
             absl::Milliseconds(10));
  int writes = server_.CountWrites();
  for (int i = 0; i < 5; ++i) {
    int passes = controller_->passes();
    queue_->Add(SliceController::kKey);
    ASSERT_TRUE(WaitFor([&] { return controller_->passes() != passes; })) << "pass " << i << " never ran";
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
  {
    absl::MutexLock lock(&mu_);
    devices_ = 3;
  }
  queue_->Add(SliceController::kKey);  // what the uevent coalescer does
  ASSERT_TRUE(WaitFor([&] { return Slice()["spec"]["devices"].size() == 3; })) << "the hot-plug was not published";
  EXPECT_EQ(Slice()["spec"]["pool"]["generation"], 2);
}

}  // namespace
}  // namespace liken::controller
