// Inventory → ResourceSlices: naming, sorting, splitting past 128 devices, and the API's limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apis/resource_slice.h"
#include "discovery/attributes.h"
#include "discovery/slice_builder.h"

namespace liken::discovery {
namespace {

using ::testing::HasSubstr;

PublishedDevice Device(const std::string& name, bool shared = false) {
  PublishedDevice d;
  d.name = name;
  d.attributes[kAttrBus] = std::string("usb");
  d.attributes[kAttrRenderNode] = shared;
  d.allow_multiple_allocations = shared;
  return d;
}

TEST(SliceBuilderTest, OneSliceNamedAfterTheNodeWithSortedDevices) {
  Inventory inv;
  inv.published = {Device("usb-1-2-1-0"), Device("pci-0000-00-02-0", true)};
  auto slices = BuildResourceSlices("node-a", inv, 1);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_EQ(slices[0].metadata.name, "node-a-liken.sh");
  EXPECT_EQ(slices[0].driver, "liken.sh");
  EXPECT_EQ(slices[0].node_name, "node-a");
  EXPECT_EQ(slices[0].pool.name, "node-a");
  EXPECT_EQ(slices[0].pool.generation, 1);
  EXPECT_EQ(slices[0].pool.resource_slice_count, 1);
  ASSERT_EQ(slices[0].devices.size(), 2u);
  EXPECT_EQ(slices[0].devices[0].name, "pci-0000-00-02-0");
  EXPECT_TRUE(slices[0].devices[0].allow_multiple_allocations.value_or(false));
  EXPECT_FALSE(slices[0].devices[1].allow_multiple_allocations.has_value());
  EXPECT_TRUE(apis::ValidateResourceSlice(slices[0]).ok());
  auto j = apis::ResourceSliceToJson(slices[0]);
  EXPECT_EQ(j["spec"]["devices"][0]["attributes"]["liken.sh/renderNode"]["bool"], true);
  EXPECT_EQ(j["spec"]["devices"][0]["allowMultipleAllocations"], true);
  EXPECT_FALSE(j["spec"]["devices"][1].contains("allowMultipleAllocations"));
}

TEST(SliceBuilderTest, MoreThan128DevicesSplitThePoolAndDropNothing) {
  Inventory inv;
  for (int i = 0; i < 300; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "usb-%d-1-1-0", i);
    inv.published.push_back(Device(name));
  }
  auto slices = BuildResourceSlices("node-b", inv, 7);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].metadata.name, "node-b-liken.sh");
  EXPECT_EQ(slices[1].metadata.name, "node-b-liken.sh-1");
  EXPECT_EQ(slices[2].metadata.name, "node-b-liken.sh-2");
  size_t total = 0;
  for (const auto& s : slices) {
    EXPECT_EQ(s.pool.resource_slice_count, 3);
    EXPECT_EQ(s.pool.generation, 7);
    EXPECT_LE(s.devices.size(), 128u);
    EXPECT_TRUE(apis::ValidateResourceSlice(s).ok()) << apis::ValidateResourceSlice(s);
    total += s.devices.size();
  }
  EXPECT_EQ(total, 300u);
}

TEST(SliceBuilderTest, EmptyNodeStillPublishesItsPool) {
  auto slices = BuildResourceSlices("node-c", Inventory{}, 1);
  ASSERT_EQ(slices.size(), 1u);
  EXPECT_TRUE(slices[0].devices.empty());
}

TEST(SliceValidationTest, RejectsWhatTheApiServerRejects) {
  Inventory inv;
  for (int i = 0; i < 129; ++i) inv.published.push_back(Device("d" + std::to_string(i)));
  auto slice = BuildResourceSlices("n", inv, 1)[0];
  slice.devices.push_back(slice.devices[0]);
  slice.devices.back().name = "extra";
  EXPECT_THAT(std::string(apis::ValidateResourceSlice(slice).message()), HasSubstr("129"));

  Inventory single;
  single.published = {Device("ok")};
  auto one = BuildResourceSlices("n", single, 1)[0];
  EXPECT_TRUE(apis::ValidateResourceSlice(one).ok());
  auto bad_name = one;
  bad_name.devices[0].name = "Has_Upper";
  EXPECT_FALSE(apis::ValidateResourceSlice(bad_name).ok());
  auto long_name = one;
  long_name.devices[0].name = std::string(64, 'a');
  EXPECT_FALSE(apis::ValidateResourceSlice(long_name).ok());
  auto long_value = one;
  long_value.devices[0].attributes["liken.sh/name"] = std::string(65, 'v');
  EXPECT_FALSE(apis::ValidateResourceSlice(long_value).ok());
  auto bad_attr = one;
  bad_attr.devices[0].attributes["liken.sh/not-an-identifier"] = std::string("x");
  EXPECT_FALSE(apis::ValidateResourceSlice(bad_attr).ok());
  auto many = one;
  for (int i = 0; i < 32; ++i) many.devices[0].attributes["liken.sh/a" + std::to_string(i)] = int64_t{i};
  EXPECT_FALSE(apis::ValidateResourceSlice(many).ok());
}

}  // namespace
}  // namespace liken::discovery
