// From squat/generic-device-plugin's device specification to DeviceClasses: which published liken devices
// deliver the paths (or USB IDs) of each group, on one node or several, the DeviceClass per resource name that
// selects them by stable attributes and keeps the plugin's extended resource name (DRAExtendedResource), and per
// group what cannot move, what changes for the pod, and why.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "discovery/inventory.h"

namespace liken::migrate {

// One entry of a group's `paths`, with the plugin's defaults applied. Plain value.
struct PluginPath {
  std::string path;          // a glob, as Go's filepath.Match reads it ('*' never crosses '/'); spaces trimmed
  std::string mount_path;    // empty: the same as `path`
  std::string type = "Device";  // "Device" (a device node) or "Mount" (a bind mount); anything else delivers nothing
  std::string permissions = "mrw";
  bool read_only = false;    // the plugin applies it to mounts only
  uint32_t limit = 1;        // how many units of the group may share one match of this path
  bool optional = false;
};

// One entry of a group's `usb`. Plain value.
struct PluginUsb {
  std::string vendor;   // four hex digits, lowercase: the ID the plugin compares, after its own number reading
  std::string product;  // four hex digits, lowercase
  std::string serial;   // empty: any
};

// One group: paths or USB IDs, allocatable `count` times. Plain value.
struct PluginGroup {
  std::vector<PluginPath> paths;
  std::vector<PluginUsb> usb;
  uint32_t count = 1;
  std::vector<std::string> notes;  // how the plugin reads what was written, where that differs from how it reads
  std::string refusal;             // non-empty: the group cannot move whatever the node has, and why
};

// One device specification (one `--device` value): a resource name and its groups. Plain value.
struct PluginDevice {
  std::string name;
  std::vector<PluginGroup> groups;
};

// A whole configuration as the plugin would run it. Plain value.
struct PluginConfig {
  std::vector<PluginDevice> devices;
  std::string domain;              // the domain the input sets (config file, MicroShift, a manifest's --domain); empty: none
  std::string domain_origin;       // where `domain` came from, in words
  std::vector<std::string> notes;  // one line per document, --device value or ConfigMap key read or skipped
};

// Parses the plugin's configuration, in every form the plugin (or a manifest that runs it) takes: one `--device`
// value (JSON or YAML), a list of them, the plugin's config file (`devices` or `device`, `domain`; keys in any
// case), MicroShift's `genericDevicePlugin: {domain, devices}`, and Kubernetes manifests (a DaemonSet or other pod
// template whose container args hold `--device`/`--domain`, a ConfigMap holding a config file, a List), in any
// number of YAML documents. USB IDs and serials are read as the plugin reads them, with a note where that differs
// from the text (an unquoted 0403 is octal to the plugin). A document that is none of these is skipped with a
// note naming it. InvalidArgument for what the plugin itself would refuse to start with, naming where it is, and
// when nothing in the input specifies a device. Thread-safe.
absl::StatusOr<PluginConfig> ParseGenericDevicePluginConfig(std::string_view text);

// What one node has to offer: its published devices and the udev links to their nodes. Plain value.
struct NodeDevices {
  std::string node;  // the node's name; empty: the one machine this command scanned
  std::vector<discovery::PublishedDevice> published;
  std::map<std::string, std::string> links;  // a udev link ("/dev/serial/by-id/...") -> the node path it names
  std::string links_unknown;  // non-empty: this node's links could not be read, and why
};

// Reads one node's `liken-dra report -o json` (its `published` devices, with attributes and nodes, and `links`
// when present). InvalidArgument naming what is malformed. Thread-safe.
absl::StatusOr<NodeDevices> NodeDevicesFromReport(const std::string& node, std::string_view report_json);

// The udev links that name device nodes on this machine: every symlink under `dev_root` (which stands for /dev)
// that resolves to a device node, and every link named by a DEVLINKS property in the udev database as sysfs
// serves it (<sysfs_root>/dev/{char,block}/*/uevent, which is where umockdev recordings carry udev properties).
// Links are keyed and valued as /dev paths. A missing tree reads as no links. Thread-safe.
std::map<std::string, std::string> ReadUdevLinks(const std::string& sysfs_root, const std::string& dev_root);

// What became of one group on one node. Plain value.
struct NodeOutcome {
  std::string node;                  // as in NodeDevices
  bool moves = false;                // a DeviceClass selects the devices that deliver the group here
  std::vector<std::string> devices;  // the published devices that deliver it here (moves), by name
  std::string reason;                // why it does not move here (!moves)
};

// What became of one group. Plain value.
struct GroupOutcome {
  std::string resource;              // the specification's name
  size_t index = 0;                  // the group's position in the specification, from 0
  std::string what;                  // the group in words: its paths or USB IDs
  bool moves = false;                // it moves on at least one node
  std::vector<NodeOutcome> nodes;    // one per node, in input order (empty when `reason` refuses it everywhere)
  std::vector<std::string> devices;  // every delivering device (moves); "node/name" when there are several nodes
  std::vector<std::string> notes;    // what changes for the pod even though it moves
  std::string reason;                // why it cannot move anywhere (!moves), when that does not depend on the node
};

// The plan: one DeviceClass per specification with a group that moves, and the outcome of every group.
struct MigrationPlan {
  std::string domain;                // the resource names' domain
  std::string domain_origin;         // where it came from, in words
  std::vector<std::string> nodes;    // the nodes planned for, in input order (one empty name: this machine)
  std::vector<std::string> input_notes;  // the PluginConfig's notes
  std::vector<GroupOutcome> groups;
  std::string device_classes_yaml;   // "---"-separated DeviceClass documents; empty when nothing moves
};

// Options of the plan. Plain value.
struct MigrationOptions {
  std::string domain;        // --domain: overrides the configuration's domain; empty: the configuration's, else squat.ai
  std::string class_suffix;  // appended to each class name ("serial" + ".squat.ai" by default)
};

// Matches every group of `config` against each node's published devices and writes the plan. A class's CEL
// selects each delivering device by vendor, product, subsystem and the GPU halves' renderNode/displayNode, pins
// it by serial where the group names a serial (a `usb` serial or a by-id link; a by-id link to a device that
// publishes no serial is refused), by address where it names a port (a by-path link) or a kernel name (an exact
// node such as /dev/ttyUSB0: the device that had it, with a note), and adds the address or serial wherever those
// attributes would also select a device, on any of the nodes, that the group does not name; a group whose devices
// cannot be told apart from one it does not name is refused, and so is a `usb` group naming a device published as
// several interfaces. Paths are found as the plugin finds them (plugin_glob.h). InvalidArgument for a domain or name that cannot make a class or resource name, or no
// nodes. Thread-safe.
absl::StatusOr<MigrationPlan> PlanMigration(const PluginConfig& config, const std::vector<NodeDevices>& nodes,
                                            const MigrationOptions& options);

// The plan as the command prints it: a comment block (where the input was read from, the domain, one line per
// group: what moves to which devices on which nodes, with notes, or what cannot move and why) followed by the
// DeviceClasses. Thread-safe.
std::string FormatMigrationPlan(const MigrationPlan& plan);

}  // namespace liken::migrate
