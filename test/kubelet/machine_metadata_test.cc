// Device metadata of real claims on a recorded machine: run under
//   umockdev-run -d test/machines/amd-gpus.umockdev -- liken_kubelet_machine_metadata_test   (GPUs and /dev/kfd)
//   umockdev-run -d test/machines/laptop.umockdev -- liken_kubelet_machine_metadata_test     (USB numbers)
// The real sysfs scanner reads the recording; each file must carry the device's published attributes and
// exactly the nodes its CDI spec delivers, as they stat.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "common/files.h"
#include "discovery/report_format.h"
#include "discovery/scanner.h"
#include "kubelet/kubelet_plugin.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::testing {
namespace {

constexpr char kNode[] = "node-a";

class MachineMetadataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::getenv("UMOCKDEV_DIR") == nullptr) GTEST_SKIP() << "not running under umockdev-run";
    discovery::ScanOptions scan;
    scan.match_modules = false;
    scanner_ = discovery::NewSysfsScanner(scan);
    auto inventory = scanner_->Scan();
    LIKEN_ASSERT_OK(inventory);
    inventory_ = *inventory;
    std::ofstream(dir_.path() + "/boot_id") << "recorded-boot\n";
    kubelet::KubeletPluginOptions o;
    o.node_name = kNode;
    o.kubelet_root = dir_.path() + "/kubelet";
    o.cdi_root = dir_.path() + "/cdi";
    o.boot_id_path = dir_.path() + "/boot_id";
    o.sysfs_root = "/sys";
    kubelet_root_ = o.kubelet_root;
    cdi_root_ = o.cdi_root;
    plugin_ = std::make_unique<kubelet::KubeletPlugin>(o, scanner_.get(), &lookup_, nullptr);
    LIKEN_ASSERT_OK(plugin_->Start());
    plugin_->UpdateInventory(inventory_);
    auto k = TestKubelet::Register(o.kubelet_root, DraVersion::kV1);
    LIKEN_ASSERT_OK(k);
    kubelet_ = std::move(*k);
  }

  void TearDown() override {
    kubelet_.reset();
    plugin_.reset();
  }

  const discovery::PublishedDevice* Published(const std::string& name) const { return inventory_.Find(name); }

  // Prepares claim `name` with one request per device, and returns the first object of each request's file.
  std::map<std::string, nlohmann::json> PrepareAndRead(const std::string& uid, const std::string& name,
                                                       const std::vector<TestResult>& results) {
    lookup_.Add(ClaimJson("ns", name, uid, kNode, results));
    auto answer = kubelet_->Prepare({{"ns", uid, name}});
    EXPECT_TRUE(answer.ok()) << answer.status();
    if (!answer.ok()) return {};
    EXPECT_EQ(answer->at(uid).error, "");
    std::map<std::string, nlohmann::json> out;
    for (const auto& r : results) {
      auto text = ReadFileToString(
          absl::StrCat(kubelet_root_, "/plugins/liken.sh/metadata/", uid, "/", r.request, "/liken.sh-metadata.json"));
      EXPECT_TRUE(text.ok()) << text.status();
      if (!text.ok()) continue;
      out[r.request] = nlohmann::json::parse(text->substr(0, text->find("\n}\n") + 3));
    }
    return out;
  }

  // Every published attribute of `device` appears in `attrs` with its API encoding, and devicePaths lists
  // exactly its nodes, each of which stats as the recorded character device.
  void ExpectCarriesPublished(const nlohmann::json& attrs, const discovery::PublishedDevice& device) {
    for (const auto& [key, value] : device.attributes) {
      nlohmann::json want = {{std::holds_alternative<std::string>(value)  ? "string"
                              : std::holds_alternative<bool>(value)      ? "bool"
                              : std::holds_alternative<int64_t>(value)   ? "int"
                                                                          : "version",
                              nlohmann::json::parse(discovery::PlainAttributeValue(value).dump())}};
      EXPECT_EQ(attrs[key], want) << device.name << " " << key;
    }
    nlohmann::json paths = nlohmann::json::array();
    for (const auto& n : device.nodes) {
      paths.push_back(n.path);
      struct stat st;
      ASSERT_EQ(::stat(n.path.c_str(), &st), 0) << n.path;
      EXPECT_EQ(major(st.st_rdev), n.major) << n.path;
      EXPECT_EQ(minor(st.st_rdev), n.minor) << n.path;
    }
    EXPECT_EQ(attrs["liken.sh/devicePaths"], (nlohmann::json{{"strings", paths}})) << device.name;
  }

  TempDir dir_;
  std::string kubelet_root_, cdi_root_;
  std::unique_ptr<discovery::Scanner> scanner_;
  discovery::Inventory inventory_;
  FakeClaimLookup lookup_;
  std::unique_ptr<kubelet::KubeletPlugin> plugin_;
  std::unique_ptr<TestKubelet> kubelet_;
};

TEST_F(MachineMetadataTest, BothAmdGpusCarryKfdTheirAttributesAndTheirNuma) {
  const auto* w7900 = Published("pci-0000-43-00-0");
  const auto* mi210 = Published("pci-0000-c3-00-0");
  if (w7900 == nullptr || mi210 == nullptr) GTEST_SKIP() << "not the amd-gpus recording";
  const std::string uid = "d1b2c3d4-0000-4000-8000-0000000000d1";
  auto files = PrepareAndRead(uid, "compute", {{"w7900", w7900->name}, {"mi210", mi210->name}});
  ASSERT_EQ(files.size(), 2u);
  const nlohmann::json& a = files["w7900"]["requests"][0]["devices"][0]["attributes"];
  const nlohmann::json& b = files["mi210"]["requests"][0]["devices"][0]["attributes"];
  ExpectCarriesPublished(a, *w7900);
  ExpectCarriesPublished(b, *mi210);
  EXPECT_EQ(a["liken.sh/devicePaths"], (nlohmann::json{{"strings", {"/dev/dri/renderD128", "/dev/kfd"}}}));
  EXPECT_EQ(b["liken.sh/devicePaths"], (nlohmann::json{{"strings", {"/dev/dri/renderD129", "/dev/kfd"}}}));
  EXPECT_EQ(a["resource.kubernetes.io/numaNode"], (nlohmann::json{{"int", 0}}));
  EXPECT_EQ(b["resource.kubernetes.io/numaNode"], (nlohmann::json{{"int", 1}}));
  EXPECT_EQ(b["liken.sh/classCode"], (nlohmann::json{{"string", "038000"}}));
  EXPECT_FALSE(a.contains("liken.sh/usbBusNumber"));

  // The CDI spec delivers /dev/kfd with each render half, and mounts each request's file.
  auto text = ReadFileToString(absl::StrCat(cdi_root_, "/liken.sh-", uid, ".json"));
  LIKEN_ASSERT_OK(text);
  nlohmann::json spec = nlohmann::json::parse(*text);
  ASSERT_EQ(spec["devices"].size(), 4u);
  for (int i : {0, 1}) {
    const nlohmann::json& nodes = spec["devices"][i]["containerEdits"]["deviceNodes"];
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[1], (nlohmann::json{{"path", "/dev/kfd"}, {"type", "c"}, {"major", 511}, {"minor", 0}}));
  }
  EXPECT_EQ(spec["devices"][2]["containerEdits"]["mounts"][0]["containerPath"],
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/compute/w7900/liken.sh-metadata.json");
  EXPECT_EQ(spec["devices"][3]["containerEdits"]["mounts"][0]["containerPath"],
            "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/compute/mi210/liken.sh-metadata.json");

  // For checks with other tools (a CDI library, the standard's reader): LIKEN_TEST_ARTIFACTS=DIR keeps copies.
  if (const char* keep = std::getenv("LIKEN_TEST_ARTIFACTS")) {
    std::ofstream(absl::StrCat(keep, "/liken.sh-", uid, ".json")) << *text;
    for (const char* request : {"w7900", "mi210"}) {
      auto file = ReadFileToString(
          absl::StrCat(kubelet_root_, "/plugins/liken.sh/metadata/", uid, "/", request, "/liken.sh-metadata.json"));
      LIKEN_ASSERT_OK(file);
      std::ofstream(absl::StrCat(keep, "/", request, "-metadata.json")) << *file;
    }
  }
}

TEST_F(MachineMetadataTest, UsbNumbersAreTheDevicesBusnumAndDevnum) {
  const auto* ftdi = Published("usb-1-1-1-0");
  if (ftdi == nullptr) GTEST_SKIP() << "not the laptop recording";
  auto files = PrepareAndRead("e1b2c3d4-0000-4000-8000-0000000000e1", "serial", {{"port", ftdi->name}});
  ASSERT_EQ(files.size(), 1u);
  const nlohmann::json& attrs = files["port"]["requests"][0]["devices"][0]["attributes"];
  ExpectCarriesPublished(attrs, *ftdi);
  auto busnum = ReadAttribute("/sys/bus/usb/devices/1-1/busnum");
  auto devnum = ReadAttribute("/sys/bus/usb/devices/1-1/devnum");
  LIKEN_ASSERT_OK(busnum);
  LIKEN_ASSERT_OK(devnum);
  EXPECT_EQ(attrs["liken.sh/usbBusNumber"], (nlohmann::json{{"int", std::stoi(*busnum)}}));
  EXPECT_EQ(attrs["liken.sh/usbDeviceNumber"], (nlohmann::json{{"int", std::stoi(*devnum)}}));
}

}  // namespace
}  // namespace liken::testing
