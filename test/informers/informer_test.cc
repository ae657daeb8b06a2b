#include "informers/informer.h"
#include "informers/store.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>

#include "common/clock.h"
#include "informers/rest_client.h"
#include "test/common/fake_clock.h"
#include "test/informers/fake_api_server.h"
#include "test/informers/test_util.h"

namespace liken::informers {
namespace {

using liken::testing::DriveUntil;
using liken::testing::FakeApiServer;
using liken::testing::FakeClock;
using liken::testing::RecordingHandler;

nlohmann::json Pod(const std::string& name, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", {{"nodeName", node}}}};
}

class InformerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KubeConfig config;
    config.server = server_.url();
    config.qps = 0;
    config.max_retries = 0;
    auto client = NewRestClient(config, &clock_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }

  std::unique_ptr<Informer> NewPodInformer() {
    InformerOptions options;
    options.resource = "pods";
    options.path = PodsPath();
    options.field_selector = "spec.nodeName=node-a";
    return std::make_unique<Informer>(client_.get(), &clock_, options, &handler_);
  }

  FakeApiServer server_;
  FakeClock clock_;
  RecordingHandler handler_;
  std::unique_ptr<KubeClient> client_;
};

TEST_F(InformerTest, ListsThenFollowsTheWatch) {
  server_.Upsert("pods", Pod("p1", "node-a"));
  server_.Upsert("pods", Pod("other", "node-b"));
  auto informer = NewPodInformer();
  informer->Start();
  ASSERT_TRUE(informer->WaitForSync());
  EXPECT_EQ(informer->store()->Size(), 1u) << "the field selector keeps other nodes' pods out";
  server_.WaitForOpenWatches(1);
  server_.Upsert("pods", Pod("p2", "node-a"));
  handler_.WaitFor("add:default/p2");
  server_.Upsert("pods", Pod("p2", "node-a"));
  handler_.WaitFor("update:default/p2");
  server_.Delete("pods", "default/p1");
  handler_.WaitFor("delete:default/p1");
  EXPECT_EQ(informer->store()->Size(), 1u);
  EXPECT_NE(informer->store()->Get("default/p2"), nullptr);

  auto requests = server_.Requests();
  ASSERT_GE(requests.size(), 2u);
  EXPECT_EQ(requests[0].query.count("watch"), 0u);
  EXPECT_EQ(requests[0].query["fieldSelector"], "spec.nodeName=node-a");
  EXPECT_EQ(requests[1].query["watch"], "1");
  EXPECT_EQ(requests[1].query["allowWatchBookmarks"], "true");
  EXPECT_FALSE(requests[1].query["resourceVersion"].empty());
  EXPECT_FALSE(requests[1].query["timeoutSeconds"].empty());
  EXPECT_EQ(requests[0].headers["user-agent"].rfind("liken-dra/", 0), 0u) << requests[0].headers["user-agent"];
  informer->Stop();
}

TEST_F(InformerTest, ListsInPagesWithLimitAndContinue) {
  for (int i = 1; i <= 5; ++i) server_.Upsert("pods", Pod("p" + std::to_string(i), "node-a"));
  server_.Upsert("pods", Pod("other", "node-b"));
  const std::string list_version = server_.ResourceVersion();
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  options.field_selector = "spec.nodeName=node-a";
  options.list_page_size = 2;
  Informer informer(client_.get(), &clock_, options, &handler_);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync());
  EXPECT_EQ(informer.store()->Size(), 5u);
  EXPECT_EQ(informer.lists(), 1);
  std::vector<liken::testing::HttpRequest> lists;
  for (const auto& r : server_.Requests()) {
    if (r.path == PodsPath() && r.query.count("watch") == 0) lists.push_back(r);
  }
  ASSERT_EQ(lists.size(), 3u) << "5 pods in pages of 2";
  for (const auto& r : lists) EXPECT_EQ(r.query.at("limit"), "2");
  EXPECT_EQ(lists[0].query.count("continue"), 0u);
  EXPECT_FALSE(lists[1].query["continue"].empty());
  EXPECT_NE(lists[1].query["continue"], lists[2].query["continue"]);
  // The watch starts at the list's resourceVersion and follows from there.
  server_.WaitForOpenWatches(1);
  auto requests = server_.Requests();
  EXPECT_EQ(requests.back().query["resourceVersion"], list_version);
  server_.Upsert("pods", Pod("p6", "node-a"));
  handler_.WaitFor("add:default/p6");
  for (int i = 1; i <= 5; ++i) EXPECT_TRUE(handler_.Has("add:default/p" + std::to_string(i))) << i;
  informer.Stop();
}

TEST_F(InformerTest, AnExpiredContinueTokenListsAgainFromTheStart) {
  for (int i = 1; i <= 5; ++i) server_.Upsert("pods", Pod("p" + std::to_string(i), "node-a"));
  auto expired = std::make_shared<std::atomic<int>>(0);  // outlives the test: a late request may still come in
  server_.SetInterceptor([expired](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("continue") == 0 || ++*expired > 1) return false;
    out.Respond(410, R"({"kind":"Status","code":410,"reason":"Expired","message":"continue parameter is too old"})");
    return true;
  });
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  options.list_page_size = 2;
  Informer informer(client_.get(), &clock_, options, &handler_);
  informer.Start();
  DriveUntil(&clock_, [&] { return informer.lists() >= 1; });
  EXPECT_EQ(informer.store()->Size(), 5u);
  int first_pages = 0;
  for (const auto& r : server_.Requests()) {
    if (r.path == PodsPath() && r.query.count("watch") == 0 && r.query.count("continue") == 0) ++first_pages;
  }
  EXPECT_EQ(first_pages, 2) << "the list started again from its first page";
  informer.Stop();
}

TEST_F(InformerTest, BrokenStreamResumesFromTheBookmark) {
  auto informer = NewPodInformer();
  informer->Start();
  server_.WaitForOpenWatches(1);
  server_.Upsert("pods", Pod("elsewhere", "node-b"));  // moves the resourceVersion, not sent to us
  server_.SendBookmark();
  std::string bookmark = server_.ResourceVersion();
  DriveUntil(&clock_, [&] { return informer->store()->ResourceVersion() == bookmark; });
  server_.BreakWatches();
  DriveUntil(&clock_, [&] { return server_.CountRequests(PodsPath(), /*watch=*/true) >= 2; });
  auto requests = server_.Requests();
  EXPECT_EQ(requests.back().query["resourceVersion"], bookmark);
  EXPECT_EQ(server_.CountRequests(PodsPath(), false), 1) << "no relist for a broken stream";
  EXPECT_EQ(informer->lists(), 1);
  informer->Stop();
}

TEST_F(InformerTest, EventsDuringADisconnectAreNotLost) {
  auto informer = NewPodInformer();
  informer->Start();
  server_.WaitForOpenWatches(1);
  server_.BreakWatches();
  server_.Upsert("pods", Pod("while-away", "node-a"));
  // Replayed from the watch's resourceVersion once the informer reconnects (after its backoff).
  DriveUntil(&clock_, [&] { return handler_.Has("add:default/while-away"); });
  informer->Stop();
}

TEST_F(InformerTest, GoneInTheStreamRelists) {
  server_.Upsert("pods", Pod("p1", "node-a"));
  auto informer = NewPodInformer();
  informer->Start();
  server_.WaitForOpenWatches(1);
  server_.BreakWatches();
  server_.Delete("pods", "default/p1");  // the deletion falls into the compacted history
  server_.Upsert("pods", Pod("p2", "node-a"));
  server_.Compact();
  DriveUntil(&clock_, [&] { return server_.CountRequests(PodsPath(), false) >= 2; });
  handler_.WaitFor("delete:default/p1");  // noticed by the relist
  handler_.WaitFor("add:default/p2");
  EXPECT_EQ(informer->store()->Size(), 1u);
  informer->Stop();
}

TEST_F(InformerTest, GoneAsHttpStatusRelists) {
  auto watches = std::make_shared<std::atomic<int>>(0);  // outlives the test: a late request may still come in
  server_.SetInterceptor([watches](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("watch") == 0 || ++*watches > 1) return false;
    out.Respond(410, R"({"kind":"Status","code":410,"reason":"Gone","message":"too old"})");
    return true;
  });
  auto informer = NewPodInformer();
  informer->Start();
  DriveUntil(&clock_, [&] { return informer->lists() >= 2; });
  EXPECT_EQ(server_.CountRequests(PodsPath(), false), 2);
  informer->Stop();
}

TEST_F(InformerTest, GoneOnEveryWatchBacksOffInsteadOfSpinning) {
  server_.SetInterceptor([&](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("watch") == 0) return false;
    out.Respond(410, R"({"kind":"Status","code":410,"reason":"Gone","message":"too old"})");
    return true;
  });
  auto informer = NewPodInformer();  // backoff 500ms doubling, jitter x[1, 1.5)
  informer->Start();
  // Waits (wall clock, bounded) until the informer parks on the fake clock.
  auto parked = [&] {
    const absl::Time deadline = absl::Now() + absl::Seconds(5);
    while (clock_.waiters() == 0) {
      if (absl::Now() >= deadline) return false;
      std::this_thread::yield();
    }
    return true;
  };
  ASSERT_TRUE(parked()) << "LIST+WATCH spins without waiting; lists so far: " << informer->lists();
  EXPECT_EQ(informer->lists(), 1);
  // 10s of fake time: waits of 0.5-0.75, 1-1.5, 2-3, 4-6, 8-12s fit at most 5 relists (a spin: thousands).
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(parked());
    clock_.Advance(absl::Milliseconds(100));
    absl::SleepFor(absl::Milliseconds(5));  // lets a woken informer relist and park again
  }
  ASSERT_TRUE(parked());
  EXPECT_GE(informer->lists(), 2);
  EXPECT_LE(informer->lists(), 6);
  informer->Stop();
}

TEST_F(InformerTest, ServerErrorsBackOffAndRecover) {
  auto lists = std::make_shared<std::atomic<int>>(0);  // outlives the test: a late request may still come in
  server_.SetInterceptor([lists](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("watch") > 0 || ++*lists > 2) return false;
    out.Respond(500, R"({"kind":"Status","code":500,"message":"etcd is sad"})");
    return true;
  });
  auto informer = NewPodInformer();
  informer->Start();
  // The informer waits on the clock between tries; nothing is retried until time passes.
  while (clock_.waiters() == 0) std::this_thread::yield();
  EXPECT_EQ(server_.CountRequests(PodsPath(), false), 1);
  DriveUntil(&clock_, [&] { return informer->HasSynced(); });
  EXPECT_EQ(server_.CountRequests(PodsPath(), false), 3);
  informer->Stop();
}

TEST_F(InformerTest, StreamsEndingAtOnceDoNotSpin) {
  server_.SetInterceptor([&](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("watch") == 0) return false;
    out.StartStream();
    out.EndStream();
    return true;
  });
  auto informer = NewPodInformer();
  informer->Start();
  while (clock_.waiters() == 0) std::this_thread::yield();
  EXPECT_EQ(server_.CountRequests(PodsPath(), true), 1) << "waits before watching again";
  clock_.Advance(absl::Minutes(1));
  server_.WaitForRequests(PodsPath(), true, 2);
  informer->Stop();
}

TEST_F(InformerTest, StopEndsAnOpenWatch) {
  auto informer = NewPodInformer();
  informer->Start();
  server_.WaitForOpenWatches(1);
  informer->Stop();  // must not hang on the open stream
  server_.WaitForOpenWatches(0);
}

// A client of its own, with `config` on top of the fixture's server.
std::unique_ptr<KubeClient> ClientFor(const FakeApiServer& server, FakeClock* clock, KubeConfig config) {
  config.server = server.url();
  auto client = NewRestClient(config, clock);
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

TEST_F(InformerTest, StopEndsAListThatIsNeverAnswered) {
  server_.SetInterceptor(FakeApiServer::NeverAnswer());
  KubeConfig config;
  config.request_timeout = absl::Hours(1);  // nothing but Stop ends the list
  auto client = ClientFor(server_, &clock_, config);
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  Informer informer(client.get(), &clock_, options, &handler_);
  informer.Start();
  server_.WaitForRequests(PodsPath(), false, 1);
  informer.Stop();  // must not wait for an answer
  EXPECT_FALSE(informer.HasSynced());
}

TEST_F(InformerTest, StopEndsTheClientsRetryBackoffOfAList) {
  server_.SetInterceptor([](const liken::testing::HttpRequest&, liken::testing::HttpResponder& out) {
    out.Respond(503, R"({"kind":"Status","code":503,"message":"not ready"})");
    return true;
  });
  KubeConfig config;
  config.max_retries = 5;  // the client backs off between tries on the fake clock, which never moves
  auto client = ClientFor(server_, &clock_, config);
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  Informer informer(client.get(), &clock_, options, &handler_);
  informer.Start();
  server_.WaitForRequests(PodsPath(), false, 1);
  while (clock_.waiters() == 0) std::this_thread::yield();
  informer.Stop();
  EXPECT_EQ(server_.CountRequests(PodsPath(), false), 1);
}

class RestartCounter : public InformerObserver {
 public:
  void OnWatchRestart(const std::string&, const std::string& reason) override {
    absl::MutexLock lock(&mu_);
    reasons_.push_back(reason);
  }
  size_t count() {
    absl::MutexLock lock(&mu_);
    return reasons_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<std::string> reasons_ ABSL_GUARDED_BY(mu_);
};

class EventCounter : public InformerObserver {
 public:
  void OnWatchRestart(const std::string&, const std::string&) override {}
  void OnWatchEvent(const std::string& resource, const std::string& type) override {
    absl::MutexLock lock(&mu_);
    ++counts_[resource + " " + type];
  }
  int count(const std::string& key) {
    absl::MutexLock lock(&mu_);
    return counts_[key];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int> counts_ ABSL_GUARDED_BY(mu_);
};

TEST_F(InformerTest, WatchEventsAreCountedByResourceAndType) {
  EventCounter events;
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  options.field_selector = "spec.nodeName=node-a";
  Informer informer(client_.get(), &clock_, options, &handler_, &events);
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync());
  server_.WaitForOpenWatches(1);
  server_.Upsert("pods", Pod("p1", "node-a"));
  handler_.WaitFor("add:default/p1");
  server_.Upsert("pods", Pod("p1", "node-a"));
  handler_.WaitFor("update:default/p1");
  server_.Delete("pods", "default/p1");
  handler_.WaitFor("delete:default/p1");
  informer.Stop();
  EXPECT_EQ(events.count("pods ADDED"), 1);
  EXPECT_EQ(events.count("pods MODIFIED"), 1);
  EXPECT_EQ(events.count("pods DELETED"), 1);
}

TEST_F(InformerTest, AnEndlessWatchLineRelistsAfterABackoffWithBoundedMemory) {
  auto endless = FakeApiServer::EndlessWatchLine();
  auto watches = std::make_shared<std::atomic<int>>(0);  // outlives the test: a late request may still come in
  server_.SetInterceptor([watches, endless](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("watch") == 0 || ++*watches > 1) return false;
    return endless(req, out);
  });
  KubeConfig config;
  config.qps = 0;
  config.max_watch_event_bytes = 256 * 1024;
  auto client = ClientFor(server_, &clock_, config);
  RestartCounter restarts;
  InformerOptions options;
  options.resource = "pods";
  options.path = PodsPath();
  options.field_selector = "spec.nodeName=node-a";
  Informer informer(client.get(), &clock_, options, &handler_, &restarts);
  informer.Start();
  // The over-long line ends the watch; the informer waits out a backoff (nothing happens until the clock
  // moves), then lists again and watches normally.
  while (clock_.waiters() == 0) std::this_thread::yield();
  EXPECT_EQ(informer.lists(), 1);
  EXPECT_EQ(restarts.count(), 1u);
  DriveUntil(&clock_, [&] { return informer.lists() >= 2; });
  server_.WaitForOpenWatches(1);
  server_.Upsert("pods", Pod("after", "node-a"));
  handler_.WaitFor("add:default/after");
  informer.Stop();
}

TEST_F(InformerTest, MalformedEventsAreSkippedNotFatal) {
  auto watches = std::make_shared<std::atomic<int>>(0);  // outlives the test: a late request may still come in
  server_.SetInterceptor([watches](const liken::testing::HttpRequest& req, liken::testing::HttpResponder& out) {
    if (req.query.count("watch") == 0 || ++*watches > 1) return false;
    out.StartStream();
    out.SendLine(R"({"type":"ADDED","object":{"metadata":{}}})");  // no name
    out.SendLine("this is not json");
    out.EndStream();
    return true;
  });
  auto informer = NewPodInformer();
  informer->Start();
  DriveUntil(&clock_, [&] { return server_.CountRequests(PodsPath(), true) >= 2; });
  server_.WaitForOpenWatches(1);
  server_.Upsert("pods", Pod("fine", "node-a"));
  handler_.WaitFor("add:default/fine");
  informer->Stop();
}

}  // namespace
}  // namespace liken::informers

namespace liken::informers {
namespace {

TEST(StripManagedFieldsTest, DropsOnlyTheFieldOwnership) {
  nlohmann::json slice = {{"metadata",
                           {{"name", "n-liken.sh"},
                            {"resourceVersion", "7"},
                            {"managedFields", {{{"manager", "liken.sh"}, {"fieldsV1", {{"f:spec", nlohmann::json::object()}}}}}}}},
                          {"spec", {{"devices", nlohmann::json::array({{{"name", "d"}}})}}}};
  StripManagedFields(&slice);
  EXPECT_EQ(slice, (nlohmann::json{{"metadata", {{"name", "n-liken.sh"}, {"resourceVersion", "7"}}},
                                   {"spec", {{"devices", nlohmann::json::array({{{"name", "d"}}})}}}}));
  nlohmann::json odd = nlohmann::json::array();
  StripManagedFields(&odd);  // not an object: left alone
  EXPECT_EQ(odd, nlohmann::json::array());
  nlohmann::json no_meta = {{"metadata", "x"}};
  StripManagedFields(&no_meta);
  EXPECT_EQ(no_meta, (nlohmann::json{{"metadata", "x"}}));
}

}  // namespace
}  // namespace liken::informers
