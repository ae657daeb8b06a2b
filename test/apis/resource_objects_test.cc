// JSON round trips of the typed resource.k8s.io/v1 objects: unknown fields survive, bad input is an error.
#include <gtest/gtest.h>

#include "apis/resource_claim.h"
#include "apis/resource_slice.h"

namespace liken::apis {
namespace {

TEST(ResourceSliceJsonTest, RoundTripKeepsUnknownAndServerFields) {
  auto j = nlohmann::json::parse(R"({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
    "metadata": {"name": "n-liken.sh", "uid": "u1", "resourceVersion": "42", "managedFields": [{"manager": "x"}],
                 "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "nu", "future": 1}]},
    "spec": {"driver": "liken.sh", "nodeName": "n", "futureSpec": {"a": 1},
             "pool": {"name": "n", "generation": 3, "resourceSliceCount": 1},
             "devices": [{"name": "d1", "allowMultipleAllocations": true, "taints": [{"key": "k"}],
                          "attributes": {"liken.sh/bus": {"string": "pci"}, "liken.sh/renderNode": {"bool": true},
                                         "resource.kubernetes.io/numaNode": {"int": 1},
                                         "liken.sh/fw": {"version": "1.2.3"}}}]}})");
  auto slice = ParseResourceSlice(j);
  ASSERT_TRUE(slice.ok()) << slice.status();
  EXPECT_EQ(slice->pool.generation, 3);
  ASSERT_EQ(slice->devices.size(), 1u);
  EXPECT_EQ(std::get<int64_t>(slice->devices[0].attributes.at("resource.kubernetes.io/numaNode")), 1);
  EXPECT_EQ(std::get<VersionValue>(slice->devices[0].attributes.at("liken.sh/fw")).semver, "1.2.3");
  slice->pool.generation = 4;
  slice->devices[0].attributes["liken.sh/bus"] = std::string("usb");
  auto out = ResourceSliceToJson(*slice);
  EXPECT_EQ(out["spec"]["pool"]["generation"], 4);
  EXPECT_EQ(out["spec"]["devices"][0]["attributes"]["liken.sh/bus"]["string"], "usb");
  EXPECT_EQ(out["spec"]["futureSpec"]["a"], 1);
  EXPECT_EQ(out["spec"]["devices"][0]["taints"][0]["key"], "k");
  EXPECT_EQ(out["metadata"]["resourceVersion"], "42");
  EXPECT_EQ(out["metadata"]["managedFields"][0]["manager"], "x");
  EXPECT_EQ(out["metadata"]["ownerReferences"][0]["future"], 1);
  EXPECT_EQ(out["spec"]["devices"][0]["allowMultipleAllocations"], true);
}

TEST(ResourceSliceJsonTest, TaintsRoundTripAndTakePartInTheContent) {
  auto j = nlohmann::json::parse(R"({"metadata": {"name": "n-liken.sh"},
    "spec": {"driver": "liken.sh", "nodeName": "n", "pool": {"name": "n"},
             "devices": [{"name": "d1", "taints": [{"key": "liken.sh/unplugged", "value": "gone", "effect": "NoExecute",
                                                    "timeAdded": "2026-12-04T19:40:58Z", "future": 7}]},
                         {"name": "d2"}]}})");
  auto slice = ParseResourceSlice(j);
  ASSERT_TRUE(slice.ok()) << slice.status();
  ASSERT_EQ(slice->devices[0].taints.size(), 1u);
  const DeviceTaint want{"liken.sh/unplugged", "gone", "NoExecute", "2026-12-04T19:40:58Z"};
  EXPECT_EQ(slice->devices[0].taints[0], want);
  EXPECT_TRUE(slice->devices[1].taints.empty());
  // Out again: the received taint keeps its unknown field; a device without taints has no "taints" key.
  auto out = ResourceSliceToJson(*slice);
  EXPECT_EQ(out["spec"]["devices"][0]["taints"][0]["future"], 7);
  EXPECT_EQ(out["spec"]["devices"][0]["taints"][0]["effect"], "NoExecute");
  EXPECT_EQ(out["spec"]["devices"][0]["taints"][0]["timeAdded"], "2026-12-04T19:40:58Z");
  EXPECT_FALSE(out["spec"]["devices"][1].contains("taints"));
  auto again = ParseResourceSlice(out);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->devices[0].SameContent(slice->devices[0]));
  // A taint is content: added, changed or removed, the device differs.
  SliceDevice untainted = slice->devices[0];
  untainted.taints.clear();
  EXPECT_FALSE(untainted.SameContent(slice->devices[0]));
  SliceDevice later = slice->devices[0];
  later.taints[0].time_added = "2026-12-04T19:41:00Z";
  EXPECT_FALSE(later.SameContent(slice->devices[0]));
  // Removing it removes the key from the JSON, also over the received copy.
  slice->devices[0].taints.clear();
  EXPECT_FALSE(ResourceSliceToJson(*slice)["spec"]["devices"][0].contains("taints"));
  // A new taint is written with only the fields it has.
  slice->devices[1].taints.push_back({"liken.sh/unplugged", "", "NoExecute", ""});
  EXPECT_EQ(ResourceSliceToJson(*slice)["spec"]["devices"][1]["taints"],
            nlohmann::json::parse(R"([{"key": "liken.sh/unplugged", "effect": "NoExecute"}])"));
}

TEST(ResourceSliceJsonTest, MalformedObjectsAreErrorsNotCrashes) {
  for (const char* text : {R"([])", R"({"metadata": []})", R"({"metadata": {"name": 5}})",
                           R"({"metadata": {"ownerReferences": [{"uid": 5}]}})", R"({"spec": {"devices": {}}})",
                           R"({"spec": {"pool": {"generation": "x"}}})",
                           R"({"spec": {"devices": [{"name": "d", "taints": {}}]}})",
                           R"({"spec": {"devices": [{"name": "d", "taints": ["k"]}]}})",
                           R"({"spec": {"devices": [{"name": "d", "taints": [{"key": 5}]}]}})",
                           R"({"spec": {"devices": [{"name": "d", "attributes": {"a": {"string": 1}}}]}})",
                           R"({"spec": {"devices": [{"name": "d", "attributes": {"a": {"string": "x", "int": 1}}}]}})"}) {
    auto slice = ParseResourceSlice(nlohmann::json::parse(text));
    EXPECT_TRUE(absl::IsInvalidArgument(slice.status())) << text << " -> " << slice.status();
  }
}

TEST(ResourceClaimJsonTest, ReadsAllocationResultsForThisDriverAndPool) {
  auto claim = ParseResourceClaim(nlohmann::json::parse(R"({
    "metadata": {"name": "c", "namespace": "ns", "uid": "u"},
    "status": {"allocation": {"devices": {"results": [
      {"request": "gpu", "driver": "liken.sh", "pool": "node-a", "device": "pci-0000-00-02-0", "shareID": "s1"},
      {"request": "nic", "driver": "other.example.com", "pool": "node-a", "device": "eth0"},
      {"request": "gpu2", "driver": "liken.sh", "pool": "node-b", "device": "pci-0000-83-00-0"}]}},
      "reservedFor": [{"resource": "pods", "name": "p", "uid": "pu"}]}})"));
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_TRUE(claim->allocated);
  auto mine = claim->ResultsFor("liken.sh", "node-a");
  ASSERT_EQ(mine.size(), 1u);
  EXPECT_EQ(mine[0].device, "pci-0000-00-02-0");
  EXPECT_EQ(mine[0].share_id.value_or(""), "s1");
  ASSERT_EQ(claim->reserved_for.size(), 1u);
  EXPECT_EQ(claim->reserved_for[0].uid, "pu");
  EXPECT_FALSE(ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"uid": ["x"]}})")).ok());
  EXPECT_FALSE(ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "c"},
      "status": {"allocation": {"devices": {"results": {}}}}})")).ok());
}

TEST(ResourceClaimJsonTest, ParsesTheAnnotationsReadersNeed) {
  auto tmpl = ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "p-gpu-x7k", "annotations": {
      "resource.kubernetes.io/pod-claim-name": "gpu", "other": "x"}}})"));
  ASSERT_TRUE(tmpl.ok()) << tmpl.status();
  EXPECT_EQ(tmpl->pod_claim_name, std::optional<std::string>("gpu"));
  EXPECT_FALSE(tmpl->extended_resource_claim);
  auto ext = ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "p-extended-resources-x7k",
      "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"}}})"));
  ASSERT_TRUE(ext.ok()) << ext.status();
  EXPECT_TRUE(ext->extended_resource_claim);
  EXPECT_FALSE(ext->pod_claim_name.has_value());
  auto plain = ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "c"}})"));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->pod_claim_name.has_value());
  EXPECT_FALSE(ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "c", "annotations": [1]}})")).ok());
}

}  // namespace
}  // namespace liken::apis
