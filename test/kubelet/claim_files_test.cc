#include "kubelet/claim_files.h"

#include <gtest/gtest.h>

#include "test/kubelet/test_objects.h"

namespace liken::kubelet {
namespace {

using ::liken::testing::GpuRender;
using ::liken::testing::InventoryOf;
using ::liken::testing::UsbSerial;

PreparedClaim ClaimOf(const std::vector<discovery::PublishedDevice>& devices) {
  PreparedClaim c;
  c.ref = {"ns", "uid-1", "claim"};
  for (const auto& d : devices) c.delivered.push_back({d.name, d.nodes, d.usb_interfaces, d.sysfs_path, d.attributes});
  return c;
}

InventorySnapshot SnapshotOf(std::vector<discovery::PublishedDevice> devices) {
  InventorySnapshot s;
  s.inventory = InventoryOf(std::move(devices));
  for (size_t i = 0; i < s.inventory.published.size(); ++i) s.by_name[s.inventory.published[i].name] = i;
  return s;
}

TEST(ClaimFilesTest, RebasedIsNothingWhenNoDeliveredDeviceChanged) {
  ClaimFiles files(nullptr);
  PreparedClaim claim = ClaimOf({GpuRender(), UsbSerial()});
  EXPECT_FALSE(files.Rebased(claim, SnapshotOf({GpuRender(), UsbSerial()})).has_value());
  EXPECT_FALSE(files.Rebased(claim, SnapshotOf({})).has_value()) << "a device the snapshot lacks keeps its record";
}

TEST(ClaimFilesTest, RebasedTakesTheCurrentNodesAndCountsAGeneration) {
  ClaimFiles files(nullptr);
  PreparedClaim claim = ClaimOf({GpuRender(), UsbSerial()});
  discovery::PublishedDevice moved = UsbSerial();
  moved.nodes[0].path = "/dev/bus/usb/001/009";
  moved.nodes[0].minor = 8;
  auto rebased = files.Rebased(claim, SnapshotOf({GpuRender(), moved}));
  ASSERT_TRUE(rebased.has_value());
  EXPECT_EQ(rebased->metadata_generation, claim.metadata_generation + 1);
  EXPECT_EQ(rebased->delivered[0], claim.delivered[0]);
  EXPECT_EQ(rebased->delivered[1].nodes, moved.nodes);
  EXPECT_EQ(rebased->results, claim.results);
}

TEST(ClaimFilesTest, AttributesCountOnlyWhenMetadataFilesAreOn) {
  ClaimFiles files(nullptr);
  PreparedClaim claim = ClaimOf({UsbSerial()});
  discovery::PublishedDevice relabelled = UsbSerial();
  relabelled.attributes["liken.sh/product"] = std::string("other");
  EXPECT_FALSE(files.Rebased(claim, SnapshotOf({relabelled})).has_value());
  DeviceMetadataStore store("/nonexistent/metadata");  // Rebased reads nothing from it
  auto rebased = ClaimFiles(&store).Rebased(claim, SnapshotOf({relabelled}));
  ASSERT_TRUE(rebased.has_value());
  EXPECT_EQ(rebased->delivered[0].attributes, relabelled.attributes);
}

// The adapter UsbSerial() describes, as one unit: FTDI 0403:6001 with `serial`, enumerated at `usbfs`.
discovery::PublishedDevice SerialAdapterUnit(const std::string& serial, const std::string& usbfs) {
  discovery::PublishedDevice d = UsbSerial();
  d.attributes["liken.sh/vendor"] = std::string("0403");
  d.attributes["liken.sh/product"] = std::string("6001");
  d.attributes["liken.sh/serial"] = std::string(serial);
  d.nodes[0].path = usbfs;
  return d;
}

TEST(ClaimFilesTest, AnotherUnitInTheClaimedPortNeverReachesTheClaim) {
  {
    ClaimFiles files(nullptr);
    PreparedClaim claim = ClaimOf({SerialAdapterUnit("A1", "/dev/bus/usb/001/004")});
    // An identical model with another serial, in the same port (the same device name), enumerated anew.
    EXPECT_FALSE(files.Rebased(claim, SnapshotOf({SerialAdapterUnit("B2", "/dev/bus/usb/001/005")})).has_value())
        << "the claim that selected serial A1 must not be handed the nodes of serial B2";
    discovery::PublishedDevice other_model = SerialAdapterUnit("A1", "/dev/bus/usb/001/006");
    other_model.attributes["liken.sh/product"] = std::string("6015");
    EXPECT_FALSE(files.Rebased(claim, SnapshotOf({other_model})).has_value()) << "another product is another unit";
    // The prepared unit back in its port, enumerated anew: its claim follows it.
    auto back = files.Rebased(claim, SnapshotOf({SerialAdapterUnit("A1", "/dev/bus/usb/001/007")}));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->delivered[0].nodes[0].path, "/dev/bus/usb/001/007");
  }
  DeviceMetadataStore store("/nonexistent/metadata");  // with metadata files on, the attributes are not taken either
  PreparedClaim claim = ClaimOf({SerialAdapterUnit("A1", "/dev/bus/usb/001/004")});
  EXPECT_FALSE(ClaimFiles(&store).Rebased(claim, SnapshotOf({SerialAdapterUnit("B2", "/dev/bus/usb/001/004")}))
                   .has_value());
}

TEST(ClaimFilesTest, SpecNamesEveryDeliveredNode) {
  ClaimFiles files(nullptr);
  cdi::Spec spec = files.SpecFor(ClaimOf({UsbSerial()}));
  ASSERT_EQ(spec.devices.size(), 1u);
  EXPECT_EQ(spec.devices[0].container_edits.device_nodes.size(), 2u);
}

}  // namespace
}  // namespace liken::kubelet
