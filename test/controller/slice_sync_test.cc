#include "controller/slice_sync.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "controller/node_pass_loop.h"
#include "informers/store.h"
#include "test/informers/fake_kube_client.h"

namespace liken::controller {
namespace {

using liken::testing::FakeKubeClient;

constexpr char kNode[] = "node-a";
constexpr char kDriver[] = "liken.sh";

// Desired slices the way discovery lays them out: 128 devices per slice, one pool named after the node.
std::vector<apis::ResourceSlice> Layout(const std::vector<apis::SliceDevice>& devices) {
  std::vector<apis::ResourceSlice> slices;
  size_t n = std::max<size_t>(1, (devices.size() + 127) / 128);
  for (size_t i = 0; i < n; ++i) {
    apis::ResourceSlice s;
    s.metadata.name = i == 0 ? std::string(kNode) + "-liken.sh" : absl::StrCat(kNode, "-liken.sh-", i);
    s.driver = kDriver;
    s.node_name = kNode;
    s.pool.name = kNode;
    s.pool.resource_slice_count = static_cast<int64_t>(n);
    for (size_t d = i * 128; d < std::min(devices.size(), (i + 1) * 128); ++d) s.devices.push_back(devices[d]);
    slices.push_back(std::move(s));
  }
  return slices;
}

apis::SliceDevice Device(const std::string& name, const std::string& model = "x") {
  apis::SliceDevice d;
  d.name = name;
  d.attributes["liken.sh/model"] = model;
  return d;
}

std::vector<apis::SliceDevice> Devices(int n) {
  std::vector<apis::SliceDevice> out;
  for (int i = 0; i < n; ++i) out.push_back(Device(absl::StrCat("dev-", 1000 + i)));
  return out;
}

class RecordingObserver : public SliceSyncObserver {
 public:
  void OnSliceWrite(std::string_view op, std::string_view result) override {
    writes.push_back(std::string(op) + ":" + std::string(result));
  }
  void OnSliceRefused(std::string_view rule, std::string_view by) override {
    refused.push_back(std::string(rule) + ":" + std::string(by));
  }
  std::vector<std::string> writes;
  std::vector<std::string> refused;
};

class SliceSyncTest : public ::testing::Test {
 protected:
  SliceSyncTest() {
    client_.Put(informers::NodePath(kNode), {{"metadata", {{"name", kNode}, {"uid", "node-uid-1"}}}});
    sync_ = std::make_unique<SliceSync>(kNode, kDriver, &client_, &cache_, &observer_);
  }

  // One pass over the desired slices of `devices_`.
  absl::StatusOr<SliceSyncResult> Sync() { return sync_->Sync(Layout(devices_)); }

  // The informer catching up: the cache mirrors the server's slices for this node.
  void CatchUp() {
    std::vector<informers::ObjectPtr> objs;
    for (auto& o : client_.Objects(informers::ResourceSlicesPath())) {
      if (o["spec"].value("nodeName", "") == kNode) objs.push_back(std::make_shared<const nlohmann::json>(o));
    }
    cache_.Replace(std::move(objs));
    cache_.SetResourceVersion(client_.CurrentResourceVersion());
  }

  absl::StatusOr<SliceSyncResult> SyncAndCatchUp() {
    auto r = Sync();
    CatchUp();
    return r;
  }

  nlohmann::json Slice(const std::string& name) { return client_.Object(informers::ResourceSlicePath(name)); }
  int64_t Gen(const std::string& name) { return Slice(name)["spec"]["pool"]["generation"].get<int64_t>(); }

  FakeKubeClient client_;
  informers::Store cache_;
  std::vector<apis::SliceDevice> devices_ = Devices(3);
  RecordingObserver observer_;
  std::unique_ptr<SliceSync> sync_;
};

TEST_F(SliceSyncTest, CreatesTheSliceWithOwnerGenerationAndCount) {
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 1);
  auto s = Slice("node-a-liken.sh");
  ASSERT_FALSE(s.is_null());
  EXPECT_EQ(s["spec"]["driver"], "liken.sh");
  EXPECT_EQ(s["spec"]["nodeName"], "node-a");
  EXPECT_EQ(s["spec"]["pool"]["name"], "node-a");
  EXPECT_EQ(s["spec"]["pool"]["generation"], 1);
  EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 1);
  EXPECT_EQ(s["spec"]["devices"].size(), 3u);
  ASSERT_EQ(s["metadata"]["ownerReferences"].size(), 1u);
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["kind"], "Node");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["uid"], "node-uid-1");
  EXPECT_EQ(s["metadata"]["ownerReferences"][0]["apiVersion"], "v1");
  EXPECT_EQ(observer_.writes, std::vector<std::string>{"create:success"});
}

TEST_F(SliceSyncTest, NothingWrittenWhenNothingChanged) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  client_.ClearRequests();
  for (int i = 0; i < 3; ++i) {
    auto r = SyncAndCatchUp();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->created + r->updated + r->deleted, 0);
  }
  EXPECT_TRUE(client_.Writes().empty());
  // The Node is read once, not on every pass.
  for (const auto& req : client_.Requests()) EXPECT_NE(req.verb, "GET") << req.path;
}

TEST_F(SliceSyncTest, NoWriteEvenBeforeTheCacheCatchesUp) {
  ASSERT_TRUE(Sync().ok());  // cache still empty
  auto r = Sync();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(client_.Writes().size(), 1u) << "our own create overlays the stale cache";
}

TEST_F(SliceSyncTest, ContentChangeUpdatesAndBumpsGeneration) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  devices_[1] = Device(devices_[1].name, "changed");
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(Gen("node-a-liken.sh"), 2);
  EXPECT_EQ(Slice("node-a-liken.sh")["spec"]["devices"][1]["attributes"]["liken.sh/model"]["string"], "changed");
  // And then it is stable.
  client_.ClearRequests();
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(client_.Writes().empty());
}

TEST_F(SliceSyncTest, UpdateKeepsUnknownFields) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  auto s = Slice("node-a-liken.sh");
  s["metadata"]["annotations"] = {{"someone", "else"}};
  s["spec"]["perDeviceNodeSelection"] = false;
  s["spec"]["devices"][0]["futureField"] = 7;
  client_.Put(informers::ResourceSlicePath("node-a-liken.sh"), s);
  CatchUp();
  devices_.push_back(Device("dev-9999"));
  ASSERT_TRUE(SyncAndCatchUp().ok());
  auto after = Slice("node-a-liken.sh");
  EXPECT_EQ(after["metadata"]["annotations"]["someone"], "else");
  EXPECT_EQ(after["spec"]["perDeviceNodeSelection"], false);
  EXPECT_EQ(after["spec"]["devices"].size(), 4u);
}

TEST_F(SliceSyncTest, DeletesSlicesNoLongerWanted) {
  nlohmann::json stray = {{"apiVersion", "resource.k8s.io/v1"},
                          {"kind", "ResourceSlice"},
                          {"metadata", {{"name", "node-a-liken.sh-old"}}},
                          {"spec", {{"driver", "liken.sh"}, {"nodeName", "node-a"}, {"pool", {{"name", "old"}, {"generation", 4}, {"resourceSliceCount", 1}}}}}};
  client_.Put(informers::ResourceSlicePath("node-a-liken.sh-old"), stray);
  CatchUp();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->deleted, 1);
  EXPECT_TRUE(Slice("node-a-liken.sh-old").is_null());
  EXPECT_FALSE(Slice("node-a-liken.sh").is_null());
  bool delete_had_uid = false;
  for (const auto& w : client_.Writes()) delete_had_uid |= w.verb == "DELETE";
  EXPECT_TRUE(delete_had_uid);
}

TEST_F(SliceSyncTest, ConflictRefetchesAndRequeues) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  devices_.push_back(Device("dev-9999"));
  client_.PrependFailure("UPDATE", informers::ResourceSlicesPath(),
                         informers::StatusFromHttp(409, R"({"reason":"Conflict","message":"modified"})"));
  auto r = Sync();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted);
  EXPECT_TRUE(informers::IsConflict(r.status()));
  EXPECT_EQ(observer_.writes.back(), "update:conflict");
  auto reqs = client_.Requests();
  EXPECT_EQ(reqs.back().verb, "GET") << "the fresh object is fetched";
  // The retry (the workqueue's job) succeeds with the fresh object, without waiting for the cache.
  r = Sync();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(Slice("node-a-liken.sh")["spec"]["devices"].size(), 4u);
}

TEST_F(SliceSyncTest, ConflictWithSomeoneElsesWriteUsesTheirVersion) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  // Someone else writes the slice; our cache has not seen it yet.
  auto s = Slice("node-a-liken.sh");
  s["metadata"]["labels"] = {{"touched", "yes"}};
  client_.Put(informers::ResourceSlicePath("node-a-liken.sh"), s);
  devices_.push_back(Device("dev-9999"));
  auto r = Sync();
  EXPECT_TRUE(informers::IsConflict(r.status())) << r.status();
  r = Sync();
  ASSERT_TRUE(r.ok()) << r.status();
  auto after = Slice("node-a-liken.sh");
  EXPECT_EQ(after["metadata"]["labels"]["touched"], "yes");
  EXPECT_EQ(after["spec"]["devices"].size(), 4u);
}

TEST_F(SliceSyncTest, DeletedBehindOurBackIsPublishedAgain) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  int64_t before = Gen("node-a-liken.sh");
  ASSERT_TRUE(client_.Remove(informers::ResourceSlicePath("node-a-liken.sh")));  // the kubelet wipes it
  CatchUp();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 1);
  EXPECT_FALSE(Slice("node-a-liken.sh").is_null());
  EXPECT_GT(Gen("node-a-liken.sh"), before);
}

TEST_F(SliceSyncTest, DeletedBehindOurBackWhileTheCacheStillHasIt) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  ASSERT_TRUE(client_.Remove(informers::ResourceSlicePath("node-a-liken.sh")));
  devices_.push_back(Device("dev-9999"));  // a change, so we try to update the (gone) slice
  auto r = Sync();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 1);
  EXPECT_EQ(Slice("node-a-liken.sh")["spec"]["devices"].size(), 4u);
}

TEST_F(SliceSyncTest, ServerDroppingAFieldDoesNotCauseAnUpdateLoop) {
  client_.SetMutator([](nlohmann::json* obj) {  // DRAConsumableCapacity off
    for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
  });
  devices_[0].allow_multiple_allocations = true;
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_FALSE(Slice("node-a-liken.sh")["spec"]["devices"][0].contains("allowMultipleAllocations"));
  client_.ClearRequests();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(client_.Writes().empty());
}

// A daemon restarted on a server without DRAConsumableCapacity: its cache holds the slice the last daemon wrote,
// without allowMultipleAllocations, and it has no record of that write. Once it knows the server drops the field
// (the start-up probe), it writes nothing; without that knowledge it would update the slice once per restart.
TEST_F(SliceSyncTest, RestartOnAServerDroppingSharingWritesNothingOnceTheDropIsKnown) {
  client_.SetMutator([](nlohmann::json* obj) {
    for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
  });
  devices_[0].allow_multiple_allocations = true;
  ASSERT_TRUE(SyncAndCatchUp().ok());

  // Unaware: one update (the server drops the field again and its reply then stops the loop).
  {
    SliceSync restarted(kNode, kDriver, &client_, &cache_);
    client_.ClearRequests();
    ASSERT_TRUE(restarted.Sync(Layout(devices_)).ok());
    EXPECT_EQ(client_.Writes().size(), 1u);
    CatchUp();
  }
  // Aware: nothing, on the first pass and after.
  ClusterFeatures features;
  features.ObserveSliceWrite(
      {{"spec", {{"devices", {{{"name", "probe"}, {"allowMultipleAllocations", true}}}}}}},
      {{"spec", {{"devices", {{{"name", "probe"}}}}}}});
  ASSERT_TRUE(features.DropsAllowMultipleAllocations());
  SliceSync restarted(kNode, kDriver, &client_, &cache_);
  restarted.SetClusterFeatures(&features);
  client_.ClearRequests();
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(restarted.Sync(Layout(devices_)).ok());
    CatchUp();
  }
  EXPECT_TRUE(client_.Writes().empty());
  // A real change is still written, with the field asked for again.
  devices_.push_back(Device("dev-9999"));
  ASSERT_TRUE(restarted.Sync(Layout(devices_)).ok());
  ASSERT_EQ(client_.Writes().size(), 1u);
  EXPECT_EQ(client_.Writes()[0].body["spec"]["devices"][0]["allowMultipleAllocations"], true);
}

// Until the start-up probe has answered, a slice that lacks only allowMultipleAllocations is left alone (on an old
// release the write would be dropped again); once the server is known to keep the field, the next pass adds it
// (a cluster upgraded from 1.35 to 1.36 under a running driver).
TEST_F(SliceSyncTest, SharingAloneIsWrittenOnlyOnceTheServerIsKnownToKeepIt) {
  client_.SetMutator([](nlohmann::json* obj) {
    for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
  });
  devices_[0].allow_multiple_allocations = true;
  ASSERT_TRUE(SyncAndCatchUp().ok());
  client_.SetMutator(nullptr);  // the upgraded server keeps the field
  ClusterFeatures features;
  ASSERT_TRUE(features.SharingMayBeDropped());
  SliceSync restarted(kNode, kDriver, &client_, &cache_);
  restarted.SetClusterFeatures(&features);
  client_.ClearRequests();
  ASSERT_TRUE(restarted.Sync(Layout(devices_)).ok());
  CatchUp();
  EXPECT_TRUE(client_.Writes().empty()) << "nothing is known yet";
  nlohmann::json kept = {{"spec", {{"devices", {{{"name", "probe"}, {"allowMultipleAllocations", true}}}}}}};
  features.ObserveSliceWrite(kept, kept);
  ASSERT_FALSE(features.SharingMayBeDropped());
  ASSERT_TRUE(restarted.Sync(Layout(devices_)).ok());
  CatchUp();
  ASSERT_EQ(client_.Writes().size(), 1u);
  EXPECT_EQ(Slice("node-a-liken.sh")["spec"]["devices"][0]["allowMultipleAllocations"], true);
  client_.ClearRequests();
  ASSERT_TRUE(restarted.Sync(Layout(devices_)).ok());
  EXPECT_TRUE(client_.Writes().empty());
}

// The slice sync tells ClusterFeatures what the server kept of each write.
TEST_F(SliceSyncTest, WritesTellClusterFeaturesWhetherSharingIsKept) {
  ClusterFeatures features;
  sync_->SetClusterFeatures(&features);
  devices_[0].allow_multiple_allocations = true;
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(features.Get(kFeatureRenderSharing).served);
  EXPECT_EQ(features.Get(kFeatureRenderSharing).source, FeatureSource::kObserved);

  client_.SetMutator([](nlohmann::json* obj) {
    for (auto& d : (*obj)["spec"]["devices"]) d.erase("allowMultipleAllocations");
  });
  devices_.push_back(Device("dev-9999"));
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_FALSE(features.Get(kFeatureRenderSharing).served);
  EXPECT_TRUE(features.DropsAllowMultipleAllocations());
  client_.ClearRequests();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(client_.Writes().empty());
}

TEST_F(SliceSyncTest, MoreThan128DevicesSplitOverSlicesWithOneGeneration) {
  devices_ = Devices(300);
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 3);
  for (const char* name : {"node-a-liken.sh", "node-a-liken.sh-1", "node-a-liken.sh-2"}) {
    auto s = Slice(name);
    ASSERT_FALSE(s.is_null()) << name;
    EXPECT_EQ(s["spec"]["pool"]["resourceSliceCount"], 3) << name;
    EXPECT_EQ(s["spec"]["pool"]["generation"], 1) << name;
    EXPECT_LE(s["spec"]["devices"].size(), 128u);
  }
  // A change in one slice bumps the generation of every slice of the pool.
  devices_[250] = Device(devices_[250].name, "changed");
  r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 3);
  for (const char* name : {"node-a-liken.sh", "node-a-liken.sh-1", "node-a-liken.sh-2"}) EXPECT_EQ(Gen(name), 2) << name;
  // Shrinking to one slice: the count drops and the extra slices go.
  devices_ = Devices(10);
  r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(r->deleted, 2);
  EXPECT_EQ(Slice("node-a-liken.sh")["spec"]["pool"]["resourceSliceCount"], 1);
  EXPECT_EQ(Gen("node-a-liken.sh"), 3);
  client_.ClearRequests();
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(client_.Writes().empty());
}

TEST_F(SliceSyncTest, MissingNodeIsAnErrorAndNothingIsWritten) {
  client_.Remove(informers::NodePath(kNode));
  auto r = Sync();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(client_.Writes().empty());
}

TEST_F(SliceSyncTest, InvalidDesiredSliceIsRefusedWithAClearError) {
  devices_.push_back(Device("Not_A_DNS_Label"));
  auto r = Sync();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("Not_A_DNS_Label"), std::string::npos) << r.status();
  EXPECT_TRUE(client_.Writes().empty());
}

// A slice of 128 devices one of which is tainted breaks the API's 64-device rule: the driver's own validation
// refuses the whole pool before anything is sent (the pool keeps its last generation, whole), names the rule in
// the error and the metric, and marks it permanent for the loop. The earlier validation knew only 128 and sent it.
TEST_F(SliceSyncTest, TaintedDeviceInASliceOf128IsRefusedBeforeAnyWriteNamingTheRule) {
  devices_ = Devices(128);
  ASSERT_TRUE(SyncAndCatchUp().ok());
  client_.ClearRequests();
  devices_[100].taints.push_back({"liken.sh/unplugged", "device-gone", "NoExecute", "2026-12-05T13:00:00Z"});
  auto r = SyncAndCatchUp();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(IsPermanent(r.status()));
  EXPECT_NE(r.status().message().find("ResourceSliceMaxDevicesWithTaintsOrConsumesCounters"), std::string::npos)
      << r.status();
  EXPECT_TRUE(client_.Writes().empty());
  EXPECT_EQ(observer_.refused, std::vector<std::string>{"ResourceSliceMaxDevicesWithTaintsOrConsumesCounters:driver"});
  EXPECT_EQ(Gen("node-a-liken.sh"), 1);
}

// A write the API server refuses (422) leaves the pool half at the new generation: the error names the rule (in
// the metric too) and is not permanent, so the loop retries with backoff; the retry writes only the slice that
// lags and the whole pool is at one generation again.
TEST_F(SliceSyncTest, ServerRefusalNamesTheRuleAndTheRetryFinishesThePoolAtOneGeneration) {
  devices_ = Devices(200);
  ASSERT_TRUE(SyncAndCatchUp().ok());
  ASSERT_EQ(Gen("node-a-liken.sh-1"), 1);
  devices_[150].attributes["liken.sh/model"] = std::string("y");
  client_.PrependFailure(
      "UPDATE", informers::ResourceSlicePath("node-a-liken.sh-1"),
      informers::StatusFromHttp(422, R"({"reason":"Invalid","message":"ResourceSlice.resource.k8s.io \"node-a-liken.sh-1\" is invalid: spec.devices: Too many: 128: must have at most 64 items"})"));
  auto r = SyncAndCatchUp();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsPermanent(r.status())) << "the loop retries it with backoff";
  EXPECT_EQ(observer_.refused, std::vector<std::string>{"ResourceSliceMaxDevicesWithTaintsOrConsumesCounters:server"});
  EXPECT_EQ(Gen("node-a-liken.sh"), 2);
  EXPECT_EQ(Gen("node-a-liken.sh-1"), 1) << "half-updated until the retry";
  auto retry = SyncAndCatchUp();
  ASSERT_TRUE(retry.ok()) << retry.status();
  EXPECT_EQ(retry->updated, 1) << "only the slice that lagged";
  EXPECT_EQ(Gen("node-a-liken.sh"), 2);
  EXPECT_EQ(Gen("node-a-liken.sh-1"), 2);
}

TEST(SliceRuleTest, NamesTheRuleFromEitherSidesMessage) {
  EXPECT_EQ(SliceRuleOf("spec.devices: Too many: 128: must have at most 64 items"),
            "ResourceSliceMaxDevicesWithTaintsOrConsumesCounters");
  EXPECT_EQ(SliceRuleOf("spec.devices: Too many: 129: must have at most 128 items"), "ResourceSliceMaxDevices");
  EXPECT_EQ(SliceRuleOf("slice x holds 129 devices; the limit is 128 (ResourceSliceMaxDevices)"),
            "ResourceSliceMaxDevices");
  EXPECT_EQ(SliceRuleOf("device name 'A' is not a DNS label"), "other");
}

TEST_F(SliceSyncTest, MalformedCachedSliceIsRewrittenNotACrash) {
  nlohmann::json bad = nlohmann::json::parse(R"({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
      "metadata": {"name": "node-a-liken.sh"},
      "spec": {"driver": "liken.sh", "nodeName": "node-a",
               "devices": [{"name": "d", "attributes": {"a": {"float": 1.5}}}]}})");
  client_.Put(informers::ResourceSlicePath("node-a-liken.sh"), bad);
  CatchUp();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(Slice("node-a-liken.sh")["spec"]["devices"].size(), 3u);
}

TEST_F(SliceSyncTest, TransientErrorIsReturnedForRetry) {
  client_.PrependFailure("CREATE", informers::ResourceSlicesPath(), informers::StatusFromHttp(500, "{}"));
  auto r = Sync();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(observer_.writes.back(), "create:error");
  r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 1);
}

TEST_F(SliceSyncTest, OwnerReferenceIsAddedToAnExistingSlice) {
  nlohmann::json j = apis::ResourceSliceToJson(Layout(devices_)[0]);
  j["spec"]["pool"]["generation"] = 1;
  client_.Put(informers::ResourceSlicePath("node-a-liken.sh"), j);  // no owner (left by an older driver)
  CatchUp();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(Slice("node-a-liken.sh")["metadata"]["ownerReferences"][0]["uid"], "node-uid-1");
  EXPECT_EQ(Gen("node-a-liken.sh"), 1) << "content unchanged: no generation bump";
}

TEST_F(SliceSyncTest, RetryAfterAPartialFailureFinishesTheGenerationWithoutAnotherBump) {
  devices_ = Devices(300);  // three slices in one pool
  ASSERT_TRUE(SyncAndCatchUp().ok());
  devices_[250] = Device(devices_[250].name, "changed");  // in the second slice
  client_.PrependFailure("UPDATE", informers::ResourceSlicePath("node-a-liken.sh-1"),
                         informers::StatusFromHttp(500, "{}"));
  EXPECT_FALSE(SyncAndCatchUp().ok());
  EXPECT_EQ(Gen("node-a-liken.sh"), 2);
  EXPECT_EQ(Gen("node-a-liken.sh-1"), 1) << "its write failed";
  EXPECT_EQ(Gen("node-a-liken.sh-2"), 2);
  client_.ClearRequests();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(client_.Writes().size(), 1u) << "only the slice that lags behind is written";
  EXPECT_EQ(Gen("node-a-liken.sh"), 2);
  EXPECT_EQ(Gen("node-a-liken.sh-1"), 2);
  EXPECT_EQ(Gen("node-a-liken.sh-2"), 2);
  EXPECT_EQ(Slice("node-a-liken.sh-1")["spec"]["devices"][250 - 128]["attributes"]["liken.sh/model"]["string"],
            "changed");
  client_.ClearRequests();
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(client_.Writes().empty());
}

TEST_F(SliceSyncTest, PartialFailureThenAnotherChangeBumpsAgain) {
  devices_ = Devices(300);
  ASSERT_TRUE(SyncAndCatchUp().ok());
  devices_[250] = Device(devices_[250].name, "changed");
  client_.PrependFailure("UPDATE", informers::ResourceSlicePath("node-a-liken.sh-1"),
                         informers::StatusFromHttp(500, "{}"));
  EXPECT_FALSE(SyncAndCatchUp().ok());
  devices_[5] = Device(devices_[5].name, "changed too");  // new content: a new generation
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_EQ(Gen("node-a-liken.sh"), 3);
  EXPECT_EQ(Gen("node-a-liken.sh-1"), 3);
  EXPECT_EQ(Gen("node-a-liken.sh-2"), 3);
}

TEST_F(SliceSyncTest, NodeRecreatedUnderANewUidOwnsTheRepublishedSlice) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  client_.Put(informers::NodePath(kNode), {{"metadata", {{"name", kNode}, {"uid", "node-uid-2"}}}});
  client_.Remove(informers::ResourceSlicePath("node-a-liken.sh"));  // the garbage collector
  CatchUp();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->created, 1);
  EXPECT_EQ(Slice("node-a-liken.sh")["metadata"]["ownerReferences"][0]["uid"], "node-uid-2");
}

TEST_F(SliceSyncTest, NodeRecreatedBeforeTheCacheSawTheDeletion) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  devices_[0] = Device(devices_[0].name, "changed");
  client_.Put(informers::NodePath(kNode), {{"metadata", {{"name", kNode}, {"uid", "node-uid-2"}}}});
  client_.Remove(informers::ResourceSlicePath("node-a-liken.sh"));  // the cache still has it
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Slice("node-a-liken.sh")["metadata"]["ownerReferences"][0]["uid"], "node-uid-2");
}

TEST_F(SliceSyncTest, RecheckOwnerMovesExistingSlicesToTheNewNode) {
  ASSERT_TRUE(SyncAndCatchUp().ok());
  client_.Put(informers::NodePath(kNode), {{"metadata", {{"name", kNode}, {"uid", "node-uid-2"}}}});
  client_.ClearRequests();
  ASSERT_TRUE(SyncAndCatchUp().ok());
  EXPECT_TRUE(client_.Writes().empty()) << "the Node is not read on every pass";
  sync_->RecheckOwner();
  auto r = SyncAndCatchUp();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(Slice("node-a-liken.sh")["metadata"]["ownerReferences"][0]["uid"], "node-uid-2");
  EXPECT_EQ(Gen("node-a-liken.sh"), 1) << "same content: no bump";
}

TEST_F(SliceSyncTest, NodeThatIsNotAnObjectIsAnErrorNotACrash) {
  client_.Put(informers::NodePath(kNode), nlohmann::json::array({1, 2}));
  auto r = Sync();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  client_.Put(informers::NodePath(kNode), {{"metadata", "oops"}});
  r = Sync();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(client_.Writes().empty());
}

}  // namespace
}  // namespace liken::controller
