// One test (or more) per rule of the device contract, on plain-directory sysfs trees.
#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "discovery/attributes.h"
#include "discovery/scanner.h"
#include "test/discovery/machine_parts.h"
#include "test/discovery/sysfs_tree.h"

namespace liken::discovery {
namespace {

using ::liken::testing::AddPci;
using ::liken::testing::AddUsbDevice;
using ::liken::testing::AddUsbInterface;
using ::liken::testing::AddXhciWithRootHub;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kGpu[] = "/devices/pci0000:00/0000:00:02.0";
constexpr char kHda[] = "/devices/pci0000:00/0000:00:1f.3";
constexpr char kNvme[] = "/devices/pci0000:00/0000:00:1d.0/0000:02:00.0";
constexpr char kRootHub[] = "/devices/pci0000:00/0000:00:14.0/usb1";

class ScannerRulesTest : public ::testing::Test {
 protected:
  ScannerRulesTest() {
    tree_.File("pci.ids",
               "# test database\n8086  Intel Corporation\n\t5917  UHD Graphics 620\n\t\t17aa 225d  ThinkPad\n"
               "\t9d71  Sunrise Point-LP HD Audio\n144d  Samsung\n\ta808  NVMe SSD Controller SM981/PM981\n"
               "C 03  Display controller\n\t00  VGA compatible controller\n");
    tree_.File("modules/test/modules.alias",
               "# Aliases extracted from modules themselves.\n"
               "alias pci:v000010ECd0000525Asv*sd*bc*sc*i* rtsx_pci\n"
               "alias pci:v*d*sv*sd*bc0Csc03i30* xhci-pci\n"
               "alias usb:v138Ap0097d*dc*dsc*dp*ic*isc*ip*in* fprint-vfs\n"
               "alias acpi*:PNP0A08:* builtin_thing\n");
    tree_.File("modules/test/modules.builtin", "kernel/drivers/usb/host/xhci-pci.ko\n");
  }

  ScanOptions Options() const {
    ScanOptions o;
    o.sysfs_root = tree_.sysfs();
    o.dev_root = tree_.dev();
    o.proc_root = tree_.proc();
    o.pci_ids_path = tree_.root() + "/pci.ids";
    o.modules_root = tree_.root() + "/modules";
    o.kernel_release = "test";
    return o;
  }

  Inventory Scan(StorageRoles roles = StorageRoles::kWithholdAll) {
    ScanOptions o = Options();
    o.storage_roles = roles;
    auto inv = NewSysfsScanner(o)->Scan();
    EXPECT_TRUE(inv.ok()) << inv.status();
    return inv.ok() ? *inv : Inventory{};
  }

  static std::vector<std::string> Names(const Inventory& inv) {
    std::vector<std::string> out;
    for (const auto& d : inv.published) out.push_back(d.name);
    return out;
  }

  static std::vector<std::string> Paths(const PublishedDevice& d) {
    std::vector<std::string> out;
    for (const auto& n : d.nodes) out.push_back(n.path);
    return out;
  }

  static std::string Str(const PublishedDevice& d, const char* key) {
    auto it = d.attributes.find(key);
    if (it == d.attributes.end()) return "<absent>";
    if (auto* s = std::get_if<std::string>(&it->second)) return *s;
    if (auto* b = std::get_if<bool>(&it->second)) return *b ? "true" : "false";
    if (auto* i = std::get_if<int64_t>(&it->second)) return "int:" + std::to_string(*i);
    return "<other>";
  }

  void AddIntelGpu() {
    AddPci(tree_, kGpu, "i915", "8086", "5917", "0x030000");
    std::string g = kGpu;
    tree_.ClassDevice(g + "/drm/card0", "drm", "dri/card0", "226:0");
    tree_.ClassDevice(g + "/drm/renderD128", "drm", "dri/renderD128", "226:128");
    tree_.ClassDevice(g + "/drm/card0-eDP-1", "drm");  // a connector: no node
    tree_.ClassDevice(g + "/drm/card0-DP-1/drm_dp_aux0", "drm_dp_aux_dev", "drm_dp_aux0", "239:0");
    tree_.ClassDevice(g + "/graphics/fb0", "graphics", "fb0", "29:0");
    tree_.OtherBusDevice(g + "/i2c-3", "i2c", {{"DEVTYPE", "i2c_adapter"}});
    tree_.ClassDevice(g + "/i2c-3/i2c-dev/i2c-3", "i2c-dev", "i2c-3", "89:3");
    tree_.OtherBusDevice(g + "/i2c-4", "i2c", {{"DEVTYPE", "i2c_adapter"}});
    tree_.ClassDevice(g + "/i2c-4/i2c-dev/i2c-4", "i2c-dev", "i2c-4", "89:4");
    tree_.OtherBusDevice(g + "/i2c-4/4-0050", "i2c");  // a DDC EEPROM client on the bus
  }

  void AddNvme() {
    AddPci(tree_, "/devices/pci0000:00/0000:00:1d.0", "pcieport", "8086", "9d18", "0x060400");
    AddPci(tree_, kNvme, "nvme", "144d", "a808", "0x010802");
    std::string n = kNvme;
    tree_.ClassDevice(n + "/nvme/nvme0", "nvme", "nvme0", "238:0");
    tree_.ClassDevice(n + "/nvme/nvme0/nvme0n1", "block", "nvme0n1", "259:0", {{"DEVTYPE", "disk"}});
    tree_.Dir("sys" + n + "/nvme/nvme0/nvme0n1/holders");
    tree_.ClassDevice(n + "/nvme/nvme0/nvme0n1/nvme0n1p1", "block", "nvme0n1p1", "259:1", {{"DEVTYPE", "partition"}});
    tree_.Dir("sys" + n + "/nvme/nvme0/nvme0n1/nvme0n1p1/holders");
  }

  liken::testing::SysfsTree tree_;
};

// Rule 1: a driver is bound. Hardware without one is unclaimed, with the modules that match it.
TEST_F(ScannerRulesTest, DeviceWithoutDriverIsUnclaimedWithMatchingLoadableModules) {
  AddPci(tree_, "/devices/pci0000:00/0000:00:1c.0/0000:03:00.0", "", "10ec", "525a", "0xff0000");
  AddPci(tree_, "/devices/pci0000:00/0000:00:15.0", "", "8086", "15b5", "0x0c0330");  // xhci-pci is built in
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), IsEmpty());
  ASSERT_EQ(inv.unclaimed.size(), 2u);
  EXPECT_EQ(inv.unclaimed[0].bus, "pci");
  EXPECT_EQ(inv.unclaimed[0].address, "0000:00:15.0");
  EXPECT_THAT(inv.unclaimed[0].modules, IsEmpty());  // its only module is built in
  EXPECT_EQ(inv.unclaimed[1].address, "0000:03:00.0");
  EXPECT_THAT(inv.unclaimed[1].modules, ElementsAre("rtsx_pci"));
}

// Rule 2: a claim must supply something: a bound device without nodes is not published.
TEST_F(ScannerRulesTest, BoundDeviceWithoutNodesIsNotPublished) {
  AddPci(tree_, "/devices/pci0000:00/0000:00:1c.0/0000:03:00.0", "iwlwifi", "8086", "24fd", "0x028000");
  tree_.ClassDevice("/devices/pci0000:00/0000:00:1c.0/0000:03:00.0/net/wlp3s0", "net");
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), IsEmpty());
  EXPECT_THAT(inv.unclaimed, IsEmpty());
  // The report still accounts for it.
  ASSERT_EQ(inv.left_out.size(), 1u);
  EXPECT_EQ(inv.left_out[0].name, "pci-0000-03-00-0");
  EXPECT_EQ(inv.left_out[0].driver, "iwlwifi");
  EXPECT_EQ(inv.left_out[0].reason, "network interface only (wlp3s0)");
}

// A GPU on NVIDIA's proprietary driver: bound, nothing in its subtree (its /dev/nvidia* nodes have no class
// device, and without nvidia-drm there is no drm directory). Left out, saying why.
TEST_F(ScannerRulesTest, GpuWhoseDriverMakesNodesOutsideSysfsIsLeftOutWithWhy) {
  AddPci(tree_, "/devices/pci0000:00/0000:00:02.2/0000:03:00.0", "nvidia", "10de", "2335", "0x030200");
  tree_.Dir("sys/devices/pci0000:00/0000:00:02.2/0000:03:00.0/power");
  AddPci(tree_, "/devices/pci0000:00/0000:00:02.2", "pcieport", "1b36", "000c", "0x060400");
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), IsEmpty());
  EXPECT_THAT(inv.withheld, IsEmpty());
  ASSERT_EQ(inv.left_out.size(), 1u);  // the root port is bus structure: not listed
  EXPECT_EQ(inv.left_out[0].name, "pci-0000-03-00-0");
  EXPECT_EQ(inv.left_out[0].driver, "nvidia");
  EXPECT_THAT(inv.left_out[0].reason, HasSubstr("bound to nvidia, no device node in its sysfs subtree"));
  EXPECT_THAT(inv.left_out[0].reason, HasSubstr("a vendor DRA driver serves it"));
}

// Rule 3 (default): a device whose subtree delivers a block node is withheld, with the reason.
TEST_F(ScannerRulesTest, BlockDevicesAreWithheldByDefault) {
  AddNvme();
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), IsEmpty());
  ASSERT_EQ(inv.withheld.size(), 1u);
  EXPECT_EQ(inv.withheld[0].name, "pci-0000-02-00-0");
  EXPECT_THAT(inv.withheld[0].reason, HasSubstr("/dev/nvme0n1"));
}

// Rule 3 (--storage-roles=host): a mounted partition keeps the disk with the machine.
TEST_F(ScannerRulesTest, HostRolesWithholdMountedDisk) {
  AddNvme();
  tree_.File("proc/1/mountinfo", "25 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n");
  tree_.File("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
  Inventory inv = Scan(StorageRoles::kHost);
  EXPECT_THAT(Names(inv), IsEmpty());
  ASSERT_EQ(inv.withheld.size(), 1u);
  EXPECT_THAT(inv.withheld[0].reason, HasSubstr("/dev/nvme0n1p1 is mounted"));
}

TEST_F(ScannerRulesTest, HostRolesWithholdSwapAndHeldDisks) {
  AddNvme();
  tree_.File("proc/1/mountinfo", "25 1 0:22 / / rw - btrfs /dev/sda2 rw\n");
  tree_.File("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n/dev/nvme0n1p1 partition 100 0 -2\n");
  Inventory swap = Scan(StorageRoles::kHost);
  ASSERT_EQ(swap.withheld.size(), 1u);
  EXPECT_THAT(swap.withheld[0].reason, HasSubstr("swap"));

  tree_.File("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
  tree_.Dir(std::string("sys") + kNvme + "/nvme/nvme0/nvme0n1/holders/dm-0");
  Inventory held = Scan(StorageRoles::kHost);
  ASSERT_EQ(held.withheld.size(), 1u);
  EXPECT_THAT(held.withheld[0].reason, HasSubstr("held by dm-0"));
}

TEST_F(ScannerRulesTest, HostRolesOfferAnUnusedDiskWhole) {
  AddNvme();
  tree_.File("proc/1/mountinfo", "25 1 8:2 / / rw - ext4 /dev/sda2 rw\n");
  tree_.File("proc/swaps", "Filename\tType\tSize\tUsed\tPriority\n");
  Inventory inv = Scan(StorageRoles::kHost);
  EXPECT_THAT(inv.withheld, IsEmpty());
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-02-00-0"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/nvme0", "/dev/nvme0n1", "/dev/nvme0n1p1"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "<absent>");  // nvme + block: a mix
  EXPECT_EQ(inv.published[0].nodes[1].type, 'b');
  EXPECT_EQ(inv.published[0].nodes[0].type, 'c');
}

// A FIFO where a sysfs attribute belongs is refused at once: the scan (and so `scan` and `report`) finishes,
// the device whose uevent is a FIFO is skipped with a warning naming it, an attribute that is one is left out.
TEST_F(ScannerRulesTest, FifoAttributesAreRefusedNotWaitedOn) {
  ::alarm(120);  // a watchdog, not a timed assertion: opening a FIFO without O_NONBLOCK hangs forever
  AddIntelGpu();
  AddNvme();
  const std::string gpu_uevent = tree_.sysfs() + kGpu + "/uevent";
  const std::string nvme_numa = tree_.sysfs() + kNvme + "/numa_node";
  ASSERT_EQ(::unlink(gpu_uevent.c_str()), 0);
  ASSERT_EQ(::mkfifo(gpu_uevent.c_str(), 0644), 0);
  ::unlink(nvme_numa.c_str());
  ASSERT_EQ(::mkfifo(nvme_numa.c_str(), 0644), 0);
  Inventory inv = Scan();
  ::alarm(0);
  bool gpu_warned = false;
  for (const auto& w : inv.warnings) {
    if (w.message.find("is a FIFO, not a regular file") != std::string::npos &&
        w.message.find(gpu_uevent) != std::string::npos) {
      gpu_warned = true;
    }
  }
  EXPECT_TRUE(gpu_warned) << "the GPU whose uevent is a FIFO is skipped with a warning naming the file";
  for (const auto& d : inv.published) EXPECT_THAT(d.name, ::testing::Not(HasSubstr("pci-0000-00-02-0")));
  EXPECT_THAT(inv.withheld, ::testing::Not(IsEmpty())) << "the NVMe disk is still scanned and withheld";
}

TEST_F(ScannerRulesTest, HostRolesFallBackToWithholdingWhenUnreadable) {
  AddNvme();  // no proc/1/mountinfo in the tree
  Inventory inv = Scan(StorageRoles::kHost);
  EXPECT_THAT(Names(inv), IsEmpty());
  ASSERT_EQ(inv.withheld.size(), 1u);
  EXPECT_THAT(inv.withheld[0].reason, HasSubstr("unreadable"));
}

// Bus structure: ports, hubs, root hubs and host controllers are never published.
TEST_F(ScannerRulesTest, BusStructureIsNeverPublished) {
  AddXhciWithRootHub(tree_);
  AddPci(tree_, "/devices/pci0000:00/0000:00:1c.0", "pcieport", "8086", "9d10", "0x060400");
  tree_.ClassDevice("/devices/pci0000:00/0000:00:1c.0/fake/node", "misc", "weird", "10:99");
  std::string hub = AddUsbDevice(tree_, kRootHub, "1-2", 1, 2, "05e3", "0608");
  AddUsbInterface(tree_, hub, 0, "09", "hub");
  std::string kbd = AddUsbDevice(tree_, hub, "1-2.1", 1, 3, "046d", "c31c", {{"product", "USB Keyboard"}});
  std::string kif = AddUsbInterface(tree_, kbd, 0, "03", "usbhid");
  tree_.OtherBusDevice(kif + "/0003:046D:C31C.0001", "hid");
  tree_.ClassDevice(kif + "/0003:046D:C31C.0001/input/input5", "input");
  tree_.ClassDevice(kif + "/0003:046D:C31C.0001/input/input5/event5", "input", "input/event5", "13:69");
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), ElementsAre("usb-1-2-1-1-0"));  // the keyboard only
  EXPECT_THAT(inv.unclaimed, IsEmpty());
  // Ports, hubs and root hubs are not left out either: only the controller is listed, as one.
  ASSERT_EQ(inv.left_out.size(), 1u);
  EXPECT_EQ(inv.left_out[0].name, "pci-0000-00-14-0");
  EXPECT_EQ(inv.left_out[0].reason, "a bus controller: the devices on its bus (usb) are reported on their own");
}

// The delivery walk walks into I2C and SPI clients (no slice lists them on their own), stops at bluetooth,
// and follows no symlinks.
TEST_F(ScannerRulesTest, DeliveryWalkStaysWithinTheDevice) {
  AddPci(tree_, "/devices/pci0000:00/0000:00:1e.2", "intel-lpss", "8086", "9d2a", "0x118000");
  tree_.OtherBusDevice("/devices/pci0000:00/0000:00:1e.2/spi0/spi-ELAN7001:00", "spi");
  tree_.ClassDevice("/devices/pci0000:00/0000:00:1e.2/spi0/spi-ELAN7001:00/spidev/spidev0.0", "spidev",
                    "spidev0.0", "153:0");
  AddPci(tree_, kHda, "snd_hda_intel", "8086", "9d71", "0x040300");
  tree_.ClassDevice(std::string(kHda) + "/sound/card0", "sound");
  tree_.ClassDevice(std::string(kHda) + "/sound/card0/controlC0", "sound", "snd/controlC0", "116:2");
  // A symlink to a directory holding a node must not be followed.
  tree_.ClassDevice("/devices/virtual/misc/uhid", "misc", "uhid", "10:239");
  tree_.Link(std::string("sys") + kHda + "/sound/card0/linked", "../../../../virtual/misc");
  // A symlink loop must not hang the walk.
  tree_.Link(std::string("sys") + kHda + "/sound/card0/loop", ".");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-1e-2", "pci-0000-00-1f-3"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/spidev0.0"));  // the SPI client's node, its controller's
  EXPECT_THAT(Paths(inv.published[1]), ElementsAre("/dev/snd/controlC0"));
}

// GPUs split into render (shared), display, i2c-dev and AUX devices; the framebuffer goes nowhere.
TEST_F(ScannerRulesTest, GpuSplitsIntoRenderDisplayI2cAndAux) {
  AddIntelGpu();
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-02-0", "pci-0000-00-02-0-display", "pci-0000-00-02-0-drm-dp-aux-dev",
                                      "pci-0000-00-02-0-i2c-dev"));
  const auto& render = inv.published[0];
  EXPECT_THAT(Paths(render), ElementsAre("/dev/dri/renderD128"));
  EXPECT_TRUE(render.allow_multiple_allocations);
  EXPECT_EQ(Str(render, kAttrRenderNode), "true");
  EXPECT_EQ(Str(render, kAttrDisplayNode), "false");
  EXPECT_EQ(Str(render, kAttrSubsystem), "drm");
  EXPECT_EQ(render.nodes[0].major, 226u);
  EXPECT_EQ(render.nodes[0].minor, 128u);
  const auto& display = inv.published[1];
  EXPECT_THAT(Paths(display), ElementsAre("/dev/dri/card0"));
  EXPECT_FALSE(display.allow_multiple_allocations);
  EXPECT_EQ(Str(display, kAttrDisplayNode), "true");
  EXPECT_EQ(Str(display, kAttrRenderNode), "false");
  EXPECT_EQ(Str(display, kAttrSubsystem), "drm");
  EXPECT_THAT(Paths(inv.published[2]), ElementsAre("/dev/drm_dp_aux0"));
  EXPECT_EQ(Str(inv.published[2], kAttrSubsystem), "drm_dp_aux_dev");
  EXPECT_FALSE(inv.published[2].allow_multiple_allocations);
  EXPECT_THAT(Paths(inv.published[3]), ElementsAre("/dev/i2c-3", "/dev/i2c-4"));
  EXPECT_EQ(Str(inv.published[3], kAttrSubsystem), "i2c-dev");
  for (const auto& d : inv.published) {
    EXPECT_EQ(Str(d, kAttrAddress), "0000:00:02.0");
    for (const auto& n : d.nodes) EXPECT_NE(n.path, "/dev/fb0");
  }
}

// Sound: the whole card, jack inputs included, one exclusive device of subsystem sound.
TEST_F(ScannerRulesTest, SoundCardDeliversItsJacksAsOneDevice) {
  AddPci(tree_, kHda, "snd_hda_intel", "8086", "9d71", "0x040300");
  std::string c = std::string(kHda) + "/sound/card0";
  tree_.ClassDevice(c, "sound");
  tree_.ClassDevice(c + "/controlC0", "sound", "snd/controlC0", "116:2");
  tree_.ClassDevice(c + "/pcmC0D0p", "sound", "snd/pcmC0D0p", "116:3");
  tree_.ClassDevice(c + "/input12", "input");
  tree_.ClassDevice(c + "/input12/event12", "input", "input/event12", "13:76");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-1f-3"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/input/event12", "/dev/snd/controlC0", "/dev/snd/pcmC0D0p"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "sound");
  EXPECT_FALSE(inv.published[0].allow_multiple_allocations);
  EXPECT_EQ(Str(inv.published[0], kAttrName), "Sunrise Point-LP HD Audio");
  EXPECT_EQ(Str(inv.published[0], kAttrClass), "multimedia");
}

// USB: one device per interface with a driver and nodes, each with the port's address and usbfs node.
TEST_F(ScannerRulesTest, UsbInterfacesPublishWithUsbfsNodeAndPortAddress) {
  AddXhciWithRootHub(tree_);
  std::string cam = AddUsbDevice(tree_, kRootHub, "1-5", 1, 4, "04f2", "b5ce", {{"product", "Integrated Camera"}});
  std::string video = AddUsbInterface(tree_, cam, 0, "0e", "uvcvideo");
  tree_.ClassDevice(video + "/video4linux/video0", "video4linux", "video0", "81:0");
  tree_.ClassDevice(video + "/input/input20", "input");
  tree_.ClassDevice(video + "/input/input20/event6", "input", "input/event6", "13:70");
  AddUsbInterface(tree_, cam, 1, "0e", "uvcvideo");  // no nodes
  std::string audio = AddUsbInterface(tree_, cam, 2, "01", "snd-usb-audio");
  tree_.ClassDevice(audio + "/sound/card1", "sound");
  tree_.ClassDevice(audio + "/sound/card1/pcmC1D0c", "sound", "snd/pcmC1D0c", "116:10");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("usb-1-5-1-0", "usb-1-5-1-2"));
  const auto& v = inv.published[0];
  EXPECT_THAT(Paths(v), ElementsAre("/dev/input/event6", "/dev/video0", "/dev/bus/usb/001/004"));
  EXPECT_EQ(Str(v, kAttrSubsystem), "<absent>");  // video4linux + input: a mix
  EXPECT_EQ(Str(v, kAttrAddress), "1-5");
  EXPECT_EQ(Str(v, kAttrClass), "video");
  EXPECT_EQ(Str(v, kAttrClassCode), "0e");
  EXPECT_EQ(Str(v, kAttrVendor), "04f2");
  EXPECT_EQ(Str(v, kAttrProduct), "b5ce");
  EXPECT_EQ(Str(v, kAttrName), "Integrated Camera");
  EXPECT_EQ(Str(v, kAttrSerial), "<absent>");
  EXPECT_EQ(Str(v, kAttrPcieRoot), "pci0000:00");
  EXPECT_EQ(Str(v, kAttrNumaNode), "int:0");  // from the host controller
  EXPECT_EQ(Str(v, kAttrPciBusId), "<absent>");
  EXPECT_EQ(v.nodes.back().major, 189u);
  EXPECT_EQ(v.nodes.back().minor, 3u);
  EXPECT_THAT(v.usb_interfaces, ElementsAre("1-5:1.0"));
  const auto& a = inv.published[1];
  EXPECT_EQ(Str(a, kAttrSubsystem), "sound");
  EXPECT_EQ(Str(a, kAttrAddress), "1-5");
  EXPECT_THAT(Paths(a), ElementsAre("/dev/snd/pcmC1D0c", "/dev/bus/usb/001/004"));
  // The camera's second interface holds nothing: left out, naming the interface that publishes the camera.
  std::vector<std::string> left_out;
  for (const auto& l : inv.left_out) left_out.push_back(l.name + " " + l.driver + ": " + l.reason);
  EXPECT_THAT(left_out, ElementsAre(HasSubstr("pci-0000-00-14-0 xhci_hcd"),
                                    "usb-1-5-1-1 uvcvideo: part of a USB device another interface publishes "
                                    "(usb-1-5-1-0)"));
}

TEST_F(ScannerRulesTest, UsbSerialIsOneKindTty) {
  AddXhciWithRootHub(tree_);
  std::string ftdi = AddUsbDevice(tree_, kRootHub, "1-1", 1, 3, "0403", "6001",
                                  {{"product", "FT232R USB UART"}, {"serial", "A50285BI"}});
  std::string itf = AddUsbInterface(tree_, ftdi, 0, "ff", "ftdi_sio");
  tree_.OtherBusDevice(itf + "/ttyUSB0", "usb-serial");
  tree_.ClassDevice(itf + "/ttyUSB0/tty/ttyUSB0", "tty", "ttyUSB0", "188:0");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("usb-1-1-1-0"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/ttyUSB0", "/dev/bus/usb/001/003"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "tty");
  EXPECT_EQ(Str(inv.published[0], kAttrSerial), "A50285BI");
  EXPECT_EQ(Str(inv.published[0], kAttrClass), "vendor-specific");
}

// Bluetooth: the adapter publishes whole with its usbfs node only; its peripherals' nodes stay out.
TEST_F(ScannerRulesTest, BluetoothAdapterDeliversOnlyItsUsbfsNode) {
  AddXhciWithRootHub(tree_);
  std::string bt = AddUsbDevice(tree_, kRootHub, "1-7", 1, 5, "8087", "0a2b");
  std::string i0 = AddUsbInterface(tree_, bt, 0, "e0", "btusb");
  AddUsbInterface(tree_, bt, 1, "e0", "btusb");
  tree_.ClassDevice(i0 + "/bluetooth/hci0", "bluetooth");
  tree_.OtherBusDevice(i0 + "/bluetooth/hci0/hci0:256/0005:054C:09CC.0004", "hid");
  tree_.ClassDevice(i0 + "/bluetooth/hci0/hci0:256/0005:054C:09CC.0004/hidraw/hidraw3", "hidraw", "hidraw3", "241:3");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("usb-1-7-1-0"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/bus/usb/001/005"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "<absent>");
  EXPECT_FALSE(inv.published[0].allow_multiple_allocations);
  EXPECT_EQ(Str(inv.published[0], kAttrClass), "wireless");
  ASSERT_EQ(inv.left_out.size(), 2u);
  EXPECT_EQ(inv.left_out[1].name, "usb-1-7-1-1");
  EXPECT_EQ(inv.left_out[1].reason, "part of a USB device another interface publishes (usb-1-7-1-0)");
}

// Attributes: hex lowercase without prefix, topology attributes, absent rather than empty.
TEST_F(ScannerRulesTest, PciAttributesAreNormalised) {
  AddPci(tree_, "/devices/pci0000:80/0000:80:01.0/0000:83:00.0", "amdgpu", "1002", "740F", "0x038000", "1");
  tree_.ClassDevice("/devices/pci0000:80/0000:80:01.0/0000:83:00.0/drm/renderD129", "drm", "dri/renderD129",
                    "226:129");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-83-00-0"));
  const auto& d = inv.published[0];
  EXPECT_EQ(Str(d, kAttrBus), "pci");
  EXPECT_EQ(Str(d, kAttrAddress), "0000:83:00.0");
  EXPECT_EQ(Str(d, kAttrDriver), "amdgpu");
  EXPECT_EQ(Str(d, kAttrVendor), "1002");
  EXPECT_EQ(Str(d, kAttrProduct), "740f");
  EXPECT_EQ(Str(d, kAttrClassCode), "038000");
  EXPECT_EQ(Str(d, kAttrClass), "display");
  EXPECT_EQ(Str(d, kAttrPcieRoot), "pci0000:80");
  EXPECT_EQ(Str(d, kAttrPciBusId), "0000:83:00.0");
  EXPECT_EQ(Str(d, kAttrNumaNode), "int:1");
  EXPECT_EQ(Str(d, kAttrName), "<absent>");  // not in the test database
  EXPECT_EQ(Str(d, kAttrSerial), "<absent>");
  EXPECT_THAT(Str(d, kAttrModalias), HasSubstr("pci:v00001002d0000740F"));
  EXPECT_LE(d.attributes.size(), 32u);
}

TEST_F(ScannerRulesTest, OversizedOrInvalidValuesAreLeftOutWithAWarningAndNamesCut) {
  AddXhciWithRootHub(tree_);
  std::string long_name(60, 'x');
  long_name += "\xc3\xa9\xc3\xa9\xc3\xa9";  // 66 bytes: a cut must not split a character
  std::string dev = AddUsbDevice(tree_, kRootHub, "1-1", 1, 3, "0403", "6001",
                                 {{"product", long_name}, {"serial", std::string(80, 'S')}, {"manufacturer", "x"}});
  std::string itf = AddUsbInterface(tree_, dev, 0, "ff", "ftdi_sio");
  tree_.ClassDevice(itf + "/tty/ttyUSB0", "tty", "ttyUSB0", "188:0");
  std::string bad = AddUsbDevice(tree_, kRootHub, "1-2", 1, 4, "zz12", "6001", {{"product", "bad\xff\xfe name"}});
  std::string bitf = AddUsbInterface(tree_, bad, 0, "ff", "ftdi_sio");
  tree_.ClassDevice(bitf + "/tty/ttyUSB1", "tty", "ttyUSB1", "188:1");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("usb-1-1-1-0", "usb-1-2-1-0"));
  std::string name = Str(inv.published[0], kAttrName);
  EXPECT_EQ(name, std::string(60, 'x') + "\xc3\xa9\xc3\xa9");  // 64 bytes, whole characters
  EXPECT_TRUE(IsCleanUtf8(name));
  EXPECT_EQ(Str(inv.published[0], kAttrSerial), "<absent>");
  EXPECT_EQ(Str(inv.published[1], kAttrName), "<absent>");
  EXPECT_EQ(Str(inv.published[1], kAttrVendor), "<absent>");
  int serial_warnings = 0, name_warnings = 0;
  for (const auto& w : inv.warnings) {
    if (w.device == "usb-1-1-1-0" && w.message.find("serial") != std::string::npos) ++serial_warnings;
    if (w.device == "usb-1-2-1-0" && w.message.find("name") != std::string::npos) ++name_warnings;
  }
  EXPECT_EQ(serial_warnings, 1);
  EXPECT_EQ(name_warnings, 1);
}

// Bad input never crashes: garbage dev files, unsafe DEVNAMEs, binary attributes, missing links.
TEST_F(ScannerRulesTest, OddSysfsIsSkippedWithWarnings) {
  AddPci(tree_, kHda, "snd_hda_intel", "8086", "9d71", "0x040300");
  std::string c = std::string(kHda) + "/sound/card0";
  tree_.ClassDevice(c, "sound");
  tree_.ClassDevice(c + "/controlC0", "sound", "snd/controlC0", "116:2");
  tree_.ClassDevice(c + "/pcmC0D0p", "sound", "snd/pcmC0D0p", "garbage");
  tree_.ClassDevice(c + "/pcmC0D1p", "sound", "../etc/passwd", "116:4");
  tree_.File(std::string("sys") + kHda + "/class", std::string("\x00\x01\xff", 3));
  tree_.File(std::string("sys") + kHda + "/numa_node", "banana");
  // A bus link pointing nowhere and one pointing outside sysfs.
  tree_.Link("sys/bus/pci/devices/0000:00:99.0", "../../../devices/pci0000:00/0000:00:99.0");
  tree_.Link("sys/bus/pci/devices/0000:00:98.0", "/etc");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-1f-3"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/snd/controlC0"));
  EXPECT_EQ(Str(inv.published[0], kAttrClassCode), "<absent>");
  EXPECT_EQ(Str(inv.published[0], kAttrNumaNode), "<absent>");
  EXPECT_GE(inv.warnings.size(), 4u);
}

TEST_F(ScannerRulesTest, NamesThatCannotBeDeviceNamesAreSkippedAndUnreadableFilesLeftOut) {
  AddXhciWithRootHub(tree_);
  std::string dev = AddUsbDevice(tree_, kRootHub, "1-\xc3\xa9", 1, 3, "0403", "6001");  // "1-é": no DNS label
  std::string junk = AddUsbDevice(tree_, kRootHub, "1-\xff", 1, 5, "0403", "6001");    // not even UTF-8
  std::string junk_itf = AddUsbInterface(tree_, junk, 0, "ff", "ftdi_sio");
  tree_.ClassDevice(junk_itf + "/tty/ttyUSB2", "tty", "ttyUSB2", "188:2");
  std::string itf = AddUsbInterface(tree_, dev, 0, "ff", "ftdi_sio");
  tree_.ClassDevice(itf + "/tty/ttyUSB0", "tty", "ttyUSB0", "188:0");
  std::string ok = AddUsbDevice(tree_, kRootHub, "1-2", 1, 4, "0403", "6001");
  std::string ok_itf = AddUsbInterface(tree_, ok, 0, "ff", "ftdi_sio");
  tree_.ClassDevice(ok_itf + "/tty/ttyUSB1", "tty", "ttyUSB1", "188:1");
  tree_.Dir("sys" + ok + "/serial");  // a directory where a file belongs: unreadable as an attribute
  tree_.File("sys" + ok + "/product", "");  // empty
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), ElementsAre("usb-1-2-1-0"));
  EXPECT_EQ(Str(inv.published[0], kAttrSerial), "<absent>");
  EXPECT_EQ(Str(inv.published[0], kAttrName), "<absent>");
  bool warned_dns = false, warned_utf8 = false;
  for (const auto& w : inv.warnings) {
    warned_dns |= w.message.find("not a valid DNS label") != std::string::npos;
    warned_utf8 |= w.message.find("not valid UTF-8") != std::string::npos;
  }
  EXPECT_TRUE(warned_dns);
  EXPECT_TRUE(warned_utf8);
}

// I2C under LPSS (docs/devices.md, "I2C and SPI"): a touchpad's HID nodes are the LPSS function's device; its
// bus node is its own exclusive `-i2c-dev` device, as a GPU's.
TEST_F(ScannerRulesTest, LpssI2cTouchpadPublishesItsNodesAndTheBusNodeApart) {
  const std::string lpss = "/devices/pci0000:00/0000:00:15.1";
  AddPci(tree_, lpss, "intel-lpss", "8086", "9d61", "0x118000");
  const std::string dw = lpss + "/i2c_designware.1";
  tree_.OtherBusDevice(dw, "platform");
  tree_.OtherBusDevice(dw + "/i2c-1", "i2c", {{"DEVTYPE", "i2c_adapter"}});
  tree_.ClassDevice(dw + "/i2c-1/i2c-dev/i2c-1", "i2c-dev", "i2c-1", "89:1");
  const std::string pad = dw + "/i2c-1/i2c-ELAN1300:00";
  tree_.OtherBusDevice(pad, "i2c", {{"DRIVER", "i2c_hid"}});
  tree_.OtherBusDevice(pad + "/0018:04F3:3057.0001", "hid");
  tree_.ClassDevice(pad + "/0018:04F3:3057.0001/hidraw/hidraw0", "hidraw", "hidraw0", "241:0");
  tree_.ClassDevice(pad + "/0018:04F3:3057.0001/input/input10", "input");
  tree_.ClassDevice(pad + "/0018:04F3:3057.0001/input/input10/event10", "input", "input/event10", "13:74");
  tree_.ClassDevice(pad + "/0018:04F3:3057.0001/input/input10/event8", "input", "input/event8", "13:72");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-15-1", "pci-0000-00-15-1-i2c-dev"));
  // Natural order: event8 before event10.
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/hidraw0", "/dev/input/event8", "/dev/input/event10"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "<absent>");  // hidraw + input: a mix
  EXPECT_EQ(Str(inv.published[0], kAttrDriver), "intel-lpss");
  EXPECT_FALSE(inv.published[0].allow_multiple_allocations);
  EXPECT_THAT(Paths(inv.published[1]), ElementsAre("/dev/i2c-1"));
  EXPECT_EQ(Str(inv.published[1], kAttrSubsystem), "i2c-dev");
  EXPECT_FALSE(inv.published[1].allow_multiple_allocations);
  EXPECT_THAT(inv.left_out, IsEmpty());
}

// SPI under LPSS: a fingerprint reader's spidev node is the LPSS function's device; a chip's flash is storage.
TEST_F(ScannerRulesTest, LpssSpiReaderPublishesItsSpidevAndFlashIsWithheld) {
  const std::string lpss = "/devices/pci0000:00/0000:00:1e.2";
  AddPci(tree_, lpss, "intel-lpss", "8086", "9d2a", "0x118000");
  tree_.OtherBusDevice(lpss + "/pxa2xx-spi.3", "platform");
  tree_.ClassDevice(lpss + "/pxa2xx-spi.3/spi_master/spi0", "spi_master");
  const std::string reader = lpss + "/pxa2xx-spi.3/spi_master/spi0/spi-ELAN7001:00";
  tree_.OtherBusDevice(reader, "spi");
  tree_.ClassDevice(reader + "/spidev/spidev0.0", "spidev", "spidev0.0", "153:0");
  const std::string flash_controller = "/devices/pci0000:00/0000:00:1f.5";
  AddPci(tree_, flash_controller, "intel-spi", "8086", "9d24", "0x0c8000");
  const std::string flash = flash_controller + "/spi_master/spi1/spi1.0";
  tree_.ClassDevice(flash_controller + "/spi_master/spi1", "spi_master");
  tree_.OtherBusDevice(flash, "spi");
  tree_.ClassDevice(flash + "/mtd/mtd0", "mtd", "mtd0", "90:0");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-1e-2"));
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/spidev0.0"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "spidev");
  ASSERT_EQ(inv.withheld.size(), 1u);
  EXPECT_EQ(inv.withheld[0].name, "pci-0000-00-1f-5");
  EXPECT_EQ(inv.withheld[0].reason, "delivers flash memory /dev/mtd0 (mtd): storage belongs to the machine");
}

// An I2C controller whose client has no node says so, never "reported on their own".
TEST_F(ScannerRulesTest, LpssControllerWhoseClientsHaveNoNodeIsLeftOutTruly) {
  const std::string lpss = "/devices/pci0000:00/0000:00:15.0";
  AddPci(tree_, lpss, "intel-lpss", "8086", "9d60", "0x118000");
  tree_.OtherBusDevice(lpss + "/i2c_designware.0", "platform");
  tree_.OtherBusDevice(lpss + "/i2c_designware.0/i2c-0", "i2c");  // no DEVTYPE, as umockdev records it
  tree_.OtherBusDevice(lpss + "/i2c_designware.0/i2c-0/i2c-SYNA3602:00", "i2c");
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), IsEmpty());
  ASSERT_EQ(inv.left_out.size(), 1u);
  EXPECT_EQ(inv.left_out[0].reason,
            "bound to intel-lpss, no device node in its sysfs subtree: the devices on its I2C/SPI bus "
            "(i2c-SYNA3602:00) have no device node either (no client driver bound, or one that registers none)");
}

// USB devices with no interfaces (not authorized, not configured) are left out, named, with the remedy; a hub
// without interfaces is bus structure.
TEST_F(ScannerRulesTest, IdleUsbDevicesAreLeftOutWithWhatToDo) {
  AddXhciWithRootHub(tree_);
  std::string blocked = AddUsbDevice(tree_, kRootHub, "1-2", 1, 2, "0403", "6001");
  tree_.File("sys" + blocked + "/authorized", "0\n");
  tree_.File("sys" + blocked + "/bConfigurationValue", "\n");
  std::string unconfigured = AddUsbDevice(tree_, kRootHub, "1-3", 1, 3, "046d", "c31c");
  tree_.File("sys" + unconfigured + "/bConfigurationValue", "\n");
  std::string hub = AddUsbDevice(tree_, kRootHub, "1-4", 1, 4, "05e3", "0608");
  tree_.File("sys" + hub + "/bDeviceClass", "09\n");
  tree_.File("sys" + hub + "/authorized", "0\n");
  Inventory inv = Scan();
  EXPECT_THAT(Names(inv), IsEmpty());
  std::vector<std::string> idle;
  for (const LeftOutDevice* l : inv.IdleUsb()) idle.push_back(l->name + " [" + l->idle + "] " + l->reason);
  EXPECT_THAT(idle, ElementsAre(AllOf(HasSubstr("usb-1-2 [not authorized] not authorized (authorized=0"),
                                      HasSubstr("echo 1 > /sys/bus/usb/devices/1-2/authorized"),
                                      HasSubstr("usbguard allow-device")),
                                AllOf(HasSubstr("usb-1-3 [not configured] not configured"),
                                      HasSubstr("echo 1 > /sys/bus/usb/devices/1-3/bConfigurationValue"))));
  // Only the controller besides them: the hub is bus structure.
  EXPECT_EQ(inv.left_out.size(), 3u);
}

// A sound card with jack input nodes only is no audio controller: its nodes are input nodes.
TEST_F(ScannerRulesTest, JackOnlySoundCardIsInputNotSound) {
  AddPci(tree_, kHda, "snd_hda_intel", "8086", "9d71", "0x040300");
  std::string c = std::string(kHda) + "/sound/card0";
  tree_.ClassDevice(c, "sound");
  tree_.ClassDevice(c + "/input12", "input");
  tree_.ClassDevice(c + "/input12/event12", "input", "input/event12", "13:76");
  tree_.ClassDevice(c + "/input13", "input");
  tree_.ClassDevice(c + "/input13/event9", "input", "input/event9", "13:73");
  Inventory inv = Scan();
  ASSERT_THAT(Names(inv), ElementsAre("pci-0000-00-1f-3"));
  EXPECT_EQ(Str(inv.published[0], kAttrSubsystem), "input");
  EXPECT_THAT(Paths(inv.published[0]), ElementsAre("/dev/input/event9", "/dev/input/event12"));
}

TEST_F(ScannerRulesTest, MissingSysfsIsAnError) {
  ScanOptions o = Options();
  o.sysfs_root = tree_.root() + "/nonexistent";
  auto inv = NewSysfsScanner(o)->Scan();
  ASSERT_FALSE(inv.ok());
  EXPECT_THAT(std::string(inv.status().message()), HasSubstr("cannot read sysfs"));
}

}  // namespace
}  // namespace liken::discovery
