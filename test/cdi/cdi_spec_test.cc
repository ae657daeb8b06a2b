#include "cdi/cdi_spec.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cdi/claim_spec.h"

namespace liken::cdi {
namespace {

TEST(CdiSpecTest, ClaimSpecJsonHasExactlyTheFieldsCdiNeeds) {
  Spec spec = MakeClaimSpec("abc-123", {{"pci-0000-00-02-0", {{"/dev/dri/renderD128", "c", 226, 128}}},
                                        {"usb-1-2-1-0", {{"/dev/bus/usb/001/004", "c", 189, 3},
                                                         {"/dev/ttyUSB0", "c", 188, 0}}}});
  nlohmann::json want = {
      {"cdiVersion", "0.3.0"},
      {"kind", "liken.sh/device"},
      {"devices",
       {{{"name", "abc-123-pci-0000-00-02-0"},
         {"containerEdits",
          {{"deviceNodes", {{{"path", "/dev/dri/renderD128"}, {"type", "c"}, {"major", 226}, {"minor", 128}}}}}}},
        {{"name", "abc-123-usb-1-2-1-0"},
         {"containerEdits",
          {{"deviceNodes",
            {{{"path", "/dev/bus/usb/001/004"}, {"type", "c"}, {"major", 189}, {"minor", 3}},
             {{"path", "/dev/ttyUSB0"}, {"type", "c"}, {"major", 188}, {"minor", 0}}}}}}}}},
  };
  EXPECT_EQ(nlohmann::json::parse(SpecToJson(spec)), want);
}

TEST(CdiSpecTest, DeviceNamesStartingWithADigitNeedVersion050) {
  EXPECT_EQ(MinimumCdiVersion(MakeClaimSpec("abc", {{"dev", {}}})), "0.3.0");
  Spec digit = MakeClaimSpec("9bc", {{"dev", {}}});
  EXPECT_EQ(MinimumCdiVersion(digit), "0.5.0");
  EXPECT_EQ(digit.cdi_version, "0.5.0");
  EXPECT_EQ(nlohmann::json::parse(SpecToJson(digit))["cdiVersion"], "0.5.0");
}

TEST(CdiSpecTest, RoundTrips) {
  Spec spec = MakeClaimSpec("u1", {{"dev-a", {{"/dev/a", "c", 1, 2}}}, {"dev-b", {{"/dev/sda", "b", 8, 0}}}});
  auto parsed = ParseSpec(SpecToJson(spec));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, spec);
}

TEST(CdiSpecTest, QualifiedIds) {
  EXPECT_EQ(ClaimDeviceId("u1", "pci-0000-00-02-0"), "liken.sh/device=u1-pci-0000-00-02-0");
  EXPECT_EQ(ClaimDeviceName("u1", "d"), "u1-d");
}

TEST(CdiSpecTest, ValidDeviceNames) {
  EXPECT_TRUE(IsValidDeviceName("0b3a-pci-0000-00-02-0"));
  EXPECT_TRUE(IsValidDeviceName("a_b.c:d"));
  EXPECT_FALSE(IsValidDeviceName(""));
  EXPECT_FALSE(IsValidDeviceName("-a"));
  EXPECT_FALSE(IsValidDeviceName("a-"));
  EXPECT_FALSE(IsValidDeviceName("a/b"));
}

TEST(CdiSpecTest, ParseRejectsMalformedSpecs) {
  const char* bad[] = {
      "",
      "[]",
      R"({"kind":"liken.sh/device","devices":[]})",
      R"({"cdiVersion":"0.3.0","kind":"nokind","devices":[]})",
      R"({"cdiVersion":"0.3.0","kind":"a/b"})",
      R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"-x","containerEdits":{}}]})",
      R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x"}]})",
      R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x","containerEdits":{"deviceNodes":{}}}]})",
      R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x","containerEdits":{"deviceNodes":[{"type":"c"}]}}]})",
      R"({"cdiVersion":"0.3.0","kind":"a/b","devices":[{"name":"x","containerEdits":{"deviceNodes":[{"path":"/dev/x","major":"1"}]}}]})",
  };
  for (const char* text : bad) {
    EXPECT_EQ(ParseSpec(text).status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
}

TEST(CdiSpecTest, ParseIgnoresFieldsLikenDoesNotWrite) {
  auto parsed = ParseSpec(R"({"cdiVersion":"0.6.0","kind":"a/b","annotations":{"x":"y"},
    "devices":[{"name":"x","annotations":{},"containerEdits":{"env":["A=1"],
    "deviceNodes":[{"path":"/dev/x","permissions":"rw"}]}}]})");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->devices.size(), 1u);
  EXPECT_EQ(parsed->devices[0].container_edits.device_nodes[0].path, "/dev/x");
}

}  // namespace
}  // namespace liken::cdi
