// From squat/generic-device-plugin's device specification to DeviceClasses: which published liken devices
// deliver the paths (or USB IDs) of each group, the DeviceClass per resource name that selects them by stable
// attributes and keeps the plugin's extended resource name (DRAExtendedResource), and per group what cannot
// move and why.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "discovery/inventory.h"

namespace liken::migrate {

// One entry of a group's `paths`. Plain value.
struct PluginPath {
  std::string path;        // a glob, as filepath.Glob reads it ('*' never crosses '/')
  std::string mount_path;  // empty: the same as `path`
  bool optional = false;
};

// One entry of a group's `usb`. Plain value.
struct PluginUsb {
  std::string vendor;   // four hex digits, lowercase
  std::string product;  // four hex digits, lowercase
  std::string serial;   // empty: any
};

// One group: paths or USB IDs (never both), allocatable `count` times. Plain value.
struct PluginGroup {
  std::vector<PluginPath> paths;
  std::vector<PluginUsb> usb;
  uint32_t count = 1;
};

// One device specification (one `--device` value): a resource name and its groups. Plain value.
struct PluginDevice {
  std::string name;
  std::vector<PluginGroup> groups;
};

// Parses the plugin's configuration (JSON or YAML): one specification (an object with `name`), a list of them,
// or a configuration file whose `devices` (or `device`) holds the list; a list entry may also be a string that
// holds one specification, as `--device` takes it. InvalidArgument names what is malformed. Thread-safe.
absl::StatusOr<std::vector<PluginDevice>> ParseGenericDevicePluginConfig(std::string_view text);

// What became of one group. Plain value.
struct GroupOutcome {
  std::string resource;                 // the specification's name
  size_t index = 0;                     // the group's position in the specification, from 0
  std::string what;                     // the group in words: its paths or USB IDs
  bool moves = false;                   // a DeviceClass selects the devices that deliver it
  std::vector<std::string> devices;     // the published devices that deliver it (moves), by name
  std::vector<std::string> notes;       // what changes for the pod even though it moves
  std::string reason;                   // why it cannot move (!moves)
};

// The plan: one DeviceClass per specification with a group that moves, and the outcome of every group.
struct MigrationPlan {
  std::vector<GroupOutcome> groups;
  std::string device_classes_yaml;  // "---"-separated DeviceClass documents; empty when nothing moves
};

// Options of the plan. Plain value.
struct MigrationOptions {
  std::string domain = "squat.ai";  // the plugin's --domain: extended resources are <domain>/<name>
  std::string class_suffix;         // appended to each class name ("serial" + ".squat.ai" by default)
};

// Matches every group of `devices` against the node's `published` devices and writes the plan. A class's CEL
// selects each delivering device by vendor, product, subsystem and the GPU halves' renderNode/displayNode, and
// adds the bus address only when a group names one exact path and those attributes alone would also select
// another published device. InvalidArgument for a name that cannot make a class or resource name. Thread-safe.
absl::StatusOr<MigrationPlan> PlanMigration(const std::vector<PluginDevice>& devices,
                                            const std::vector<discovery::PublishedDevice>& published,
                                            const MigrationOptions& options);

// The plan as the command prints it: a comment block (one line per group: what moves to which devices, with
// notes, or what cannot move and why) followed by the DeviceClasses. Thread-safe.
std::string FormatMigrationPlan(const MigrationPlan& plan);

}  // namespace liken::migrate
