// The device metadata format against the standard's: golden streams, the encoding of every value kind, the
// container paths and the CDI mount.
#include "cdi/device_metadata.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cdi/cdi_spec.h"

namespace liken::cdi {
namespace {

std::string ReadTestdata(const std::string& name) {
  std::ifstream in(std::string(LIKEN_CDI_TESTDATA) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Splits a stream of pretty-printed objects (each ends with "}\n" at column 0) into parsed objects.
std::vector<nlohmann::json> SplitStream(const std::string& stream) {
  std::vector<nlohmann::json> out;
  size_t start = 0;
  while (start < stream.size()) {
    size_t end = stream.find("\n}\n", start);
    if (end == std::string::npos) break;
    out.push_back(nlohmann::json::parse(stream.substr(start, end + 3 - start)));
    start = end + 3;
  }
  EXPECT_EQ(start, stream.size()) << "trailing bytes after the last object";
  return out;
}

// The object of the golden files: a claim with a GPU render half (with /dev/kfd) and a USB serial adapter.
DeviceMetadata GoldenMetadata(bool from_template) {
  DeviceMetadata m;
  m.claim_namespace = "default";
  m.claim_name = "pod-a-gpu-x7k2q";
  m.claim_uid = "0b4c7a2e-7f3d-4a51-9c1e-2d6f8e9a1b3c";
  m.generation = 2;
  if (from_template) m.pod_claim_name = "gpu";
  m.request = "gpu";
  MetadataDevice gpu{"liken.sh", "node-a", "pci-0000-43-00-0", {}};
  gpu.attributes["liken.sh/address"] = std::string("0000:43:00.0");
  gpu.attributes["liken.sh/renderNode"] = true;
  gpu.attributes["liken.sh/displayNode"] = false;
  gpu.attributes["liken.sh/name"] = std::string("Navi 31 <PRO W7900> & co");
  gpu.attributes["resource.kubernetes.io/numaNode"] = int64_t{0};
  gpu.attributes["liken.sh/devicePaths"] = std::vector<std::string>{"/dev/dri/renderD128", "/dev/kfd"};
  gpu.attributes["liken.sh/firmware"] = apis::VersionValue{"1.2.3"};
  MetadataDevice usb{"liken.sh", "node-a", "usb-1-1-1-0", {}};
  usb.attributes["liken.sh/usbBusNumber"] = int64_t{1};
  usb.attributes["liken.sh/usbDeviceNumber"] = int64_t{13};
  usb.attributes["liken.sh/devicePaths"] = std::vector<std::string>{"/dev/bus/usb/001/013", "/dev/ttyUSB0"};
  m.devices = {gpu, usb};
  return m;
}

// The golden files were written by the standard's own encoder (k8s.io/dynamic-resource-allocation v0.37.2,
// metadata versions v1beta1 and v1alpha1) for GoldenMetadata(); see testdata/README.md.
TEST(DeviceMetadataTest, StreamIsByteForByteTheStandardEncoding) {
  EXPECT_EQ(EncodeDeviceMetadataStream(GoldenMetadata(false)), ReadTestdata("device-metadata-claim.json"));
  EXPECT_EQ(EncodeDeviceMetadataStream(GoldenMetadata(true)), ReadTestdata("device-metadata-template.json"));
}

TEST(DeviceMetadataTest, StreamHoldsEveryVersionNewestFirstAllEqual) {
  std::vector<nlohmann::json> objects = SplitStream(EncodeDeviceMetadataStream(GoldenMetadata(true)));
  ASSERT_EQ(objects.size(), 2u);
  EXPECT_EQ(objects[0]["apiVersion"], "metadata.resource.k8s.io/v1beta1");
  EXPECT_EQ(objects[1]["apiVersion"], "metadata.resource.k8s.io/v1alpha1");
  for (auto& o : objects) {
    EXPECT_EQ(o["kind"], "DeviceMetadata");
    o.erase("apiVersion");
  }
  EXPECT_EQ(objects[0], objects[1]);
}

TEST(DeviceMetadataTest, FieldsAndValueKindsAreTheApiTypes) {
  nlohmann::json o = SplitStream(EncodeDeviceMetadataStream(GoldenMetadata(true)))[0];
  EXPECT_EQ(o["metadata"], (nlohmann::json{{"name", "pod-a-gpu-x7k2q"}, {"namespace", "default"},
                                           {"uid", "0b4c7a2e-7f3d-4a51-9c1e-2d6f8e9a1b3c"}, {"generation", 2}}));
  EXPECT_EQ(o["podClaimName"], "gpu");
  ASSERT_EQ(o["requests"].size(), 1u);
  EXPECT_EQ(o["requests"][0]["name"], "gpu");
  const nlohmann::json& gpu = o["requests"][0]["devices"][0];
  EXPECT_EQ(gpu["driver"], "liken.sh");
  EXPECT_EQ(gpu["pool"], "node-a");
  EXPECT_EQ(gpu["name"], "pci-0000-43-00-0");
  const nlohmann::json& a = gpu["attributes"];
  EXPECT_EQ(a["liken.sh/address"], (nlohmann::json{{"string", "0000:43:00.0"}}));
  EXPECT_EQ(a["liken.sh/renderNode"], (nlohmann::json{{"bool", true}}));
  EXPECT_EQ(a["liken.sh/displayNode"], (nlohmann::json{{"bool", false}}));
  EXPECT_EQ(a["resource.kubernetes.io/numaNode"], (nlohmann::json{{"int", 0}}));
  EXPECT_EQ(a["liken.sh/firmware"], (nlohmann::json{{"version", "1.2.3"}}));
  EXPECT_EQ(a["liken.sh/devicePaths"], (nlohmann::json{{"strings", {"/dev/dri/renderD128", "/dev/kfd"}}}));
  EXPECT_EQ(a["liken.sh/name"], (nlohmann::json{{"string", "Navi 31 <PRO W7900> & co"}}));
}

TEST(DeviceMetadataTest, DirectClaimLeavesPodClaimNameOut) {
  nlohmann::json o = SplitStream(EncodeDeviceMetadataStream(GoldenMetadata(false)))[0];
  EXPECT_FALSE(o.contains("podClaimName"));
}

TEST(DeviceMetadataTest, RequestWithoutDevicesAndDeviceWithoutAttributesLeaveTheListsOut) {
  DeviceMetadata m = GoldenMetadata(false);
  m.devices.clear();
  nlohmann::json o = SplitStream(EncodeDeviceMetadataStream(m))[0];
  EXPECT_EQ(o["requests"], (nlohmann::json::array({{{"name", "gpu"}}})));
  m.devices = {{"liken.sh", "node-a", "dev-0", {}}};
  o = SplitStream(EncodeDeviceMetadataStream(m))[0];
  EXPECT_FALSE(o["requests"][0]["devices"][0].contains("attributes"));
}

TEST(DeviceMetadataTest, ContainerPathsFollowTheStandardLayout) {
  DeviceMetadata m = GoldenMetadata(false);
  EXPECT_EQ(MetadataContainerPath("liken.sh", m),
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/pod-a-gpu-x7k2q/gpu/liken.sh-metadata.json");
  m.pod_claim_name = "gpu-claim";
  m.request = "gpu/large";  // a subrequest is folded into its request
  EXPECT_EQ(MetadataContainerPath("liken.sh", m),
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu-claim/gpu/liken.sh-metadata.json");
  EXPECT_EQ(BaseRequestName("gpu/large"), "gpu");
  EXPECT_EQ(BaseRequestName("gpu"), "gpu");
  EXPECT_EQ(MetadataFileName("liken.sh"), "liken.sh-metadata.json");
}

TEST(DeviceMetadataTest, NamesThatCannotBePathSegmentsAreRefused) {
  DeviceMetadata m = GoldenMetadata(true);
  EXPECT_TRUE(ValidateMetadataPath(m).ok());
  for (const char* bad : {"", ".", "..", "a/b"}) {
    DeviceMetadata c = m;
    c.claim_name = bad;
    EXPECT_FALSE(ValidateMetadataPath(c).ok()) << "claim name '" << bad << "'";
  }
  for (const char* bad : {".", "..", "a/b"}) {
    DeviceMetadata c = m;
    c.pod_claim_name = bad;
    EXPECT_FALSE(ValidateMetadataPath(c).ok()) << "pod claim name '" << bad << "'";
  }
  for (const char* bad : {"", "..", "/sub", "under_score"}) {
    DeviceMetadata c = m;
    c.request = bad;
    EXPECT_FALSE(ValidateMetadataPath(c).ok()) << "request '" << bad << "'";
  }
}

TEST(DeviceMetadataTest, CdiDeviceBindMountsTheFileReadOnly) {
  Device d = MetadataCdiDevice("ab4c7a2e", "gpu", "/var/lib/kubelet/plugins/liken.sh/metadata/ab4c7a2e/gpu/liken.sh-metadata.json",
                               "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/c/gpu/liken.sh-metadata.json");
  EXPECT_EQ(d.name, "ab4c7a2e_gpu");
  EXPECT_TRUE(IsValidDeviceName(d.name));
  ASSERT_EQ(d.container_edits.mounts.size(), 1u);
  EXPECT_TRUE(d.container_edits.device_nodes.empty());
  EXPECT_EQ(d.container_edits.mounts[0].options, (std::vector<std::string>{"ro", "nosuid", "nodev", "bind"}));

  Spec spec;
  spec.kind = "liken.sh/device";
  spec.devices = {d};
  nlohmann::json j = nlohmann::json::parse(SpecToJson(spec));
  EXPECT_EQ(j["cdiVersion"], "0.3.0");  // mounts without `type` need nothing newer (the UID starts with a letter)
  EXPECT_EQ(j["devices"][0]["containerEdits"],
            (nlohmann::json{{"mounts",
                             {{{"hostPath", d.container_edits.mounts[0].host_path},
                               {"containerPath", d.container_edits.mounts[0].container_path},
                               {"options", {"ro", "nosuid", "nodev", "bind"}}}}}}));
  auto parsed = ParseSpec(SpecToJson(spec));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->devices, spec.devices);
}

TEST(DeviceMetadataTest, MalformedMountsAreRefusedByName) {
  auto no_host = ParseSpec(R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x","containerEdits":
                              {"mounts":[{"containerPath":"/c"}]}}]})");
  ASSERT_FALSE(no_host.ok());
  EXPECT_NE(no_host.status().message().find("devices[0].containerEdits.mounts[0].hostPath"), std::string::npos);
  auto bad_options = ParseSpec(R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x","containerEdits":
                                   {"mounts":[{"hostPath":"/h","containerPath":"/c","options":[1]}]}}]})");
  EXPECT_FALSE(bad_options.ok());
}

}  // namespace
}  // namespace liken::cdi
