// Inventory → ResourceSlices: naming, sorting, splitting past 128 devices (64 with a taint), and the API's limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

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

// `count` devices "usb-000" ... in name order.
Inventory Numbered(int count) {
  Inventory inv;
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "usb-%03d", i);
    inv.published.push_back(Device(name));
  }
  return inv;
}

// Each slice's name and its device names.
std::map<std::string, std::vector<std::string>> Layout(const std::vector<apis::ResourceSlice>& slices) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& s : slices) {
    auto& names = out[s.metadata.name];
    for (const auto& d : s.devices) names.push_back(d.name);
  }
  return out;
}

// The API server's rule (ResourceSliceMaxDevicesWithTaintsOrConsumesCounters, Kubernetes 1.35 on): at most 64
// devices in a slice in which a device has a taint. A claimed device that went away (tainted, from `also`) in a
// pool of 150: every slice valid, the tainted device in a slice of at most 64, every device once, and only the
// slice that holds it split: the others keep their names and devices. Chunked at 128 (the earlier builder), the
// tainted device sat in a slice of 128 and the API server refused it (422 "must have at most 64 items").
TEST(SliceBuilderTest, TaintedDeviceInAPoolOfMoreThan64IsInASliceOfAtMost64AndOnlyItsSliceSplits) {
  const Inventory all = Numbered(150);
  const auto untainted = BuildResourceSlices("node-d", all, 3);
  EXPECT_EQ(Layout(untainted).size(), 2u);

  Inventory rest = all;
  rest.published.erase(rest.published.begin() + 100);  // usb-100: gone, still held by a claim
  apis::SliceDevice gone;
  gone.name = "usb-100";
  gone.taints.push_back({"liken.sh/unplugged", "device-gone", "NoExecute", "2026-12-05T13:00:00Z"});
  const auto slices = BuildResourceSlices("node-d", rest, 3, {gone});

  std::map<std::string, int> seen;
  for (const auto& s : slices) {
    EXPECT_TRUE(apis::ValidateResourceSlice(s).ok()) << s.metadata.name << ": " << apis::ValidateResourceSlice(s);
    EXPECT_EQ(s.pool.resource_slice_count, static_cast<int64_t>(slices.size()));
    EXPECT_EQ(s.pool.generation, 3);
    for (const auto& d : s.devices) {
      ++seen[d.name];
      if (d.name == "usb-100") {
        EXPECT_LE(s.devices.size(), 64u) << "the tainted device's slice " << s.metadata.name;
        EXPECT_EQ(d.taints.size(), 1u);
      }
    }
  }
  EXPECT_EQ(seen.size(), 150u);
  for (const auto& [name, n] : seen) EXPECT_EQ(n, 1) << name;

  auto before = Layout(untainted);
  auto after = Layout(slices);
  ASSERT_EQ(after.size(), 3u);
  EXPECT_EQ(after["node-d-liken.sh-1"], before["node-d-liken.sh-1"]) << "the slice without the taint is unchanged";
  std::vector<std::string> halves = after["node-d-liken.sh"];
  halves.insert(halves.end(), after["node-d-liken.sh-0b"].begin(), after["node-d-liken.sh-0b"].end());
  EXPECT_EQ(halves, before["node-d-liken.sh"]) << "the tainted slice's devices, split in two halves of 64";
  EXPECT_EQ(after["node-d-liken.sh"].size(), 64u);
}

TEST(SliceValidationTest, SixtyFourDevicesInASliceWithATaintOrCountersHundredTwentyEightOtherwise) {
  auto slice = BuildResourceSlices("n", Numbered(128), 1)[0];
  ASSERT_EQ(slice.devices.size(), 128u);
  EXPECT_TRUE(apis::ValidateResourceSlice(slice).ok());
  EXPECT_EQ(apis::MaxDevicesInSlice(slice.devices), 128u);

  auto tainted = slice;
  tainted.devices[70].taints.push_back({"liken.sh/unplugged", "device-gone", "NoExecute", ""});
  const absl::Status refused = apis::ValidateResourceSlice(tainted);
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(refused.message()), HasSubstr("ResourceSliceMaxDevicesWithTaintsOrConsumesCounters"));
  EXPECT_THAT(std::string(refused.message()), HasSubstr("usb-070"));
  tainted.devices.resize(65);  // usb-070 is cut off: taint another
  tainted.devices[10].taints.push_back({"liken.sh/unplugged", "device-gone", "NoExecute", ""});
  EXPECT_FALSE(apis::ValidateResourceSlice(tainted).ok()) << "65 with a taint";
  tainted.devices.resize(64);
  EXPECT_TRUE(apis::ValidateResourceSlice(tainted).ok()) << "64 with a taint";

  auto counters = slice;
  counters.devices.resize(65);
  counters.devices[3].raw = {{"consumesCounters", {{{"counterSet", "lanes"}, {"counters", nlohmann::json::object()}}}}};
  EXPECT_THAT(std::string(apis::ValidateResourceSlice(counters).message()), HasSubstr("consumes counters"));
  counters.devices[3].raw = {{"consumesCounters", nlohmann::json::array()}};
  EXPECT_TRUE(apis::ValidateResourceSlice(counters).ok()) << "an empty consumesCounters consumes none";
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
