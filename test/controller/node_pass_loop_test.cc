#include "controller/node_pass_loop.h"

#include "controller/slice_sync.h"

#include <string>

#include <gtest/gtest.h>

#include "test/common/fake_clock.h"
#include "test/informers/fake_kube_client.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClock;
using liken::testing::FakeKubeClient;

// The desired state of node n1: one empty slice.
std::vector<apis::ResourceSlice> OneSlice() {
  apis::ResourceSlice s;
  s.metadata.name = "n1-liken.sh";
  s.pool.name = "n1";
  return std::vector<apis::ResourceSlice>{s};
}

// A fake API client, the slice sync of node n1 through it, and a work queue with the daemon's rate limits.
class NodePassLoopTest : public ::testing::Test {
 protected:
  // Stores node n1 with `uid`.
  void PutNode(const std::string& uid) {
    client_.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", uid}}}});
  }

  FakeClock clock_;
  FakeKubeClient client_;
  informers::Store cache_;
  SliceSync sync_{"n1", "liken.sh", &client_, &cache_};
  WorkQueue queue_{&clock_, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30))};
};

TEST_F(NodePassLoopTest, RetriesWithBackoffThenResyncsPeriodically) {
  PutNode("u");
  int after = 0;
  NodePassLoop loop(&queue_, absl::Seconds(60), [&] {
    absl::Status status = sync_.Sync(OneSlice()).status();
    ++after;
    return status;
  });
  client_.PrependFailure("CREATE", informers::ResourceSlicesPath(), informers::StatusFromHttp(503, "{}"));
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(after, 1);
  EXPECT_EQ(queue_.NumRequeues(NodePassLoop::kKey), 1);
  EXPECT_FALSE(loop.ProcessOneForTest()) << "the retry waits for its backoff";
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(client_.Writes().size(), 2u);
  EXPECT_EQ(queue_.NumRequeues(NodePassLoop::kKey), 0) << "success forgets the failures";
  EXPECT_EQ(*queue_.NextReadyTime() - clock_.Now(), absl::Seconds(60)) << "the periodic resync";
  clock_.Advance(absl::Seconds(60));
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(loop.passes(), 3);
}

TEST_F(NodePassLoopTest, InformerEventsEnqueueOneKey) {
  NodePassLoop loop(&queue_, absl::Seconds(60), [] { return absl::OkStatus(); });
  auto obj = std::make_shared<const nlohmann::json>(nlohmann::json::object());
  loop.OnAdd(obj);
  loop.OnUpdate(obj, obj);
  loop.OnDelete(obj);
  EXPECT_EQ(queue_.Len(), 1u);
}

TEST_F(NodePassLoopTest, InvalidPoolIsNotRetriedBeforeTheResync) {
  PutNode("u");
  apis::ResourceSlice s;
  s.metadata.name = "n1-liken.sh";
  s.pool.name = "n1";
  apis::SliceDevice d;
  d.name = "Not_A_DNS_Label";
  s.devices.push_back(d);
  NodePassLoop loop(&queue_, absl::Seconds(60), [&] { return sync_.Sync({s}).status(); });
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(queue_.NumRequeues(NodePassLoop::kKey), 0) << "a permanent error is not rate-limited";
  clock_.Advance(absl::Seconds(30));
  EXPECT_FALSE(loop.ProcessOneForTest()) << "no retry before the resync";
  ASSERT_TRUE(queue_.NextReadyTime().has_value());
  EXPECT_EQ(*queue_.NextReadyTime() - clock_.Now(), absl::Seconds(30));
  clock_.Advance(absl::Seconds(30));
  EXPECT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(loop.passes(), 2);
}

// A write the API server refuses (422) is retried with backoff, not left until the resync: the pool is incomplete
// until it is written. (The earlier loop took every InvalidArgument as permanent and waited for the resync.)
TEST_F(NodePassLoopTest, ServerRefusalIsRetriedWithBackoff) {
  PutNode("u");
  NodePassLoop loop(&queue_, absl::Seconds(60), [&] { return sync_.Sync(OneSlice()).status(); });
  client_.PrependFailure("CREATE", informers::ResourceSlicesPath(),
                         informers::StatusFromHttp(422, R"({"reason":"Invalid","message":"must have at most 64 items"})"));
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(queue_.NumRequeues(NodePassLoop::kKey), 1) << "rate-limited, as any failure that may heal";
  clock_.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(loop.ProcessOneForTest()) << "retried after its backoff";
  EXPECT_FALSE(client_.Object(informers::ResourceSlicePath("n1-liken.sh")).is_null());
}

TEST_F(NodePassLoopTest, EnqueueAfterAsksForAPassAtThatTime) {
  NodePassLoop loop(&queue_, absl::Seconds(60), [] { return absl::OkStatus(); });
  loop.EnqueueAfter(absl::Seconds(3));
  EXPECT_FALSE(loop.ProcessOneForTest());
  clock_.Advance(absl::Seconds(3));
  EXPECT_TRUE(loop.ProcessOneForTest());
}

TEST_F(NodePassLoopTest, IdleResyncsMakeNoApiRequest) {
  PutNode("u1");
  NodePassLoop loop(&queue_, absl::Seconds(60), [&] { return sync_.Sync(OneSlice()).status(); });
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  ASSERT_EQ(client_.Object(informers::ResourceSlicePath("n1-liken.sh"))["metadata"]["ownerReferences"][0]["uid"], "u1");
  client_.ClearRequests();
  for (int i = 0; i < 60; ++i) {  // an idle hour of resyncs
    clock_.Advance(absl::Seconds(60));
    ASSERT_TRUE(loop.ProcessOneForTest()) << "resync " << i;
  }
  EXPECT_EQ(loop.passes(), 61);
  for (const auto& r : client_.Requests()) ADD_FAILURE() << "idle request: " << r.verb << " " << r.path;
}

TEST_F(NodePassLoopTest, SliceDeletedBehindOurBackReadsTheNodeAgain) {
  PutNode("u1");
  NodePassLoop loop(&queue_, absl::Seconds(60), [&] { return sync_.Sync(OneSlice()).status(); });
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  // The Node is re-created; the garbage collector deletes the slice it no longer owns, and the cache sees it.
  PutNode("u2");
  cache_.SetResourceVersion("999999");
  client_.Remove(informers::ResourceSlicePath("n1-liken.sh"));
  loop.Enqueue();  // the informer's delete event
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(client_.Object(informers::ResourceSlicePath("n1-liken.sh"))["metadata"]["ownerReferences"][0]["uid"], "u2");
}

}  // namespace
}  // namespace liken::controller
