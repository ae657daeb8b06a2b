#include "informers/claim_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "informers/rest_client.h"
#include "test/common/fake_clock.h"
#include "test/informers/fake_api_server.h"
#include "test/informers/test_util.h"

namespace liken::informers {
namespace {

using liken::testing::DriveUntil;
using liken::testing::FakeApiServer;
using liken::testing::FakeClock;
using liken::testing::HttpRequest;
using liken::testing::HttpResponder;

nlohmann::json PodWithClaims(const std::string& name, const std::string& node, const std::string& spec_claim,
                             const std::string& status_claim = "") {
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", name}, {"namespace", "ns1"}}},
                        {"spec", {{"nodeName", node}, {"resourceClaims", nlohmann::json::array()}}}};
  if (!spec_claim.empty()) pod["spec"]["resourceClaims"].push_back({{"name", "gpu"}, {"resourceClaimName", spec_claim}});
  if (!status_claim.empty()) {
    pod["spec"]["resourceClaims"].push_back({{"name", "tmpl"}, {"resourceClaimTemplateName", "t"}});
    pod["status"]["resourceClaimStatuses"] = {{{"name", "tmpl"}, {"resourceClaimName", status_claim}}};
  }
  return pod;
}

nlohmann::json Claim(const std::string& name, const std::string& note = "") {
  nlohmann::json claim = nlohmann::json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
      "metadata": {"namespace": "ns1"}, "spec": {},
      "status": {"allocation": {"devices": {"results": [
          {"request": "gpu", "driver": "liken.sh", "pool": "node-a", "device": "d1"}]}}}})");
  claim["metadata"]["name"] = name;
  claim["metadata"]["annotations"] = {{"note", note}};
  return claim;
}

// A pod that asks for extended resources only; the scheduler named its claim in the pod's status.
nlohmann::json PodWithExtendedResourceClaim(const std::string& name, const std::string& node,
                                            const std::string& claim) {
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", name}, {"namespace", "ns1"}}},
                        {"spec", {{"nodeName", node}}}};
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", claim},
      {"requestMappings",
       {{{"containerName", "app"}, {"resourceName", "squat.ai/serial"}, {"requestName", "container-0-request-0"}}}}};
  return pod;
}

TEST(ClaimKeysOfPodTest, ReadsTheExtendedResourceClaimOfTheStatus) {
  EXPECT_EQ(ClaimKeysOfPod(PodWithExtendedResourceClaim("p", "n", "p-extended-resources-x7k")),
            (std::vector<std::string>{"ns1/p-extended-resources-x7k"}));
  auto both = PodWithClaims("p", "n", "direct");
  both["status"]["extendedResourceClaimStatus"] = {{"resourceClaimName", "ext"}};
  EXPECT_EQ(ClaimKeysOfPod(both), (std::vector<std::string>{"ns1/direct", "ns1/ext"}));
  for (const char* junk : {R"({"resourceClaimName": 5})", R"([{"resourceClaimName": "a"}])", R"("x")", "{}"}) {
    nlohmann::json pod = PodWithClaims("p", "n", "");
    pod["status"]["extendedResourceClaimStatus"] = nlohmann::json::parse(junk);
    EXPECT_TRUE(ClaimKeysOfPod(pod).empty()) << junk;
  }
}

TEST(ClaimKeysOfPodTest, ReadsSpecAndStatusAndSkipsJunk) {
  auto pod = PodWithClaims("p", "n", "direct", "generated");
  EXPECT_EQ(ClaimKeysOfPod(pod), (std::vector<std::string>{"ns1/direct", "ns1/generated"}));
  EXPECT_TRUE(ClaimKeysOfPod(nlohmann::json::parse(R"({"metadata":{"namespace":"x"},"spec":{"resourceClaims":7}})")).empty());
  EXPECT_TRUE(ClaimKeysOfPod(nlohmann::json::parse(R"([1,2])")).empty());
  EXPECT_TRUE(ClaimKeysOfPod(nlohmann::json::parse(
      R"({"metadata":{"namespace":"x"},"spec":{"resourceClaims":[{"resourceClaimName":5},"str"]}})")).empty());
}

// Counts the claim cache's GET fallbacks.
class FallbackCounter : public InformerObserver {
 public:
  void OnWatchRestart(const std::string&, const std::string&) override {}
  void OnClaimGetFallback() override { ++fallbacks; }
  std::atomic<int> fallbacks{0};
};

class ClaimCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    KubeConfig config;
    config.server = server_.url();
    config.qps = 0;
    config.max_retries = 0;
    auto client = NewRestClient(config, &clock_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    cache_ = std::make_unique<ClaimCache>(client_.get(), &clock_, "node-a", &observer_);
  }

  bool Cached(const std::string& key) {
    auto keys = cache_->CachedKeys();
    return std::find(keys.begin(), keys.end(), key) != keys.end();
  }

  FakeApiServer server_;
  FakeClock clock_;
  FallbackCounter observer_;
  std::unique_ptr<KubeClient> client_;
  std::unique_ptr<ClaimCache> cache_;
};

TEST_F(ClaimCacheTest, FetchesClaimsOfThisNodesPodsAndServesThemFromTheCache) {
  server_.Upsert("resourceclaims", Claim("c-direct"));
  server_.Upsert("resourceclaims", Claim("c-generated"));
  server_.Upsert("resourceclaims", Claim("c-elsewhere"));
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "c-direct", "c-generated"));
  server_.Upsert("pods", PodWithClaims("p2", "node-b", "c-elsewhere"));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  DriveUntil(&clock_, [&] { return Cached("ns1/c-direct") && Cached("ns1/c-generated"); });
  EXPECT_FALSE(Cached("ns1/c-elsewhere"));
  const std::string path = ResourceClaimPath("ns1", "c-direct");
  int gets = server_.CountRequests(path, false);
  auto claim = cache_->Get("ns1", "c-direct", "");
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(claim->metadata.name, "c-direct");
  EXPECT_TRUE(claim->allocated);
  EXPECT_EQ(server_.CountRequests(path, false), gets) << "served from the cache";
  EXPECT_EQ(observer_.fallbacks, 0) << "a cache hit is no fallback";
  cache_->Stop();
}

// The scheduler's claim for a pod's extended resources is followed like any other: prepare reads it from the
// cache (no request, no fallback), and it goes when the pod goes.
TEST_F(ClaimCacheTest, FollowsTheExtendedResourceClaimOfThisNodesPods) {
  nlohmann::json claim = Claim("p1-extended-resources-x7k");
  claim["metadata"]["annotations"] = {{"resource.kubernetes.io/extended-resource-claim", "true"}};
  server_.Upsert("resourceclaims", claim);
  server_.Upsert("resourceclaims", Claim("p2-extended-resources-q2w"));
  server_.Upsert("pods", PodWithExtendedResourceClaim("p1", "node-a", "p1-extended-resources-x7k"));
  server_.Upsert("pods", PodWithExtendedResourceClaim("p2", "node-b", "p2-extended-resources-q2w"));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  DriveUntil(&clock_, [&] { return Cached("ns1/p1-extended-resources-x7k"); });
  EXPECT_FALSE(Cached("ns1/p2-extended-resources-q2w")) << "another node's pod";
  const std::string path = ResourceClaimPath("ns1", "p1-extended-resources-x7k");
  const int gets = server_.CountRequests(path, false);
  auto got = cache_->Get("ns1", "p1-extended-resources-x7k", "");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->extended_resource_claim);
  EXPECT_FALSE(got->pod_claim_name.has_value());
  EXPECT_EQ(server_.CountRequests(path, false), gets) << "served from the cache";
  EXPECT_EQ(observer_.fallbacks, 0);
  server_.Delete("pods", "ns1/p1");
  DriveUntil(&clock_, [&] { return !Cached("ns1/p1-extended-resources-x7k"); });
  cache_->Stop();
}

// The slim cached claim keeps what readers need of its metadata: the pod's name for a template claim.
TEST_F(ClaimCacheTest, ATemplateClaimKeepsThePodsNameForItInTheCacheAndWithout) {
  nlohmann::json claim = Claim("p1-gpu-7f2kq");
  claim["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", "gpu"}};
  server_.Upsert("resourceclaims", claim);
  nlohmann::json other = Claim("p9-gpu-a1b2c");
  other["metadata"]["annotations"] = {{"resource.kubernetes.io/pod-claim-name", "tmpl"}};
  server_.Upsert("resourceclaims", other);
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "", "p1-gpu-7f2kq"));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  DriveUntil(&clock_, [&] { return Cached("ns1/p1-gpu-7f2kq"); });
  auto cached = cache_->GetCached("ns1", "p1-gpu-7f2kq", "");
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_TRUE(cached->metadata.raw.empty()) << "the cache keeps the slim form";
  EXPECT_EQ(cached->pod_claim_name, std::optional<std::string>("gpu"));
  // Without the cache (no pod here names it): one GET, the same field.
  auto read = cache_->Get("ns1", "p9-gpu-a1b2c", "");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(observer_.fallbacks, 1);
  EXPECT_EQ(read->pod_claim_name, std::optional<std::string>("tmpl"));
  cache_->Stop();
}

// Holds the first GET of one claim (the cache worker's fetch) until released; later GETs are served at once.
class HeldFetch {
 public:
  explicit HeldFetch(std::string path) : path_(std::move(path)) {}
  FakeApiServer::Interceptor Interceptor() {
    return [this](const HttpRequest& req, HttpResponder&) {
      if (req.method != "GET" || req.path != path_ || req.query.count("watch") > 0 || held_.exchange(true)) {
        return false;
      }
      entered_.Notify();
      release_.WaitForNotification();
      return false;  // then answered as usual
    };
  }
  absl::Notification& entered() { return entered_; }
  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }

 private:
  const std::string path_;
  std::atomic<bool> held_{false};
  absl::Notification entered_, release_;
};

// A claim read on its own thread, as the kubelet's prepare reads it.
class BackgroundGet {
 public:
  BackgroundGet(ClaimCache* cache, const std::string& name)
      : thread_([this, cache, name] {
          got_ = cache->Get("ns1", name, "");
          done_ = true;
        }) {}
  ~BackgroundGet() { Join(); }
  bool done() const { return done_.load(); }
  // Waits for the read and returns its result.
  const absl::StatusOr<apis::ResourceClaim>& Join() {
    if (thread_.joinable()) thread_.join();
    return got_;
  }

 private:
  std::atomic<bool> done_{false};
  absl::StatusOr<apis::ResourceClaim> got_ = absl::UnknownError("not read");
  std::thread thread_;  // last: starts once the fields above exist
};

class ClaimCacheFetchRaceTest : public ClaimCacheTest {
 protected:
  // Publishes `claim`, binds pod `pod` naming it to this node, and returns once the cache's fetch of the claim
  // reached the server, where `fetch` holds it. The cache must be started.
  void BindAndHoldTheFetch(HeldFetch* fetch, const std::string& pod, const std::string& claim) {
    server_.Upsert("resourceclaims", Claim(claim));
    server_.SetInterceptor(fetch->Interceptor());
    server_.Upsert("pods", PodWithClaims(pod, "node-a", claim));
    fetch->entered().WaitForNotification();
  }
  void TearDown() override { server_.SetInterceptor(nullptr); }
};

// The race of pods started together: the kubelet's prepare asks for a claim after the pod event reached the cache
// but before the worker's fetch of the claim answered. The prepare waits for that fetch instead of reading the
// claim a second time: no fallback GET. (With the wait off, as the cache was before, the prepare reads the claim.)
TEST_F(ClaimCacheFetchRaceTest, APrepareBetweenThePodEventAndTheClaimsFetchWaitsForTheFetch) {
  const std::string path = ResourceClaimPath("ns1", "c1");
  HeldFetch fetch(path);
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  BindAndHoldTheFetch(&fetch, "p1", "c1");  // bound to this node: the worker fetches c1, held unanswered
  const int clock_waiters = clock_.waiters();
  BackgroundGet prepare(cache_.get(), "c1");
  // Until the prepare either waits (on the clock, for the fetch) or reads the claim itself.
  while (!prepare.done() && clock_.waiters() <= clock_waiters && server_.CountRequests(path, false) < 2) {
    std::this_thread::yield();
  }
  fetch.Release();
  const auto& got = prepare.Join();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->metadata.name, "c1");
  EXPECT_EQ(observer_.fallbacks, 0) << "the prepare read the claim instead of waiting for the cache's fetch";
  EXPECT_EQ(server_.CountRequests(path, false), 1);
  cache_->Stop();
}

// The wait is bounded (a fetch that never answers costs one GET after the bound, on the clock) and ends at once
// when the cache stops.
TEST_F(ClaimCacheFetchRaceTest, TheWaitForAFetchIsBoundedAndEndsWhenTheCacheStops) {
  HeldFetch fetch(ResourceClaimPath("ns1", "c1"));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  BindAndHoldTheFetch(&fetch, "p1", "c1");
  {
    BackgroundGet prepare(cache_.get(), "c1");
    DriveUntil(&clock_, [&] { return prepare.done(); }, ClaimCache::kDefaultFetchWait / 4);
    const auto& got = prepare.Join();
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(observer_.fallbacks, 1) << "after the bound the claim is read";
  }

  // A second claim of the pod whose fetch is held too: stopping the cache ends the wait with Cancelled.
  HeldFetch fetch2(ResourceClaimPath("ns1", "c2"));
  fetch.Release();
  BindAndHoldTheFetch(&fetch2, "p2", "c2");
  const int clock_waiters = clock_.waiters();
  BackgroundGet prepare2(cache_.get(), "c2");
  while (!prepare2.done() && clock_.waiters() <= clock_waiters) std::this_thread::yield();
  std::thread stopper([&] { cache_->Stop(); });  // waits for the held fetch, after waking the prepare
  const auto& got2 = prepare2.Join();
  fetch2.Release();
  stopper.join();
  EXPECT_EQ(got2.status().code(), absl::StatusCode::kCancelled) << got2.status();
  EXPECT_EQ(observer_.fallbacks, 1);
}

// A pod names a claim the server does not have: the worker's fetch found nothing (NotFound) and nothing is queued.
// A prepare then reads the server at once instead of waiting out the fetch bound for a fetch that will not come
// (before, it waited the whole bound: the cache had no copy, read as "the pod's event is being handled").
TEST_F(ClaimCacheTest, AClaimWhoseFetchFoundNothingIsReadAtOnce) {
  server_.Upsert("resourceclaims", Claim("present"));
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "missing"));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  // One worker takes keys in order: once the later pod's claim is cached, the fetch of "missing" has ended.
  server_.Upsert("pods", PodWithClaims("p2", "node-a", "present"));
  DriveUntil(&clock_, [&] { return Cached("ns1/present"); });
  const std::string path = ResourceClaimPath("ns1", "missing");
  ASSERT_EQ(server_.CountRequests(path, false), 1) << "the worker fetched it once";
  const int clock_waiters = clock_.waiters();
  BackgroundGet prepare(cache_.get(), "missing");
  // Until the prepare either answers or waits on the clock.
  while (!prepare.done() && clock_.waiters() <= clock_waiters) std::this_thread::yield();
  const bool answered_without_waiting = prepare.done();
  if (!answered_without_waiting) clock_.Advance(ClaimCache::kDefaultFetchWait);  // lets today's wait end
  const auto& got = prepare.Join();
  EXPECT_TRUE(answered_without_waiting) << "the prepare waited for a fetch that nothing had queued";
  EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << got.status();
  EXPECT_EQ(observer_.fallbacks, 1);
  EXPECT_EQ(server_.CountRequests(path, false), 2);
  // The claim appears and a pod update queues its fetch again: a prepare then waits for that fetch, as before.
  server_.Upsert("resourceclaims", Claim("missing"));
  server_.Upsert("pods", PodWithClaims("p3", "node-a", "missing"));
  DriveUntil(&clock_, [&] { return Cached("ns1/missing"); });
  auto again = cache_->Get("ns1", "missing", "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(observer_.fallbacks, 1) << "served from the cache";
  cache_->Stop();
}

TEST_F(ClaimCacheTest, MissFallsBackToOneGet) {
  server_.Upsert("resourceclaims", Claim("late"));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  auto claim = cache_->Get("ns1", "late", "");
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_EQ(server_.CountRequests(ResourceClaimPath("ns1", "late"), false), 1);
  EXPECT_FALSE(Cached("ns1/late")) << "no pod here names it: not kept";
  auto missing = cache_->Get("ns1", "nope", "");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(observer_.fallbacks, 2) << "each GET is counted, found or not";
  cache_->Stop();
}

TEST_F(ClaimCacheTest, NamesThatAreNoDnsNamesAreRefusedWithoutARequest) {
  const std::string huge(1 << 20, 'a');
  for (const auto& [ns, name] : std::vector<std::pair<std::string, std::string>>{
           {"ns1", ".."}, {"ns1", "."}, {"..", "c"}, {"ns1", "a/b"}, {"ns1", huge}, {"NS", "c"}}) {
    auto got = cache_->Get(ns, name, "");
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << ns << "/" << name.substr(0, 10);
    EXPECT_LT(got.status().message().size(), 200u) << "the name is not echoed whole";
  }
  EXPECT_TRUE(server_.Requests().empty());
  // A pod naming such a claim costs no request and no retries.
  server_.Upsert("pods", PodWithClaims("p1", "node-a", ".."));
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  server_.Upsert("resourceclaims", Claim("fine"));
  server_.Upsert("pods", PodWithClaims("p2", "node-a", "fine"));
  DriveUntil(&clock_, [&] { return Cached("ns1/fine"); });
  for (const auto& r : server_.Requests()) EXPECT_EQ(r.path.find(".."), std::string::npos) << r.path;
  cache_->Stop();
}

TEST_F(ClaimCacheTest, DropsAClaimWhenNoPodOnTheNodeUsesIt) {
  server_.Upsert("resourceclaims", Claim("shared"));
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "shared"));
  server_.Upsert("pods", PodWithClaims("p2", "node-a", "shared"));
  cache_->Start();
  DriveUntil(&clock_, [&] { return Cached("ns1/shared"); });
  server_.Delete("pods", "ns1/p1");
  DriveUntil(&clock_, [&] { return cache_->pod_informer()->store()->Size() == 1; });
  // Let the worker handle the deletion's key; the claim stays: p2 still uses it.
  server_.Upsert("pods", PodWithClaims("p3", "node-a", ""));
  DriveUntil(&clock_, [&] { return cache_->pod_informer()->store()->Size() == 2; });
  EXPECT_TRUE(Cached("ns1/shared"));
  server_.Delete("pods", "ns1/p2");
  DriveUntil(&clock_, [&] { return !Cached("ns1/shared"); });
  cache_->Stop();
}

TEST_F(ClaimCacheTest, GetWithUidRefetchesARecreatedClaim) {
  server_.Upsert("resourceclaims", Claim("c"));
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "c"));
  cache_->Start();
  DriveUntil(&clock_, [&] { return Cached("ns1/c"); });
  auto old = cache_->Get("ns1", "c", "");
  ASSERT_TRUE(old.ok());
  server_.Delete("resourceclaims", "ns1/c");
  nlohmann::json fresh = Claim("c");
  fresh["metadata"]["uid"] = "new-uid";
  server_.Upsert("resourceclaims", fresh);
  auto got = cache_->Get("ns1", "c", "new-uid");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->metadata.uid, "new-uid");
  auto again = cache_->Get("ns1", "c", "new-uid");
  ASSERT_TRUE(again.ok());
  cache_->Stop();
}

TEST_F(ClaimCacheTest, AnUnallocatedCachedClaimIsReadAgain) {
  nlohmann::json pending = Claim("c");
  pending["status"] = nlohmann::json::object();
  server_.Upsert("resourceclaims", pending);
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "c"));
  cache_->Start();
  DriveUntil(&clock_, [&] { return Cached("ns1/c"); });
  server_.Upsert("resourceclaims", Claim("c"));  // the scheduler allocates it
  auto got = cache_->Get("ns1", "c", "");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(got->allocated);
  cache_->Stop();
}

TEST_F(ClaimCacheTest, PodStatusUpdateDoesNotFetchItsClaimsAgain) {
  server_.Upsert("resourceclaims", Claim("c1"));
  server_.Upsert("resourceclaims", Claim("c2"));
  server_.Upsert("resourceclaims", Claim("c3"));
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "c1", "c2"));
  cache_->Start();
  DriveUntil(&clock_, [&] { return Cached("ns1/c1") && Cached("ns1/c2"); });
  const int gets1 = server_.CountRequests(ResourceClaimPath("ns1", "c1"), false);
  const int gets2 = server_.CountRequests(ResourceClaimPath("ns1", "c2"), false);
  // Status changes (phase, conditions) that name the same claims.
  for (int i = 0; i < 3; ++i) {
    nlohmann::json pod = PodWithClaims("p1", "node-a", "c1", "c2");
    pod["status"]["phase"] = i == 0 ? "Pending" : "Running";
    pod["status"]["conditions"] = {{{"type", "Ready"}, {"status", i == 2 ? "True" : "False"}}};
    server_.Upsert("pods", pod);
  }
  // A later update that names one more claim; the worker handles keys in order, so once c3 is cached
  // every key the status updates queued has been handled.
  nlohmann::json pod = PodWithClaims("p1", "node-a", "c1", "c2");
  pod["spec"]["resourceClaims"].push_back({{"name", "more"}, {"resourceClaimName", "c3"}});
  server_.Upsert("pods", pod);
  DriveUntil(&clock_, [&] { return Cached("ns1/c3"); });
  EXPECT_EQ(server_.CountRequests(ResourceClaimPath("ns1", "c1"), false), gets1) << "no GET per status update";
  EXPECT_EQ(server_.CountRequests(ResourceClaimPath("ns1", "c2"), false), gets2);
  EXPECT_TRUE(Cached("ns1/c1"));
  EXPECT_TRUE(Cached("ns1/c2"));
  cache_->Stop();
}

TEST_F(ClaimCacheTest, ClaimsOnOtherNodesCostZeroBytes) {
  server_.Upsert("resourceclaims", Claim("mine"));
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "mine"));
  for (int i = 0; i < 50; ++i) {
    server_.Upsert("resourceclaims", Claim(absl::StrCat("other-", i)));
    server_.Upsert("pods", PodWithClaims(absl::StrCat("op-", i), absl::StrCat("node-", i % 7 + 1000),
                                         absl::StrCat("other-", i)));
  }
  cache_->Start();
  DriveUntil(&clock_, [&] { return Cached("ns1/mine"); });
  server_.WaitForOpenWatches(1);
  const int64_t before = server_.BytesSent();
  // The rest of the cluster churns: claims on other nodes change, other nodes' pods come and go.
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 50; ++i) {
      server_.Upsert("resourceclaims", Claim(absl::StrCat("other-", i), absl::StrCat("round-", round)));
      server_.Upsert("pods", PodWithClaims(absl::StrCat("op-", i), absl::StrCat("node-", i % 7 + 1000),
                                           absl::StrCat("other-", i)));
    }
  }
  // Upsert writes to matching watchers before it returns: anything for this node is already sent.
  const int64_t after = server_.BytesSent();
  std::printf("bytes received by node-a while 500 objects of other nodes changed: %lld\n",
              static_cast<long long>(after - before));
  EXPECT_EQ(after - before, 0);
  // And a change that concerns this node does arrive (the measurement can see bytes).
  server_.Upsert("pods", PodWithClaims("p1", "node-a", "mine"));
  EXPECT_GT(server_.BytesSent(), after);
  cache_->Stop();
}

}  // namespace
}  // namespace liken::informers
