#include "kubelet/device_health.h"

#include <gtest/gtest.h>

#include "test/kubelet/test_objects.h"

namespace liken::kubelet {
namespace {

using ::liken::testing::GpuRender;
using ::liken::testing::InventoryOf;
using ::liken::testing::UsbSerial;

TEST(DeviceHealthTest, PresentDevicesAreHealthyAndVanishedPreparedOnesAreNot) {
  auto health = ComputeDeviceHealth(InventoryOf({UsbSerial(), GpuRender()}), {"usb-1-2-1-0", "gone-device"});
  ASSERT_EQ(health.size(), 3u);
  EXPECT_EQ(health[0].device, "gone-device");
  EXPECT_FALSE(health[0].healthy);
  EXPECT_NE(health[0].message.find("no longer present"), std::string::npos);
  EXPECT_EQ(health[1], (DeviceHealthState{"pci-0000-00-02-0", true, ""}));
  EXPECT_EQ(health[2], (DeviceHealthState{"usb-1-2-1-0", true, ""}));
}

TEST(DeviceHealthTest, EmptyInventoryAndNothingPrepared) {
  EXPECT_TRUE(ComputeDeviceHealth({}, {}).empty());
}

}  // namespace
}  // namespace liken::kubelet
