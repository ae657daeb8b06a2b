#include "migrate/generic_device_plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace liken::migrate {
namespace {

using discovery::PublishedDevice;
using ::testing::HasSubstr;

PublishedDevice Device(const std::string& name, std::vector<std::string> nodes,
                       std::map<std::string, discovery::AttributeValue> attributes, bool shareable = false) {
  PublishedDevice d;
  d.name = name;
  for (auto& n : nodes) d.nodes.push_back({n, 'c', 1, 1, ""});
  for (auto& [k, v] : attributes) d.attributes["liken.sh/" + k] = v;
  d.allow_multiple_allocations = shareable;
  return d;
}

// A laptop-like node with two identical serial adapters on different ports.
std::vector<PublishedDevice> Node() {
  return {
      Device("pci-0000-00-02-0", {"/dev/dri/renderD128"},
             {{"bus", std::string("pci")}, {"vendor", std::string("8086")}, {"product", std::string("46a6")},
              {"subsystem", std::string("drm")}, {"renderNode", true}, {"displayNode", false},
              {"address", std::string("0000:00:02.0")}},
             true),
      Device("pci-0000-00-02-0-display", {"/dev/dri/card0"},
             {{"bus", std::string("pci")}, {"vendor", std::string("8086")}, {"product", std::string("46a6")},
              {"subsystem", std::string("drm")}, {"renderNode", false}, {"displayNode", true},
              {"address", std::string("0000:00:02.0")}}),
      Device("pci-0000-00-1f-3", {"/dev/snd/controlC0", "/dev/snd/pcmC0D0c", "/dev/snd/pcmC0D0p"},
             {{"bus", std::string("pci")}, {"vendor", std::string("8086")}, {"product", std::string("51c8")},
              {"subsystem", std::string("sound")}, {"address", std::string("0000:00:1f.3")}}),
      Device("usb-1-1-1-0", {"/dev/bus/usb/001/003", "/dev/ttyUSB0"},
             {{"bus", std::string("usb")}, {"vendor", std::string("0403")}, {"product", std::string("6001")},
              {"subsystem", std::string("tty")}, {"address", std::string("1-1")}, {"serial", std::string("A1")}}),
      Device("usb-1-2-1-0", {"/dev/bus/usb/001/004", "/dev/ttyUSB1"},
             {{"bus", std::string("usb")}, {"vendor", std::string("0403")}, {"product", std::string("6001")},
              {"subsystem", std::string("tty")}, {"address", std::string("1-2")}, {"serial", std::string("B2")}}),
      Device("usb-1-7-1-0", {"/dev/bus/usb/001/006"},
             {{"bus", std::string("usb")}, {"vendor", std::string("8087")}, {"product", std::string("0026")},
              {"address", std::string("1-7")}}),
  };
}

MigrationPlan Plan(const std::string& config, MigrationOptions options = {}) {
  auto devices = ParseGenericDevicePluginConfig(config);
  EXPECT_TRUE(devices.ok()) << devices.status();
  if (!devices.ok()) return {};
  auto plan = PlanMigration(*devices, Node(), options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : MigrationPlan{};
}

TEST(ParseGenericDevicePluginConfigTest, ReadsEveryFormTheDeviceFlagAndTheConfigFileTake) {
  // One --device value in JSON.
  auto one = ParseGenericDevicePluginConfig(R"({"name": "serial", "groups": [{"paths": [{"path": "/dev/ttyUSB*"}]}]})");
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].name, "serial");
  EXPECT_EQ((*one)[0].groups[0].paths[0].path, "/dev/ttyUSB*");
  EXPECT_EQ((*one)[0].groups[0].count, 1u);
  // The config file: `devices`, entries as maps or as the strings --device takes; USB IDs as numbers or hex.
  auto file = ParseGenericDevicePluginConfig(R"(
devices:
- name: fuse
  groups:
  - count: 10
    paths: [{path: /dev/fuse, mountPath: /dev/fuse, optional: true}]
- '{"name": "ch340", "groups": [{"usb": [{"vendor": "1A86", "product": "0x7523", "serial": "S1"}]}]}'
- name: ftdi
  groups: [{usb: [{vendor: 403, product: 6001}]}]
)");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->size(), 3u);
  EXPECT_EQ((*file)[0].groups[0].count, 10u);
  EXPECT_TRUE((*file)[0].groups[0].paths[0].optional);
  EXPECT_EQ((*file)[0].groups[0].paths[0].mount_path, "/dev/fuse");
  EXPECT_EQ((*file)[1].groups[0].usb[0].vendor, "1a86");
  EXPECT_EQ((*file)[1].groups[0].usb[0].product, "7523");
  EXPECT_EQ((*file)[1].groups[0].usb[0].serial, "S1");
  EXPECT_EQ((*file)[2].groups[0].usb[0].vendor, "0403");
  // A bare list of specifications.
  auto list = ParseGenericDevicePluginConfig(R"([{"name": "a", "groups": [{"paths": [{"path": "/dev/a"}]}]}])");
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->size(), 1u);
}

TEST(ParseGenericDevicePluginConfigTest, MalformedSpecificationsAreClearErrors) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not JSON or YAML"},
      {"foo: 1", "no device specification"},
      {R"({"groups": []})", "no device specification"},
      {R"({"name": "x"})", "has no groups"},
      {R"({"name": "x", "groups": [{}]})", "has no paths and no usb"},
      {R"({"name": "x", "groups": [{"paths": [{"path": "/dev/a"}], "usb": [{"vendor": "1", "product": "2"}]}]})",
       "both paths and usb"},
      {R"({"name": "x", "groups": [{"count": -1, "paths": [{"path": "/dev/a"}]}]})", "is not a count"},
      {R"({"name": "x", "groups": [{"paths": [{"path": "dev/a"}]}]})", "not an absolute path"},
      {R"({"name": "x", "groups": [{"usb": [{"vendor": "xyz1", "product": "2"}]}]})", "is not a USB ID"},
      {R"({"name": "x", "groups": [{"paths": [{"path": "/dev/a", "optional": "maybe"}]}]})", "not true or false"},
      {R"([{"name": "x", "groups": [{"paths": [{"path": "/a"}]}]}, {"name": "x", "groups": [{"paths": [{"path": "/b"}]}]}])",
       "specified twice"},
  };
  for (const auto& [text, want] : cases) {
    auto got = ParseGenericDevicePluginConfig(text);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(want)) << text;
  }
}

TEST(PlanMigrationTest, AGlobMovesToEveryDeviceItMatchesByStableAttributesOnly) {
  MigrationPlan plan = Plan(R"({"name": "serial", "groups": [{"paths": [{"path": "/dev/ttyUSB*"}]}]})");
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_TRUE(plan.groups[0].moves);
  EXPECT_EQ(plan.groups[0].devices, (std::vector<std::string>{"usb-1-1-1-0", "usb-1-2-1-0"}));
  EXPECT_THAT(plan.groups[0].notes, ::testing::ElementsAre("usb-1-1-1-0 also delivers /dev/bus/usb/001/003",
                                                           "usb-1-2-1-0 also delivers /dev/bus/usb/001/004"));
  EXPECT_THAT(plan.device_classes_yaml, HasSubstr("name: serial.squat.ai"));
  EXPECT_THAT(plan.device_classes_yaml, HasSubstr("extendedResourceName: squat.ai/serial"));
  // The two identical adapters share one selector; no address, serial or bus path.
  EXPECT_EQ(plan.device_classes_yaml, R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: serial.squat.ai
spec:
  extendedResourceName: squat.ai/serial
  selectors:
  - cel:
      expression: |-
        device.driver == "liken.sh" && (
          (has(device.attributes["liken.sh"].vendor) && device.attributes["liken.sh"].vendor == "0403" && has(device.attributes["liken.sh"].product) && device.attributes["liken.sh"].product == "6001" && has(device.attributes["liken.sh"].subsystem) && device.attributes["liken.sh"].subsystem == "tty")
        )
)");
  EXPECT_THAT(plan.device_classes_yaml, ::testing::Not(HasSubstr("address")));
}

TEST(PlanMigrationTest, AnExactPathPinsTheAddressOnlyWhenATwinWouldMatchToo) {
  MigrationPlan twin = Plan(R"({"name": "port1", "groups": [{"paths": [{"path": "/dev/ttyUSB1"}]}]})");
  ASSERT_TRUE(twin.groups[0].moves);
  EXPECT_THAT(twin.device_classes_yaml, HasSubstr("device.attributes[\"liken.sh\"].address == \"1-2\""));
  MigrationPlan unique = Plan(R"({"name": "card", "groups": [{"paths": [{"path": "/dev/dri/renderD128"}]}]})");
  ASSERT_TRUE(unique.groups[0].moves);
  EXPECT_THAT(unique.device_classes_yaml, ::testing::Not(HasSubstr("address")));
  EXPECT_THAT(unique.device_classes_yaml, HasSubstr("has(device.attributes[\"liken.sh\"].renderNode) && device.attributes[\"liken.sh\"].renderNode)"));
}

TEST(PlanMigrationTest, SaysWhyAGroupCannotMove) {
  MigrationPlan plan = Plan(R"(
- {name: fuse, groups: [{count: 10, paths: [{path: /dev/fuse}]}]}
- {name: tun, groups: [{paths: [{path: /dev/net/tun}]}]}
- {name: acm, groups: [{paths: [{path: /dev/ttyACM*}]}]}
- {name: display, groups: [{count: 2, paths: [{path: /dev/dri/card0}]}]}
- {name: mixed, groups: [{paths: [{path: /dev/ttyUSB0}, {path: /dev/dri/card0}]}]}
- {name: ch340, groups: [{usb: [{vendor: 1a86, product: "7523"}]}]}
)");
  ASSERT_EQ(plan.groups.size(), 6u);
  for (const auto& g : plan.groups) EXPECT_FALSE(g.moves) << g.resource;
  EXPECT_THAT(plan.groups[0].reason, HasSubstr("/dev/fuse is a virtual node"));
  EXPECT_THAT(plan.groups[1].reason, HasSubstr("/dev/net/tun is a virtual node"));
  EXPECT_EQ(plan.groups[2].reason, "no published device delivers a node matching /dev/ttyACM*");
  EXPECT_EQ(plan.groups[3].reason,
            "count 2, but pci-0000-00-02-0-display is not shareable: liken allocates it to one claim at a time");
  EXPECT_THAT(plan.groups[4].reason, HasSubstr("delivered by 2 published devices (pci-0000-00-02-0-display, usb-1-1-1-0)"));
  EXPECT_EQ(plan.groups[5].reason, "no published device has USB ID 1a86:7523");
  EXPECT_EQ(plan.device_classes_yaml, "");
  EXPECT_THAT(FormatMigrationPlan(plan), HasSubstr("# no group moves: no DeviceClass\n"));
}

TEST(PlanMigrationTest, GroupsOfOneDeviceMoveWithTheirNotes) {
  MigrationPlan plan = Plan(R"(
- name: capture
  groups:
  - paths: [{path: /dev/snd/controlC0, mountPath: /dev/snd/controlC5}, {path: /dev/snd/pcmC0D0c}, {path: /dev/snd/pcmC9D0c, optional: true}]
- {name: render, groups: [{count: 5, paths: [{path: /dev/dri/renderD128}]}]}
- {name: bt, groups: [{usb: [{vendor: "8087", product: "0026"}]}]}
- {name: one, groups: [{usb: [{vendor: "0403", product: "6001", serial: B2}]}]}
)", {.domain = "example.com", .class_suffix = ""});
  ASSERT_EQ(plan.groups.size(), 4u);
  for (const auto& g : plan.groups) EXPECT_TRUE(g.moves) << g.resource << ": " << g.reason;
  EXPECT_THAT(plan.groups[0].notes,
              ::testing::ElementsAre("mountPath /dev/snd/controlC5 is not honoured: the node appears at its host path",
                                     "optional /dev/snd/pcmC9D0c: no published device delivers it here",
                                     "pci-0000-00-1f-3 also delivers /dev/snd/pcmC0D0p"));
  EXPECT_THAT(plan.groups[1].notes, ::testing::ElementsAre("count 5: shareable, so any number of claims hold it"));
  EXPECT_EQ(plan.groups[2].devices, std::vector<std::string>{"usb-1-7-1-0"});
  EXPECT_EQ(plan.groups[3].devices, std::vector<std::string>{"usb-1-2-1-0"});
  EXPECT_THAT(plan.device_classes_yaml, HasSubstr("extendedResourceName: example.com/capture"));
  EXPECT_THAT(plan.device_classes_yaml, HasSubstr("name: bt.example.com"));
  // A device without a subsystem is selected by its absence.
  EXPECT_THAT(plan.device_classes_yaml, HasSubstr("!has(device.attributes[\"liken.sh\"].subsystem)"));
}

TEST(PlanMigrationTest, NamesThatCannotBecomeResourceOrClassNamesAreRefused) {
  auto devices = ParseGenericDevicePluginConfig(R"({"name": "a b", "groups": [{"paths": [{"path": "/dev/a"}]}]})");
  ASSERT_TRUE(devices.ok());
  EXPECT_EQ(PlanMigration(*devices, Node(), {}).status().code(), absl::StatusCode::kInvalidArgument);
  auto fine = ParseGenericDevicePluginConfig(R"({"name": "a", "groups": [{"paths": [{"path": "/dev/a"}]}]})");
  ASSERT_TRUE(fine.ok());
  EXPECT_EQ(PlanMigration(*fine, Node(), {.domain = "Not A Domain", .class_suffix = ""}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace liken::migrate
