// kubectl-liken's views (clusterview/) on recorded API objects: devices and who holds them, claims and their
// health, why a claim waits; and the snapshot's reads through a fake client (refusal without resource.k8s.io/v1).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "clusterview/claim_view.h"
#include "clusterview/cluster_index.h"
#include "clusterview/cluster_snapshot.h"
#include "clusterview/device_view.h"
#include "clusterview/output_format.h"
#include "clusterview/why_view.h"
#include "test/informers/fake_kube_client.h"

namespace liken::clusterview {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

nlohmann::json Recorded() {
  std::ifstream in(std::string(LIKEN_CLUSTERVIEW_TESTDATA) + "/cluster.json");
  std::stringstream text;
  text << in.rdbuf();
  return nlohmann::json::parse(text.str());
}

// Everything in testdata/cluster.json, as FetchSnapshot would return it for every namespace.
ClusterSnapshot RecordedSnapshot() {
  nlohmann::json j = Recorded();
  ClusterSnapshot s;
  for (const auto& o : j["resourceslices"]) s.slices.push_back(*apis::ParseResourceSlice(o));
  for (const auto& o : j["resourceclaims"]) s.claims.push_back(*apis::ParseResourceClaim(o));
  for (const auto& o : j["pods"]) s.pods.push_back(o);
  for (const auto& o : j["deviceclasses"]) s.device_classes.push_back(o);
  for (const auto& o : j["nodes"]) s.nodes.push_back(o);
  return s;
}

std::vector<nlohmann::json> RecordedEvents() {
  nlohmann::json recorded = Recorded();
  std::vector<nlohmann::json> events;
  for (const auto& e : recorded["events"]) events.push_back(e);
  return events;
}

TEST(DeviceViewTest, EveryPublishedDeviceWithItsIdentitySharingTaintsAndHolders) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  EXPECT_EQ(RenderDevices(BuildDeviceRows(index, {}), OutputFormat::kTable),
            "NODE         DEVICE                     SUBSYSTEM   IDENTITY             SHARING     TAINTS                                     HELD-BY\n"
            "gpu-server   usb-1-2-1-0                tty         067b:2303            exclusive   <none>                                     <none>\n"
            "gpu-server   usb-1-3-1-0                tty         0403:6001 B7         exclusive   <none>                                     <none>\n"
            "laptop       pci-0000-00-02-0           drm         8086:5916            shared      <none>                                     default/render-a -> render-a; team/render-b\n"
            "laptop       pci-0000-00-02-0-display   drm         8086:5916            exclusive   <none>                                     <none>\n"
            "laptop       usb-1-1-1-0                tty         0403:6001 A50285BI   exclusive   <none>                                     default/serial -> serial\n"
            "laptop       usb-1-2-1-1-0              <none>      046d:c31c            exclusive   liken.sh/unplugged=device-gone:NoExecute   default/kbd -> kbd\n");
}

TEST(DeviceViewTest, WideAddsAddressDriverAndSlice) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  DeviceFilter filter;
  filter.nodes = {"laptop"};
  filter.subsystem = "tty";
  EXPECT_EQ(RenderDevices(BuildDeviceRows(index, filter), OutputFormat::kWide),
            "NODE     DEVICE        SUBSYSTEM   IDENTITY             SHARING     TAINTS   HELD-BY                    ADDRESS   DRIVER     SLICE\n"
            "laptop   usb-1-1-1-0   tty         0403:6001 A50285BI   exclusive   <none>   default/serial -> serial   1-1       ftdi_sio   laptop-liken.sh\n");
}

std::vector<std::string> Names(const std::vector<DeviceRow>& rows) {
  std::vector<std::string> names;
  for (const auto& r : rows) names.push_back(r.node + "/" + r.device.name);
  return names;
}

TEST(DeviceViewTest, FiltersByNodeSubsystemAttributeHeldAndFree) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  DeviceFilter free;
  free.free_only = true;
  EXPECT_THAT(Names(BuildDeviceRows(index, free)),
              ElementsAre("gpu-server/usb-1-2-1-0", "gpu-server/usb-1-3-1-0", "laptop/pci-0000-00-02-0-display"));
  DeviceFilter held;
  held.held_only = true;
  held.nodes = {"laptop"};
  EXPECT_THAT(Names(BuildDeviceRows(index, held)),
              ElementsAre("laptop/pci-0000-00-02-0", "laptop/usb-1-1-1-0", "laptop/usb-1-2-1-1-0"));
  DeviceFilter by_serial;
  ASSERT_TRUE(AddAttributeFilter("serial=B7", &by_serial).ok());
  EXPECT_THAT(Names(BuildDeviceRows(index, by_serial)), ElementsAre("gpu-server/usb-1-3-1-0"));
  DeviceFilter qualified;
  ASSERT_TRUE(AddAttributeFilter("liken.sh/renderNode=true", &qualified).ok());
  EXPECT_THAT(Names(BuildDeviceRows(index, qualified)), ElementsAre("laptop/pci-0000-00-02-0"));
  DeviceFilter bad;
  EXPECT_EQ(AddAttributeFilter("serial", &bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(AddAttributeFilter("=x", &bad).code(), absl::StatusCode::kInvalidArgument);
}

TEST(DeviceViewTest, JsonListsAttributesTaintsAndHolders) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  DeviceFilter filter;
  filter.nodes = {"laptop"};
  nlohmann::json doc = nlohmann::json::parse(RenderDevices(BuildDeviceRows(index, filter), OutputFormat::kJson));
  EXPECT_EQ(doc["kind"], "LikenDeviceList");
  ASSERT_EQ(doc["items"].size(), 4u);
  const auto& render = doc["items"][0];
  EXPECT_EQ(render["device"], "pci-0000-00-02-0");
  EXPECT_EQ(render["shared"], true);
  EXPECT_EQ(render["attributes"]["liken.sh/renderNode"], "true");
  ASSERT_EQ(render["heldBy"].size(), 2u);
  EXPECT_EQ(render["heldBy"][1]["namespace"], "team");
  EXPECT_EQ(render["heldBy"][1]["pods"].size(), 0u);
  EXPECT_EQ(doc["items"][3]["taints"][0]["timeAdded"], "2026-12-05T10:00:00Z");
  std::string yaml = RenderDevices(BuildDeviceRows(index, filter), OutputFormat::kYaml);
  EXPECT_THAT(yaml, HasSubstr("kind: LikenDeviceList"));
  EXPECT_THAT(yaml, HasSubstr("claim: serial"));
}

TEST(ClaimViewTest, LikenClaimsWithStateNodeDevicesHealthAndPods) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  EXPECT_EQ(RenderClaims(BuildClaimRows(index), OutputFormat::kTable, /*all_namespaces=*/true),
            "NAMESPACE   NAME       STATE       NODE     DEVICES            HEALTH            PODS                RUNNING\n"
            "default     big        pending     <none>   <none>             <none>            big(Pending)        0/1\n"
            "default     kbd        reserved    laptop   usb-1-2-1-1-0      DeviceUnplugged   kbd(Running)        1/1\n"
            "default     render-a   reserved    laptop   pci-0000-00-02-0   <none>            render-a(Pending)   0/1\n"
            "default     serial     reserved    laptop   usb-1-1-1-0        Ready             serial(Running)     1/1\n"
            "team        render-b   allocated   laptop   pci-0000-00-02-0   <none>            <none>              0/0\n");
}

TEST(ClaimViewTest, WideAddsClassesAndJsonCarriesHealthPerDevice) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  std::string wide = RenderClaims(BuildClaimRows(index), OutputFormat::kWide, /*all_namespaces=*/false);
  EXPECT_THAT(wide, HasSubstr("CLASSES"));
  EXPECT_THAT(wide, HasSubstr("serial.liken.sh"));
  EXPECT_THAT(wide, Not(HasSubstr("NAMESPACE")));
  EXPECT_THAT(wide, Not(HasSubstr("other.example.com")));  // another driver's class: not a liken claim
  nlohmann::json doc = nlohmann::json::parse(RenderClaims(BuildClaimRows(index), OutputFormat::kJson, true));
  EXPECT_EQ(doc["kind"], "LikenClaimList");
  ASSERT_EQ(doc["items"].size(), 5u);
  EXPECT_EQ(doc["items"][1]["devices"][0]["health"], "DeviceUnplugged");
  EXPECT_EQ(doc["items"][1]["pods"][0]["running"], true);
}

TEST(WhyViewTest, AWaitingClaimShowsTheSchedulersWordsSelectorsAndFreeDevicesOnNodesThatFit) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  auto target = ResolveWhyTarget(index, "default", "big");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ(target->pod, "big");
  EXPECT_EQ(RenderWhy(BuildWhyReport(index, *target, RecordedEvents()), OutputFormat::kTable),
            "Pod default/big: Pending\n"
            "  PodScheduled: False Unschedulable: 0/2 nodes are available: 1 cannot allocate all claims, 1 node(s) didn't match Pod's node affinity/selector.\n"
            "  Events:\n"
            "    Warning FailedScheduling (x3): 0/2 nodes are available: 1 cannot allocate all claims, 1 node(s) didn't match Pod's node affinity/selector.\n"
            "Claim default/big: pending\n"
            "  Request dev: class serial.liken.sh, count 3\n"
            "    class selector:   device.driver == \"liken.sh\" && has(device.attributes[\"liken.sh\"].subsystem) && device.attributes[\"liken.sh\"].subsystem == \"tty\"\n"
            "    request selector: device.attributes[\"liken.sh\"][\"vendor\"] == \"0403\"\n"
            "Free liken devices on nodes with liken devices that take pods and match the pod's nodeSelector (gpu-server): 2\n"
            "NODE         DEVICE        SHARING     TAINTS   liken.sh/subsystem   liken.sh/vendor\n"
            "gpu-server   usb-1-2-1-0   exclusive   <none>   tty                  067b\n"
            "gpu-server   usb-1-3-1-0   exclusive   <none>   tty                  0403\n"
            "kubectl-liken does not evaluate CEL (Debian ships no CEL library): which of these devices a selector "
            "accepts, and why none fits, is the scheduler's to say (above).\n");
}

TEST(WhyViewTest, APodResolvesToItsClaimsAndAnAllocatedClaimWaitsForNothing) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  ClusterIndex index(snapshot);
  auto target = ResolveWhyTarget(index, "default", "pod/serial");
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_THAT(target->claims, ElementsAre("serial"));
  std::string text = RenderWhy(BuildWhyReport(index, *target, {}), OutputFormat::kTable);
  EXPECT_THAT(text, HasSubstr("Claim default/serial: reserved, liken devices laptop/usb-1-1-1-0\n"));
  EXPECT_THAT(text, HasSubstr("Nothing waits for a device"));
  EXPECT_EQ(ResolveWhyTarget(index, "default", "pod/none").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ResolveWhyTarget(index, "team", "big").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ResolveWhyTarget(index, "default", "deployment/x").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(WhyViewTest, WithoutNodeReadAccessEveryNodeWithDevicesIsACandidateAndJsonSaysCelIsNotEvaluated) {
  ClusterSnapshot snapshot = RecordedSnapshot();
  snapshot.nodes.clear();
  snapshot.nodes_unreadable = "nodes is forbidden";
  ClusterIndex index(snapshot);
  auto target = ResolveWhyTarget(index, "default", "resourceclaim/big");
  ASSERT_TRUE(target.ok());
  nlohmann::json doc = nlohmann::json::parse(RenderWhy(BuildWhyReport(index, *target, {}), OutputFormat::kJson));
  EXPECT_EQ(doc["kind"], "LikenWhy");
  EXPECT_EQ(doc["candidateNodes"], nlohmann::json::array({"gpu-server", "laptop"}));
  EXPECT_THAT(doc["candidateNodesAre"].get<std::string>(), HasSubstr("nodes is forbidden"));
  EXPECT_EQ(doc["celEvaluated"], false);
  // Free on the laptop: the display half, and the shared render half (two claims hold it).
  std::vector<std::string> free;
  for (const auto& d : doc["freeDevices"]) free.push_back(d["node"].get<std::string>() + "/" + d["device"].get<std::string>());
  EXPECT_THAT(free, ElementsAre("gpu-server/usb-1-2-1-0", "gpu-server/usb-1-3-1-0", "laptop/pci-0000-00-02-0",
                                "laptop/pci-0000-00-02-0-display"));
  EXPECT_EQ(doc["freeDevices"][2]["holders"], 2);
  EXPECT_EQ(doc["freeDevices"][3]["attributes"]["liken.sh/vendor"], "8086");
}

TEST(WhyViewTest, AttributesReadAreNamedFromTheTextWithoutEvaluating) {
  EXPECT_THAT(AttributesRead("device.attributes[\"liken.sh\"].serial == \"x\" && "
                             "device.attributes[ \"liken.sh\" ][\"vendor\"] == \"0403\" && "
                             "has(device.attributes[\"liken.sh\"].serial) && device.attributes[\"dra.net\"].ifName != \"\""),
              ElementsAre("liken.sh/serial", "liken.sh/vendor", "dra.net/ifName"));
  EXPECT_TRUE(AttributesRead("device.driver == \"liken.sh\"").empty());
}

TEST(OutputFormatTest, KubectlsChoicesAndAlignedColumns) {
  EXPECT_EQ(*ParseOutputFormat(""), OutputFormat::kTable);
  EXPECT_EQ(*ParseOutputFormat("yaml"), OutputFormat::kYaml);
  EXPECT_EQ(ParseOutputFormat("name").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(RenderTable({"A", "LONGER"}, {{"xyz", ""}, {"q"}}), "A     LONGER\nxyz   <none>\nq     <none>\n");
}

TEST(ClusterSnapshotTest, RefusesAClusterWithoutResourceV1) {
  testing::FakeKubeClient client;
  auto snapshot = FetchSnapshot(client, {}, {});
  ASSERT_EQ(snapshot.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(snapshot.status().message()), HasSubstr("does not serve resource.k8s.io/v1"));
  for (const auto& r : client.Requests()) EXPECT_EQ(r.verb, "GET");  // nothing listed after the refusal
}

TEST(ClusterSnapshotTest, ReadsLikenSlicesOnlyAndNeverWrites) {
  testing::FakeKubeClient client;
  client.Put("/apis/resource.k8s.io/v1", {{"kind", "APIResourceList"}, {"metadata", nlohmann::json::object()}});
  nlohmann::json j = Recorded();
  for (const auto& s : j["resourceslices"]) {
    client.Put("/apis/resource.k8s.io/v1/resourceslices/" + s["metadata"]["name"].get<std::string>(), s);
  }
  nlohmann::json foreign = j["resourceslices"][0];
  foreign["metadata"]["name"] = "laptop-other";
  foreign["spec"]["driver"] = "other.example.com";
  client.Put("/apis/resource.k8s.io/v1/resourceslices/laptop-other", foreign);
  for (const auto& c : j["resourceclaims"]) {
    client.Put("/apis/resource.k8s.io/v1/namespaces/default/resourceclaims/" + c["metadata"]["name"].get<std::string>(), c);
  }
  for (const auto& n : j["nodes"]) client.Put("/api/v1/nodes/" + n["metadata"]["name"].get<std::string>(), n);
  client.PrependFailure("LIST", "/apis/resource.k8s.io/v1/deviceclasses",
                        informers::StatusFromHttp(403, R"({"message":"deviceclasses is forbidden"})"));
  SnapshotScope scope;
  scope.namespace_name = "default";
  scope.nodes = true;
  auto snapshot = FetchSnapshot(client, scope, {});
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  EXPECT_EQ(snapshot->slices.size(), 2u);
  EXPECT_EQ(snapshot->claims.size(), 6u);
  EXPECT_EQ(snapshot->nodes.size(), 3u);
  EXPECT_TRUE(client.Writes().empty());
  client.ClearRequests();
  scope.pods = false;
  ASSERT_TRUE(FetchSnapshot(client, scope, {}).ok());
  for (const auto& r : client.Requests()) EXPECT_EQ(r.path.find("/pods"), std::string::npos) << r.path;
  scope.device_classes = true;
  auto refused = FetchSnapshot(client, scope, {});
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("listing /apis/resource.k8s.io/v1/deviceclasses"));
}

// A client that serves a list in pages of one item, with continue tokens.
class PagingClient final : public informers::KubeClient {
 public:
  absl::StatusOr<nlohmann::json> Get(const std::string&) override { return nlohmann::json::object(); }
  absl::StatusOr<nlohmann::json> List(const std::string& path, const informers::RequestOptions& o,
                                      std::stop_token) override {
    size_t at = o.continue_token.empty() ? 0 : std::stoul(o.continue_token);
    nlohmann::json list{{"metadata", nlohmann::json::object()}, {"items", nlohmann::json::array()}};
    if (at < 3) list["items"].push_back({{"metadata", {{"name", "p" + std::to_string(at)}}}});
    if (at + 1 < 3) list["metadata"]["continue"] = std::to_string(at + 1);
    return list;
  }
  absl::StatusOr<nlohmann::json> Create(const std::string&, const nlohmann::json&) override { return Unexpected(); }
  absl::StatusOr<nlohmann::json> Update(const std::string&, const nlohmann::json&) override { return Unexpected(); }
  absl::Status Delete(const std::string&, const std::string&) override { return Unexpected(); }
  absl::Status Watch(const std::string&, const informers::RequestOptions&, const informers::WatchHandler&,
                     std::stop_token) override {
    return Unexpected();
  }

 private:
  static absl::Status Unexpected() { return absl::InternalError("kubectl-liken only reads"); }
};

TEST(ClusterSnapshotTest, ListAllFollowsContinueTokens) {
  PagingClient client;
  auto items = ListAll(client, "/api/v1/pods", {}, {});
  ASSERT_TRUE(items.ok());
  ASSERT_EQ(items->size(), 3u);
  EXPECT_EQ((*items)[2]["metadata"]["name"], "p2");
}

}  // namespace
}  // namespace liken::clusterview
