// `liken-dra deviceclasses --from-generic-device-plugin FILE [--domain DOMAIN] [--report [NODE=]FILE...]`: reads
// squat/generic-device-plugin's configuration (its --device values, config file, MicroShift's section or the
// manifests that run it), matches it against the devices liken publishes on this node (or, under umockdev, a
// recorded machine), or on each node whose hardware report is given, and prints DeviceClasses that keep the
// plugin's resource names working on liken nodes, preceded by a comment line per group saying what moves where,
// what changes, and what cannot move and why.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "common/files.h"
#include "discovery/scanner.h"
#include "migrate/generic_device_plugin.h"

namespace liken::cmd {
namespace {

int Fail(const std::string& message) {
  std::fprintf(stderr, "liken-dra deviceclasses: %s\n", message.c_str());
  return 1;
}

// The nodes named by --report: NODE=FILE, or FILE named after its base name without ".json".
absl::StatusOr<std::vector<migrate::NodeDevices>> ReadReports(const std::vector<std::string>& reports) {
  std::vector<migrate::NodeDevices> nodes;
  for (const auto& r : reports) {
    std::string node, file = r;
    if (auto eq = r.find('='); eq != std::string::npos) {
      node = r.substr(0, eq);
      file = r.substr(eq + 1);
    } else {
      node = file.substr(file.rfind('/') + 1);
      if (node.size() > 5 && node.compare(node.size() - 5, 5, ".json") == 0) node.resize(node.size() - 5);
    }
    if (node.empty()) return absl::InvalidArgumentError("--report " + r + ": no node name");
    auto text = ReadFileToString(file, 64 << 20);
    if (!text.ok()) return absl::InvalidArgumentError("--report " + r + ": " + std::string(text.status().message()));
    auto devices = migrate::NodeDevicesFromReport(node, *text);
    if (!devices.ok()) return absl::InvalidArgumentError("--report " + r + ": " + std::string(devices.status().message()));
    nodes.push_back(*std::move(devices));
  }
  return nodes;
}

}  // namespace

int DeviceClassesCommand(const Command& command, int argc, char** argv) {
  DeviceClassesFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  const std::string& file = flags.from_generic_device_plugin;
  migrate::MigrationOptions plan_options;
  plan_options.domain = flags.domain;
  plan_options.class_suffix = flags.class_suffix;
  std::string text;
  if (file == "-") {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0 && text.size() < (16u << 20)) text.append(buf, n);
  } else {
    auto read = ReadFileToString(file, 16 << 20);
    if (!read.ok()) return Fail(std::string(read.status().message()));
    text = *std::move(read);
  }
  auto config = migrate::ParseGenericDevicePluginConfig(text);
  if (!config.ok()) return Fail(file + ": " + std::string(config.status().message()));
  std::vector<migrate::NodeDevices> nodes;
  if (!flags.reports.empty()) {
    auto read = ReadReports(flags.reports);
    if (!read.ok()) return Fail(std::string(read.status().message()));
    nodes = *std::move(read);
  } else {
    discovery::ScanOptions scan = flags.discovery.scan;
    scan.match_modules = false;  // unclaimed hardware is not needed
    auto inventory = discovery::NewSysfsScanner(scan)->Scan();
    if (!inventory.ok()) return Fail(std::string(inventory.status().message()));
    migrate::NodeDevices here;
    here.published = std::move(inventory->published);
    here.links = migrate::ReadUdevLinks(scan.sysfs_root, scan.dev_root);
    nodes.push_back(std::move(here));
  }
  auto plan = migrate::PlanMigration(*config, nodes, plan_options);
  if (!plan.ok()) return Fail(std::string(plan.status().message()));
  std::string out = migrate::FormatMigrationPlan(*plan);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
