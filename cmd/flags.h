// The command line: one typed options struct per subcommand, and the one place (cmd/flags.cc) that binds each
// field to its flag with CLI11: spelling, default, environment variable, help and the check its value must pass.
// A command reads its struct's fields, so a misspelled flag name does not compile.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "discovery/scanner.h"
#include "informers/kube_config.h"

namespace liken::cmd {

// An output format chosen with -o.
enum class OutputFormat { kText, kYaml, kJson };

// -v / --v=N: the log level, when given (a bare -v is 1).
struct VerbosityFlags {
  std::optional<int> level;
};

// The discovery flags (scan, report, run): where and how the machine is read.
struct DiscoveryFlags {
  discovery::ScanOptions scan;
};

// The kubelet flags (run, healthcheck): where the plugin's sockets live.
struct KubeletFlags {
  std::string kubelet_root = "/var/lib/kubelet";
  std::string pod_uid;  // names the sockets during a rolling update; empty: none
};

// `liken-dra scan`.
struct ScanFlags {
  std::string node_name;
  OutputFormat output = OutputFormat::kYaml;
  DiscoveryFlags discovery;
  VerbosityFlags verbosity;
};

// `liken-dra report`.
struct ReportFlags {
  OutputFormat output = OutputFormat::kText;
  std::string kubelet_root = "/var/lib/kubelet";  // where the running daemon leaves what the cluster serves
  DiscoveryFlags discovery;
  VerbosityFlags verbosity;
};

// `liken-dra run`.
struct RunFlags {
  std::string node_name;
  std::string kubeconfig;  // empty: the in-cluster config
  std::string context;     // empty: the kubeconfig's current context
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  std::string metrics_address = ":9410";  // "" for none, ":PORT" or "HOST:PORT"
  absl::Duration resync_period = absl::Minutes(10);
  std::string cdi_root = "/var/run/cdi";
  std::string metadata_root;  // empty: <kubelet-root>/plugins/liken.sh/metadata
  double kube_api_qps = informers::KubeConfig{}.qps;
  int kube_api_burst = informers::KubeConfig{}.burst;
  bool no_uevents = false;
  bool taint_unplugged_devices = false;  // a pod follows its device (controller/unplugged_devices.h)
  absl::Duration unplugged_taint_limit = absl::Hours(1);
  bool no_flap_damping = false;       // a flapping device is damped (controller/flap_damper.h) unless set
  double slice_writes_per_minute = 6;  // the node's slice-write budget (controller/slice_write_budget.h); 0: none
  std::string runtime_endpoint;  // the container runtime's CRI socket, asked once whether CDI is on; "": not asked
  KubeletFlags kubelet;
  DiscoveryFlags discovery;
  VerbosityFlags verbosity;
};

// `liken-dra deviceclasses`.
struct DeviceClassesFlags {
  std::string from_generic_device_plugin;  // the plugin's device specification; "-" reads standard input
  std::string domain;                      // overrides the configuration's domain; empty: its own, else squat.ai
  std::string class_suffix;                // class names are <name>.<class_suffix>; empty: the domain
  std::vector<std::string> reports;        // [NODE=]FILE: nodes' `report -o json`; empty: scan this machine
  DiscoveryFlags discovery;
  VerbosityFlags verbosity;
};

// `liken-dra healthcheck`.
struct HealthcheckFlags {
  KubeletFlags kubelet;
  VerbosityFlags verbosity;
};

// `liken-dra runtime-check`.
struct RuntimeCheckFlags {
  std::string runtime_endpoint = "unix:///run/containerd/containerd.sock";
  std::string cdi_root = "/var/run/cdi";  // the driver's --cdi-root, which the runtime's CDI spec dirs must hold
  VerbosityFlags verbosity;
};

// Parses argv[1..argc) into `flags` for the command `name` (described by `synopsis` in its usage text). Returns
// the exit code when the command must end now: 0 after printing the usage text for -h/--help (whatever else was
// given), 2 after printing a one-line error naming the flag (unknown flag, missing value, a value that fails its
// check); otherwise nullopt, with -v applied to the log level. Defined in flags.cc for the six structs above.
// Thread-compatible.
template <typename Flags>
std::optional<int> ParseFlags(std::string_view name, std::string_view synopsis, int argc, char** argv,
                              Flags& flags);

}  // namespace liken::cmd
