#include "cmd/flags.h"

#include <cmath>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
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
  if (flags.Has("v") && flags.Get("v") != "true") {
    if (auto level = flags.GetInt("v", 0, 0, 10); !level.ok()) return level.status();
  }
  return flags;
}

std::string Flags::Get(const std::string& name, const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

absl::StatusOr<int64_t> Flags::GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const {
  if (!Has(name)) return fallback;
  int64_t value = 0;
  if (!absl::SimpleAtoi(Get(name), &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " must be an integer from ", min, " to ", max, ", not '",
                                                   Get(name), "'"));
  }
  return value;
}

absl::StatusOr<double> Flags::GetNumber(const std::string& name, double fallback, double min, double max) const {
  if (!Has(name)) return fallback;
  double value = 0;
  if (!absl::SimpleAtod(Get(name), &value) || !std::isfinite(value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " must be a number from ", min, " to ", max, ", not '",
                                                   Get(name), "'"));
  }
  return value;
}

absl::StatusOr<absl::Duration> Flags::GetDuration(const std::string& name, absl::Duration fallback, absl::Duration min,
                                                  absl::Duration max) const {
  if (!Has(name)) return fallback;
  absl::Duration value;
  if (!absl::ParseDuration(Get(name), &value) || value < min || value > max) {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " must be a duration from ", absl::FormatDuration(min),
                                                   " to ", absl::FormatDuration(max), " (like 60s), not '", Get(name),
                                                   "'"));
  }
  return value;
}

absl::StatusOr<std::string> Flags::GetAbsolutePath(const std::string& name, const std::string& fallback) const {
  std::string value = Get(name, fallback);
  if (value.empty() || value[0] != '/') {
    return absl::InvalidArgumentError(absl::StrCat("--", name, " must be an absolute path, not '", value, "'"));
  }
  return value;
}

absl::StatusOr<std::string> Flags::GetListenAddress(const std::string& name, const std::string& fallback) const {
  std::string value = Get(name, fallback);
  if (value.empty()) return value;  // none
  auto colon = value.rfind(':');
  int port = -1;
  if (colon == std::string::npos || !absl::SimpleAtoi(value.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " must be ':PORT' or 'HOST:PORT' with a port from 0 to 65535, not '", value, "'"));
  }
  return value;
}

std::set<std::string> ScanValueFlags() {
  return {"sysfs-root", "dev-root", "proc-root", "storage-roles", "pci-ids", "modules-root", "kernel-release"};
}

absl::StatusOr<discovery::ScanOptions> ScanOptionsFromFlags(const Flags& flags) {
  discovery::ScanOptions options;
  // Link targets in sysfs are resolved against these roots: a relative one would find nothing.
  for (auto [name, field] : {std::pair{"sysfs-root", &options.sysfs_root}, std::pair{"dev-root", &options.dev_root},
                             std::pair{"proc-root", &options.proc_root},
                             std::pair{"modules-root", &options.modules_root}}) {
    auto value = flags.GetAbsolutePath(name, *field);
    if (!value.ok()) return value.status();
    *field = *std::move(value);
  }
  options.pci_ids_path = flags.Get("pci-ids", options.pci_ids_path);
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

absl::Status ValidateRunFlags(const Flags& flags) {
  if (auto qps = flags.GetNumber("kube-api-qps", 5, 0, 10000); !qps.ok()) {
    return qps.status();
  } else if (*qps <= 0) {
    return absl::InvalidArgumentError(absl::StrCat("--kube-api-qps must be above 0, not '", flags.Get("kube-api-qps"), "'"));
  }
  if (auto burst = flags.GetInt("kube-api-burst", 10, 1, 100000); !burst.ok()) return burst.status();
  if (auto resync = flags.GetDuration("resync-period", absl::Seconds(60), absl::Seconds(1), absl::Hours(24));
      !resync.ok()) {
    return resync.status();
  }
  if (auto address = flags.GetListenAddress("metrics-address", ":9410"); !address.ok()) return address.status();
  for (const char* name : {"kubelet-root", "cdi-root"}) {
    if (!flags.Has(name)) continue;
    if (auto path = flags.GetAbsolutePath(name, ""); !path.ok()) return path.status();
  }
  return absl::OkStatus();
}

}  // namespace liken::cmd
