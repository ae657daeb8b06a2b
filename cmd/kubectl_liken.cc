// kubectl-liken: a kubectl plugin (`kubectl liken ...`) that shows, cluster-wide, which liken devices each node
// publishes, who holds them, and why a claim waits. Reads only (get and list), with the user's kubeconfig.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "clusterview/claim_view.h"
#include "clusterview/cluster_index.h"
#include "clusterview/cluster_snapshot.h"
#include "clusterview/device_view.h"
#include "clusterview/output_format.h"
#include "clusterview/why_view.h"
#include "common/clock.h"
#include "informers/kube_config.h"
#include "informers/rest_client.h"

namespace {

using liken::clusterview::OutputFormat;

constexpr char kDescription[] =
    "kubectl liken: the liken.sh devices of the whole cluster, who holds them, and why a claim waits.\n"
    "Reads ResourceSlices, ResourceClaims, DeviceClasses, Pods, Nodes and Events (get and list only).\n\n"
    "  kubectl liken devices [NODE...]   one line per published liken device: node, subsystem, identity\n"
    "                                    (vendor:product serial), shared or exclusive, taints, held by claim -> pods\n"
    "  kubectl liken claims              each claim with liken devices (or waiting for one): state, node,\n"
    "                                    devices, their health (status.devices), pods and how many run\n"
    "  kubectl liken claims -A --held --exit-code   before helm uninstall: the claims reserved for pods\n"
    "                                    (exit 3 when there is any; 0 when none)\n"
    "  kubectl liken why CLAIM|POD       why a claim waits: the scheduler's words, the selectors as written,\n"
    "                                    the free liken devices with the attributes the selectors read\n";

struct GlobalFlags {
  std::string kubeconfig;
  std::string context;
  std::string namespace_name;
  bool all_namespaces = false;
  std::string output;
};

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// kubectl's choice: --kubeconfig, else the first file of $KUBECONFIG, else ~/.kube/config.
std::string KubeconfigPath(const GlobalFlags& flags) {
  if (!flags.kubeconfig.empty()) return flags.kubeconfig;
  for (const auto& part : absl::StrSplit(Env("KUBECONFIG"), ':', absl::SkipEmpty())) return std::string(part);
  return Env("HOME") + "/.kube/config";
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app(kDescription, "kubectl-liken");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kubectl-liken ") + LIKEN_VERSION);
  GlobalFlags g;
  auto global = [&](CLI::App* sub) {
    sub->add_option("--kubeconfig", g.kubeconfig, "the kubeconfig file (default: $KUBECONFIG's first, ~/.kube/config)");
    sub->add_option("--context", g.context, "the kubeconfig context (default: its current-context)");
    sub->add_option("-n,--namespace", g.namespace_name, "the namespace (default: the context's, else default)");
    sub->add_flag("-A,--all-namespaces", g.all_namespaces, "every namespace");
    sub->add_option("-o,--output", g.output, "wide, json or yaml (default: columns)");
  };

  CLI::App* devices = app.add_subcommand("devices", "the published liken devices and who holds them (every namespace's claims)");
  global(devices);
  liken::clusterview::DeviceFilter filter;
  std::vector<std::string> attribute_filters;
  devices->add_option("NODE", filter.nodes, "only these nodes");
  devices->add_option("--subsystem", filter.subsystem, "only devices of this liken.sh/subsystem (tty, drm, sound, ...)");
  devices->add_option("--attribute", attribute_filters, "only devices with this attribute value: NAME=VALUE (e.g. serial=A50285BI); repeatable");
  devices->add_flag("--held", filter.held_only, "only devices a claim holds");
  devices->add_flag("--free", filter.free_only, "only devices no claim holds")->excludes("--held");

  CLI::App* claims = app.add_subcommand("claims", "the claims with liken devices, or waiting for one");
  global(claims);
  bool held_only = false;
  bool exit_code = false;
  claims->add_flag("--held", held_only, "only claims whose liken devices are reserved for pods (the ones a "
                   "node's driver must unprepare: check before helm uninstall)");
  claims->add_flag("--exit-code", exit_code, "exit 3 when any claim is listed (0 when none)");

  CLI::App* why = app.add_subcommand("why", "why a claim (or a pod's claims) waits");
  global(why);
  std::string why_target;
  why->add_option("CLAIM|POD", why_target, "a claim or pod name; resourceclaim/NAME or pod/NAME to say which")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  auto format = liken::clusterview::ParseOutputFormat(g.output);
  if (!format.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(format.status().message()).c_str());
    return 2;
  }
  for (const auto& a : attribute_filters) {
    if (auto s = liken::clusterview::AddAttributeFilter(a, &filter); !s.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(s.message()).c_str());
      return 2;
    }
  }
  if (g.all_namespaces && !g.namespace_name.empty()) {
    std::fprintf(stderr, "error: -n and -A exclude each other\n");
    return 2;
  }
  if (why->parsed() && g.all_namespaces) {
    std::fprintf(stderr, "error: why names one claim or pod: give its namespace with -n, not -A\n");
    return 2;
  }

  auto config = liken::informers::LoadKubeconfig(KubeconfigPath(g), g.context);
  if (!config.ok()) return Fail(config.status());
  config->user_agent = std::string("kubectl-liken/") + LIKEN_VERSION;
  config->max_retries = 2;
  std::string namespace_name = g.namespace_name;
  if (namespace_name.empty() && !g.all_namespaces) {
    namespace_name = config->context_namespace.empty() ? "default" : config->context_namespace;
  }
  liken::informers::SetHttpThreads(2);
  std::unique_ptr<liken::Clock> clock = liken::NewRealClock();
  auto client = liken::informers::NewRestClient(*config, clock.get());
  if (!client.ok()) return Fail(client.status());

  liken::clusterview::SnapshotScope scope;
  if (claims->parsed() || why->parsed()) scope.namespace_name = g.all_namespaces ? "" : namespace_name;
  scope.pods = !devices->parsed();
  scope.device_classes = claims->parsed() || why->parsed();
  scope.nodes = why->parsed();
  auto snapshot = liken::clusterview::FetchSnapshot(**client, scope, {});
  if (!snapshot.ok()) return Fail(snapshot.status());
  liken::clusterview::ClusterIndex index(*snapshot);

  const bool table = *format == OutputFormat::kTable || *format == OutputFormat::kWide;
  if (devices->parsed()) {
    std::vector<liken::clusterview::DeviceRow> rows = liken::clusterview::BuildDeviceRows(index, filter);
    if (table && rows.empty()) {
      std::fprintf(stderr, "No liken devices found.\n");  // kubectl's way: nothing on stdout
    } else {
      std::fputs(liken::clusterview::RenderDevices(rows, *format).c_str(), stdout);
    }
  } else if (claims->parsed()) {
    std::vector<liken::clusterview::ClaimRow> rows = liken::clusterview::BuildClaimRows(index);
    if (held_only) std::erase_if(rows, [](const auto& row) { return row.state != "reserved"; });
    if (table && rows.empty()) {
      std::fprintf(stderr, "No liken claims found%s.\n",
                   g.all_namespaces ? "" : (" in namespace " + namespace_name).c_str());
    } else {
      std::fputs(liken::clusterview::RenderClaims(rows, *format, g.all_namespaces).c_str(), stdout);
    }
    if (exit_code && !rows.empty()) return 3;
  } else {
    auto target = liken::clusterview::ResolveWhyTarget(index, namespace_name, why_target);
    if (!target.ok()) return Fail(target.status());
    std::vector<nlohmann::json> events;
    if (!target->pod.empty()) {
      auto fetched = liken::clusterview::FetchPodEvents(**client, namespace_name, target->pod, {});
      if (!fetched.ok()) return Fail(fetched.status());
      events = *std::move(fetched);
    }
    std::fputs(liken::clusterview::RenderWhy(liken::clusterview::BuildWhyReport(index, *target, events), *format)
                   .c_str(),
               stdout);
  }
  return 0;
}
