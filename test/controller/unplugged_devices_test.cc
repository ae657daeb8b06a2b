// A pod follows its device: which claimed devices that went away are published tainted, for how long, and with
// which taint time. The sysfs directories are real directories under the test's temporary directory; the clock is
// fake.
#include "controller/unplugged_devices.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"
#include "test/common/fake_clock.h"

namespace liken::controller {
namespace {

using liken::testing::FakeClock;

class UnpluggedDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = absl::StrCat(::testing::TempDir(), "/unplugged-", ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(root_);  // a memory file of an earlier run must not be read
    ::mkdir(root_.c_str(), 0755);
  }

  // A device a prepared claim holds, with a sysfs directory that exists (`present`) or not.
  nodestate::HeldDevice Held(const std::string& name, bool sysfs_present) {
    nodestate::HeldDevice h;
    h.name = name;
    h.attributes["liken.sh/serial"] = std::string(absl::StrCat("serial-of-", name));
    h.sysfs_path = absl::StrCat(root_, "/", name);
    if (sysfs_present) ::mkdir(h.sysfs_path.c_str(), 0755);
    return h;
  }

  static discovery::Inventory InventoryOf(const std::vector<std::string>& names) {
    discovery::Inventory inventory;
    for (const auto& name : names) {
      discovery::PublishedDevice d;
      d.name = name;
      inventory.published.push_back(d);
    }
    return inventory;
  }

  static std::vector<std::string> Names(const std::vector<apis::SliceDevice>& devices) {
    std::vector<std::string> names;
    for (const auto& d : devices) names.push_back(d.name);
    return names;
  }

  std::string root_;
  FakeClock clock_;
};

TEST_F(UnpluggedDevicesTest, OnlyAHeldDeviceWhoseSysfsDirectoryIsGoneIsTainted) {
  UnpluggedDevices unplugged(&clock_);
  nodestate::HeldDevice admin = Held("usb-1-4", false);
  admin.admin_access_only = true;
  nodestate::HeldDevice unknown_path = Held("usb-1-5", false);
  unknown_path.sysfs_path.clear();
  const std::vector<nodestate::HeldDevice> held = {Held("usb-1-1", true),   // still published
                                        Held("usb-1-2", false),  // unplugged: tainted
                                        Held("usb-1-3", true),   // driver unbound or detached by libusb: not tainted
                                        admin, unknown_path};
  int reads = 0;
  auto tainted = unplugged.Tainted(InventoryOf({"usb-1-1"}), held, [&] {
    ++reads;
    return std::vector<apis::ResourceSlice>{};
  });
  ASSERT_EQ(Names(tainted), (std::vector<std::string>{"usb-1-2"}));
  EXPECT_EQ(reads, 1) << "the published slices are read once, for the device newly gone";
  const apis::SliceDevice& d = tainted[0];
  ASSERT_EQ(d.taints.size(), 1u);
  EXPECT_EQ(d.taints[0].key, "liken.sh/unplugged");
  EXPECT_EQ(d.taints[0].value, kUnpluggedTaintValue);
  EXPECT_EQ(d.taints[0].effect, "NoExecute");
  EXPECT_EQ(d.taints[0].time_added, TaintTime(clock_.Now()));
  EXPECT_EQ(d.taints[0].time_added, "2023-11-14T22:13:20Z");
  // It keeps the attributes it was prepared with, and shares nothing: its allocation holds it.
  EXPECT_EQ(std::get<std::string>(d.attributes.at("liken.sh/serial")), "serial-of-usb-1-2");
  EXPECT_FALSE(d.allow_multiple_allocations.value_or(false));
  EXPECT_EQ(unplugged.tainted(), 1u);
}

TEST_F(UnpluggedDevicesTest, TheTaintKeepsItsTimeAndGoesWhenTheDeviceComesBackOrIsReleased) {
  UnpluggedDevices unplugged(&clock_);
  const std::vector<nodestate::HeldDevice> held = {Held("usb-1-2", false)};
  const std::string first = unplugged.Tainted(InventoryOf({}), held, nullptr).at(0).taints.at(0).time_added;
  clock_.Advance(absl::Seconds(30));
  int reads = 0;
  auto again = unplugged.Tainted(InventoryOf({}), held, [&] {
    ++reads;
    return std::vector<apis::ResourceSlice>{};
  });
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].taints[0].time_added, first) << "a claim's tolerationSeconds count from the first pass";
  EXPECT_EQ(reads, 0) << "nothing newly gone: the slices are not read";
  // Plugged back into the same port: published by the scan, so no tainted copy.
  EXPECT_TRUE(unplugged.Tainted(InventoryOf({"usb-1-2"}), held, nullptr).empty());
  EXPECT_EQ(unplugged.tainted(), 0u);
  // Gone again later: a new taint time.
  clock_.Advance(absl::Seconds(30));
  auto later = unplugged.Tainted(InventoryOf({}), held, nullptr);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].taints[0].time_added, TaintTime(clock_.Now()));
  EXPECT_NE(later[0].taints[0].time_added, first);
  // No prepared claim holds it any more (the evicted pod's claim was unprepared): it leaves the slice.
  EXPECT_TRUE(unplugged.Tainted(InventoryOf({}), {}, nullptr).empty());
}

TEST_F(UnpluggedDevicesTest, TheLimitEndsThePublicationWhileAClaimStillHoldsIt) {
  UnpluggedDevices unplugged(&clock_, absl::Minutes(10));
  const std::vector<nodestate::HeldDevice> held = {Held("usb-1-2", false)};
  ASSERT_EQ(unplugged.Tainted(InventoryOf({}), held, nullptr).size(), 1u);
  clock_.Advance(absl::Minutes(10) - absl::Seconds(1));
  EXPECT_EQ(unplugged.Tainted(InventoryOf({}), held, nullptr).size(), 1u);
  clock_.Advance(absl::Seconds(1));
  EXPECT_TRUE(unplugged.Tainted(InventoryOf({}), held, nullptr).empty());
  clock_.Advance(absl::Minutes(30));
  EXPECT_TRUE(unplugged.Tainted(InventoryOf({}), held, nullptr).empty()) << "it stays out while still gone";
}

TEST_F(UnpluggedDevicesTest, ARestartedDaemonKeepsTheTaintTimeThatIsPublished) {
  const std::vector<nodestate::HeldDevice> held = {Held("usb-1-2", false), Held("usb-1-3", false)};
  apis::ResourceSlice slice;
  slice.devices.resize(2);
  slice.devices[0].name = "usb-1-2";
  slice.devices[0].taints.push_back({"other.example/key", "", "NoSchedule", "2023-11-14T22:00:00Z"});
  slice.devices[0].taints.push_back({kUnpluggedTaintKey, kUnpluggedTaintValue, "NoExecute", "2023-11-14T22:05:00Z"});
  slice.devices[1].name = "usb-1-3";  // published untainted: it went away while the daemon was down
  UnpluggedDevices unplugged(&clock_, absl::Minutes(10));
  auto tainted = unplugged.Tainted(InventoryOf({}), held, [&] { return std::vector<apis::ResourceSlice>{slice}; });
  ASSERT_EQ(Names(tainted), (std::vector<std::string>{"usb-1-2", "usb-1-3"}));
  EXPECT_EQ(tainted[0].taints.at(0).time_added, "2023-11-14T22:05:00Z");
  EXPECT_EQ(tainted[1].taints.at(0).time_added, "2023-11-14T22:13:20Z");
  // The limit counts from the published time: 22:05 + 10 min is before 22:15.
  clock_.Advance(absl::Minutes(2));
  EXPECT_EQ(Names(unplugged.Tainted(InventoryOf({}), held, nullptr)), (std::vector<std::string>{"usb-1-3"}));
}

TEST_F(UnpluggedDevicesTest, NextExpiryIsTheFirstTaintsTimeAddedPlusTheLimit) {
  UnpluggedDevices unplugged(&clock_, absl::Minutes(10));
  EXPECT_FALSE(unplugged.NextExpiry().has_value());
  const absl::Time t0 = clock_.Now();
  std::vector<nodestate::HeldDevice> held = {Held("usb-1-2", false)};
  ASSERT_EQ(unplugged.Tainted(InventoryOf({}), held, nullptr).size(), 1u);
  EXPECT_EQ(unplugged.NextExpiry(), t0 + absl::Minutes(10));
  clock_.Advance(absl::Minutes(4));
  held.push_back(Held("usb-1-3", false));
  ASSERT_EQ(unplugged.Tainted(InventoryOf({}), held, nullptr).size(), 2u);
  EXPECT_EQ(unplugged.NextExpiry(), t0 + absl::Minutes(10)) << "the first of the two";
  clock_.Advance(absl::Minutes(6));
  ASSERT_EQ(Names(unplugged.Tainted(InventoryOf({}), held, nullptr)), (std::vector<std::string>{"usb-1-3"}));
  EXPECT_EQ(unplugged.NextExpiry(), t0 + absl::Minutes(14)) << "an expired taint asks for no pass";
  ASSERT_TRUE(unplugged.Tainted(InventoryOf({"usb-1-3"}), held, nullptr).empty());
  EXPECT_FALSE(unplugged.NextExpiry().has_value());
}

// The memory file: a restarted daemon (a new object over the same directory) keeps a tainted device's timeAdded
// even when the slices it reads do not show it, and keeps an expired device out; a device that came back is
// forgotten. Without a memory directory (the earlier daemon) the expired device came back with a fresh timeAdded.
TEST_F(UnpluggedDevicesTest, TheTaintTimesAndTheExpirySurviveARestart) {
  const std::string dir = absl::StrCat(root_, "/memory");
  ::mkdir(dir.c_str(), 0755);
  const std::vector<nodestate::HeldDevice> held = {Held("usb-1-2", false), Held("usb-1-3", false)};
  {
    UnpluggedDevices first(&clock_, absl::Minutes(10), dir);
    ASSERT_EQ(first.Tainted(InventoryOf({}), {held[0]}, nullptr).size(), 1u);  // usb-1-2 at 22:13:20
    clock_.Advance(absl::Minutes(5));
    ASSERT_EQ(first.Tainted(InventoryOf({}), held, nullptr).size(), 2u);  // usb-1-3 at 22:18:20
    clock_.Advance(absl::Minutes(5));
    ASSERT_EQ(Names(first.Tainted(InventoryOf({}), held, nullptr)), (std::vector<std::string>{"usb-1-3"}));
  }
  clock_.Advance(absl::Minutes(1));
  UnpluggedDevices restarted(&clock_, absl::Minutes(10), dir);
  auto tainted = restarted.Tainted(InventoryOf({}), held, [] { return std::vector<apis::ResourceSlice>{}; });
  ASSERT_EQ(Names(tainted), (std::vector<std::string>{"usb-1-3"})) << "usb-1-2 stays expired";
  EXPECT_EQ(tainted[0].taints.at(0).time_added, "2023-11-14T22:18:20Z") << "the remembered time, not the restart's";
  EXPECT_EQ(restarted.NextExpiry(), absl::FromUnixSeconds(1700000000) + absl::Minutes(15));

  UnpluggedDevices forgetful(&clock_, absl::Minutes(10));
  EXPECT_EQ(forgetful.Tainted(InventoryOf({}), held, nullptr).size(), 2u) << "no memory: both again, from now";

  ASSERT_TRUE(restarted.Tainted(InventoryOf({"usb-1-2", "usb-1-3"}), held, nullptr).empty());  // both came back
  UnpluggedDevices again(&clock_, absl::Minutes(10), dir);
  EXPECT_EQ(again.Tainted(InventoryOf({}), held, nullptr).size(), 2u) << "gone again later: a new taint each";
}

TEST_F(UnpluggedDevicesTest, AMemoryFileThatIsNotOursIsIgnored) {
  const std::string dir = absl::StrCat(root_, "/memory");
  ::mkdir(dir.c_str(), 0755);
  for (const char* text : {"not json", "[1,2]", R"({"devices": {"Bad_Name": "2023-11-14T22:00:00Z", "usb-1-2": 7}})"}) {
    ASSERT_TRUE(liken::WriteFileAtomically(dir, UnpluggedDevices::kMemoryFile, text).ok());
    UnpluggedDevices unplugged(&clock_, absl::Minutes(10), dir);
    auto tainted = unplugged.Tainted(InventoryOf({}), {Held("usb-1-2", false)}, nullptr);
    ASSERT_EQ(tainted.size(), 1u) << text;
    EXPECT_EQ(tainted[0].taints.at(0).time_added, "2023-11-14T22:13:20Z") << text;
  }
}

TEST_F(UnpluggedDevicesTest, AnotherUnitInTheClaimedPortLeavesTheClaimedDeviceTainted) {
  // The claim holds FTDI 0403:6001 serial A1 in port usb-1-2; its sysfs directory is there (a unit is plugged in).
  nodestate::HeldDevice held = Held("usb-1-2", true);
  held.attributes = {{"liken.sh/vendor", std::string("0403")},
                     {"liken.sh/product", std::string("6001")},
                     {"liken.sh/serial", std::string("A1")}};
  const auto in_port = [](const std::string& serial) {
    discovery::Inventory inventory;
    discovery::PublishedDevice d;
    d.name = "usb-1-2";
    d.attributes = {{"liken.sh/vendor", std::string("0403")},
                    {"liken.sh/product", std::string("6001")},
                    {"liken.sh/serial", serial}};
    inventory.published.push_back(d);
    return inventory;
  };
  UnpluggedDevices unplugged(&clock_);
  auto tainted = unplugged.Tainted(in_port("B2"), {held}, nullptr);
  ASSERT_EQ(Names(tainted), (std::vector<std::string>{"usb-1-2"})) << "serial B2 is not the claimed A1 come back";
  EXPECT_EQ(tainted[0].attributes, held.attributes) << "published as the claimed unit, not the one in the port";
  EXPECT_EQ(tainted[0].taints.at(0).key, kUnpluggedTaintKey);
  EXPECT_TRUE(unplugged.Tainted(in_port("A1"), {held}, nullptr).empty()) << "the claimed unit back: no taint";
}

}  // namespace
}  // namespace liken::controller
