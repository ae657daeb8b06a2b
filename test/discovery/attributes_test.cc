// Attribute value rules: class words, hex normalisation, UTF-8 checks and cuts.
#include <gtest/gtest.h>

#include "discovery/attributes.h"

namespace liken::discovery {
namespace {

TEST(AttributesTest, ClassWords) {
  EXPECT_EQ(PciClassWord(0x03).value_or(""), "display");
  EXPECT_EQ(PciClassWord(0x0c).value_or(""), "serial-bus");
  EXPECT_EQ(PciClassWord(0x12).value_or(""), "accelerator");
  EXPECT_FALSE(PciClassWord(0x00).has_value());
  EXPECT_EQ(UsbClassWord(0x0e).value_or(""), "video");
  EXPECT_EQ(UsbClassWord(0xe0).value_or(""), "wireless");
  EXPECT_EQ(UsbClassWord(0xff).value_or(""), "vendor-specific");
  EXPECT_FALSE(UsbClassWord(0x09).has_value());
}

TEST(AttributesTest, HexIsLowercaseUnprefixedAndPadded) {
  EXPECT_EQ(NormalizeHex("0x8086\n", 4).value_or(""), "8086");
  EXPECT_EQ(NormalizeHex("0x030000", 6).value_or(""), "030000");
  EXPECT_EQ(NormalizeHex("740F", 4).value_or(""), "740f");
  EXPECT_EQ(NormalizeHex("e", 2).value_or(""), "0e");
  EXPECT_FALSE(NormalizeHex("0x12345", 4).has_value());
  EXPECT_FALSE(NormalizeHex("zz", 2).has_value());
  EXPECT_FALSE(NormalizeHex("", 2).has_value());
}

TEST(AttributesTest, Utf8ChecksAndCuts) {
  EXPECT_TRUE(IsCleanUtf8("Caf\xc3\xa9 \xe2\x82\xac"));
  EXPECT_FALSE(IsCleanUtf8("bad\xff"));
  EXPECT_FALSE(IsCleanUtf8("\xc0\xaf"));  // overlong
  EXPECT_FALSE(IsCleanUtf8("tab\there"));
  EXPECT_FALSE(IsCleanUtf8("\xed\xa0\x80"));  // surrogate
  EXPECT_EQ(CutUtf8("abc\xe2\x82\xac", 5), "abc");
  EXPECT_EQ(CutUtf8("abc\xe2\x82\xac", 6), "abc\xe2\x82\xac");
  EXPECT_EQ(CutUtf8("short", 64), "short");
}

TEST(AttributesTest, AttributeSetLeavesOutEmptyValues) {
  std::vector<ScanWarning> warnings;
  AttributeSet set("dev", &warnings);
  set.AddString(kAttrSerial, std::string("  \n"));
  set.AddString(kAttrSerial, std::nullopt);
  set.AddString(kAttrDriver, std::string("i915\n"));
  EXPECT_EQ(set.values().count(kAttrSerial), 0u);
  EXPECT_EQ(std::get<std::string>(set.values().at(kAttrDriver)), "i915");
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace liken::discovery
