// Prepares and unprepares real claims of a recorded machine: run under
//   umockdev-run -d test/machines/laptop.umockdev -- liken_kubelet_machine_test
// The real sysfs scanner reads the recording; the CDI specs must name the /dev nodes exactly as they stat.
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cdi/cdi_spec.h"
#include "common/files.h"
#include "discovery/scanner.h"
#include "kubelet/kubelet_plugin.h"
#include "test/kubelet/fake_claim_lookup.h"
#include "test/kubelet/test_kubelet.h"
#include "test/kubelet/test_objects.h"
#include "test/kubelet/test_support.h"

namespace liken::testing {
namespace {

constexpr char kNode[] = "laptop";

class MachineClaimsTest : public ::testing::TestWithParam<DraVersion> {
 protected:
  void SetUp() override {
    if (std::getenv("UMOCKDEV_DIR") == nullptr) GTEST_SKIP() << "not running under umockdev-run";
    discovery::ScanOptions scan;
    scan.modules_root = std::string(LIKEN_SOURCE_DIR) + "/test/machines/modules";
    scan.kernel_release = "recorded";
    scanner_ = discovery::NewSysfsScanner(scan);
    auto inventory = scanner_->Scan();
    LIKEN_ASSERT_OK(inventory);
    inventory_ = *inventory;
    std::ofstream(dir_.path() + "/boot_id") << "laptop-boot\n";
    kubelet::KubeletPluginOptions o;
    o.node_name = kNode;
    o.kubelet_root = dir_.path() + "/kubelet";
    o.cdi_root = dir_.path() + "/cdi";
    o.boot_id_path = dir_.path() + "/boot_id";
    o.sysfs_root = "/sys";
    o.device_metadata = false;  // these tests pin the device-node specs; metadata: device_metadata_test.cc
    cdi_root_ = o.cdi_root;
    plugin_ = std::make_unique<kubelet::KubeletPlugin>(o, scanner_.get(), &lookup_, nullptr);
    LIKEN_ASSERT_OK(plugin_->Start());
    plugin_->UpdateInventory(inventory_);
    auto k = TestKubelet::Register(o.kubelet_root, GetParam());
    LIKEN_ASSERT_OK(k);
    kubelet_ = std::move(*k);
  }

  void TearDown() override {
    kubelet_.reset();
    plugin_.reset();
  }

  // Prepares a claim on `devices`, checks every field of its spec against the recording's /dev, unprepares.
  void PrepareAndCheck(const std::string& uid, const std::vector<std::string>& devices) {
    std::vector<TestResult> results;
    for (size_t i = 0; i < devices.size(); ++i) results.push_back({absl::StrCat("r", i), devices[i]});
    lookup_.Add(ClaimJson("ns", "claim-" + uid.substr(0, 8), uid, kNode, results));
    kubelet::ClaimRef ref{"ns", uid, "claim-" + uid.substr(0, 8)};
    auto answer = kubelet_->Prepare({ref});
    LIKEN_ASSERT_OK(answer);
    ASSERT_EQ(answer->at(uid).error, "");
    ASSERT_EQ(answer->at(uid).devices.size(), devices.size());

    auto text = ReadFileToString(absl::StrCat(cdi_root_, "/liken.sh-", uid, ".json"));
    LIKEN_ASSERT_OK(text);
    auto spec = cdi::ParseSpec(*text);
    LIKEN_ASSERT_OK(spec);
    nlohmann::json want_devices = nlohmann::json::array();
    for (size_t i = 0; i < devices.size(); ++i) {
      const discovery::PublishedDevice* published = nullptr;
      for (const auto& p : inventory_.published) {
        if (p.name == devices[i]) published = &p;
      }
      ASSERT_NE(published, nullptr) << devices[i] << " is not published on the recording";
      EXPECT_EQ(answer->at(uid).devices[i].cdi_device_ids,
                std::vector<std::string>{absl::StrCat("liken.sh/device=", uid, "-", devices[i])});
      nlohmann::json nodes = nlohmann::json::array();
      for (const auto& n : published->nodes) {
        struct stat st;
        ASSERT_EQ(::stat(n.path.c_str(), &st), 0) << n.path;
        EXPECT_EQ(major(st.st_rdev), n.major) << n.path;
        EXPECT_EQ(minor(st.st_rdev), n.minor) << n.path;
        nodes.push_back({{"path", n.path}, {"type", S_ISBLK(st.st_mode) ? "b" : "c"}, {"major", major(st.st_rdev)},
                         {"minor", minor(st.st_rdev)}});
      }
      want_devices.push_back({{"name", absl::StrCat(uid, "-", devices[i])}, {"containerEdits", {{"deviceNodes", nodes}}}});
    }
    nlohmann::json want = {{"cdiVersion", (uid[0] >= '0' && uid[0] <= '9') ? "0.5.0" : "0.3.0"},
                           {"kind", "liken.sh/device"},
                           {"devices", want_devices}};
    EXPECT_EQ(nlohmann::json::parse(*text), want);

    auto un = kubelet_->Unprepare({ref});
    LIKEN_ASSERT_OK(un);
    EXPECT_EQ(un->at(uid), "");
    struct stat st;
    EXPECT_NE(::lstat(absl::StrCat(cdi_root_, "/liken.sh-", uid, ".json").c_str(), &st), 0);
  }

  TempDir dir_;
  std::string cdi_root_;
  std::unique_ptr<discovery::Scanner> scanner_;
  discovery::Inventory inventory_;
  FakeClaimLookup lookup_;
  std::unique_ptr<kubelet::KubeletPlugin> plugin_;
  std::unique_ptr<TestKubelet> kubelet_;
};

TEST_P(MachineClaimsTest, GpuRenderAndDisplayNodes) {
  PrepareAndCheck("a0000000-0000-4000-8000-00000000aa01", {"pci-0000-00-02-0", "pci-0000-00-02-0-display"});
}

TEST_P(MachineClaimsTest, UsbSerialTtyAndUsbfsNodes) {
  PrepareAndCheck("10000000-0000-4000-8000-00000000aa02", {"usb-1-1-1-0"});
}

TEST_P(MachineClaimsTest, AudioControllerWithJackInputs) {
  PrepareAndCheck("b0000000-0000-4000-8000-00000000aa03", {"pci-0000-00-1f-3"});
}

TEST_P(MachineClaimsTest, DeviceTheMachineDoesNotHaveFailsThatClaim) {
  const std::string uid = "c0000000-0000-4000-8000-00000000aa04";
  lookup_.Add(ClaimJson("ns", "ghost", uid, kNode, {{"r", "usb-9-9-1-0"}}));
  auto answer = kubelet_->Prepare({{"ns", uid, "ghost"}});
  LIKEN_ASSERT_OK(answer);
  EXPECT_NE(answer->at(uid).error.find("usb-9-9-1-0 is not present on this node"), std::string::npos)
      << answer->at(uid).error;
}

INSTANTIATE_TEST_SUITE_P(Versions, MachineClaimsTest, ::testing::Values(DraVersion::kV1, DraVersion::kV1beta1),
                         [](const auto& info) { return info.param == DraVersion::kV1 ? "v1" : "v1beta1"; });

}  // namespace
}  // namespace liken::testing
