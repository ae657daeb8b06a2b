// `liken-dra deviceclasses --from-generic-device-plugin FILE [--domain DOMAIN]`: scans this node (or, under
// umockdev, a recorded machine), matches squat/generic-device-plugin's device specification against the devices
// liken publishes, and prints DeviceClasses that keep the plugin's resource names working on liken nodes,
// preceded by a comment line per group saying what moves and what cannot, and why.
#include <cstdio>
#include <string>
#include <string_view>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "common/files.h"
#include "discovery/scanner.h"
#include "migrate/generic_device_plugin.h"

namespace liken::cmd {
int DeviceClassesCommand(const Command& command, int argc, char** argv) {
  DeviceClassesFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  const std::string& file = flags.from_generic_device_plugin;
  migrate::MigrationOptions plan_options;
  plan_options.domain = flags.domain;
  plan_options.class_suffix = flags.class_suffix;
  discovery::ScanOptions scan = flags.discovery.scan;
  scan.match_modules = false;  // unclaimed hardware is not needed
  std::string text;
  if (file == "-") {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) text.append(buf, n);
  } else {
    auto read = ReadFileToString(file);
    if (!read.ok()) {
      std::fprintf(stderr, "liken-dra deviceclasses: %s\n", std::string(read.status().message()).c_str());
      return 1;
    }
    text = *std::move(read);
  }
  auto devices = migrate::ParseGenericDevicePluginConfig(text);
  if (!devices.ok()) {
    std::fprintf(stderr, "liken-dra deviceclasses: %s: %s\n", file.c_str(),
                 std::string(devices.status().message()).c_str());
    return 1;
  }
  auto inventory = discovery::NewSysfsScanner(scan)->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra deviceclasses: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  auto plan = migrate::PlanMigration(*devices, inventory->published, plan_options);
  if (!plan.ok()) {
    std::fprintf(stderr, "liken-dra deviceclasses: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  std::string out = migrate::FormatMigrationPlan(*plan);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
