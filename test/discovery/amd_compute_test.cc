// The AMD compute extension: /dev/kfd travels with the render half of a GPU bound to amdgpu, and nowhere else.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "discovery/amd_compute.h"
#include "discovery/attributes.h"
#include "discovery/report_format.h"
#include "discovery/scanner.h"
#include "test/discovery/machine_parts.h"
#include "test/discovery/sysfs_tree.h"

namespace liken::discovery {
namespace {

using ::liken::testing::AddPci;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kGpuA[] = "/devices/pci0000:00/0000:00:01.1/0000:03:00.0";
constexpr char kGpuB[] = "/devices/pci0000:80/0000:80:01.1/0000:83:00.0";

class AmdComputeTest : public ::testing::Test {
 protected:
  Inventory Scan() {
    ScanOptions o;
    o.sysfs_root = tree_.sysfs();
    o.dev_root = tree_.dev();
    o.proc_root = tree_.proc();
    o.pci_ids_path = tree_.root() + "/no-pci.ids";
    o.match_modules = false;
    auto inv = NewSysfsScanner(o)->Scan();
    EXPECT_TRUE(inv.ok()) << inv.status();
    return inv.ok() ? *inv : Inventory{};
  }

  // A GPU at `devpath` bound to `driver` with card<card> and renderD<128+card>.
  void AddGpu(const std::string& devpath, const std::string& driver, int card, const std::string& class_code = "0x030000") {
    AddPci(tree_, devpath, driver, "1002", "73a3", class_code, "0");
    tree_.ClassDevice(devpath + "/drm/card" + std::to_string(card), "drm", "dri/card" + std::to_string(card),
                      "226:" + std::to_string(card), {{"DEVTYPE", "drm_minor"}});
    std::string render = "renderD" + std::to_string(128 + card);
    tree_.ClassDevice(devpath + "/drm/" + render, "drm", "dri/" + render, "226:" + std::to_string(128 + card),
                      {{"DEVTYPE", "drm_minor"}});
  }

  void AddKfd(const std::string& devname = "kfd", const std::string& dev = "235:0") {
    tree_.ClassDevice("/devices/virtual/kfd/kfd", "kfd", devname, dev);
  }

  static std::vector<std::string> Paths(const PublishedDevice* d) {
    std::vector<std::string> out;
    if (d == nullptr) return out;
    for (const auto& n : d->nodes) out.push_back(n.path);
    return out;
  }

  // The warnings about the kfd device (the test's pci.ids is absent, which warns too).
  static std::vector<std::string> KfdWarnings(const Inventory& inv) {
    std::vector<std::string> out;
    for (const auto& w : inv.warnings) {
      if (w.device.find("/devices/virtual/kfd/kfd") != std::string::npos) out.push_back(w.message);
    }
    return out;
  }

  static bool AnyDelivers(const Inventory& inv, const std::string& path) {
    for (const auto& d : inv.published) {
      for (const auto& n : d.nodes) {
        if (n.path == path) return true;
      }
    }
    return false;
  }

  liken::testing::SysfsTree tree_;
};

TEST_F(AmdComputeTest, RenderHalfOfEveryAmdgpuGpuDeliversKfd) {
  AddGpu(kGpuA, "amdgpu", 1);
  AddGpu(kGpuB, "amdgpu", 2, "0x038000");  // an Instinct accelerator: display controller, other
  AddKfd();
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0")), ElementsAre("/dev/dri/renderD129", "/dev/kfd"));
  EXPECT_THAT(Paths(inv.Find("pci-0000-83-00-0")), ElementsAre("/dev/dri/renderD130", "/dev/kfd"));
  const PublishedDevice* render = inv.Find("pci-0000-03-00-0");
  ASSERT_NE(render, nullptr);
  const DeviceNode& kfd = render->nodes[1];
  EXPECT_EQ(kfd.type, 'c');
  EXPECT_EQ(kfd.major, 235u);
  EXPECT_EQ(kfd.minor, 0u);
  EXPECT_EQ(kfd.subsystem, "kfd");
  // The render half stays what it was: shareable, a drm device with a render node.
  EXPECT_TRUE(render->allow_multiple_allocations);
  EXPECT_EQ(std::get<std::string>(render->attributes.at(kAttrSubsystem)), "drm");
  EXPECT_TRUE(std::get<bool>(render->attributes.at(kAttrRenderNode)));
}

TEST_F(AmdComputeTest, DisplayHalfNeverDeliversKfd) {
  AddGpu(kGpuA, "amdgpu", 1);
  AddKfd();
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0-display")), ElementsAre("/dev/dri/card1"));
}

TEST_F(AmdComputeTest, NoKfdWithoutTheKfdDevice) {
  AddGpu(kGpuA, "amdgpu", 1);
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0")), ElementsAre("/dev/dri/renderD129"));
  EXPECT_THAT(KfdWarnings(inv), IsEmpty());
}

TEST_F(AmdComputeTest, OtherDriversNeverDeliverKfd) {
  AddGpu(kGpuA, "radeon", 1);  // an older AMD GPU on the radeon driver: no kfd through it
  AddPci(tree_, "/devices/pci0000:00/0000:00:02.0", "i915", "8086", "5917", "0x030000");
  tree_.ClassDevice("/devices/pci0000:00/0000:00:02.0/drm/renderD128", "drm", "dri/renderD128", "226:128");
  AddKfd();
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0")), ElementsAre("/dev/dri/renderD129"));
  EXPECT_THAT(Paths(inv.Find("pci-0000-00-02-0")), ElementsAre("/dev/dri/renderD128"));
  EXPECT_FALSE(AnyDelivers(inv, "/dev/kfd"));
}

TEST_F(AmdComputeTest, AmdgpuWithoutRenderNodeDeliversNoKfd) {
  AddPci(tree_, kGpuA, "amdgpu", "1002", "73a3", "0x030000", "0");
  tree_.ClassDevice(std::string(kGpuA) + "/drm/card1", "drm", "dri/card1", "226:1");
  AddKfd();
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0-display")), ElementsAre("/dev/dri/card1"));
  EXPECT_FALSE(AnyDelivers(inv, "/dev/kfd"));
}

TEST_F(AmdComputeTest, NoOtherVirtualNodeIsDelivered) {
  AddGpu(kGpuA, "amdgpu", 1);
  AddKfd();
  tree_.ClassDevice("/devices/virtual/misc/uhid", "misc", "uhid", "10:239");
  tree_.ClassDevice("/devices/virtual/dma_heap/system", "dma_heap", "dma_heap/system", "251:0");
  tree_.ClassDevice("/devices/virtual/drm/ttm", "drm");
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0")), ElementsAre("/dev/dri/renderD129", "/dev/kfd"));
  EXPECT_FALSE(AnyDelivers(inv, "/dev/uhid"));
  EXPECT_FALSE(AnyDelivers(inv, "/dev/dma_heap/system"));
}

TEST_F(AmdComputeTest, KfdDeviceWithAnotherNameIsNotDelivered) {
  AddGpu(kGpuA, "amdgpu", 1);
  AddKfd("dri/renderD200", "226:200");
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0")), ElementsAre("/dev/dri/renderD129"));
  EXPECT_THAT(KfdWarnings(inv), ElementsAre(HasSubstr("DEVNAME is not kfd")));
}

TEST_F(AmdComputeTest, KfdDeviceWithMalformedDevFileIsNotDelivered) {
  AddGpu(kGpuA, "amdgpu", 1);
  AddKfd("kfd", "235");
  Inventory inv = Scan();
  EXPECT_THAT(Paths(inv.Find("pci-0000-03-00-0")), ElementsAre("/dev/dri/renderD129"));
  EXPECT_THAT(KfdWarnings(inv), ElementsAre(HasSubstr("`dev`")));
}

TEST_F(AmdComputeTest, AddAmdComputeNodeTouchesOnlyTheRenderHalf) {
  DeviceNode kfd{"/dev/kfd", 'c', 511, 0, "kfd"};
  DeliveryDecision decision;
  DeliverySplit render;
  render.render_node = true;
  render.nodes = {{"/dev/dri/renderD128", 'c', 226, 128, "drm"}};
  DeliverySplit display;
  display.suffix = "-display";
  display.display_node = true;
  display.nodes = {{"/dev/dri/card0", 'c', 226, 0, "drm"}};
  decision.devices = {render, display};

  DeliveryDecision other = decision;
  AddAmdComputeNode("nouveau", kfd, &other);
  EXPECT_EQ(other.devices[0].nodes.size(), 1u);
  AddAmdComputeNode("amdgpu", std::nullopt, &other);
  EXPECT_EQ(other.devices[0].nodes.size(), 1u);

  AddAmdComputeNode("amdgpu", kfd, &decision);
  ASSERT_EQ(decision.devices[0].nodes.size(), 2u);
  EXPECT_EQ(decision.devices[0].nodes[1], kfd);
  EXPECT_EQ(decision.devices[1].nodes.size(), 1u);
}

TEST_F(AmdComputeTest, ReportStatesTheExtensionOnlyWhenKfdIsDelivered) {
  AddGpu(kGpuA, "amdgpu", 1);
  Inventory without = Scan();
  EXPECT_THAT(ReportToText(without), Not(HasSubstr("/dev/kfd")));
  EXPECT_THAT(ReportToJson(without)["notes"], IsEmpty());

  AddKfd();
  Inventory with = Scan();
  EXPECT_THAT(ReportToText(with), HasSubstr(std::string("Note: ") + kKfdNote));
  ASSERT_EQ(ReportToJson(with)["notes"].size(), 1u);
  EXPECT_EQ(ReportToJson(with)["notes"][0], kKfdNote);
}

}  // namespace
}  // namespace liken::discovery
