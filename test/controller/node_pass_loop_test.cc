#include "controller/node_pass_loop.h"

#include "controller/slice_sync.h"

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

TEST(NodePassLoopTest, RetriesWithBackoffThenResyncsPeriodically) {
  FakeClock clock;
  FakeKubeClient client;
  client.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u"}}}});
  informers::Store cache;
  SliceSync sync("n1", "liken.sh", &client, &cache);
  WorkQueue queue(&clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30)));
  int after = 0;
  NodePassLoop loop(&queue, absl::Seconds(60), [&] {
    absl::Status status = sync.Sync(OneSlice()).status();
    ++after;
    return status;
  });
  client.PrependFailure("CREATE", informers::ResourceSlicesPath(), informers::StatusFromHttp(503, "{}"));
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(after, 1);
  EXPECT_EQ(queue.NumRequeues(NodePassLoop::kKey), 1);
  EXPECT_FALSE(loop.ProcessOneForTest()) << "the retry waits for its backoff";
  clock.Advance(absl::Milliseconds(5));
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(client.Writes().size(), 2u);
  EXPECT_EQ(queue.NumRequeues(NodePassLoop::kKey), 0) << "success forgets the failures";
  EXPECT_EQ(*queue.NextReadyTime() - clock.Now(), absl::Seconds(60)) << "the periodic resync";
  clock.Advance(absl::Seconds(60));
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(loop.passes(), 3);
}

TEST(NodePassLoopTest, InformerEventsEnqueueOneKey) {
  FakeClock clock;
  FakeKubeClient client;
  informers::Store cache;
  WorkQueue queue(&clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30)));
  NodePassLoop loop(&queue, absl::Seconds(60), [] { return absl::OkStatus(); });
  auto obj = std::make_shared<const nlohmann::json>(nlohmann::json::object());
  loop.OnAdd(obj);
  loop.OnUpdate(obj, obj);
  loop.OnDelete(obj);
  EXPECT_EQ(queue.Len(), 1u);
}

TEST(NodePassLoopTest, InvalidPoolIsNotRetriedBeforeTheResync) {
  FakeClock clock;
  FakeKubeClient client;
  client.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u"}}}});
  informers::Store cache;
  SliceSync sync("n1", "liken.sh", &client, &cache);
  apis::ResourceSlice s;
  s.metadata.name = "n1-liken.sh";
  s.pool.name = "n1";
  apis::SliceDevice d;
  d.name = "Not_A_DNS_Label";
  s.devices.push_back(d);
  WorkQueue queue(&clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30)));
  NodePassLoop loop(&queue, absl::Seconds(60), [&] { return sync.Sync({s}).status(); });
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(queue.NumRequeues(NodePassLoop::kKey), 0) << "a permanent error is not rate-limited";
  clock.Advance(absl::Seconds(30));
  EXPECT_FALSE(loop.ProcessOneForTest()) << "no retry before the resync";
  ASSERT_TRUE(queue.NextReadyTime().has_value());
  EXPECT_EQ(*queue.NextReadyTime() - clock.Now(), absl::Seconds(30));
  clock.Advance(absl::Seconds(30));
  EXPECT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(loop.passes(), 2);
}

TEST(NodePassLoopTest, IdleResyncsMakeNoApiRequest) {
  FakeClock clock;
  FakeKubeClient client;
  client.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u1"}}}});
  informers::Store cache;
  SliceSync sync("n1", "liken.sh", &client, &cache);
  WorkQueue queue(&clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30)));
  NodePassLoop loop(&queue, absl::Seconds(60), [&] { return sync.Sync(OneSlice()).status(); });
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  ASSERT_EQ(client.Object(informers::ResourceSlicePath("n1-liken.sh"))["metadata"]["ownerReferences"][0]["uid"], "u1");
  client.ClearRequests();
  for (int i = 0; i < 60; ++i) {  // an idle hour of resyncs
    clock.Advance(absl::Seconds(60));
    ASSERT_TRUE(loop.ProcessOneForTest()) << "resync " << i;
  }
  EXPECT_EQ(loop.passes(), 61);
  for (const auto& r : client.Requests()) ADD_FAILURE() << "idle request: " << r.verb << " " << r.path;
}

TEST(NodePassLoopTest, SliceDeletedBehindOurBackReadsTheNodeAgain) {
  FakeClock clock;
  FakeKubeClient client;
  client.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u1"}}}});
  informers::Store cache;
  SliceSync sync("n1", "liken.sh", &client, &cache);
  WorkQueue queue(&clock, NewExponentialRateLimiter(absl::Milliseconds(5), absl::Seconds(30)));
  NodePassLoop loop(&queue, absl::Seconds(60), [&] { return sync.Sync(OneSlice()).status(); });
  loop.Enqueue();
  ASSERT_TRUE(loop.ProcessOneForTest());
  // The Node is re-created; the garbage collector deletes the slice it no longer owns, and the cache sees it.
  client.Put(informers::NodePath("n1"), {{"metadata", {{"name", "n1"}, {"uid", "u2"}}}});
  cache.SetResourceVersion("999999");
  client.Remove(informers::ResourceSlicePath("n1-liken.sh"));
  loop.Enqueue();  // the informer's delete event
  ASSERT_TRUE(loop.ProcessOneForTest());
  EXPECT_EQ(client.Object(informers::ResourceSlicePath("n1-liken.sh"))["metadata"]["ownerReferences"][0]["uid"], "u2");
}

}  // namespace
}  // namespace liken::controller
