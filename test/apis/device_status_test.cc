#include "apis/device_status.h"

#include <gtest/gtest.h>

#include "apis/resource_claim.h"

namespace liken::apis {
namespace {

TEST(DeviceStatusTest, ParsesEntriesAndRoundTrips) {
  auto j = nlohmann::json::parse(R"([
    {"driver": "liken.sh", "pool": "n1", "device": "usb-1-1", "shareID": "0c1f8a5e-0000-4000-8000-000000000001",
     "conditions": [{"type": "Ready", "status": "False", "reason": "DeviceUnplugged", "message": "gone",
                     "lastTransitionTime": "2026-12-01T16:00:00Z", "observedGeneration": 1}],
     "data": {"devicePaths": ["/dev/ttyUSB0"]}},
    {"driver": "other.example.com", "pool": "n1", "device": "eth0"}])");
  auto parsed = ParseAllocatedDeviceStatuses(j);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  const AllocatedDeviceStatus& d = (*parsed)[0];
  EXPECT_EQ(d.share_id, "0c1f8a5e-0000-4000-8000-000000000001");
  ASSERT_EQ(d.conditions.size(), 1u);
  EXPECT_EQ(d.conditions[0].reason, "DeviceUnplugged");
  EXPECT_EQ(d.conditions[0].last_transition_time, "2026-12-01T16:00:00Z");
  EXPECT_EQ(d.data["devicePaths"][0], "/dev/ttyUSB0");
  EXPECT_TRUE((*parsed)[1].data.is_null());
  EXPECT_TRUE((*parsed)[1].conditions.empty());
  auto again = ParseAllocatedDeviceStatuses(nlohmann::json::array({ToJson(d)}));
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)[0].SameState(d));
  EXPECT_FALSE(ToJson((*parsed)[1]).contains("data")) << "absent data stays absent";
}

TEST(DeviceStatusTest, SameStateIgnoresTimesButNotReasonsDataOrKeys) {
  AllocatedDeviceStatus a{"liken.sh", "n1", "d", std::nullopt, {{"Ready", "True", "Prepared", "", "t1"}},
                          nlohmann::json{{"devicePaths", {"/dev/a"}}}};
  AllocatedDeviceStatus b = a;
  b.conditions[0].last_transition_time = "t2";
  EXPECT_TRUE(a.SameState(b));
  b.conditions[0].reason = "Other";
  EXPECT_FALSE(a.SameState(b));
  b = a;
  b.data = nlohmann::json{{"devicePaths", {"/dev/b"}}};
  EXPECT_FALSE(a.SameState(b));
  b = a;
  b.share_id = "x";
  EXPECT_FALSE(a.SameState(b));
  EXPECT_FALSE(a.SameDevice(b));
}

TEST(DeviceStatusTest, RejectsMalformedListsAndAClaimIgnoresThem) {
  EXPECT_FALSE(ParseAllocatedDeviceStatuses(nlohmann::json::object()).ok());
  EXPECT_FALSE(ParseAllocatedDeviceStatuses(nlohmann::json::parse(R"([5])")).ok());
  EXPECT_FALSE(ParseAllocatedDeviceStatuses(nlohmann::json::parse(R"([{"driver": 5}])")).ok());
  EXPECT_FALSE(ParseAllocatedDeviceStatuses(nlohmann::json::parse(R"([{"conditions": {}}])")).ok());
  EXPECT_TRUE(ParseAllocatedDeviceStatuses(nlohmann::json()).ok());
  // Another driver's malformed entry never makes the claim unusable for prepare.
  auto claim = ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "c", "namespace": "n"},
      "status": {"allocation": {"devices": {"results": []}}, "devices": [{"driver": 5}]}})"));
  ASSERT_TRUE(claim.ok()) << claim.status();
  EXPECT_TRUE(claim->devices.empty());
  claim = ParseResourceClaim(nlohmann::json::parse(R"({"metadata": {"name": "c", "namespace": "n"},
      "status": {"devices": [{"driver": "liken.sh", "pool": "p", "device": "d"}]}})"));
  ASSERT_TRUE(claim.ok());
  ASSERT_EQ(claim->devices.size(), 1u);
  EXPECT_EQ(claim->devices[0].device, "d");
}

}  // namespace
}  // namespace liken::apis
