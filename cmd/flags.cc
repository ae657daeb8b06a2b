#include "cmd/flags.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/log.h"

namespace liken::cmd {
namespace {

// The checks a value must pass. Each message completes "<flag> must be ..." (ErrorLine puts the flag first).

CLI::Validator AbsolutePath() {
  // Link targets in sysfs are resolved against the roots: a relative one would find nothing.
  return CLI::Validator(
      [](std::string& value) -> std::string {
        return !value.empty() && value[0] == '/' ? "" : absl::StrCat("must be an absolute path, not '", value, "'");
      },
      "", "absolute path");
}

CLI::Validator IntegerFrom(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        int64_t n = 0;
        if (absl::SimpleAtoi(value, &n) && n >= min && n <= max) return "";
        return absl::StrCat("must be an integer from ", min, " to ", max, ", not '", value, "'");
      },
      "", "integer");
}

// A finite number in (above, max].
CLI::Validator NumberAbove(double above, double max) {
  return CLI::Validator(
      [above, max](std::string& value) -> std::string {
        double n = 0;
        if (!absl::SimpleAtod(value, &n) || !std::isfinite(n) || n < above || n > max) {
          return absl::StrCat("must be a number from ", above, " to ", max, ", not '", value, "'");
        }
        if (n <= above) return absl::StrCat("must be above ", above, ", not '", value, "'");
        return "";
      },
      "", "number");
}

// A finite number in [min, max].
CLI::Validator NumberFrom(double min, double max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        double n = 0;
        if (!absl::SimpleAtod(value, &n) || !std::isfinite(n) || n < min || n > max) {
          return absl::StrCat("must be a number from ", min, " to ", max, ", not '", value, "'");
        }
        return "";
      },
      "", "number");
}

CLI::Validator DurationFrom(absl::Duration min, absl::Duration max) {
  return CLI::Validator(
      [min, max](std::string& value) -> std::string {
        absl::Duration d;
        if (absl::ParseDuration(value, &d) && d >= min && d <= max) return "";
        return absl::StrCat("must be a duration from ", absl::FormatDuration(min), " to ", absl::FormatDuration(max),
                            " (like 60s), not '", value, "'");
      },
      "", "duration");
}

// "" (none), ":PORT" or "HOST:PORT".
CLI::Validator ListenAddress() {
  return CLI::Validator(
      [](std::string& value) -> std::string {
        if (value.empty()) return "";
        auto colon = value.rfind(':');
        int port = -1;
        if (colon != std::string::npos && absl::SimpleAtoi(value.substr(colon + 1), &port) && port >= 0 &&
            port <= 65535) {
          return "";
        }
        return absl::StrCat("must be ':PORT' or 'HOST:PORT' with a port from 0 to 65535, not '", value, "'");
      },
      "", "listen address");
}

// One of `choices` (the keys), given to the typed field as the mapped value.
template <typename T>
void OneOf(CLI::Option* option, const std::vector<std::pair<std::string, T>>& choices, T* field) {
  std::vector<std::string> names;
  for (const auto& [name, value] : choices) names.push_back(name);
  option->type_name(absl::StrJoin(names, "|"));
  option->check(CLI::Validator(
      [names](std::string& value) -> std::string {
        if (std::find(names.begin(), names.end(), value) != names.end()) return "";
        return absl::StrCat("must be '", absl::StrJoin(names, "' or '"), "', not '", value, "'");
      },
      "", "one of"));
  option->each([choices, field](const std::string& value) {
    for (const auto& [name, v] : choices) {
      if (name == value) *field = v;
    }
  });
  for (const auto& [name, v] : choices) {
    if (v == *field) option->default_str(name);
  }
}

void Bind(CLI::App& app, DiscoveryFlags& flags) {
  discovery::ScanOptions& scan = flags.scan;
  app.add_option("--sysfs-root", scan.sysfs_root, "read sysfs from this directory tree")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
  app.add_option("--dev-root", scan.dev_root, "read /dev from this directory tree")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
  app.add_option("--proc-root", scan.proc_root, "read mounts and swaps from here (--storage-roles=host)")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
  OneOf<discovery::StorageRoles>(
      app.add_option("--storage-roles", "withhold every device with a block node, or read the host's storage roles"),
      {{"withhold", discovery::StorageRoles::kWithholdAll}, {"host", discovery::StorageRoles::kHost}},
      &scan.storage_roles);
  app.add_option("--pci-ids", scan.pci_ids_path, "the PCI ID database (device names)")
      ->type_name("FILE")
      ->capture_default_str();
  app.add_option("--modules-root", scan.modules_root,
                 "where <release>/modules.alias is read (modules for unclaimed hardware)")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
  app.add_option("--kernel-release", scan.kernel_release,
                 "the kernel release whose modules.alias is read (default: uname)")
      ->type_name("R");
}

// --kubelet-root (run, report, healthcheck).
void BindKubeletRoot(CLI::App& app, std::string& kubelet_root) {
  app.add_option("--kubelet-root", kubelet_root, "the kubelet's directory (plugin sockets, checkpoints)")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
}

void Bind(CLI::App& app, KubeletFlags& flags) {
  BindKubeletRoot(app, flags.kubelet_root);
  app.add_option("--pod-uid", flags.pod_uid, "this pod's UID (names the sockets during a rolling update)")
      ->type_name("UID")
      ->envname("POD_UID");
}

void BindNodeName(CLI::App& app, std::string& node_name) {
  app.add_option("--node-name", node_name, "this node's name")->type_name("NAME")->envname("NODE_NAME");
}

void BindOutput(CLI::App& app, OutputFormat& output, std::vector<std::pair<std::string, OutputFormat>> choices) {
  // --o too: the old parser took any flag with one or two dashes.
  OneOf(app.add_option("-o,--output,--o", "output format"), choices, &output);
}

// -v (level 1) or --v=N.
void Bind(CLI::App& app, VerbosityFlags& flags) {
  app.add_flag("-v,--v")
      ->description("debug logs (N from 1 to 10; 0: info)")
      ->check(CLI::Validator(
          [](std::string& value) -> std::string {
            return value == "true" ? "" : IntegerFrom(0, 10)(value);
          },
          "", "verbosity"))
      ->each([&flags](const std::string& value) {
        int level = 1;
        if (value != "true") (void)absl::SimpleAtoi(value, &level);
        flags.level = level;
      });
}

void BindFlags(CLI::App& app, ScanFlags& flags) {
  BindNodeName(app, flags.node_name);
  BindOutput(app, flags.output, {{"yaml", OutputFormat::kYaml}, {"json", OutputFormat::kJson}});
  Bind(app, flags.verbosity);
  Bind(app, flags.discovery);
}

void BindFlags(CLI::App& app, ReportFlags& flags) {
  BindOutput(app, flags.output, {{"text", OutputFormat::kText}, {"json", OutputFormat::kJson}});
  BindKubeletRoot(app, flags.kubelet_root);
  Bind(app, flags.verbosity);
  Bind(app, flags.discovery);
}

void BindFlags(CLI::App& app, RunFlags& flags) {
  BindNodeName(app, flags.node_name);
  app.add_option("--kubeconfig", flags.kubeconfig, "kubeconfig file (default: the in-cluster config)")
      ->type_name("FILE")
      ->envname("KUBECONFIG");
  app.add_option("--context", flags.context, "the kubeconfig context (default: its current context)")
      ->type_name("NAME");
  app.add_option("--service-account-dir", flags.service_account_dir, "the in-cluster token and CA")
      ->type_name("DIR")
      ->capture_default_str();
  app.add_option("--metrics-address", flags.metrics_address, "serve Prometheus metrics here (\"\": nowhere)")
      ->type_name("[HOST]:PORT")
      ->capture_default_str()
      ->check(ListenAddress());
  app.add_option("--resync-period", "a full pass at least this often")
      ->type_name("DURATION")
      ->default_str(absl::FormatDuration(flags.resync_period))
      ->check(DurationFrom(absl::Seconds(1), absl::Hours(24)))
      ->each([&flags](const std::string& value) { (void)absl::ParseDuration(value, &flags.resync_period); });
  Bind(app, flags.kubelet);
  app.add_option("--cdi-root", flags.cdi_root, "where the CDI specs are written")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
  app.add_option("--metadata-root", flags.metadata_root,
                 "where the claims' device metadata files are written (default "
                 "<kubelet-root>/plugins/liken.sh/metadata; rebuilt at start-up, so a tmpfs will do)")
      ->type_name("DIR")
      ->check(AbsolutePath());
  app.add_option("--kube-api-qps", flags.kube_api_qps, "API requests per second")
      ->type_name("N")
      ->capture_default_str()
      ->check(NumberAbove(0, 10000));
  app.add_option("--kube-api-burst", flags.kube_api_burst, "API request burst")
      ->type_name("N")
      ->capture_default_str()
      ->check(IntegerFrom(1, 100000));
  app.add_flag("--no-uevents", flags.no_uevents, "do not listen to kernel uevents (the periodic resync remains)");
  app.add_flag("--taint-unplugged-devices", flags.taint_unplugged_devices,
               "keep publishing a device a prepared claim holds after it left the node, with a NoExecute taint "
               "liken.sh/unplugged, so its pods are evicted (Kubernetes 1.36 and later)");
  app.add_option("--unplugged-taint-limit", "the longest such a device stays published, tainted")
      ->type_name("DURATION")
      ->default_str(absl::FormatDuration(flags.unplugged_taint_limit))
      ->check(DurationFrom(absl::Seconds(1), absl::Hours(24 * 7)))
      ->each([&flags](const std::string& value) { (void)absl::ParseDuration(value, &flags.unplugged_taint_limit); });
  app.add_flag("--no-flap-damping", flags.no_flap_damping,
               "publish every change of a flapping device (a device whose presence changes more than twice in about "
               "10 s is otherwise withheld until it has been stable for a while)");
  app.add_option("--slice-writes-per-minute", flags.slice_writes_per_minute,
                 "the node's budget of slice writes (a burst of 2, then this many a minute; the last state is "
                 "always written); 0 for none")
      ->type_name("N")
      ->capture_default_str()
      ->check(NumberFrom(0, 600));
  app.add_option("--runtime-endpoint", flags.runtime_endpoint,
                 "ask the container runtime's CRI socket at start-up whether it resolves CDI devices (\"\": do not)")
      ->type_name("unix://PATH");
  Bind(app, flags.verbosity);
  Bind(app, flags.discovery);
}

void BindFlags(CLI::App& app, DeviceClassesFlags& flags) {
  app.add_option("--from-generic-device-plugin", flags.from_generic_device_plugin,
                 "the plugin's device specification: its --device values or config file (JSON or YAML; '-' reads "
                 "standard input)")
      ->type_name("FILE")
      ->required();
  app.add_option("--domain", flags.domain,
                 "resource names are <DOMAIN>/<name> (default: the configuration's domain, else squat.ai)")
      ->type_name("DOMAIN");
  app.add_option("--report", flags.reports,
                 "plan for the node whose `liken-dra report -o json` is FILE (NODE defaults to FILE's name without "
                 ".json); repeat for each node; without it, this machine is scanned")
      ->type_name("[NODE=]FILE")
      ->allow_extra_args(false);
  app.add_option("--class-suffix", flags.class_suffix, "class names are <name>.<SUFFIX> (default: the domain)")
      ->type_name("SUFFIX");
  Bind(app, flags.verbosity);
  Bind(app, flags.discovery);
}

void BindFlags(CLI::App& app, RuntimeCheckFlags& flags) {
  app.add_option("--runtime-endpoint", flags.runtime_endpoint, "the container runtime's CRI socket")
      ->type_name("unix://PATH")
      ->capture_default_str();
  app.add_option("--cdi-root", flags.cdi_root,
                 "the driver's --cdi-root, which must be one of the runtime's CDI spec directories")
      ->type_name("DIR")
      ->capture_default_str()
      ->check(AbsolutePath());
  Bind(app, flags.verbosity);
}

void BindFlags(CLI::App& app, HealthcheckFlags& flags) {
  Bind(app, flags.kubelet);
  Bind(app, flags.verbosity);
}

// The flag as users type it in messages: -o for output, --name otherwise.
std::string Spelled(const CLI::Option& option) {
  const auto& shorts = option.get_snames();
  const auto& longs = option.get_lnames();
  if (!shorts.empty() && (longs.empty() || longs.front() != shorts.front())) return "-" + shorts.front();
  return longs.empty() ? option.get_name() : "--" + longs.front();
}

// The `--help` text: the synopsis and every flag with its default and environment variable.
std::string Usage(const CLI::App& app, std::string_view name, std::string_view synopsis) {
  std::string out = absl::StrCat("usage: liken-dra ", std::string(name), " [flags]\n", std::string(synopsis),
                                 "\n\nflags:\n");
  for (const CLI::Option* option : app.get_options()) {
    const auto& shorts = option->get_snames();
    const auto& longs = option->get_lnames();
    std::string left;
    if (!shorts.empty() && !longs.empty() && shorts.front() == longs.front()) {
      left = absl::StrCat("-", shorts.front(), ", --", longs.front(), "=N");  // -v, --v=N
    } else if (!shorts.empty()) {
      left = absl::StrCat("-", shorts.front(), ", --", longs.front());
    } else {
      left = absl::StrCat("--", longs.front());
    }
    if (option->get_expected_max() > 0 && !option->get_type_name().empty()) {
      absl::StrAppend(&left, " ", option->get_type_name());
    }
    std::string line = absl::StrCat("  ", left);
    line.resize(std::max<size_t>(line.size() + 1, 36), ' ');
    absl::StrAppend(&line, option->get_description());
    if (!option->get_default_str().empty()) absl::StrAppend(&line, " (default ", option->get_default_str(), ")");
    if (!option->get_envname().empty()) absl::StrAppend(&line, " [env ", option->get_envname(), "]");
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

// The one-line message of a parse error, naming the flag as users type it.
std::string ErrorLine(const CLI::App& app, const CLI::ParseError& error) {
  if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
    for (const std::string& arg : app.remaining()) {
      if (arg.size() > 1 && arg[0] == '-') return absl::StrCat("unknown flag '", arg, "'");
    }
    std::vector<std::string> rest = app.remaining();
    return absl::StrCat("unexpected argument '", rest.empty() ? "" : rest.front(), "'");
  }
  std::string what = error.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) != nullptr) {
    // "<name>: 1 required <TYPE> missing"
    if (auto colon = what.find(": "); colon != std::string::npos) {
      return absl::StrCat("flag '", what.substr(0, colon), "' needs a value");
    }
  }
  if (dynamic_cast<const CLI::ValidationError*>(&error) != nullptr) {
    // "<name>: <message>", the message from one of the checks above.
    auto colon = what.find(": ");
    if (colon != std::string::npos) {
      const CLI::Option* option = app.get_option_no_throw(what.substr(0, colon));
      if (option != nullptr) return absl::StrCat(Spelled(*option), " ", what.substr(colon + 2));
    }
  }
  return what;
}

}  // namespace

template <typename Flags>
std::optional<int> ParseFlags(std::string_view name, std::string_view synopsis, int argc, char** argv,
                              Flags& flags) {
  CLI::App app(std::string(synopsis), "liken-dra " + std::string(name));
  BindFlags(app, flags);
  // Help is taken as soon as it is read, before any value is checked.
  app.set_help_flag();
  app.add_flag_callback("-h,--help", [] { throw CLI::CallForHelp(); }, "print this text")->trigger_on_parse();
  // CLI11 reads the arguments last first. Split here, as the old parser took them: -X=value, and --name= (an
  // empty value, which CLI11 would take from the next argument).
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) {
    std::string arg = argv[i];
    if (arg.size() > 2 && arg[0] == '-' && arg[1] != '-' && arg[2] == '=') {
      args.push_back(arg.substr(3));
      args.push_back(arg.substr(0, 2));
    } else if (arg.size() > 3 && arg.starts_with("--") && arg.back() == '=' && arg.find('=') == arg.size() - 1) {
      args.push_back("");
      args.push_back(arg.substr(0, arg.size() - 1));
    } else {
      args.push_back(std::move(arg));
    }
  }
  try {
    app.parse(args);
  } catch (const CLI::CallForHelp&) {
    std::fputs(Usage(app, name, synopsis).c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "liken-dra %s: %s\n", std::string(name).c_str(), ErrorLine(app, error).c_str());
    return 2;
  }
  if (flags.verbosity.level.has_value()) {
    SetLogLevel(*flags.verbosity.level == 0 ? LogLevel::kInfo : LogLevel::kDebug);
  }
  return std::nullopt;
}

template std::optional<int> ParseFlags(std::string_view, std::string_view, int, char**, ScanFlags&);
template std::optional<int> ParseFlags(std::string_view, std::string_view, int, char**, ReportFlags&);
template std::optional<int> ParseFlags(std::string_view, std::string_view, int, char**, RunFlags&);
template std::optional<int> ParseFlags(std::string_view, std::string_view, int, char**, HealthcheckFlags&);
template std::optional<int> ParseFlags(std::string_view, std::string_view, int, char**, DeviceClassesFlags&);
template std::optional<int> ParseFlags(std::string_view, std::string_view, int, char**, RuntimeCheckFlags&);

}  // namespace liken::cmd
