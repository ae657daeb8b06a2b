// The contract's rules as pure functions, on facts made up in the test (no sysfs tree): each rule alone.
#include "discovery/device_rules.h"

#include <gtest/gtest.h>

namespace liken::discovery {
namespace {

WalkedNode Node(const std::string& path, char type, const std::string& subsystem, uint32_t major = 8,
                uint32_t minor = 0) {
  WalkedNode w;
  w.node.path = path;
  w.node.type = type;
  w.node.subsystem = subsystem;
  w.node.major = major;
  w.node.minor = minor;
  w.dir = "/sys/devices/x/" + path.substr(path.rfind('/') + 1);
  return w;
}

TEST(DeviceRulesTest, Rule1ADriverIsBound) {
  EXPECT_TRUE(HasBoundDriver("i915"));
  EXPECT_FALSE(HasBoundDriver(""));
}

TEST(DeviceRulesTest, BusStructureIsBridgesPortsHubsAndRootHubs) {
  PciFunctionFacts bridge;
  bridge.class_code = "060400";
  EXPECT_TRUE(IsPciBusStructure(bridge));
  PciFunctionFacts port;
  port.class_code = "0c0330";
  port.driver = "pcieport";
  EXPECT_TRUE(IsPciBusStructure(port));
  PciFunctionFacts gpu;
  gpu.class_code = "030000";
  gpu.driver = "i915";
  EXPECT_FALSE(IsPciBusStructure(gpu));
  PciFunctionFacts unreadable_class;
  EXPECT_FALSE(IsPciBusStructure(unreadable_class));

  UsbInterfaceFacts hub;
  hub.interface_class = "09";
  EXPECT_TRUE(IsUsbHub(hub));
  UsbInterfaceFacts hub_driver;
  hub_driver.driver = "hub";
  EXPECT_TRUE(IsUsbHub(hub_driver));
  UsbInterfaceFacts serial;
  serial.interface_class = "ff";
  serial.driver = "ftdi_sio";
  EXPECT_FALSE(IsUsbHub(serial));

  UsbDeviceFacts root;
  root.name = "usb3";
  EXPECT_TRUE(IsUsbRootHub(root));
  UsbDeviceFacts dongle;
  dongle.name = "3-1.2";
  EXPECT_FALSE(IsUsbRootHub(dongle));
}

TEST(DeviceRulesTest, DeviceNamesAreBusAndAddressWithDashes) {
  EXPECT_EQ(DeviceNameFor("pci", "0000:00:02.0"), "pci-0000-00-02-0");
  EXPECT_EQ(DeviceNameFor("usb", "2-1.1:1.0"), "usb-2-1-1-1-0");
  EXPECT_EQ(DeviceNameFor("pci", "0000:0A:00.0"), "pci-0000-0a-00-0");
  EXPECT_TRUE(IsPublishableDeviceName("pci-0000-00-02-0"));
  EXPECT_FALSE(IsPublishableDeviceName("usb-" + std::string(45, '1'))) << "its -drm-dp-aux-dev name is too long";
  EXPECT_FALSE(IsPublishableDeviceName("usb-a_b"));
}

TEST(DeviceRulesTest, Rule3StorageBelongsToTheMachine) {
  std::vector<WalkedNode> tty = {Node("/dev/ttyUSB0", 'c', "tty", 188, 0)};
  std::vector<WalkedNode> disk = {Node("/dev/sda", 'b', "block", 8, 0), Node("/dev/sda1", 'b', "block", 8, 1)};
  EXPECT_FALSE(DeliversBlockNode(tty));
  EXPECT_TRUE(DeliversBlockNode(disk));
  EXPECT_EQ(StorageWithholdReason(StorageRoles::kWithholdAll, tty, {}), std::nullopt);

  auto withheld = StorageWithholdReason(StorageRoles::kWithholdAll, disk, {});
  ASSERT_TRUE(withheld.has_value());
  EXPECT_NE(withheld->find("delivers block device /dev/sda"), std::string::npos) << *withheld;

  StorageFactsForUnit unreadable;
  unreadable.host_error = "no mountinfo";
  withheld = StorageWithholdReason(StorageRoles::kHost, disk, unreadable);
  ASSERT_TRUE(withheld.has_value());
  EXPECT_NE(withheld->find("unreadable (no mountinfo)"), std::string::npos) << *withheld;

  HostStorageFacts host;
  StorageFactsForUnit facts;
  facts.host = &host;
  EXPECT_EQ(StorageWithholdReason(StorageRoles::kHost, disk, facts), std::nullopt) << "an unused disk is offered";
  host.mounted_numbers.insert({8, 1});
  withheld = StorageWithholdReason(StorageRoles::kHost, disk, facts);
  ASSERT_TRUE(withheld.has_value());
  EXPECT_EQ(*withheld, "storage role: /dev/sda1 is mounted");

  host.mounted_numbers.clear();
  facts.holders[disk[0].dir] = std::vector<std::string>{"dm-0"};
  withheld = StorageWithholdReason(StorageRoles::kHost, disk, facts);
  ASSERT_TRUE(withheld.has_value());
  EXPECT_EQ(*withheld, "storage role: /dev/sda is held by dm-0");
  facts.holders[disk[0].dir] = absl::PermissionDeniedError("denied");
  withheld = StorageWithholdReason(StorageRoles::kHost, disk, facts);
  ASSERT_TRUE(withheld.has_value());
  EXPECT_NE(withheld->find("holders unreadable"), std::string::npos) << *withheld;
  facts.holders[disk[0].dir] = absl::NotFoundError("none");
  EXPECT_EQ(StorageWithholdReason(StorageRoles::kHost, disk, facts), std::nullopt) << "no holders directory: none";
}

TEST(DeviceRulesTest, UsbDevicesDeliverTheirUsbfsNode) {
  UsbDeviceFacts device;
  device.devname = "bus/usb/002/003";
  device.dev = "189:130";
  auto node = UsbfsNode(device);
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->path, "/dev/bus/usb/002/003");
  EXPECT_EQ(node->subsystem, "usb");
  EXPECT_EQ(node->major, 189u);
  EXPECT_EQ(node->minor, 130u);
  device.dev.reset();
  EXPECT_FALSE(UsbfsNode(device).has_value());
  device.dev = "189:130";
  device.devname = "../etc/passwd";
  EXPECT_FALSE(UsbfsNode(device).has_value());
}

// Rule 2 for the report: a bound unit that publishes nothing says why, from what its walk saw.
TEST(DeviceRulesTest, LeftOutUnitsSayWhyTheyDeliverNothing) {
  const DeliveryDecision nothing;
  WalkResult empty;
  const std::optional<std::string> display = std::string("030200");
  const std::string nvidia = LeftOutReason("nvidia", display, empty, nothing);
  EXPECT_EQ(nvidia.rfind("bound to nvidia, no device node in its sysfs subtree: ", 0), 0u) << nvidia;
  EXPECT_NE(nvidia.find("outside sysfs; a vendor DRA driver serves it"), std::string::npos) << nvidia;
  // Another display driver with no DRM device, and anything else, get the plain line.
  EXPECT_EQ(LeftOutReason("foo", display, empty, nothing),
            "bound to foo, no device node in its sysfs subtree: a display controller whose driver registered no DRM "
            "device");
  EXPECT_EQ(LeftOutReason("i2c_i801", std::string("0c0500"), empty, nothing),
            "bound to i2c_i801, no device node in its sysfs subtree");
  EXPECT_NE(LeftOutReason("vfio-pci", display, empty, nothing).find("passthrough"), std::string::npos);

  WalkResult nic;
  nic.net_interfaces = {"enp1s0", "enp1s0d1"};
  EXPECT_EQ(LeftOutReason("mlx4_core", std::string("020000"), nic, nothing), "network interface only (enp1s0, enp1s0d1)");
  WalkResult controller;
  controller.buses_below = {"usb"};
  EXPECT_EQ(LeftOutReason("xhci_hcd", std::string("0c0330"), controller, nothing),
            "a bus controller: the devices on its bus (usb) are reported on their own");
  WalkResult radio;
  radio.has_bluetooth = true;
  EXPECT_EQ(LeftOutReason("btmtk", std::nullopt, radio, nothing),
            "Bluetooth radio on btmtk: only btusb's adapters are published");

  // Nodes, but none a claim delivers.
  WalkResult fb;
  fb.nodes.push_back(Node("/dev/fb0", 'c', "graphics", 29, 0));
  DeliveryDecision noted;
  noted.notes.push_back("/dev/fb0 (framebuffer) is delivered by nothing");
  EXPECT_EQ(LeftOutReason("simpledrm", display, fb, noted),
            "its only nodes (/dev/fb0) are delivered by nothing: /dev/fb0 (framebuffer) is delivered by nothing");
}

TEST(DeviceRulesTest, NodePathsSortInNaturalOrder) {
  EXPECT_TRUE(NaturalPathLess("/dev/input/event8", "/dev/input/event10"));
  EXPECT_FALSE(NaturalPathLess("/dev/input/event10", "/dev/input/event8"));
  EXPECT_TRUE(NaturalPathLess("/dev/bus/usb/001/009", "/dev/bus/usb/001/010"));
  EXPECT_TRUE(NaturalPathLess("/dev/hidraw0", "/dev/input/event1"));
  EXPECT_FALSE(NaturalPathLess("/dev/ttyUSB2", "/dev/ttyUSB2"));
}

TEST(DeviceRulesTest, NumaNodesAreSmallNonNegativeNumbers) {
  EXPECT_EQ(ParseNumaNode(std::string("1")), 1);
  EXPECT_EQ(ParseNumaNode(std::string("-1")), std::nullopt);
  EXPECT_EQ(ParseNumaNode(std::string("4097")), std::nullopt);
  EXPECT_EQ(ParseNumaNode(std::string("1x")), std::nullopt);
  EXPECT_EQ(ParseNumaNode(std::string("99999999999999999999999")), std::nullopt);
  EXPECT_EQ(ParseNumaNode(std::string("")), std::nullopt);
  EXPECT_EQ(ParseNumaNode(std::nullopt), std::nullopt);
}

}  // namespace
}  // namespace liken::discovery
