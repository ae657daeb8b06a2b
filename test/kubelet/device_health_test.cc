#include "kubelet/device_health.h"

#include <gtest/gtest.h>

#include "test/kubelet/test_objects.h"

namespace liken::kubelet {
namespace {

using ::liken::testing::GpuRender;
using ::liken::testing::InventoryOf;
using ::liken::testing::UsbSerial;

TEST(DeviceHealthTest, PresentDevicesAreHealthyAndVanishedPreparedOnesAreNot) {
  auto health = ComputeDeviceHealth(InventoryOf({UsbSerial(), GpuRender()}),
                                    std::vector<std::string>{"usb-1-2-1-0", "gone-device"});
  ASSERT_EQ(health.size(), 3u);
  EXPECT_EQ(health[0].device, "gone-device");
  EXPECT_FALSE(health[0].healthy);
  EXPECT_NE(health[0].message.find("no longer present"), std::string::npos);
  EXPECT_EQ(health[1], (DeviceHealthState{"pci-0000-00-02-0", true, ""}));
  EXPECT_EQ(health[2], (DeviceHealthState{"usb-1-2-1-0", true, ""}));
}

TEST(DeviceHealthTest, AnotherUnitInAClaimedPortIsUnhealthy) {
  discovery::PublishedDevice prepared = UsbSerial();
  prepared.attributes = {{"liken.sh/vendor", std::string("0403")},
                         {"liken.sh/product", std::string("6001")},
                         {"liken.sh/serial", std::string("A1")}};
  discovery::PublishedDevice other = prepared;
  other.attributes["liken.sh/serial"] = std::string("B2");
  const nodestate::HeldDevice held{prepared.name, prepared.attributes, "", false};
  auto health = ComputeDeviceHealth(InventoryOf({other, GpuRender()}), std::vector<nodestate::HeldDevice>{held});
  ASSERT_EQ(health.size(), 2u);
  EXPECT_EQ(health[1].device, "usb-1-2-1-0");
  EXPECT_FALSE(health[1].healthy) << "serial B2 in the port of the prepared A1 is not the claimed device";
  EXPECT_NE(health[1].message.find("serial=B2"), std::string::npos) << health[1].message;
  EXPECT_NE(health[1].message.find("serial=A1"), std::string::npos) << health[1].message;
  EXPECT_TRUE(health[0].healthy);
  // The prepared unit back in its port is healthy.
  health = ComputeDeviceHealth(InventoryOf({prepared}), std::vector<nodestate::HeldDevice>{held});
  ASSERT_EQ(health.size(), 1u);
  EXPECT_TRUE(health[0].healthy);
}

TEST(DeviceHealthTest, EmptyInventoryAndNothingPrepared) {
  EXPECT_TRUE(ComputeDeviceHealth({}, std::vector<std::string>{}).empty());
}

}  // namespace
}  // namespace liken::kubelet
