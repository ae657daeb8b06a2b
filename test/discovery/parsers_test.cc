// The text parsers: uevent, pci.ids, modules.alias, mountinfo/swaps.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "discovery/modules_alias.h"
#include "discovery/pci_ids.h"
#include "discovery/storage_roles.h"
#include "discovery/uevent.h"

namespace liken::discovery {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(UeventTest, ParsesKeyValueLinesAndSkipsJunk) {
  auto m = ParseUevent("MAJOR=226\nMINOR=128\nDEVNAME=dri/renderD128\n=nokey\njunk\nDEVTYPE=drm_minor\r\nA=b=c");
  EXPECT_EQ(m["MAJOR"], "226");
  EXPECT_EQ(m["DEVNAME"], "dri/renderD128");
  EXPECT_EQ(m["DEVTYPE"], "drm_minor");
  EXPECT_EQ(m["A"], "b=c");
  EXPECT_EQ(m.count(""), 0u);
  EXPECT_EQ(m.size(), 5u);
  EXPECT_TRUE(ParseUevent(std::string("\0\0\n\xff", 4)).empty());
}

TEST(PciIdsTest, FindsVendorsAndDevicesAndIgnoresSubsystemsAndClasses) {
  auto db = PciIdsDatabase::Parse(
      "# comment\n8086  Intel Corporation\n\t5917  UHD Graphics 620\n\t\t17aa 225d  ThinkPad T480\n"
      "\tzzzz  broken\n1002  Advanced Micro Devices, Inc. [AMD/ATI]\n\t740f  Aldebaran/MI200 [Instinct MI210]\n"
      "C 03  Display controller\n\t00  VGA compatible controller\n");
  EXPECT_EQ(db.VendorName(0x8086).value_or(""), "Intel Corporation");
  EXPECT_EQ(db.DeviceName(0x8086, 0x5917).value_or(""), "UHD Graphics 620");
  EXPECT_EQ(db.DeviceName(0x1002, 0x740f).value_or(""), "Aldebaran/MI200 [Instinct MI210]");
  EXPECT_FALSE(db.DeviceName(0x8086, 0x0000).has_value());
  EXPECT_FALSE(db.DeviceName(0x17aa, 0x225d).has_value());
  EXPECT_EQ(db.device_count(), 2u);  // class section entries are not devices
}

TEST(PciIdsTest, LoadsTheSystemDatabaseWhenPresent) {
  auto db = PciIdsDatabase::Load("/usr/share/misc/pci.ids");
  if (!db.ok()) GTEST_SKIP() << "no system pci.ids";
  EXPECT_GT(db->device_count(), 10000u);
  EXPECT_TRUE(db->VendorName(0x8086).has_value());
}

TEST(PciIdsTest, LoadedDatabaseReadsTheFileOnDemandAndKeepsNoMapping) {
  char tmpl[] = "/tmp/liken-pci-ids-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string path = dir + "/pci.ids";
  std::ofstream(path) << "# list\n8086  Intel Corporation\n\t5917  UHD Graphics 620\n# between\n"
                         "10de  NVIDIA Corporation\n\t2330  GH100 [H100 SXM5 80GB]\n"
                         "8086  Intel again\n\t1234  Listed twice\n"
                         "C 03  Display controller\n\t00  VGA compatible controller\n";
  auto db = PciIdsDatabase::Load(path);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(db->device_count(), 3u);
  std::ifstream maps("/proc/self/maps");
  std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find(path), std::string::npos) << "the text is still mapped";
  // Replaced under the running database: the open file (the indexed version) still answers.
  std::ofstream(path + ".new") << "10de  Someone else\n";
  ASSERT_EQ(std::rename((path + ".new").c_str(), path.c_str()), 0);
  EXPECT_EQ(db->VendorName(0x8086).value_or(""), "Intel Corporation");  // the first listing wins
  EXPECT_EQ(db->DeviceName(0x8086, 0x5917).value_or(""), "UHD Graphics 620");
  EXPECT_FALSE(db->DeviceName(0x8086, 0x1234).has_value());
  EXPECT_EQ(db->VendorName(0x10de).value_or(""), "NVIDIA Corporation");
  EXPECT_EQ(db->DeviceName(0x10de, 0x2330).value_or(""), "GH100 [H100 SXM5 80GB]");
  EXPECT_FALSE(db->DeviceName(0x10de, 0x0000).has_value());
  EXPECT_FALSE(db->VendorName(0x1002).has_value());
  std::filesystem::remove_all(dir);
}

TEST(PciIdsTest, LooksUpAcrossTheChunksOfALargeVendorBlock) {
  char tmpl[] = "/tmp/liken-pci-ids-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string path = dir + "/pci.ids";
  std::vector<int> straddling;  // devices whose line crosses a 64 kB boundary of the file (the block starts at 0)
  {
    std::ofstream out(path);
    std::string text = "8086  Intel Corporation\n";
    for (int id = 0; id < 0x1800; ++id) {  // ~290 kB: five 64 kB reads
      char line[64];
      std::snprintf(line, sizeof(line), "\t%04x  Device number %d with a longer name\n", id, id);
      const size_t begin = text.size();
      text += line;
      if (begin / 65536 != (text.size() - 1) / 65536) straddling.push_back(id);
    }
    out << text << "10de  NVIDIA Corporation\n\t2330  GH100\n";
  }
  ASSERT_EQ(straddling.size(), 4u);
  auto db = PciIdsDatabase::Load(path);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_EQ(db->device_count(), 0x1801u);
  std::vector<int> ids = {0, 1, 0x17ff};
  for (int id : straddling) ids.insert(ids.end(), {id - 1, id, id + 1});
  for (int id : ids) {
    EXPECT_EQ(db->DeviceName(0x8086, static_cast<uint16_t>(id)).value_or(""),
              "Device number " + std::to_string(id) + " with a longer name")
        << id;
  }
  EXPECT_FALSE(db->DeviceName(0x8086, 0x1800).has_value());
  EXPECT_EQ(db->DeviceName(0x10de, 0x2330).value_or(""), "GH100");
  EXPECT_EQ(db->VendorName(0x8086).value_or(""), "Intel Corporation");
  std::filesystem::remove_all(dir);
}

TEST(PciIdsTest, AFileThatShrankAnswersNothingInsteadOfFailing) {
  char tmpl[] = "/tmp/liken-pci-ids-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);
  const std::string path = dir + "/pci.ids";
  std::ofstream(path) << "8086  Intel Corporation\n\t5917  UHD Graphics 620\n";
  auto db = PciIdsDatabase::Load(path);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_EQ(::truncate(path.c_str(), 0), 0);  // the same file, emptied under its open descriptor
  EXPECT_FALSE(db->DeviceName(0x8086, 0x5917).has_value());
  std::filesystem::remove_all(dir);
}

TEST(ModulesAliasTest, MatchesGlobsAndLeavesOutBuiltins) {
  auto db = ModulesAlias::Parse(
      "alias pci:v000010ECd0000525Asv*sd*bc*sc*i* rtsx_pci\n"
      "alias pci:v*d*sv*sd*bc0Csc03i30* xhci-pci\n"
      "alias pci:v00008086d*sv*sd*bc03sc*i* i915\n"
      "alias usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in* ftdi-sio\n"
      "alias usb:v0403p6001d*dc*dsc*dp*ic*isc*ip*in* ftdi_sio\n"
      "alias of:N*T*Ccompat some_of_driver\n"
      "garbage line\nalias onlytwo\n",
      "kernel/drivers/usb/host/xhci-pci.ko\n");
  EXPECT_EQ(db.alias_count(), 4u);
  EXPECT_THAT(db.Match("pci:v000010ECd0000525Asv000017AAsd0000225Dbc0Csc03i00"), ElementsAre("rtsx_pci"));
  EXPECT_THAT(db.Match("pci:v00008086d0000A36Dsv00001028sd00000000bc0Csc03i30"), IsEmpty());
  EXPECT_THAT(db.Match("usb:v0403p6001d0600dc00dsc00dp00icFFiscFFipFFin00"), ElementsAre("ftdi_sio"));
  EXPECT_THAT(db.Match("pci:v00008086d00005917sv000017AAsd0000225Dbc03sc00i00"), ElementsAre("i915"));
}

TEST(StorageFactsTest, ParsesMountinfoAndSwaps) {
  HostStorageFacts facts;
  ParseMountInfo(
      "22 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n"
      "30 22 0:25 / /home rw - btrfs /dev/mapper/home\\040x rw\n"
      "short line\n",
      &facts);
  ParseSwaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/sda3 partition 8388604 0 -2\n", &facts);
  EXPECT_EQ(facts.mounted_numbers.count({259, 2}), 1u);
  EXPECT_EQ(facts.mounted_numbers.count({0, 25}), 1u);
  EXPECT_EQ(facts.mounted_sources.count("/dev/nvme0n1p2"), 1u);
  EXPECT_EQ(facts.mounted_sources.count("/dev/mapper/home x"), 1u);
  EXPECT_THAT(facts.swap_paths, ElementsAre("/dev/sda3"));
}

}  // namespace
}  // namespace liken::discovery
