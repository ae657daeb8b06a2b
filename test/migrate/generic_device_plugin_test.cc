#include "migrate/generic_device_plugin.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace liken::migrate {
namespace {

using discovery::PublishedDevice;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

PublishedDevice Device(const std::string& name, std::vector<std::string> nodes,
                       std::map<std::string, discovery::AttributeValue> attributes, bool shareable = false) {
  PublishedDevice d;
  d.name = name;
  for (auto& n : nodes) d.nodes.push_back({n, 'c', 1, 1, ""});
  for (auto& [k, v] : attributes) d.attributes["liken.sh/" + k] = v;
  d.allow_multiple_allocations = shareable;
  return d;
}

PublishedDevice Ftdi(const std::string& port, int tty, int devnum, const std::string& serial) {
  std::string name = "usb-" + port + "-1-0";
  return Device(name, {"/dev/bus/usb/001/00" + std::to_string(devnum), "/dev/ttyUSB" + std::to_string(tty)},
                {{"bus", std::string("usb")}, {"vendor", std::string("0403")}, {"product", std::string("6001")},
                 {"subsystem", std::string("tty")}, {"address", port}, {"serial", serial}});
}

PublishedDevice Hda(const std::string& address, int card) {
  std::string name = "pci-0000-0" + address.substr(6, 1) + "-00-1";
  std::string c = std::to_string(card);
  return Device(name, {"/dev/snd/controlC" + c, "/dev/snd/pcmC" + c + "D3p", "/dev/snd/pcmC" + c + "D7p"},
                {{"bus", std::string("pci")}, {"vendor", std::string("1002")}, {"product", std::string("ab38")},
                 {"subsystem", std::string("sound")}, {"address", address}});
}

// A laptop-like node with two identical serial adapters on different ports.
std::vector<PublishedDevice> Published() {
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
      Ftdi("1-1", 0, 3, "A1"),
      Ftdi("1-2", 1, 4, "B2"),
      Device("usb-1-7-1-0", {"/dev/bus/usb/001/006"},
             {{"bus", std::string("usb")}, {"vendor", std::string("8087")}, {"product", std::string("0026")},
              {"address", std::string("1-7")}}),
      Hda("0000:03:00.1", 1),
      Hda("0000:04:00.1", 2),
  };
}

NodeDevices Here() {
  NodeDevices n;
  n.published = Published();
  n.links = {{"/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_B2-if00-port0", "/dev/ttyUSB1"},
             {"/dev/serial/by-path/pci-0000:00:14.0-usb-0:1:1.0-port0", "/dev/ttyUSB0"},
             {"/dev/zigbee", "/dev/ttyUSB1"},
             {"/dev/serial/by-id/usb-Onboard_UART-if00", "/dev/ttyS0"}};
  return n;
}

PluginConfig Parse(const std::string& text) {
  auto config = ParseGenericDevicePluginConfig(text);
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : PluginConfig{};
}

MigrationPlan Plan(const std::string& text, MigrationOptions options = {}, std::vector<NodeDevices> nodes = {Here()}) {
  auto plan = PlanMigration(Parse(text), nodes, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : MigrationPlan{};
}

std::string Cel(const MigrationPlan& plan) { return plan.device_classes_yaml; }

// ---- reading every form ----

TEST(ParseConfigTest, OneDeviceValueInJsonOrYaml) {
  PluginConfig json = Parse(R"({"name": "serial", "groups": [{"paths": [{"path": " /dev/ttyUSB* "}]}]})");
  ASSERT_EQ(json.devices.size(), 1u);
  EXPECT_EQ(json.devices[0].name, "serial");
  EXPECT_EQ(json.devices[0].groups[0].paths[0].path, "/dev/ttyUSB*");  // trimmed, as the plugin does
  EXPECT_EQ(json.devices[0].groups[0].count, 1u);
  EXPECT_EQ(json.devices[0].groups[0].paths[0].type, "Device");
  EXPECT_EQ(json.devices[0].groups[0].paths[0].permissions, "mrw");
  EXPECT_EQ(json.domain, "");
  PluginConfig yaml = Parse("name: video\ngroups:\n- paths:\n  - path: /dev/video0\n");
  ASSERT_EQ(yaml.devices.size(), 1u);
  EXPECT_EQ(yaml.devices[0].groups[0].paths[0].path, "/dev/video0");
}

TEST(ParseConfigTest, TheConfigFileWithItsDomainAndKeysInAnyCase) {
  PluginConfig c = Parse(R"(
Domain: example.com
DEVICES:
- name: fuse
  groups:
  - Count: 10
    paths: [{path: /dev/fuse, mountPath: /dev/fuse, optional: true, permissions: rw, limit: 2, readOnly: true}]
- name: input
  groups:
  - paths: [{path: /dev/input, type: Mount, readOnly: true}]
)");
  EXPECT_EQ(c.domain, "example.com");
  EXPECT_THAT(c.domain_origin, HasSubstr("config file"));
  ASSERT_EQ(c.devices.size(), 2u);
  const PluginPath& p = c.devices[0].groups[0].paths[0];
  EXPECT_EQ(c.devices[0].groups[0].count, 10u);
  EXPECT_TRUE(p.optional);
  EXPECT_TRUE(p.read_only);
  EXPECT_EQ(p.permissions, "rw");
  EXPECT_EQ(p.limit, 2u);
  EXPECT_EQ(c.devices[1].groups[0].paths[0].type, "Mount");
  EXPECT_EQ(c.devices[1].groups[0].paths[0].permissions, "");  // the plugin's mrw default is for devices only
}

TEST(ParseConfigTest, UsbIdsAreReadAsThePluginReadsThem) {
  // A --device value: an unquoted number is printed in decimal and read as hex, so 6001 stays 6001 but 0403
  // (octal to YAML 1.1) becomes 0259.
  PluginConfig flag = Parse(R"(
name: aa
groups:
- usb: [{vendor: 0403, product: 6001}, {vendor: "0403", product: 1a86}, {vendor: 0x1a86, product: "000F"}]
)");
  const auto& fu = flag.devices[0].groups[0].usb;
  EXPECT_EQ(fu[0].vendor, "0259");
  EXPECT_EQ(fu[0].product, "6001");
  EXPECT_EQ(fu[1].vendor, "0403");
  EXPECT_EQ(fu[1].product, "1a86");
  EXPECT_EQ(fu[2].vendor, "6790");  // 0x1a86 is the number 6790 to YAML, then read as hex
  EXPECT_EQ(fu[2].product, "000f");
  EXPECT_THAT(flag.devices[0].groups[0].notes,
              ElementsAre(HasSubstr("vendor 0403 is an unquoted YAML number: the plugin reads it as 0259"),
                          HasSubstr("vendor 0x1a86 is an unquoted YAML number: the plugin reads it as 6790")));
  // The config file: the number is the ID itself, so 6001 is 0x1771 and 0403 is 0x0103.
  PluginConfig file = Parse(R"(
devices:
- name: aa
  groups:
  - usb: [{vendor: 0403, product: 6001}, {vendor: "0403", product: "6001", serial: "00A1"}]
)");
  const auto& cu = file.devices[0].groups[0].usb;
  EXPECT_EQ(cu[0].vendor, "0103");
  EXPECT_EQ(cu[0].product, "1771");
  EXPECT_EQ(cu[1].vendor, "0403");
  EXPECT_EQ(cu[1].product, "6001");
  EXPECT_EQ(cu[1].serial, "00A1");
  EXPECT_EQ(file.devices[0].groups[0].notes.size(), 2u);
  // An unquoted serial is not the text written: the group is refused.
  PluginConfig serial = Parse(R"({"name": "aa", "groups": [{"usb": [{"vendor": "0403", "product": "6001", "serial": 0001}]}]})");
  EXPECT_THAT(serial.devices[0].groups[0].refusal, HasSubstr("serial 0001 is an unquoted YAML number"));
}

TEST(ParseConfigTest, MicroShiftsSectionWithItsDomainAndUsbs) {
  PluginConfig c = Parse(R"(
apiServer:
  advertiseAddress: 10.0.0.1
genericDevicePlugin:
  status: Enabled
  domain: device.microshift.io
  devices:
  - name: converter
    groups:
    - usbs:
      - {vendor: "0x1a86", product: "0x7523", serial: ""}
)");
  EXPECT_EQ(c.domain, "device.microshift.io");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.devices[0].groups[0].usb[0].vendor, "1a86");
  EXPECT_EQ(c.devices[0].groups[0].usb[0].product, "7523");
  PluginConfig disabled = Parse("genericDevicePlugin:\n  devices: [{name: aa, groups: [{paths: [{path: /dev/a}]}]}]\n");
  EXPECT_EQ(disabled.domain, "device.microshift.io");  // MicroShift's default
  EXPECT_THAT(disabled.notes, Contains(HasSubstr("status is unset, so MicroShift does not run the plugin")));
}

TEST(ParseConfigTest, ADaemonSetManifestWithItsArgsAndOtherDocuments) {
  PluginConfig c = Parse(R"(
apiVersion: v1
kind: ServiceAccount
metadata: {name: gdp, namespace: kube-system}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: generic-device-plugin, namespace: kube-system}
spec:
  template:
    spec:
      containers:
      - name: sidecar
        args: [--verbose]
      - name: generic-device-plugin
        image: squat/generic-device-plugin
        args:
        - --domain=example.org
        - --device
        - |
          name: serial
          groups:
            - paths:
                - path: /dev/ttyUSB*
        - '--device={"name": "video", "groups": [{"paths": [{"path": "/dev/video0"}]}]}'
---
---
apiVersion: monitoring.coreos.com/v1
kind: PodMonitor
metadata: {name: gdp}
)");
  ASSERT_EQ(c.devices.size(), 2u);
  EXPECT_EQ(c.devices[0].name, "serial");
  EXPECT_EQ(c.devices[1].name, "video");
  EXPECT_EQ(c.domain, "example.org");
  EXPECT_THAT(c.notes, ElementsAre("skipped ServiceAccount kube-system/gdp: not a device plugin configuration",
                                   "read DaemonSet kube-system/generic-device-plugin, container "
                                   "generic-device-plugin: 2 --device value(s)",
                                   "skipped PodMonitor gdp: not a device plugin configuration"));
}

TEST(ParseConfigTest, AConfigMapAndADaemonSetThatReadsIt) {
  PluginConfig c = Parse(R"(
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: gdp-config}
  data:
    config.yaml: |
      domain: home.lab
      devices:
      - name: zigbee
        groups: [{paths: [{path: /dev/serial/by-id/usb-ITead_Sonoff-if00-port0}]}]
    README: hello
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: gdp}
  spec: {template: {spec: {containers: [{name: gdp, args: [--config, /etc/gdp/config.yaml]}]}}}
)");
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_EQ(c.domain, "home.lab");
  EXPECT_THAT(c.notes, Contains(HasSubstr("reads its devices from --config /etc/gdp/config.yaml")));
  EXPECT_THAT(c.notes, Contains("skipped ConfigMap gdp-config key README: not a plugin config file"));
}

TEST(ParseConfigTest, MultipleDocumentsAreAllRead) {
  PluginConfig c = Parse(R"(
name: aa
groups: [{paths: [{path: /dev/a}]}]
---
- '{"name": "bb", "groups": [{"paths": [{"path": "/dev/b"}]}]}'
- {name: cc, groups: [{paths: [{path: /dev/c}]}]}
---
devices: [{name: dd, groups: [{paths: [{path: /dev/d}]}]}]
---
something: else
)");
  ASSERT_EQ(c.devices.size(), 4u);
  EXPECT_EQ(c.devices[3].name, "dd");
  EXPECT_THAT(c.notes, Contains(HasSubstr("skipped document 4")));
}

TEST(ParseConfigTest, WhatThePluginIgnoresOrServesNothingForIsNoted) {
  PluginConfig c = Parse(R"(
- {name: aa, count: 3, groups: [{paths: [{path: /dev/a, mountpath: /x}]}]}
- {name: bb}
- {name: cc, groups: [{count: 2}]}
- {name: dd, groups: [{paths: [{path: dev/d}]}]}
)");
  EXPECT_THAT(c.notes, Contains("device 'aa': key 'count' is not one the plugin reads; it is ignored"));
  EXPECT_THAT(c.notes, Contains("device 'bb' has no groups: the plugin serves nothing under it"));
  EXPECT_THAT(c.devices[2].groups[0].refusal, HasSubstr("names no paths and no usb"));
  EXPECT_THAT(c.devices[3].groups[0].refusal, HasSubstr("is not absolute"));
  // mountpath in another case is the same key to Go's decoders.
  EXPECT_EQ(c.devices[0].groups[0].paths[0].mount_path, "/x");
}

TEST(ParseConfigTest, WhatThePluginRefusesIsAClearError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "not JSON or YAML"},
      {"foo: 1", "no device specification in the input (skipped the input"},
      {R"({"name": "X", "groups": []})", "name 'X' is not one the plugin takes"},
      {R"({"name": "xx", "groups": {}})", "groups is not a list"},
      {R"({"name": "xx", "groups": [{"paths": [{"path": "/dev/a"}], "usb": [{"vendor": "1", "product": "2"}]}]})",
       "both paths and usb"},
      {R"({"name": "xx", "groups": [{"count": -1, "paths": [{"path": "/dev/a"}]}]})", "is not a count"},
      {R"({"name": "xx", "groups": [{"count": "2", "paths": [{"path": "/dev/a"}]}]})", "is not a count"},
      {R"({"name": "xx", "groups": [{"usb": [{"vendor": "xyz1", "product": "2"}]}]})", "is not a USB ID"},
      {R"({"name": "xx", "groups": [{"usb": [{"vendor": "0x1a86", "product": "2"}]}]})", "is not a USB ID"},
      {R"({"name": "xx", "groups": [{"paths": [{"path": "/dev/a", "optional": "maybe"}]}]})", "not true or false"},
      {"devices: ['{\"name\": \"x\", \"groups\": []}']", "is a string, and the plugin's config file takes each device as a map"},
      {"devices: {name: xx}", "devices is not a list"},
      {R"([{"name": "xx", "groups": [{"paths": [{"path": "/a"}]}]}, {"name": "xx", "groups": [{"paths": [{"path": "/b"}]}]}])",
       "specified twice"},
      {"domain: a.b\n---\ndomain: c.d\ndevices: []\n", "two domains"},
      // Shapes nobody writes on purpose: each an error, none a crash.
      {R"(["foo"])", "is not a device specification"},
      {R"(["\"foo\""])", "is not a device specification"},
      {"- [1, 2]", "is not a device specification"},
      {"{name: xx, groups: [null]}", "is not a map"},
      {"{name: xx, groups: [{paths: [null]}]}", "is not a map"},
      {"{name: xx, groups: [{usb: [1]}]}", "is not a map"},
      {"{name: xx, groups: [{usb: [{vendor: [1]}]}]}", "is not a USB ID"},
      {"{name: xx, groups: [{paths: [{path: [1]}]}]}", "is not a string"},
      {"{name: [xx], groups: []}", "is not a string"},
      {std::string(100000, '['), "not JSON or YAML"},
  };
  for (const auto& [text, want] : cases) {
    auto got = ParseGenericDevicePluginConfig(text);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(std::string(got.status().message()), HasSubstr(want)) << text;
  }
}

// ---- planning ----

TEST(PlanMigrationTest, AGlobMovesToEveryDeviceItMatchesByStableAttributesOnly) {
  MigrationPlan plan = Plan(R"({"name": "serial", "groups": [{"paths": [{"path": "/dev/ttyUSB*"}]}]})");
  ASSERT_EQ(plan.groups.size(), 1u);
  EXPECT_TRUE(plan.groups[0].moves);
  EXPECT_EQ(plan.groups[0].devices, (std::vector<std::string>{"usb-1-1-1-0", "usb-1-2-1-0"}));
  EXPECT_THAT(plan.groups[0].notes, ElementsAre("usb-1-1-1-0 also delivers /dev/bus/usb/001/003",
                                                "usb-1-2-1-0 also delivers /dev/bus/usb/001/004"));
  EXPECT_EQ(plan.domain, "squat.ai");
  // The two identical adapters share one selector; no address, serial or bus path.
  EXPECT_EQ(Cel(plan), R"(---
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
}

// A kernel name (/dev/ttyUSB1, /dev/dri/renderD128) belongs to whichever device the kernel gives it: the class pins
// the device that had it, every time, and says so; before, only when a twin was on the nodes given.
TEST(PlanMigrationTest, AnExactKernelNameIsPinnedToTheDeviceThatHadItEveryTime) {
  MigrationPlan twin = Plan(R"({"name": "port1", "groups": [{"paths": [{"path": "/dev/ttyUSB1"}]}]})");
  ASSERT_TRUE(twin.groups[0].moves);
  EXPECT_THAT(Cel(twin), HasSubstr("device.attributes[\"liken.sh\"].address == \"1-2\""));
  EXPECT_THAT(Cel(twin), Not(HasSubstr("serial")));
  EXPECT_THAT(twin.groups[0].notes,
              Contains("/dev/ttyUSB1 is a kernel name, which no device keeps: the class selects the device that had "
                       "it here (usb-1-2-1-0, address 1-2), not one that takes the name later or elsewhere"));
  MigrationPlan unique = Plan(R"({"name": "card", "groups": [{"paths": [{"path": "/dev/dri/renderD128"}]}]})");
  ASSERT_TRUE(unique.groups[0].moves);
  EXPECT_THAT(Cel(unique), HasSubstr("address == \"0000:00:02.0\"")) << "no twin here, pinned all the same";
  EXPECT_THAT(Cel(unique), HasSubstr("has(device.attributes[\"liken.sh\"].renderNode) && device.attributes[\"liken.sh\"].renderNode &&"));
  EXPECT_THAT(unique.groups[0].notes, Contains(HasSubstr("/dev/dri/renderD128 is a kernel name, which no device keeps")));
  // A glob names no one device: no pin, no note.
  MigrationPlan glob = Plan(R"({"name": "render", "groups": [{"paths": [{"path": "/dev/dri/renderD*"}]}]})");
  EXPECT_THAT(Cel(glob), Not(HasSubstr("address")));
  EXPECT_THAT(glob.groups[0].notes, Not(Contains(HasSubstr("kernel name"))));
}

// A by-id link names one adapter by the serial in its name: pinned by that serial, or refused where the device
// publishes none (before, the pin was dropped without a word and the class selected every adapter of the model).
TEST(PlanMigrationTest, AByIdLinkToADeviceWithoutASerialIsRefused) {
  NodeDevices node = Here();
  PublishedDevice no_serial = Ftdi("1-3", 2, 5, "");
  no_serial.attributes.erase("liken.sh/serial");  // none, or one over 64 bytes: left out of the slice
  node.published.push_back(no_serial);
  node.links["/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_0123456789012345678901234567890123456789012345678901234567890123456789-if00-port0"] =
      "/dev/ttyUSB2";
  MigrationPlan plan = Plan(R"(
- {name: long, groups: [{paths: [{path: "/dev/serial/by-id/usb-FTDI_FT232R_USB_UART_0123456789012345678901234567890123456789012345678901234567890123456789-if00-port0"}]}]}
- {name: short, groups: [{paths: [{path: /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_B2-if00-port0}]}]}
)", {}, {node});
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_FALSE(plan.groups[0].moves);
  EXPECT_THAT(plan.groups[0].reason, HasSubstr("names usb-1-3-1-0 here, which publishes no serial"));
  EXPECT_THAT(plan.groups[0].reason, HasSubstr("a class would select every adapter of its model"));
  ASSERT_TRUE(plan.groups[1].moves) << plan.groups[1].reason;
  EXPECT_THAT(Cel(plan), HasSubstr("serial == \"B2\""));
  EXPECT_THAT(Cel(plan), Not(HasSubstr("1-3")));
}

TEST(PlanMigrationTest, AGroupOfExactPathsOfOneDeviceIsPinnedWhenATwinWouldMatch) {
  // controlC1 and pcmC1D3p: the first of two identical HDMI audio functions.
  MigrationPlan plan = Plan(R"({"name": "hdmi", "groups": [{"paths": [{"path": "/dev/snd/controlC1"}, {"path": "/dev/snd/pcmC1D3p"}]}]})");
  ASSERT_TRUE(plan.groups[0].moves) << plan.groups[0].reason;
  EXPECT_EQ(plan.groups[0].devices, std::vector<std::string>{"pci-0000-03-00-1"});
  EXPECT_THAT(Cel(plan), HasSubstr("address == \"0000:03:00.1\""));
  EXPECT_THAT(Cel(plan), Not(HasSubstr("0000:04:00.1")));
}

TEST(PlanMigrationTest, AUsbSerialPinGoesIntoTheCel) {
  MigrationPlan plan = Plan(R"(
- {name: left, groups: [{usb: [{vendor: "0403", product: "6001", serial: A1}]}]}
- {name: right, groups: [{usb: [{vendor: "0403", product: "6001", serial: B2}]}]}
)");
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].devices, std::vector<std::string>{"usb-1-1-1-0"});
  EXPECT_EQ(plan.groups[1].devices, std::vector<std::string>{"usb-1-2-1-0"});
  const std::string yaml = Cel(plan);
  const size_t right = yaml.find("name: right");
  ASSERT_NE(right, std::string::npos);
  EXPECT_THAT(yaml.substr(0, right), HasSubstr("device.attributes[\"liken.sh\"].serial == \"A1\""));
  EXPECT_THAT(yaml.substr(0, right), Not(HasSubstr("B2")));
  EXPECT_THAT(yaml.substr(right), HasSubstr("device.attributes[\"liken.sh\"].serial == \"B2\""));
  EXPECT_THAT(yaml, Not(HasSubstr("address")));
  // The usb group names the usbfs node; the tty comes along.
  EXPECT_THAT(plan.groups[0].notes, ElementsAre("usb-1-1-1-0 also delivers /dev/ttyUSB0"));
}

TEST(PlanMigrationTest, UdevLinksResolveToTheNodeTheyNameAndPinWhatTheyName) {
  MigrationPlan plan = Plan(R"(
- {name: zigbee, groups: [{paths: [{path: /dev/serial/by-id/usb-FTDI_FT232R_USB_UART_B2-if00-port0}]}]}
- {name: port, groups: [{paths: [{path: /dev/serial/by-path/pci-0000:00:14.0-usb-0:1:1.0-port0}]}]}
- {name: custom, groups: [{paths: [{path: /dev/zigbee}]}]}
- {name: byid, groups: [{paths: [{path: "/dev/serial/by-id/*"}]}]}
- {name: missing, groups: [{paths: [{path: /dev/serial/by-id/usb-ITead_Sonoff-if00-port0}]}]}
- {name: onboard, groups: [{paths: [{path: /dev/serial/by-id/usb-Onboard_UART-if00}]}]}
)");
  ASSERT_EQ(plan.groups.size(), 6u);
  EXPECT_EQ(plan.groups[0].devices, std::vector<std::string>{"usb-1-2-1-0"});
  EXPECT_EQ(plan.groups[1].devices, std::vector<std::string>{"usb-1-1-1-0"});
  EXPECT_EQ(plan.groups[2].devices, std::vector<std::string>{"usb-1-2-1-0"});
  const std::string yaml = Cel(plan);
  // by-id pins the serial, by-path the port, a plain link only what tells the twins apart.
  EXPECT_THAT(yaml.substr(yaml.find("name: zigbee")), HasSubstr("serial == \"B2\""));
  EXPECT_THAT(yaml.substr(yaml.find("name: port"), yaml.find("name: zigbee") - yaml.find("name: port")),
              HasSubstr("address == \"1-1\""));
  // A glob over by-id links moves what it can, pinned by nothing it does not need, and names what it cannot.
  EXPECT_TRUE(plan.groups[3].moves);
  EXPECT_EQ(plan.groups[3].devices, std::vector<std::string>{"usb-1-2-1-0"});
  EXPECT_THAT(plan.groups[3].notes,
              Contains("not moved: udev link /dev/serial/by-id/usb-Onboard_UART-if00 names /dev/ttyS0, which no "
                       "published device delivers"));
  EXPECT_THAT(yaml.substr(yaml.find("name: byid")), Not(HasSubstr("serial ==")));  // the last class
  EXPECT_EQ(plan.groups[4].nodes[0].reason,
            "udev link /dev/serial/by-id/usb-ITead_Sonoff-if00-port0 resolves to nothing here: no such link under "
            "/dev, and no DEVLINKS in the udev database names it");
  EXPECT_EQ(plan.groups[5].nodes[0].reason,
            "udev link /dev/serial/by-id/usb-Onboard_UART-if00 names /dev/ttyS0, which no published device delivers");
  // A node whose links are unknown says so.
  NodeDevices unknown = Here();
  unknown.links.clear();
  unknown.links_unknown = "this node's report lists no udev links";
  MigrationPlan u = Plan(R"({name: zz, groups: [{paths: [{path: /dev/serial/by-id/x}]}]})", {}, {unknown});
  EXPECT_EQ(u.groups[0].nodes[0].reason, "/dev/serial/by-id/x is a udev link, and this node's report lists no udev links");
}

// The plugin's glob (filepath.Rel, then fs.Glob with Go's path.Match), one test per way it differs from fnmatch(3),
// which the plan used before; testdata/plugin_glob_cases.tsv holds the same forms, checked against the plugin.
TEST(PlanMigrationTest, ABangInAClassIsAnOrdinaryCharacterAsThePluginReadsIt) {
  // The class holds '!' and '0': the plugin finds /dev/ttyUSB0 only (fnmatch negated it: /dev/ttyUSB1).
  MigrationPlan plan = Plan(R"({"name": "bang", "groups": [{"paths": [{"path": "/dev/ttyUSB[!0]"}]}]})");
  ASSERT_TRUE(plan.groups[0].moves) << plan.groups[0].reason;
  EXPECT_EQ(plan.groups[0].devices, std::vector<std::string>{"usb-1-1-1-0"});
  EXPECT_THAT(Cel(plan), HasSubstr("address == \"1-1\""));
}

TEST(PlanMigrationTest, ACaretNegatesAClassAsThePluginReadsIt) {
  MigrationPlan plan = Plan(R"({"name": "caret", "groups": [{"paths": [{"path": "/dev/ttyUSB[^0]"}]}]})");
  ASSERT_TRUE(plan.groups[0].moves) << plan.groups[0].reason;
  EXPECT_EQ(plan.groups[0].devices, std::vector<std::string>{"usb-1-2-1-0"});
}

TEST(PlanMigrationTest, ATrailingSlashIsCleanedAsThePluginCleansIt) {
  // Before: refused, "a path that ends in '/' names no file"; the plugin gives the directory.
  MigrationPlan plan = Plan(R"({"name": "snd", "groups": [{"paths": [{"path": "/dev/snd/"}]}]})");
  ASSERT_TRUE(plan.groups[0].moves) << plan.groups[0].reason;
  EXPECT_THAT(plan.groups[0].notes, Contains("the plugin reads /dev/snd/ as /dev/snd"));
  EXPECT_THAT(plan.groups[0].notes, Contains(HasSubstr("the plugin gave /dev/snd as one unit, which holds 3 devices")));
  EXPECT_EQ(plan.groups[0].what, "/dev/snd/") << "the group is named as written";
}

TEST(PlanMigrationTest, DoubleSlashesAndDotsAreCleanedAsThePluginCleansThem) {
  MigrationPlan plan = Plan(R"(
- {name: double, groups: [{paths: [{path: "/dev//dri/renderD128"}]}]}
- {name: dots, groups: [{paths: [{path: "/dev/./snd/../dri/renderD128"}]}]}
)");
  for (const auto& g : plan.groups) {
    ASSERT_TRUE(g.moves) << g.resource << ": " << g.reason;
    EXPECT_EQ(g.devices, std::vector<std::string>{"pci-0000-00-02-0"}) << g.resource;
  }
  EXPECT_THAT(plan.groups[0].notes, Contains("the plugin reads /dev//dri/renderD128 as /dev/dri/renderD128"));
}

TEST(PlanMigrationTest, APatternThePluginCannotGlobIsRefusedWithItsError) {
  // fnmatch read each of these as something; the plugin's glob fails on them, and with it the resource's discovery.
  MigrationPlan plan = Plan(R"(
- {name: empty-class, groups: [{paths: [{path: "/dev/ttyUSB[]0]"}]}]}
- {name: open-class, groups: [{paths: [{path: "/dev/ttyUSB[0-"}]}]}
- {name: backslash, groups: [{paths: [{path: "/dev/ttyUSB0\\"}]}]}
)");
  ASSERT_EQ(plan.groups.size(), 3u);
  for (const auto& g : plan.groups) {
    EXPECT_FALSE(g.moves) << g.resource;
    EXPECT_THAT(g.reason, HasSubstr("the plugin cannot glob")) << g.resource;
    EXPECT_THAT(g.reason, HasSubstr("syntax error in pattern")) << g.resource;
    EXPECT_THAT(g.reason, HasSubstr("it fails to discover the devices of " + g.resource)) << g.resource;
  }
  EXPECT_EQ(Cel(plan), "");
}

// A USB ID naming one device that liken publishes as several interfaces: the plugin gave the whole device to one pod,
// a claim would get one interface (and another claim the other, usbfs node included): refused, with what each gets.
TEST(PlanMigrationTest, AUsbGroupOfADeviceWithSeveralInterfacesIsRefusedWithWhatEachGets) {
  NodeDevices node = Here();
  auto webcam = [](const std::string& interface, std::vector<std::string> nodes) {
    nodes.insert(nodes.begin(), "/dev/bus/usb/001/005");
    return Device("usb-1-5-1-" + interface, nodes,
                  {{"bus", std::string("usb")}, {"vendor", std::string("04f2")}, {"product", std::string("b5ce")},
                   {"address", std::string("1-5")}});
  };
  node.published.push_back(webcam("0", {"/dev/video0", "/dev/video1"}));
  node.published.push_back(webcam("2", {"/dev/snd/controlC1", "/dev/snd/pcmC1D0c"}));
  MigrationPlan plan = Plan(R"(
- {name: webcam, groups: [{usb: [{vendor: "04f2", product: "b5ce"}]}]}
- {name: ftdi, groups: [{usb: [{vendor: "0403", product: "6001", serial: A1}]}]}
)", {}, {node});
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_FALSE(plan.groups[0].moves);
  EXPECT_EQ(plan.groups[0].nodes[0].reason,
            "the plugin gave the whole USB device at 1-5 (its usbfs node /dev/bus/usb/001/005) to one pod; liken "
            "publishes its 2 interfaces as devices: usb-1-5-1-0 (/dev/video0 /dev/video1), usb-1-5-1-2 "
            "(/dev/snd/controlC1 /dev/snd/pcmC1D0c). A claim for the extended resource gets one of them, and another "
            "claim may hold another interface of the same device, usbfs node included, at once; to keep the device "
            "whole, claim it with a ResourceClaim that has one request per interface and a matchAttribute constraint "
            "on liken.sh/address");
  EXPECT_THAT(Cel(plan), Not(HasSubstr("04f2")));
  EXPECT_TRUE(plan.groups[1].moves) << "a device published as one interface moves as before";
}

TEST(PlanMigrationTest, MountsAndUnknownTypesCannotMove) {
  MigrationPlan plan = Plan(R"(
- {name: input, groups: [{paths: [{path: /dev/input, type: Mount, readOnly: true}]}]}
- {name: odd, groups: [{paths: [{path: /dev/ttyUSB0, type: device}]}]}
)");
  EXPECT_FALSE(plan.groups[0].moves);
  EXPECT_EQ(plan.groups[0].reason,
            "/dev/input has type Mount: a mount is not a device node, and a claim delivers device nodes only; keep "
            "the plugin for this group");
  EXPECT_THAT(plan.groups[1].reason, HasSubstr("neither Device nor Mount"));
  EXPECT_EQ(Cel(plan), "");
}

TEST(PlanMigrationTest, EveryChangeOfMeaningHasItsNote) {
  MigrationPlan plan = Plan(R"(
- {name: snd, groups: [{paths: [{path: /dev/snd}]}]}
- {name: ftdi, groups: [{usb: [{vendor: "0403", product: "6001"}]}]}
- {name: render, groups: [{paths: [{path: /dev/dri/renderD128, permissions: r, limit: 3, readOnly: true}]}]}
)");
  for (const auto& g : plan.groups) EXPECT_TRUE(g.moves) << g.resource << ": " << g.reason;
  EXPECT_THAT(plan.groups[0].notes,
              Contains("the plugin gave /dev/snd as one unit, which holds 3 devices here (pci-0000-00-1f-3, "
                       "pci-0000-03-00-1, pci-0000-04-00-1); a claim gets one of them"));
  EXPECT_THAT(plan.groups[1].notes,
              Contains("the plugin gave all 2 devices with this USB ID (at 1-1, 1-2) as one unit; a claim gets one of them"));
  EXPECT_THAT(plan.groups[2].notes,
              ElementsAre("permissions 'r' on /dev/dri/renderD128 are not kept: a claim's nodes are readable and "
                          "writable (rwm)",
                          HasSubstr("readOnly on /dev/dri/renderD128 is not kept"),
                          HasSubstr("limit 3 on /dev/dri/renderD128 is not kept"),
                          HasSubstr("/dev/dri/renderD128 is a kernel name, which no device keeps"),
                          "count 1 made it exclusive in the plugin; pci-0000-00-02-0 is shareable, so any number of "
                          "claims hold it at once"));
}

TEST(PlanMigrationTest, SaysWhyAGroupCannotMove) {
  MigrationPlan plan = Plan(R"(
- {name: fuse, groups: [{count: 10, paths: [{path: /dev/fuse}]}]}
- {name: tun, groups: [{paths: [{path: /dev/net/tun}]}]}
- {name: acm, groups: [{paths: [{path: /dev/ttyACM*}]}]}
- {name: display, groups: [{count: 2, paths: [{path: /dev/dri/card0}]}]}
- {name: mixed, groups: [{paths: [{path: /dev/ttyUSB0}, {path: /dev/dri/card0}]}]}
- {name: ch340, groups: [{usb: [{vendor: 1a86, product: "7523"}]}]}
- {name: two, groups: [{usb: [{vendor: "0403", product: "6001", serial: A1}, {vendor: "8087", product: "0026"}]}]}
)");
  ASSERT_EQ(plan.groups.size(), 7u);
  for (const auto& g : plan.groups) EXPECT_FALSE(g.moves) << g.resource;
  EXPECT_THAT(plan.groups[0].reason, HasSubstr("/dev/fuse is a virtual node"));
  EXPECT_THAT(plan.groups[1].reason, HasSubstr("/dev/net/tun is a virtual node"));
  EXPECT_EQ(plan.groups[2].nodes[0].reason, "no published device delivers a node matching /dev/ttyACM*");
  EXPECT_EQ(plan.groups[3].nodes[0].reason,
            "count 2, but pci-0000-00-02-0-display is not shareable: liken allocates it to one claim at a time");
  EXPECT_THAT(plan.groups[4].nodes[0].reason, HasSubstr("delivered by 2 published devices (pci-0000-00-02-0-display, usb-1-1-1-0)"));
  EXPECT_EQ(plan.groups[5].nodes[0].reason, "no published device has USB ID 1a86:7523");
  EXPECT_THAT(plan.groups[6].nodes[0].reason, HasSubstr("its USB IDs are 2 devices here (at 1-1, 1-7)"));
  EXPECT_EQ(Cel(plan), "");
  EXPECT_THAT(FormatMigrationPlan(plan), HasSubstr("# no group moves: no DeviceClass\n"));
}

TEST(PlanMigrationTest, TheDomainComesFromTheFlagThenTheFileThenTheDefault) {
  const std::string text = "domain: example.com\ndevices: [{name: bt, groups: [{usb: [{vendor: \"8087\", product: \"0026\"}]}]}]\n";
  MigrationPlan file = Plan(text);
  EXPECT_EQ(file.domain, "example.com");
  EXPECT_THAT(Cel(file), HasSubstr("name: bt.example.com"));
  EXPECT_THAT(Cel(file), HasSubstr("extendedResourceName: example.com/bt"));
  MigrationPlan flag = Plan(text, {.domain = "other.org", .class_suffix = ""});
  EXPECT_EQ(flag.domain, "other.org");
  EXPECT_EQ(flag.domain_origin, "--domain");
  EXPECT_THAT(Cel(flag), HasSubstr("extendedResourceName: other.org/bt"));
  auto bad = PlanMigration(Parse(text), {Here()}, {.domain = "Not A Domain", .class_suffix = ""});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- several nodes ----

NodeDevices Node(const std::string& name, std::vector<PublishedDevice> published) {
  NodeDevices n;
  n.node = name;
  n.published = std::move(published);
  return n;
}

TEST(PlanMigrationTest, OneRunSaysWhichNodesEachGroupServes) {
  std::vector<NodeDevices> nodes = {Node("edge-1", {Ftdi("1-1", 0, 3, "A1")}),
                                    Node("edge-2", {Ftdi("1-4", 0, 2, "C3"), Ftdi("1-1", 1, 3, "D4")}),
                                    Node("edge-3", {})};
  MigrationPlan plan = Plan(R"(
- {name: serial, groups: [{paths: [{path: /dev/ttyUSB*}]}]}
- {name: first, groups: [{paths: [{path: /dev/ttyUSB0}]}]}
)", {}, nodes);
  ASSERT_EQ(plan.groups.size(), 2u);
  EXPECT_EQ(plan.groups[0].devices,
            (std::vector<std::string>{"edge-1/usb-1-1-1-0", "edge-2/usb-1-4-1-0", "edge-2/usb-1-1-1-0"}));
  const std::string text = FormatMigrationPlan(plan);
  EXPECT_THAT(text, HasSubstr("# serial[0] /dev/ttyUSB*: serves edge-1, edge-2; not edge-3\n"
                              "#   edge-1: moves to usb-1-1-1-0\n"
                              "#   edge-2: moves to usb-1-4-1-0, usb-1-1-1-0\n"
                              "#   edge-3: no published device delivers a node matching /dev/ttyUSB*\n"));
  // ttyUSB0 is the adapter at 1-1 on edge-1 and at 1-4 on edge-2, whose 1-1 is ttyUSB1: the address alone would
  // select edge-2's 1-1 too, so the serial pins each.
  EXPECT_THAT(Cel(plan), HasSubstr("address == \"1-1\" && has(device.attributes[\"liken.sh\"].serial) && device.attributes[\"liken.sh\"].serial == \"A1\""));
  EXPECT_THAT(Cel(plan), HasSubstr("address == \"1-4\")"));
  EXPECT_THAT(Cel(plan), Not(HasSubstr("D4")));
}

TEST(PlanMigrationTest, AGroupWhoseDeviceCannotBeToldApartIsRefused) {
  PublishedDevice no_serial = Ftdi("1-1", 0, 3, "A1");
  no_serial.attributes.erase("liken.sh/serial");
  PublishedDevice twin = no_serial;
  twin.nodes[1].path = "/dev/ttyUSB1";
  std::vector<NodeDevices> nodes = {Node("a", {no_serial}), Node("b", {twin})};
  MigrationPlan plan = Plan(R"({name: first, groups: [{paths: [{path: /dev/ttyUSB0}]}]})", {}, nodes);
  EXPECT_FALSE(plan.groups[0].moves);
  EXPECT_EQ(plan.groups[0].reason,
            "no attribute tells usb-1-1-1-0 on a from usb-1-1-1-0 on b, which the group does not name there: a class "
            "would select both");
  EXPECT_EQ(Cel(plan), "");
}

TEST(NodeDevicesFromReportTest, ReadsAReportAndSaysWhenItHasNoLinks) {
  auto n = NodeDevicesFromReport("edge-1", R"({"published": [{"name": "usb-1-1-1-0",
      "attributes": {"liken.sh/vendor": "0403", "liken.sh/renderNode": false, "liken.sh/x": 3},
      "nodes": ["/dev/bus/usb/001/003", "/dev/ttyUSB0"], "allowMultipleAllocations": true}]})");
  ASSERT_TRUE(n.ok()) << n.status();
  ASSERT_EQ(n->published.size(), 1u);
  EXPECT_EQ(n->published[0].nodes[1].path, "/dev/ttyUSB0");
  EXPECT_TRUE(n->published[0].allow_multiple_allocations);
  EXPECT_EQ(std::get<std::string>(n->published[0].attributes.at("liken.sh/vendor")), "0403");
  EXPECT_THAT(n->links_unknown, HasSubstr("lists no udev links"));
  auto links = NodeDevicesFromReport("e", R"({"published": [], "links": {"/dev/zigbee": "/dev/ttyUSB0"}})");
  ASSERT_TRUE(links.ok());
  EXPECT_EQ(links->links.at("/dev/zigbee"), "/dev/ttyUSB0");
  EXPECT_EQ(links->links_unknown, "");
  for (const char* bad : {"", "[]", "{}", R"({"published": [{"nodes": []}]})", R"({"published": [{"name": "xx", "nodes": [1]}]})"}) {
    EXPECT_EQ(NodeDevicesFromReport("e", bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(ReadUdevLinksTest, ReadsLinksUnderTheDevRootAndDevlinksInSysfs) {
  char tmpl[] = "/tmp/liken-links-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string root = tmpl;
  const std::string dev = root + "/dev", sys = root + "/sys";
  for (const std::string& d : {dev, dev + "/serial", dev + "/serial/by-id", sys, sys + "/dev", sys + "/dev/char",
                              sys + "/dev/char/188:1"}) {
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0) << d;
  }
  // The node ttyUSB0 stands in as a link to the host's /dev/null (a character device) under the dev root; ttyUSB2
  // is a regular file, which is no device node.
  ASSERT_EQ(::symlink("/dev/null", (dev + "/ttyUSB0").c_str()), 0);
  std::ofstream(dev + "/ttyUSB2") << "";
  ASSERT_EQ(::symlink("../../ttyUSB0", (dev + "/serial/by-id/usb-FTDI-if00-port0").c_str()), 0);
  ASSERT_EQ(::symlink("../../ttyUSB2", (dev + "/serial/by-id/usb-file-if00-port0").c_str()), 0);
  ASSERT_EQ(::symlink("../../nothing", (dev + "/serial/by-id/dangling").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/pts/3", (dev + "/ttyS9").c_str()), 0);
  std::ofstream(sys + "/dev/char/188:1/uevent") << "MAJOR=188\nMINOR=1\nDEVNAME=ttyUSB1\nDEVLINKS=/dev/serial/by-id/b /dev/zigbee\n";
  auto links = ReadUdevLinks(sys, dev);
  EXPECT_EQ(links.at("/dev/serial/by-id/usb-FTDI-if00-port0"), "/dev/ttyUSB0");
  EXPECT_EQ(links.count("/dev/serial/by-id/usb-file-if00-port0"), 0u);
  EXPECT_EQ(links.count("/dev/serial/by-id/dangling"), 0u);
  EXPECT_EQ(links.count("/dev/ttyS9"), 0u);
  EXPECT_EQ(links.count("/dev/ttyUSB0"), 0u);  // its target is outside the dev root's /dev
  EXPECT_EQ(links.at("/dev/serial/by-id/b"), "/dev/ttyUSB1");
  EXPECT_EQ(links.at("/dev/zigbee"), "/dev/ttyUSB1");
  EXPECT_EQ(ReadUdevLinks(root + "/none", root + "/none").size(), 0u);
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace liken::migrate
