// `liken-dra deviceclasses --from-generic-device-plugin FILE [--domain DOMAIN]`: scans this node (or, under
// umockdev, a recorded machine), matches squat/generic-device-plugin's device specification against the devices
// liken publishes, and prints DeviceClasses that keep the plugin's resource names working on liken nodes,
// preceded by a comment line per group saying what moves and what cannot, and why.
// Its flags are parsed here, self-contained: this command shares none with the others.
#include <cstdio>
#include <string>
#include <string_view>

#include "cmd/commands.h"
#include "common/files.h"
#include "discovery/scanner.h"
#include "migrate/generic_device_plugin.h"

namespace liken::cmd {
namespace {

constexpr char kUsage[] =
    "usage: liken-dra deviceclasses --from-generic-device-plugin FILE [flags]\n"
    "\n"
    "Prints DeviceClasses whose extendedResourceName keeps a squat/generic-device-plugin deployment's resource\n"
    "names (<domain>/<name>) working on liken nodes, for the devices this node publishes, and a comment line per\n"
    "group of the plugin's configuration: the devices it moves to, or why it cannot move.\n"
    "\n"
    "flags:\n"
    "  --from-generic-device-plugin FILE  the plugin's device specification: its --device values or config file\n"
    "                                     (JSON or YAML; '-' reads standard input)\n"
    "  --domain DOMAIN                    the plugin's --domain (default squat.ai)\n"
    "  --class-suffix SUFFIX              class names are <name>.<SUFFIX> (default: the domain)\n"
    "  --sysfs-root DIR, --dev-root DIR   where the machine's sysfs and /dev are (default /sys, /dev)\n"
    "  --pci-ids FILE                     the PCI ID database (default /usr/share/misc/pci.ids)\n";

struct Options {
  std::string file;
  migrate::MigrationOptions plan;
  discovery::ScanOptions scan;
};

// Parses `--flag value` and `--flag=value`; 2 and a message on stderr for anything else.
int ParseArgs(int argc, char** argv, Options* o, bool* help) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      *help = true;
      return 0;
    }
    std::string name(arg), value;
    bool has_value = false;
    if (auto eq = arg.find('='); eq != std::string_view::npos) {
      name = std::string(arg.substr(0, eq));
      value = std::string(arg.substr(eq + 1));
      has_value = true;
    }
    std::string* dst = nullptr;
    if (name == "--from-generic-device-plugin") dst = &o->file;
    else if (name == "--domain") dst = &o->plan.domain;
    else if (name == "--class-suffix") dst = &o->plan.class_suffix;
    else if (name == "--sysfs-root") dst = &o->scan.sysfs_root;
    else if (name == "--dev-root") dst = &o->scan.dev_root;
    else if (name == "--pci-ids") dst = &o->scan.pci_ids_path;
    if (dst == nullptr) {
      std::fprintf(stderr, "liken-dra deviceclasses: unknown flag '%s'\n", std::string(arg).c_str());
      return 2;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "liken-dra deviceclasses: %s needs a value\n", name.c_str());
        return 2;
      }
      value = argv[++i];
    }
    *dst = value;
  }
  if (o->file.empty()) {
    std::fprintf(stderr, "liken-dra deviceclasses: --from-generic-device-plugin is required\n");
    return 2;
  }
  return 0;
}

}  // namespace

int DeviceClassesCommand(int argc, char** argv) {
  Options o;
  o.scan.match_modules = false;  // unclaimed hardware is not needed
  bool help = false;
  if (int rc = ParseArgs(argc, argv, &o, &help); rc != 0) return rc;
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  std::string text;
  if (o.file == "-") {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) text.append(buf, n);
  } else {
    auto read = ReadFileToString(o.file);
    if (!read.ok()) {
      std::fprintf(stderr, "liken-dra deviceclasses: %s\n", std::string(read.status().message()).c_str());
      return 1;
    }
    text = *std::move(read);
  }
  auto devices = migrate::ParseGenericDevicePluginConfig(text);
  if (!devices.ok()) {
    std::fprintf(stderr, "liken-dra deviceclasses: %s: %s\n", o.file.c_str(),
                 std::string(devices.status().message()).c_str());
    return 1;
  }
  auto inventory = discovery::NewSysfsScanner(o.scan)->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra deviceclasses: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  auto plan = migrate::PlanMigration(*devices, inventory->published, o.plan);
  if (!plan.ok()) {
    std::fprintf(stderr, "liken-dra deviceclasses: %s\n", std::string(plan.status().message()).c_str());
    return 1;
  }
  std::string out = migrate::FormatMigrationPlan(*plan);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
