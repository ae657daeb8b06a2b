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

TEST(ClaimFilesTest, SpecNamesEveryDeliveredNode) {
  ClaimFiles files(nullptr);
  cdi::Spec spec = files.SpecFor(ClaimOf({UsbSerial()}));
  ASSERT_EQ(spec.devices.size(), 1u);
  EXPECT_EQ(spec.devices[0].container_edits.device_nodes.size(), 2u);
}

}  // namespace
}  // namespace liken::kubelet
