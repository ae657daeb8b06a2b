#include "cmd/flags.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <span>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/log.h"

namespace liken::cmd {
namespace {

// The check a flag's value must pass.
enum class Kind {
  kSwitch,         // no value (or `=value`, kept as given)
  kVerbosity,      // -v alone, or --v=N with N in [min, max]
  kText,
  kAbsolutePath,
  kOneOf,          // one of `choices`, separated by '|'
  kInt,            // in [min, max]
  kNumber,         // in [min, max]; with `above_min`, min itself is refused
  kDuration,       // seconds in [min, max]
  kListenAddress,  // "" (none), ":PORT" or "HOST:PORT"
};

// One flag. Names are unique per command; a one-letter name is also typed as -X.
struct FlagSpec {
  const char* name;
  const char* alias;          // another spelling of the same flag ("o" for "output"), or ""
  const char* value_name;     // in the usage text: "DIR", "NAME"; "" for switches
  const char* default_value;
  const char* env;            // read when the flag is absent; "" for none
  Kind kind;
  const char* help;
  const char* choices = "";
  double min = 0;
  double max = 0;
  bool above_min = false;
};

bool Empty(const char* s) { return *s == '\0'; }

// The discovery flags (scan, report, run).
constexpr FlagSpec kDiscoveryFlags[] = {
    {"sysfs-root", "", "DIR", "/sys", "", Kind::kAbsolutePath, "read sysfs from this directory tree"},
    {"dev-root", "", "DIR", "/dev", "", Kind::kAbsolutePath, "read /dev from this directory tree"},
    {"proc-root", "", "DIR", "/proc", "", Kind::kAbsolutePath,
     "read mounts and swaps from here (--storage-roles=host)"},
    {"storage-roles", "", "withhold|host", "withhold", "", Kind::kOneOf,
     "withhold every device with a block node, or read the host's storage roles", "withhold|host"},
    {"pci-ids", "", "FILE", "/usr/share/misc/pci.ids", "", Kind::kText, "the PCI ID database (device names)"},
    {"modules-root", "", "DIR", "/lib/modules", "", Kind::kAbsolutePath,
     "where <release>/modules.alias is read (modules for unclaimed hardware)"},
    {"kernel-release", "", "R", "", "", Kind::kText, "the kernel release whose modules.alias is read (default: uname)"},
};

// Flags of one or more commands besides discovery's.
constexpr FlagSpec kNodeName = {"node-name", "", "NAME", "", "NODE_NAME", Kind::kText, "this node's name"};
constexpr FlagSpec kKubeletRoot = {"kubelet-root", "", "DIR", "/var/lib/kubelet", "", Kind::kAbsolutePath,
                                   "the kubelet's directory (plugin sockets, checkpoints)"};
constexpr FlagSpec kPodUid = {"pod-uid", "", "UID", "", "POD_UID", Kind::kText,
                              "this pod's UID (names the sockets during a rolling update)"};
constexpr FlagSpec kHelp = {"help", "h", "", "", "", Kind::kSwitch, "print this text"};
constexpr FlagSpec kVerbosity = {"v", "", "", "", "", Kind::kVerbosity, "debug logs (N from 1 to 10; 0: info)",
                                 "", 0, 10};
constexpr FlagSpec kScanOutput = {"output", "o", "yaml|json", "yaml", "", Kind::kOneOf, "output format", "yaml|json"};
constexpr FlagSpec kReportOutput = {"output", "o", "text|json", "text", "", Kind::kOneOf, "output format",
                                    "text|json"};
constexpr FlagSpec kKubeconfig = {"kubeconfig", "", "FILE", "", "KUBECONFIG", Kind::kText,
                                  "kubeconfig file (default: the in-cluster config)"};
constexpr FlagSpec kContext = {"context", "", "NAME", "", "", Kind::kText,
                               "the kubeconfig context (default: its current context)"};
constexpr FlagSpec kServiceAccountDir = {"service-account-dir", "", "DIR",
                                         "/var/run/secrets/kubernetes.io/serviceaccount", "", Kind::kText,
                                         "the in-cluster token and CA"};
constexpr FlagSpec kMetricsAddress = {"metrics-address", "", "[HOST]:PORT", ":9410", "", Kind::kListenAddress,
                                      "serve Prometheus metrics here (\"\": nowhere)"};
constexpr FlagSpec kResyncPeriod = {"resync-period", "", "DURATION", "10m", "", Kind::kDuration,
                                    "a full pass at least this often", "", 1, 24 * 3600};
constexpr FlagSpec kCdiRoot = {"cdi-root", "", "DIR", "/var/run/cdi", "", Kind::kAbsolutePath,
                               "where the CDI specs are written"};
constexpr FlagSpec kMetadataRoot = {"metadata-root", "", "DIR", "", "", Kind::kAbsolutePath,
                                    "where the claims' device metadata files are written (default "
                                    "<kubelet-root>/plugins/liken.sh/metadata; rebuilt at start-up, so a tmpfs will do)"};
constexpr FlagSpec kKubeApiQps = {"kube-api-qps", "", "N", "5", "", Kind::kNumber, "API requests per second",
                                  "", 0, 10000, true};
constexpr FlagSpec kKubeApiBurst = {"kube-api-burst", "", "N", "10", "", Kind::kInt, "API request burst",
                                    "", 1, 100000};
constexpr FlagSpec kNoUevents = {"no-uevents", "", "", "", "", Kind::kSwitch,
                                 "do not listen to kernel uevents (the periodic resync remains)"};

// Each command's own flags, in usage order (the discovery flags follow where `discovery` is set).
constexpr const FlagSpec* kScanFlags[] = {&kNodeName, &kScanOutput, &kVerbosity, &kHelp};
constexpr const FlagSpec* kReportFlags[] = {&kReportOutput, &kKubeletRoot, &kVerbosity, &kHelp};
constexpr const FlagSpec* kRunOwnFlags[] = {&kNodeName,   &kKubeconfig, &kContext,  &kServiceAccountDir,
                                            &kMetricsAddress, &kResyncPeriod, &kKubeletRoot, &kCdiRoot,
                                            &kMetadataRoot, &kPodUid,     &kKubeApiQps, &kKubeApiBurst, &kNoUevents,
                                            &kVerbosity,  &kHelp};
constexpr const FlagSpec* kHealthcheckFlags[] = {&kKubeletRoot, &kPodUid, &kVerbosity, &kHelp};

struct CommandSpec {
  Command command;
  const char* name;
  const char* synopsis;
  bool discovery;
  std::span<const FlagSpec* const> flags;
};

constexpr CommandSpec kCommands[] = {
    {Command::kScan, "scan", "print the ResourceSlices this node would publish, as a v1 List", true, kScanFlags},
    {Command::kReport, "report", "print the hardware report: published, withheld and unclaimed devices", true,
     kReportFlags},
    {Command::kRun, "run", "run the node daemon", true, kRunOwnFlags},
    {Command::kHealthcheck, "healthcheck", "exit 0 when the daemon's registration and DRA sockets accept connections",
     false, kHealthcheckFlags},
};

const CommandSpec& SpecOf(Command command) {
  for (const auto& c : kCommands) {
    if (c.command == command) return c;
  }
  std::abort();  // every Command has a row
}

// Calls `f` for each flag of `command`, the command's own first, then discovery's.
template <typename F>
void ForEachFlag(Command command, F f) {
  const CommandSpec& spec = SpecOf(command);
  for (const FlagSpec* flag : spec.flags) f(*flag);
  if (spec.discovery) {
    for (const FlagSpec& flag : kDiscoveryFlags) f(flag);
  }
}

const FlagSpec* Find(Command command, std::string_view typed) {
  const FlagSpec* found = nullptr;
  ForEachFlag(command, [&](const FlagSpec& flag) {
    if (found == nullptr && (typed == flag.name || (!Empty(flag.alias) && typed == flag.alias))) found = &flag;
  });
  return found;
}

// The flag as users type it in messages: -o for output, --name otherwise.
std::string Spelled(const FlagSpec& flag) {
  return std::strlen(flag.alias) == 1 ? absl::StrCat("-", flag.alias) : absl::StrCat("--", flag.name);
}

absl::Status Check(const FlagSpec& flag, const std::string& value) {
  const std::string name = Spelled(flag);
  switch (flag.kind) {
    case Kind::kSwitch:
    case Kind::kText:
      return absl::OkStatus();
    case Kind::kVerbosity:
    case Kind::kInt: {
      if (flag.kind == Kind::kVerbosity && value == "true") return absl::OkStatus();  // a bare -v
      int64_t n = 0;
      if (!absl::SimpleAtoi(value, &n) || n < flag.min || n > flag.max) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be an integer from ", flag.min, " to ", flag.max,
                                                       ", not '", value, "'"));
      }
      return absl::OkStatus();
    }
    case Kind::kNumber: {
      double n = 0;
      if (!absl::SimpleAtod(value, &n) || !std::isfinite(n) || n < flag.min || n > flag.max) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " must be a number from ", flag.min, " to ", flag.max, ", not '", value, "'"));
      }
      if (flag.above_min && n <= flag.min) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be above ", flag.min, ", not '", value, "'"));
      }
      return absl::OkStatus();
    }
    case Kind::kDuration: {
      absl::Duration d;
      const absl::Duration min = absl::Seconds(flag.min), max = absl::Seconds(flag.max);
      if (!absl::ParseDuration(value, &d) || d < min || d > max) {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be a duration from ", absl::FormatDuration(min),
                                                       " to ", absl::FormatDuration(max), " (like 60s), not '", value,
                                                       "'"));
      }
      return absl::OkStatus();
    }
    case Kind::kAbsolutePath:
      // Link targets in sysfs are resolved against the roots: a relative one would find nothing.
      if (value.empty() || value[0] != '/') {
        return absl::InvalidArgumentError(absl::StrCat(name, " must be an absolute path, not '", value, "'"));
      }
      return absl::OkStatus();
    case Kind::kOneOf:
      for (absl::string_view choice : absl::StrSplit(flag.choices, '|')) {
        if (value == choice) return absl::OkStatus();
      }
      return absl::InvalidArgumentError(absl::StrCat(
          name, " must be '", absl::StrJoin(absl::StrSplit(flag.choices, '|'), "' or '"), "', not '", value, "'"));
    case Kind::kListenAddress: {
      if (value.empty()) return absl::OkStatus();  // none
      auto colon = value.rfind(':');
      int port = -1;
      if (colon == std::string::npos || !absl::SimpleAtoi(value.substr(colon + 1), &port) || port < 0 ||
          port > 65535) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, " must be ':PORT' or 'HOST:PORT' with a port from 0 to 65535, not '", value, "'"));
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Flags> Flags::Parse(Command command, int argc, char** argv) {
  Flags flags(command);
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') return absl::InvalidArgumentError("unexpected argument '" + arg + "'");
    std::string typed = arg.substr(arg[1] == '-' ? 2 : 1);
    std::string value;
    bool has_value = false;
    if (auto eq = typed.find('='); eq != std::string::npos) {
      value = typed.substr(eq + 1);
      typed = typed.substr(0, eq);
      has_value = true;
    }
    const FlagSpec* flag = Find(command, typed);
    if (flag == nullptr) return absl::InvalidArgumentError("unknown flag '" + arg + "'");
    if (flag->kind == Kind::kSwitch || flag->kind == Kind::kVerbosity) {
      flags.values_[std::string(flag->name)] = has_value ? value : "true";
      continue;
    }
    if (!has_value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError("flag '" + arg + "' needs a value");
      value = argv[++i];
    }
    flags.values_[std::string(flag->name)] = value;
  }
  if (flags.Has("help")) return flags;  // the usage text, whatever else was given
  absl::Status first;
  ForEachFlag(command, [&](const FlagSpec& flag) {
    auto it = flags.values_.find(std::string(flag.name));
    if (first.ok() && it != flags.values_.end()) first = Check(flag, it->second);
  });
  if (!first.ok()) return first;
  return flags;
}

std::string Flags::Get(std::string_view name) const {
  if (auto it = values_.find(std::string(name)); it != values_.end()) return it->second;
  const FlagSpec* flag = Find(command_, name);
  if (flag == nullptr) return "";
  if (!Empty(flag->env)) {
    const char* env = std::getenv(flag->env);
    if (env != nullptr && *env != '\0') return env;
  }
  return flag->default_value;
}

double Flags::Number(std::string_view name) const {
  double n = 0;
  (void)absl::SimpleAtod(Get(name), &n);
  return n;
}

int64_t Flags::Int(std::string_view name) const {
  int64_t n = 0;
  (void)absl::SimpleAtoi(Get(name), &n);
  return n;
}

absl::Duration Flags::Duration(std::string_view name) const {
  absl::Duration d;
  (void)absl::ParseDuration(Get(name), &d);
  return d;
}

std::string Usage(Command command) {
  const CommandSpec& spec = SpecOf(command);
  std::string out = absl::StrCat("usage: liken-dra ", spec.name, " [flags]\n", spec.synopsis, "\n\nflags:\n");
  ForEachFlag(command, [&](const FlagSpec& flag) {
    std::string left = std::strlen(flag.alias) == 1 ? absl::StrCat("-", flag.alias, ", --", flag.name)
                       : flag.kind == Kind::kVerbosity ? "-v, --v=N"
                                                       : absl::StrCat("--", flag.name);
    if (!Empty(flag.value_name)) absl::StrAppend(&left, " ", flag.value_name);
    std::string line = absl::StrCat("  ", left);
    line.resize(std::max<size_t>(line.size() + 1, 36), ' ');
    absl::StrAppend(&line, flag.help);
    if (!Empty(flag.default_value)) absl::StrAppend(&line, " (default ", flag.default_value, ")");
    if (!Empty(flag.env)) absl::StrAppend(&line, " [env ", flag.env, "]");
    absl::StrAppend(&out, line, "\n");
  });
  return out;
}

discovery::ScanOptions ScanOptionsFromFlags(const Flags& flags) {
  discovery::ScanOptions options;
  options.sysfs_root = flags.Get("sysfs-root");
  options.dev_root = flags.Get("dev-root");
  options.proc_root = flags.Get("proc-root");
  options.modules_root = flags.Get("modules-root");
  options.pci_ids_path = flags.Get("pci-ids");
  options.kernel_release = flags.Get("kernel-release");
  options.storage_roles = flags.Get("storage-roles") == "host" ? discovery::StorageRoles::kHost
                                                                : discovery::StorageRoles::kWithholdAll;
  return options;
}

void ApplyVerbosity(const Flags& flags) {
  if (!flags.Has("v")) return;
  std::string v = flags.Get("v");  // "true" for a bare -v
  SetLogLevel(v == "0" ? LogLevel::kInfo : LogLevel::kDebug);
}

}  // namespace liken::cmd
