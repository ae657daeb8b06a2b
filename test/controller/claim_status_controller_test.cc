#include "controller/claim_status_controller.h"

#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "controller/claim_status_metrics.h"
#include "informers/claim_cache.h"
#include "test/common/fake_clock.h"
#include "test/controller/loopback_fixtures.h"
#include "test/informers/fake_api_server.h"
#include "test/informers/test_util.h"

namespace liken::controller {
namespace {

using nodestate::PreparedClaimDevices;

using liken::testing::DriveUntil;
using liken::testing::FakeApiServer;
using liken::testing::FakeClock;
using liken::testing::HttpRequest;
using liken::testing::HttpResponder;
using liken::testing::LoopbackRestClient;

constexpr char kStatusPrefix[] = "/apis/resource.k8s.io/v1/namespaces/ns1/resourceclaims/";

nlohmann::json Pod(const std::string& name, const std::string& claim) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "ns1"}}},
          {"spec", {{"nodeName", "node-a"}, {"resourceClaims", {{{"name", "c"}, {"resourceClaimName", claim}}}}}}};
}

// A claim allocated two devices of node-a, and one of another driver that reported its own status entry.
nlohmann::json Claim(const std::string& name) {
  nlohmann::json claim = nlohmann::json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
      "metadata": {"namespace": "ns1"}, "spec": {},
      "status": {"allocation": {"devices": {"results": [
          {"request": "serial", "driver": "liken.sh", "pool": "node-a", "device": "usb-1-1"},
          {"request": "gpu", "driver": "liken.sh", "pool": "node-a", "device": "pci-0000-00-02-0"},
          {"request": "nic", "driver": "other.example.com", "pool": "node-a", "device": "eth0"}]}},
        "devices": [{"driver": "other.example.com", "pool": "node-a", "device": "eth0",
                     "conditions": [{"type": "Ready", "status": "True", "reason": "Up", "message": "",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]}})");
  claim["metadata"]["name"] = name;
  return claim;
}

PreparedClaimDevices Prepared(const std::string& name, const std::string& uid) {
  return {"ns1", name, uid,
          {{"usb-1-1", std::nullopt, {"/dev/bus/usb/001/003", "/dev/ttyUSB0"}},
           {"pci-0000-00-02-0", std::nullopt, {"/dev/dri/renderD128"}}}};
}

// Counts the status writes by result.
class RecordingObserver : public ClaimStatusObserver {
 public:
  void OnClaimStatusWrite(std::string_view result) override {
    absl::MutexLock lock(&mu_);
    ++counts_[std::string(result)];
  }
  int count(const std::string& result) {
    absl::MutexLock lock(&mu_);
    return counts_[result];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, int> counts_ ABSL_GUARDED_BY(mu_);
};

class ClaimStatusControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto client = LoopbackRestClient(server_, &clock_);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    // Server-side apply of status.devices as the API server does it for one field manager: entries are merged
    // by key; those the manager applied before and no longer lists are removed; the UID is a precondition.
    server_.SetInterceptor([this](const HttpRequest& req, HttpResponder& out) {
      if (req.method != "PATCH") return false;
      absl::MutexLock lock(&mu_);
      patches_.push_back(req);
      if (fail_next_.has_value() || fail_always_ != 0) {
        int code = fail_next_.value_or(fail_always_);
        fail_next_.reset();
        out.Respond(code, nlohmann::json{{"kind", "Status"}, {"code", code}, {"message", "injected"}}.dump());
        return true;
      }
      std::string name = req.path.substr(std::string(kStatusPrefix).size());
      name = name.substr(0, name.find('/'));
      nlohmann::json stored = server_.Object("resourceclaims", "ns1/" + name);
      nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
      if (stored.is_null()) {
        out.Respond(404, R"({"kind":"Status","code":404})");
        return true;
      }
      if (body["metadata"].value("uid", "") != stored["metadata"].value("uid", "")) {
        out.Respond(422, R"({"kind":"Status","code":422,"message":"metadata.uid: field is immutable"})");
        return true;
      }
      auto key = [](const nlohmann::json& d) {
        return absl::StrCat(d.value("driver", ""), "/", d.value("pool", ""), "/", d.value("device", ""), "/",
                            d.value("shareID", ""));
      };
      std::set<std::string>& owned = owned_[name];
      nlohmann::json kept = nlohmann::json::array();
      for (const auto& d : stored["status"].value("devices", nlohmann::json::array())) {
        if (owned.count(key(d)) == 0) kept.push_back(d);
      }
      owned.clear();
      for (const auto& d : body["status"]["devices"]) {
        owned.insert(key(d));
        kept.push_back(d);
      }
      stored["status"]["devices"] = kept;
      server_.Upsert("resourceclaims", stored);
      out.Respond(200, server_.Object("resourceclaims", "ns1/" + name).dump());
      return true;
    });
    cache_ = std::make_unique<informers::ClaimCache>(client_.get(), &clock_, "node-a");
    controller_ = std::make_unique<ClaimStatusController>("liken.sh", "node-a", client_.get(), cache_.get(), &clock_,
                                                          &observer_);
  }

  void TearDown() override {
    controller_.reset();
    cache_->Stop();
  }

  // Creates claim `name` and a pod on node-a naming it; waits until the cache holds it. Returns its UID.
  std::string AddClaim(const std::string& name) {
    const std::string uid = absl::StrCat("uid-", name);
    nlohmann::json claim = Claim(name);
    claim["metadata"]["uid"] = uid;
    server_.Upsert("resourceclaims", claim);
    server_.Upsert("pods", Pod("pod-" + name, name));
    if (!started_) {
      cache_->Start();
      EXPECT_TRUE(cache_->WaitForSync());
      started_ = true;
    }
    DriveUntil(&clock_, [&] {
      auto keys = cache_->CachedKeys();
      return std::find(keys.begin(), keys.end(), "ns1/" + name) != keys.end();
    });
    return uid;
  }

  // Lets the burst of prepares and unprepares settle (the quiet window passes), then processes what is ready.
  int Settle() {
    clock_.Advance(ClaimStatusController::kQuietWindow);
    return controller_->DrainForTest();
  }

  int Patches() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(patches_.size());
  }
  HttpRequest LastPatch() {
    absl::MutexLock lock(&mu_);
    return patches_.back();
  }
  void FailAlways(int code) {
    absl::MutexLock lock(&mu_);
    fail_always_ = code;
  }
  void FailNext(int code) {
    absl::MutexLock lock(&mu_);
    fail_next_ = code;
  }

  // The stored claim's status.devices of driver `driver`, as "device:Ready=<status>/<reason>".
  std::vector<std::string> Entries(const std::string& name, const std::string& driver = "liken.sh") {
    std::vector<std::string> out;
    nlohmann::json stored = server_.Object("resourceclaims", "ns1/" + name);
    for (const auto& d : stored["status"].value("devices", nlohmann::json::array())) {
      if (d.value("driver", "") != driver) continue;
      std::string ready = "none";
      for (const auto& c : d.value("conditions", nlohmann::json::array())) {
        if (c.value("type", "") == "Ready") ready = c.value("status", "") + "/" + c.value("reason", "");
      }
      out.push_back(d.value("device", "") + ":Ready=" + ready);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // Declared before the server, whose serving threads run the interceptor that uses them: destroyed after it.
  absl::Mutex mu_;
  std::vector<HttpRequest> patches_ ABSL_GUARDED_BY(mu_);
  std::optional<int> fail_next_ ABSL_GUARDED_BY(mu_);
  int fail_always_ ABSL_GUARDED_BY(mu_) = 0;
  std::map<std::string, std::set<std::string>> owned_ ABSL_GUARDED_BY(mu_);
  FakeApiServer server_;
  FakeClock clock_;
  RecordingObserver observer_;
  std::unique_ptr<informers::KubeClient> client_;
  std::unique_ptr<informers::ClaimCache> cache_;
  std::unique_ptr<ClaimStatusController> controller_;
  bool started_ = false;
};

TEST_F(ClaimStatusControllerTest, PreparedClaimGetsReadyEntriesByServerSideApplyKeepingOtherDrivers) {
  std::string uid = AddClaim("serial");
  controller_->SetPrepared(Prepared("serial", uid));
  EXPECT_EQ(controller_->DrainForTest(), 0) << "written when the burst settles";
  EXPECT_EQ(Settle(), 1);
  ASSERT_EQ(Patches(), 1);
  HttpRequest patch = LastPatch();
  EXPECT_EQ(patch.path, std::string(kStatusPrefix) + "serial/status");
  EXPECT_EQ(patch.headers["content-type"], "application/apply-patch+yaml");
  EXPECT_EQ(patch.query["fieldManager"], "liken.sh");
  EXPECT_EQ(patch.query["force"], "true");
  nlohmann::json body = nlohmann::json::parse(patch.body);
  EXPECT_EQ(body["metadata"]["uid"], uid);
  EXPECT_EQ(body["status"]["devices"].size(), 2u) << "only this driver's entries are applied";
  EXPECT_THAT(Entries("serial"), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                        "usb-1-1:Ready=True/Prepared"));
  EXPECT_THAT(Entries("serial", "other.example.com"), ::testing::ElementsAre("eth0:Ready=True/Up"));
  nlohmann::json stored = server_.Object("resourceclaims", "ns1/serial");
  for (const auto& d : stored["status"]["devices"]) {
    if (d["device"] == "usb-1-1") {
      EXPECT_EQ(d["data"], (nlohmann::json{{"devicePaths", {"/dev/bus/usb/001/003", "/dev/ttyUSB0"}}}));
      EXPECT_FALSE(d["conditions"][0]["lastTransitionTime"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(observer_.count("success"), 1);
}

// The claim the scheduler made for a pod's extended resources (named only in the pod's status) gets its entries
// like a claim the pod names, and loses them at unprepare.
TEST_F(ClaimStatusControllerTest, TheSchedulersExtendedResourceClaimGetsEntries) {
  const std::string name = "p-extended-resources-x7k";
  nlohmann::json claim = Claim(name);
  claim["metadata"]["uid"] = "uid-ext";
  claim["metadata"]["annotations"] = {{"resource.kubernetes.io/extended-resource-claim", "true"}};
  server_.Upsert("resourceclaims", claim);
  nlohmann::json pod = {{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", "p"}, {"namespace", "ns1"}}},
                        {"spec", {{"nodeName", "node-a"}}}};
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", name},
      {"requestMappings", {{{"containerName", "c"}, {"resourceName", "squat.ai/serial"}, {"requestName", "serial"}}}}};
  server_.Upsert("pods", pod);
  cache_->Start();
  ASSERT_TRUE(cache_->WaitForSync());
  started_ = true;
  DriveUntil(&clock_, [&] { return cache_->GetCached("ns1", name, "uid-ext").ok(); });
  controller_->SetPrepared(Prepared(name, "uid-ext"));
  EXPECT_EQ(Settle(), 1);
  EXPECT_THAT(Entries(name), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                    "usb-1-1:Ready=True/Prepared"));
  controller_->SetUnprepared("ns1", name, "uid-ext");
  Settle();
  EXPECT_TRUE(Entries(name).empty());
  EXPECT_THAT(Entries(name, "other.example.com"), ::testing::ElementsAre("eth0:Ready=True/Up"));
}

TEST_F(ClaimStatusControllerTest, IdleAndRepeatedEventsCostNoWrite) {
  std::string uid = AddClaim("serial");
  // Coalesced: three changes before the worker runs are one sync and one write.
  controller_->SetPrepared(Prepared("serial", uid));
  controller_->SetPrepared(Prepared("serial", uid));
  controller_->SetPresentDevices({"usb-1-1", "pci-0000-00-02-0"});
  Settle();
  ASSERT_EQ(Patches(), 1);
  int gets = server_.CountRequests(informers::ResourceClaimPath("ns1", "serial"), false);
  // The same claim again (a driver restart recovers it), the same inventory: the cache shows the write.
  controller_->SetPrepared(Prepared("serial", uid));
  controller_->SetPresentDevices({"usb-1-1", "pci-0000-00-02-0", "new-device"});
  Settle();
  EXPECT_EQ(Patches(), 1) << "nothing changed: no write";
  EXPECT_EQ(server_.CountRequests(informers::ResourceClaimPath("ns1", "serial"), false), gets)
      << "compared against the cache, not the server";
}

TEST_F(ClaimStatusControllerTest, UnpluggedDeviceTurnsReadyFalseAndBack) {
  std::string uid = AddClaim("serial");
  controller_->SetPrepared(Prepared("serial", uid));
  controller_->SetPresentDevices({"usb-1-1", "pci-0000-00-02-0"});
  Settle();
  std::string first_time;
  const nlohmann::json stored1 = server_.Object("resourceclaims", "ns1/serial");  // named: the loop must not outlive it
  for (const auto& d : stored1["status"]["devices"]) {
    if (d["device"] == "usb-1-1") first_time = d["conditions"][0]["lastTransitionTime"];
  }
  clock_.Advance(absl::Hours(1));
  controller_->SetPresentDevices({"pci-0000-00-02-0"});
  controller_->DrainForTest();
  EXPECT_THAT(Entries("serial"), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                        "usb-1-1:Ready=False/DeviceUnplugged"));
  const nlohmann::json stored2 = server_.Object("resourceclaims", "ns1/serial");  // named: the loop must not outlive it
  for (const auto& d : stored2["status"]["devices"]) {
    if (d["device"] == "usb-1-1") {
      EXPECT_NE(d["conditions"][0]["lastTransitionTime"], first_time);
    }
    if (d["device"] == "pci-0000-00-02-0") {
      EXPECT_EQ(d["conditions"][0]["lastTransitionTime"], first_time) << "unchanged state keeps its time";
    }
  }
  EXPECT_EQ(Patches(), 2);
  controller_->SetPresentDevices({"usb-1-1", "pci-0000-00-02-0"});
  controller_->DrainForTest();
  EXPECT_THAT(Entries("serial"), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                        "usb-1-1:Ready=True/Prepared"));
  EXPECT_EQ(Patches(), 3);
}

TEST_F(ClaimStatusControllerTest, UnprepareRemovesOnlyThisDriversEntries) {
  std::string uid = AddClaim("serial");
  controller_->SetPrepared(Prepared("serial", uid));
  Settle();
  ASSERT_EQ(Entries("serial").size(), 2u);
  controller_->SetUnprepared("ns1", "serial", uid);
  Settle();
  EXPECT_TRUE(Entries("serial").empty());
  EXPECT_THAT(Entries("serial", "other.example.com"), ::testing::ElementsAre("eth0:Ready=True/Up"));
  EXPECT_TRUE(controller_->PreparedKeys().empty());
  EXPECT_EQ(nlohmann::json::parse(LastPatch().body)["status"]["devices"], nlohmann::json::array());
  // An unprepare for another UID (a stale call) does not forget the prepared claim.
  controller_->SetPrepared(Prepared("serial", uid));
  controller_->SetUnprepared("ns1", "serial", "some-other-uid");
  Settle();
  EXPECT_EQ(Entries("serial").size(), 2u);
}

TEST_F(ClaimStatusControllerTest, UnprepareOfAClaimThatIsGoneOrHasNoEntriesWritesNothing) {
  controller_->SetUnprepared("ns1", "never-existed", "u1");
  std::string uid = AddClaim("plain");
  controller_->SetUnprepared("ns1", "plain", uid);
  EXPECT_EQ(Settle(), 2);
  EXPECT_EQ(Patches(), 0);
}

TEST_F(ClaimStatusControllerTest, ConflictIsRetriedWithBackoff) {
  std::string uid = AddClaim("serial");
  FailNext(409);
  controller_->SetPrepared(Prepared("serial", uid));
  Settle();
  EXPECT_EQ(observer_.count("conflict"), 1);
  EXPECT_TRUE(Entries("serial").empty());
  EXPECT_EQ(controller_->DrainForTest(), 0) << "the retry waits for its backoff";
  clock_.Advance(absl::Seconds(1));
  EXPECT_EQ(controller_->DrainForTest(), 1);
  EXPECT_EQ(Entries("serial").size(), 2u);
  EXPECT_EQ(observer_.count("success"), 1);
}

TEST_F(ClaimStatusControllerTest, ServerErrorIsRetriedAndARefusedEntryIsNot) {
  std::string uid = AddClaim("serial");
  FailNext(503);
  controller_->SetPrepared(Prepared("serial", uid));
  Settle();
  EXPECT_EQ(observer_.count("error"), 1);
  clock_.Advance(absl::Seconds(1));
  controller_->DrainForTest();
  EXPECT_EQ(Entries("serial").size(), 2u);
  // 422 (the per-driver authorization refused it): retried 5 times with backoff, then dropped.
  FailAlways(422);
  controller_->SetPresentDevices({});
  controller_->DrainForTest();
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Minutes(5));
    controller_->DrainForTest();
  }
  EXPECT_EQ(observer_.count("error"), 1 + 6) << "the first try and 5 retries";
  EXPECT_THAT(Entries("serial"), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                        "usb-1-1:Ready=True/Prepared"));
  // The next change enqueues it again.
  FailAlways(0);
  controller_->SetPresentDevices({"pci-0000-00-02-0"});
  controller_->DrainForTest();
  EXPECT_THAT(Entries("serial"), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                        "usb-1-1:Ready=False/DeviceUnplugged"));
}

TEST_F(ClaimStatusControllerTest, ClaimReplacedUnderItsNameIsNotWritten) {
  AddClaim("serial");
  controller_->SetPrepared(Prepared("serial", "uid-of-a-deleted-claim"));
  Settle();
  EXPECT_EQ(Patches(), 0);
}

TEST_F(ClaimStatusControllerTest, AClaimTheNodesCacheLacksCostsNoRequestAndIsRetriedAFewTimes) {
  AddClaim("serial");  // starts the cache
  nlohmann::json claim = Claim("podless");
  claim["metadata"]["uid"] = "uid-podless";
  server_.Upsert("resourceclaims", claim);  // no pod on node-a names it: the cache never holds it
  controller_->SetPrepared(Prepared("podless", "uid-podless"));
  Settle();
  for (int i = 0; i < 10; ++i) {
    clock_.Advance(absl::Minutes(5));
    controller_->DrainForTest();
  }
  EXPECT_EQ(server_.CountRequests(std::string(kStatusPrefix) + "podless", false), 0) << "no GET fallback";
  EXPECT_EQ(Patches(), 0);
  EXPECT_EQ(controller_->DrainForTest(), 0) << "dropped after its retries, until the claim changes";
}

TEST_F(ClaimStatusControllerTest, OnlyAllocatedDevicesGetEntries) {
  std::string uid = AddClaim("serial");
  PreparedClaimDevices prepared = Prepared("serial", uid);
  prepared.devices.push_back({"not-allocated", std::nullopt, {"/dev/x"}});
  controller_->SetPrepared(prepared);
  Settle();
  EXPECT_THAT(Entries("serial"), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                        "usb-1-1:Ready=True/Prepared"));
}

TEST_F(ClaimStatusControllerTest, WorkerWritesWithoutBlockingTheCaller) {
  std::string uid = AddClaim("serial");
  controller_->Start();
  controller_->SetPrepared(Prepared("serial", uid));
  DriveUntil(&clock_, [&] { return Entries("serial").size() == 2; });
  controller_->Stop();
  controller_->Stop();  // idempotent
}

// Status writes stay off the prepare path: a burst of prepares writes nothing while it lasts, then each claim once.
TEST_F(ClaimStatusControllerTest, ABurstOfPreparesWritesEachClaimOnceWhenItSettles) {
  const std::vector<std::string> names = {"a", "b", "c"};
  std::map<std::string, std::string> uids;
  for (const auto& name : names) uids[name] = AddClaim(name);
  for (int round = 0; round < 3; ++round) {  // 9 prepares 20 ms apart: one burst of 160 ms
    for (const auto& name : names) {
      controller_->SetPrepared(Prepared(name, uids[name]));
      EXPECT_EQ(controller_->DrainForTest(), 0);
      clock_.Advance(absl::Milliseconds(20));
    }
  }
  clock_.Advance(ClaimStatusController::kQuietWindow - absl::Milliseconds(21));
  EXPECT_EQ(controller_->DrainForTest(), 0) << "1 ms before the burst settles";
  EXPECT_EQ(Patches(), 0);
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_EQ(controller_->DrainForTest(), 3);
  EXPECT_EQ(Patches(), 3) << "one write per claim";
  for (const auto& name : names) {
    EXPECT_THAT(Entries(name), ::testing::ElementsAre("pci-0000-00-02-0:Ready=True/Prepared",
                                                      "usb-1-1:Ready=True/Prepared"));
  }
  clock_.Advance(absl::Minutes(10));
  EXPECT_EQ(controller_->DrainForTest(), 0);
  EXPECT_EQ(Patches(), 3) << "idle: no write";
}

TEST_F(ClaimStatusControllerTest, AClaimPreparedAndUnpreparedWithinTheWindowCostsNoWrite) {
  std::string brief = AddClaim("brief");
  std::string kept = AddClaim("kept");
  controller_->SetPrepared(Prepared("brief", brief));
  clock_.Advance(absl::Milliseconds(30));
  controller_->SetPrepared(Prepared("kept", kept));
  clock_.Advance(absl::Milliseconds(30));
  controller_->SetUnprepared("ns1", "brief", brief);
  EXPECT_EQ(Settle(), 2);
  EXPECT_EQ(Patches(), 1) << "only the claim still prepared is written";
  EXPECT_TRUE(Entries("brief").empty());
  EXPECT_EQ(Entries("kept").size(), 2u);
}

// Calls that never pause for the quiet window: the status is still written within kMaxSettleDelay of the first.
TEST_F(ClaimStatusControllerTest, AStreamThatNeverPausesIsWrittenWithinASecond) {
  std::string first = AddClaim("first");
  std::string busy = AddClaim("busy");
  const absl::Time start = clock_.Now();
  controller_->SetPrepared(Prepared("first", first));
  std::optional<absl::Time> written;
  for (int i = 0; i < 60 && !written; ++i) {  // a change every 50 ms for up to 3 s
    clock_.Advance(absl::Milliseconds(50));
    controller_->SetPrepared(Prepared("busy", busy));
    controller_->DrainForTest();
    if (!Entries("first").empty()) written = clock_.Now();
  }
  ASSERT_TRUE(written.has_value()) << "never written";
  EXPECT_GT(*written - start, ClaimStatusController::kQuietWindow);
  EXPECT_LE(*written - start, ClaimStatusController::kMaxSettleDelay);
  EXPECT_EQ(Entries("busy").size(), 2u) << "written with the same batch";
}

TEST(DesiredDeviceStatusesTest, KeepsTheTransitionTimeOfAnUnchangedState) {
  PreparedClaimDevices claim = {"ns", "c", "u", {{"d1", std::string("share-1"), {"/dev/a"}}}};
  auto first = DesiredDeviceStatuses("liken.sh", "n1", claim, nullptr, {}, absl::FromUnixSeconds(1000));
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].share_id, "share-1");
  EXPECT_EQ(first[0].conditions[0].last_transition_time, "1970-01-01T00:16:40Z");
  auto again = DesiredDeviceStatuses("liken.sh", "n1", claim, nullptr, first, absl::FromUnixSeconds(5000));
  EXPECT_EQ(again[0].conditions[0].last_transition_time, "1970-01-01T00:16:40Z");
  std::set<std::string> none;
  auto gone = DesiredDeviceStatuses("liken.sh", "n1", claim, &none, first, absl::FromUnixSeconds(5000));
  EXPECT_EQ(gone[0].conditions[0].status, "False");
  EXPECT_EQ(gone[0].conditions[0].reason, "DeviceUnplugged");
  EXPECT_EQ(gone[0].conditions[0].last_transition_time, "1970-01-01T01:23:20Z");
}

TEST(ClaimStatusMetricsTest, SeriesExistAtZero) {
  prometheus::Registry registry;
  ClaimStatusMetrics metrics(registry);
  metrics.OnClaimStatusWrite("success");
  int series = 0;
  for (const auto& family : registry.Collect()) {
    if (family.name != "liken_claim_status_writes_total") continue;
    for (const auto& m : family.metric) {
      ++series;
      EXPECT_EQ(m.counter.value, m.label[0].value == "success" ? 1 : 0) << m.label[0].value;
    }
  }
  EXPECT_EQ(series, 3);
}

}  // namespace
}  // namespace liken::controller
