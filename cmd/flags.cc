#include "cmd/flags.h"

#include "common/log.h"

namespace liken::cmd {

absl::StatusOr<Flags> Flags::Parse(int argc, char** argv, const std::set<std::string>& value_flags,
                                   const std::set<std::string>& bool_flags) {
  Flags flags;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') return absl::InvalidArgumentError("unexpected argument '" + arg + "'");
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (bool_flags.count(name) || name == "v") {  // -v, --v=N: verbosity, accepted by every command
      flags.values_[name] = has_value ? value : "true";
      continue;
    }
    if (!value_flags.count(name)) return absl::InvalidArgumentError("unknown flag '" + arg + "'");
    if (!has_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError("flag '" + arg + "' needs a value");
      value = argv[++i];
    }
    flags.values_[name] = value;
  }
  return flags;
}

std::string Flags::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

std::set<std::string> ScanValueFlags() {
  return {"sysfs-root", "dev-root", "proc-root", "storage-roles", "pci-ids", "modules-root", "kernel-release"};
}

absl::StatusOr<discovery::ScanOptions> ScanOptionsFromFlags(const Flags& flags) {
  discovery::ScanOptions options;
  options.sysfs_root = flags.Get("sysfs-root", options.sysfs_root);
  options.dev_root = flags.Get("dev-root", options.dev_root);
  options.proc_root = flags.Get("proc-root", options.proc_root);
  options.pci_ids_path = flags.Get("pci-ids", options.pci_ids_path);
  options.modules_root = flags.Get("modules-root", options.modules_root);
  options.kernel_release = flags.Get("kernel-release", "");
  std::string roles = flags.Get("storage-roles", "withhold");
  if (roles == "withhold") {
    options.storage_roles = discovery::StorageRoles::kWithholdAll;
  } else if (roles == "host") {
    options.storage_roles = discovery::StorageRoles::kHost;
  } else {
    return absl::InvalidArgumentError("--storage-roles must be 'withhold' or 'host', not '" + roles + "'");
  }
  return options;
}

void ApplyVerbosity(const Flags& flags) {
  if (!flags.Has("v")) return;
  std::string v = flags.Get("v");  // "true" for a bare -v
  SetLogLevel(v == "0" ? LogLevel::kInfo : LogLevel::kDebug);
}

}  // namespace liken::cmd
