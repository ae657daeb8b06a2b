// `liken-dra run`: the node daemon (kubelet plugin, informers, reconcile loop, metrics), and
// `liken-dra healthcheck`, which checks that the running daemon's sockets answer.
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/termination_signal.h"
#include "common/atomic_file.h"
#include "common/clock.h"
#include "common/log.h"
#include "controller/claim_status_controller.h"
#include "controller/claim_status_metrics.h"
#include "controller/cluster_features.h"
#include "controller/metrics.h"
#include "controller/metrics_endpoint.h"
#include "controller/node_reconciler.h"
#include "controller/triggers.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"
#include "informers/claim_cache.h"
#include "informers/kube_config.h"
#include "informers/rest_client.h"
#include "kubelet/kubelet_plugin.h"
#include "kubelet/plugin_call_hook.h"
#include "kubelet/runtime_cdi.h"
#include "kubelet/socket_paths.h"
#include "nodestate/prepared_claims.h"

namespace liken::cmd {
namespace {

// How long gRPC calls in flight at SIGTERM may go on (and read the API server) before they are cancelled.
constexpr absl::Duration kShutdownGrace = absl::Seconds(2);

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

absl::StatusOr<informers::KubeConfig> LoadConfig(const RunFlags& flags) {
  absl::StatusOr<informers::KubeConfig> config =
      flags.kubeconfig.empty()
          ? informers::InClusterConfig(Env("KUBERNETES_SERVICE_HOST"), Env("KUBERNETES_SERVICE_PORT"),
                                       flags.service_account_dir)
          : informers::LoadKubeconfig(flags.kubeconfig, flags.context);
  if (!config.ok()) return config;
  config->qps = flags.kube_api_qps;
  config->burst = flags.kube_api_burst;
  return config;
}

// Where and how the kubelet plugin runs, from the flags.
kubelet::KubeletPluginOptions PluginOptions(const RunFlags& flags) {
  kubelet::KubeletPluginOptions options;
  options.node_name = flags.node_name;
  options.kubelet_root = flags.kubelet.kubelet_root;
  options.cdi_root = flags.cdi_root;
  options.metadata_root = flags.metadata_root;
  options.pod_uid = flags.kubelet.pod_uid;
  options.sysfs_root = flags.discovery.scan.sysfs_root;
  options.shutdown_grace = kShutdownGrace;
  return options;
}

// The kernel's uevents, unless --no-uevents; null (with a warning) when the socket cannot be opened.
std::unique_ptr<controller::UeventSource> OpenUevents(const RunFlags& flags) {
  if (flags.no_uevents) return nullptr;
  auto source = controller::OpenNetlinkUevents();
  if (source.ok()) return *std::move(source);
  LogWarning("no uevents; hot-plug is noticed by the periodic resync only",
             {{"error", source.status().ToString()}});
  return nullptr;
}

// Passes the plugin's claim changes on to `next`, and asks for a node pass (`ask`) when a claim is no longer
// prepared: a device it held that went away, published tainted, leaves the slice at once
// (--taint-unplugged-devices). Thread-safe when `next` and `ask` are.
class ReleasedClaimsAskForAPass final : public nodestate::PreparedClaimEvents {
 public:
  ReleasedClaimsAskForAPass(nodestate::PreparedClaimEvents* next, std::function<void()> ask)
      : next_(next), ask_(std::move(ask)) {}
  void SetPrepared(nodestate::PreparedClaimDevices claim) override { next_->SetPrepared(std::move(claim)); }
  void SetUnprepared(const std::string& namespace_name, const std::string& name, const std::string& uid) override {
    next_->SetUnprepared(namespace_name, name, uid);
    ask_();
  }

 private:
  nodestate::PreparedClaimEvents* const next_;
  const std::function<void()> ask_;
};

// Asks the container runtime at `endpoint` whether it resolves CDI devices; logs the answer and sets the gauge.
void ReportRuntimeCdi(const std::string& endpoint, const std::string& cdi_root, controller::Metrics* metrics) {
  auto cdi = kubelet::CheckRuntimeCdi(endpoint, absl::Seconds(5), {.cdi_root = cdi_root});
  if (!cdi.ok()) {
    LogWarning("container runtime's CDI unknown: the runtime did not answer",
               {{"endpoint", endpoint}, {"error", cdi.status().ToString()}});
    metrics->OnRuntimeCdi(kubelet::RuntimeCdiStateName(kubelet::RuntimeCdiState::kUnknown));
    return;
  }
  LogLevel level = LogLevel::kWarning;
  const char* message = "container runtime's CDI unknown";
  if (cdi->state == kubelet::RuntimeCdiState::kEnabled) {
    level = LogLevel::kInfo;
    message = "container runtime resolves CDI devices";
  } else if (cdi->state == kubelet::RuntimeCdiState::kDisabled) {
    level = LogLevel::kError;
    message = "container runtime has CDI off: every pod with a claim will fail with \"unresolvable CDI devices\"";
  } else if (cdi->state == kubelet::RuntimeCdiState::kOutsideSpecDirs) {
    level = LogLevel::kError;
    message = "container runtime does not read CDI specs from --cdi-root: every pod with a claim will fail with "
              "\"unresolvable CDI devices\"";
  }
  Log(level, message, {{"runtime", cdi->runtime}, {"reason", cdi->reason}});
  metrics->OnRuntimeCdi(kubelet::RuntimeCdiStateName(cdi->state));
}

}  // namespace

int RunCommand(const Command& command, int argc, char** argv) {
  // A long-running node agent: two malloc arenas keep freed memory from lingering per thread (-2.2 MB with
  // 1,000 claims).
  ::mallopt(M_ARENA_MAX, 2);
  RunFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  const std::string node = flags.node_name;
  if (node.empty()) {
    std::fprintf(stderr, "liken-dra run: --node-name (or NODE_NAME) is required\n");
    return 2;
  }
  auto config = LoadConfig(flags);
  if (!config.ok()) {
    std::fprintf(stderr, "liken-dra run: API server configuration: %s\n", config.status().ToString().c_str());
    return 1;
  }

  // Signals are taken synchronously by one thread: block them before any other thread exists.
  TerminationSignal termination;

  std::unique_ptr<Clock> clock = NewRealClock();
  // Two I/O threads: the two watches and the requests are asynchronous on them.
  informers::SetHttpThreads(2);
  // Raised at the end of the shutdown grace: ends every API request, retry and rate-limit wait still running.
  std::stop_source api_stop;
  auto client = informers::NewRestClient(*config, clock.get(), api_stop.get_token());
  if (!client.ok()) {
    std::fprintf(stderr, "liken-dra run: %s\n", client.status().ToString().c_str());
    return 1;
  }
  controller::Metrics metrics;
  // A taken metrics address (the previous pod of a rolling update still holds it) does not keep the plugin
  // down: the endpoint is bound in the background, with back-off, and is not ready meanwhile.
  const std::string& metrics_address = flags.metrics_address;
  controller::MetricsEndpoint metrics_endpoint(
      metrics_address, [&] { return controller::StartMetricsServer(metrics_address, metrics.registry()); },
      clock.get());
  if (!metrics_address.empty()) metrics_endpoint.Start();

  discovery::ScanOptions daemon_scan_options = flags.discovery.scan;
  daemon_scan_options.match_modules = false;  // module names are for the report; the daemon would hold modules.alias
  std::unique_ptr<discovery::Scanner> scanner = discovery::NewSysfsScanner(daemon_scan_options);
  informers::ClaimCache claims(client->get(), clock.get(), node, &metrics);
  // status.devices of the claims prepared here, written by its own worker: told of each prepared and unprepared
  // claim by the plugin, and of the devices present by the node pass's claim-status step.
  controller::ClaimStatusMetrics status_metrics(*metrics.registry());
  controller::ClaimStatusController statuses(discovery::kDriverName, node, client->get(), &claims, clock.get(),
                                             &status_metrics);
  kubelet::KubeletPluginOptions plugin_options = PluginOptions(flags);
  plugin_options.claim_events = &statuses;
  std::atomic<controller::NodeReconciler*> reconcile_ref{nullptr};
  ReleasedClaimsAskForAPass released_feed(&statuses, [&reconcile_ref] {
    if (controller::NodeReconciler* r = reconcile_ref.load(); r != nullptr) r->Enqueue();
  });
  if (flags.taint_unplugged_devices) plugin_options.claim_events = &released_feed;
  // A burst of kubelet calls leaves its freed memory as free pages inside the heap (3 MB after 50 prepares) and
  // the next pass that would give them back may be --resync-period away: trim once the calls have been quiet 5 s.
  controller::Coalescer heap_trim(clock.get(), absl::Seconds(5), absl::Seconds(60), [] { ::malloc_trim(0); });
  kubelet::PluginCallHook plugin_observer(&metrics, [&heap_trim] { heap_trim.Notify(); });
  kubelet::KubeletPlugin plugin(plugin_options, scanner.get(), &claims, &plugin_observer);
  std::unique_ptr<controller::UeventSource> uevents = OpenUevents(flags);

  LogInfo("starting", {{"node", node}, {"version", LIKEN_VERSION}, {"server", config->server}});
  // Raised at SIGTERM, which is honoured from here on: during start-up and recovery, while the first slice
  // list is still failing, and later.
  std::stop_source shutdown;
  termination.Start([&](int sig) {
    LogInfo("shutting down; slices stay published", {{"signal", strsignal(sig)}});
    shutdown.request_stop();
  });
  claims.Start();
  statuses.Start();
  heap_trim.Start();
  // SIGTERM during the start-up recovery (thousands of claims) cancels it: the process still ends in time.
  if (absl::Status s = plugin.Start(shutdown.get_token()); !s.ok()) {
    const bool cancelled = absl::IsCancelled(s) && shutdown.stop_requested();
    if (!cancelled) LogError("kubelet plugin did not start", {{"error", s.ToString()}});
    termination.Close();  // its callback touches what is about to be destroyed
    api_stop.request_stop();
    heap_trim.Stop();
    statuses.Stop();
    claims.Stop();
    if (!cancelled) return 1;
    LogInfo("stopped");
    return 0;
  }
  // What the cluster serves: logged once, gauges, and a state file for `liken-dra report` in the plugin's
  // directory (removed at a clean stop). The probe runs beside the start-up on a client of its own, so a server
  // that does not answer delays nothing and SIGTERM ends it; until it answers, the slice diff leaves
  // allowMultipleAllocations alone (ClusterFeatures::SharingMayBeDropped) and its answer asks for a pass.
  std::string state_dir;
  if (auto paths = kubelet::ComputeSocketPaths(plugin_options.kubelet_root, discovery::kDriverName, "");
      paths.ok()) {
    state_dir = paths->plugin_dir;
  }
  absl::Mutex state_mu;
  std::atomic<controller::ClusterFeatures*> cluster_ref{nullptr};
  controller::ClusterFeatures cluster([&](const std::string& feature, const controller::FeatureState& state) {
    metrics.OnClusterFeature(feature, state.served);
    if (feature == controller::kFeatureRenderSharing || feature == controller::kFeatureDeviceTaints) {
      if (controller::NodeReconciler* r = reconcile_ref.load(); r != nullptr) r->Enqueue();
    }
    controller::ClusterFeatures* features = cluster_ref.load();
    if (features == nullptr || state_dir.empty()) return;
    absl::MutexLock lock(&state_mu);
    if (absl::Status s = WriteFileAtomically(state_dir, "cluster.json", features->ToJson().dump() + "\n",
                                             Durability::kUnsynced);
        !s.ok()) {
      LogWarning("cannot write the cluster state file for `liken-dra report`", {{"error", s.ToString()}});
    }
  });
  cluster_ref = &cluster;
  std::stop_source probe_stop;
  std::jthread probe;
  if (auto probe_client = informers::NewRestClient(*config, clock.get(), probe_stop.get_token()); probe_client.ok()) {
    probe = std::jthread([&cluster, &node, client = *std::move(probe_client)] {
      (void)controller::ProbeClusterFeatures(client.get(), node, discovery::kDriverName, &cluster);
    });
  }
  // The container runtime's CDI (--runtime-endpoint): asked once beside the start-up, so a runtime that does not
  // answer delays nothing; logged and a gauge.
  std::jthread runtime_check;
  if (!flags.runtime_endpoint.empty()) {
    runtime_check = std::jthread([&metrics, endpoint = flags.runtime_endpoint, cdi_root = flags.cdi_root] {
      ReportRuntimeCdi(endpoint, cdi_root, &metrics);
    });
  }
  controller::NodeReconcilerOptions reconcile_options;
  reconcile_options.node_name = node;
  reconcile_options.resync_period = flags.resync_period;
  reconcile_options.features = &cluster;
  reconcile_options.taint_unplugged = flags.taint_unplugged_devices;
  reconcile_options.unplugged_taint_limit = flags.unplugged_taint_limit;
  reconcile_options.unplugged_memory_dir = state_dir;  // when each taint was added, across restarts
  reconcile_options.claim_statuses = &statuses;
  reconcile_options.flap_damping.enabled = !flags.no_flap_damping;
  reconcile_options.slice_write_budget.enabled = flags.slice_writes_per_minute > 0;
  reconcile_options.slice_write_budget.per_minute = flags.slice_writes_per_minute;
  // Flapping devices and other units in claimed ports, for `liken-dra report` (devices.json beside cluster.json).
  reconcile_options.on_device_conditions = [&state_dir](const std::vector<std::string>& lines) {
    if (state_dir.empty()) return;
    if (absl::Status s = WriteFileAtomically(state_dir, "devices.json",
                                             nlohmann::json{{"conditions", lines}}.dump() + "\n", Durability::kUnsynced);
        !s.ok()) {
      LogWarning("cannot write the device conditions file for `liken-dra report`", {{"error", s.ToString()}});
    }
  };
  controller::NodeReconciler reconcile(reconcile_options, client->get(), clock.get(), scanner.get(), &plugin,
                                       std::move(uevents), &metrics, shutdown.get_token());
  reconcile_ref = &reconcile;
  if (reconcile.Start()) LogInfo("running", {{"node", node}});
  termination.Wait();
  probe_stop.request_stop();  // a probe still waiting on the API server ends now
  if (probe.joinable()) probe.join();
  if (runtime_check.joinable()) runtime_check.join();

  // Shutdown, within a few seconds whatever the API server does. The plugin refuses new gRPC calls at once
  // and gives those in flight the grace; meanwhile the background work stops. Then every API request still
  // running (a prepare's claim read, a slice write, a claim fetch) is cancelled, so nothing waits out a
  // network timeout or a backoff.
  absl::Notification plugin_stopped;
  std::jthread plugin_stopper([&] {
    plugin.Stop();
    plugin_stopped.Notify();
  });
  // The metrics server waits for its connections (a scraper's keep-alive, a half-sent request) for a while
  // before it ends: that runs alongside the grace, not after it.
  std::jthread metrics_stopper([&] { metrics_endpoint.Stop(); });
  reconcile.StopTriggers();
  claims.pod_informer()->Stop();
  plugin_stopped.WaitForNotificationWithTimeout(kShutdownGrace);
  api_stop.request_stop();
  reconcile.Stop();
  heap_trim.Stop();
  statuses.Stop();
  claims.Stop();
  plugin_stopper.join();
  metrics_stopper.join();
  reconcile_ref = nullptr;
  if (!state_dir.empty()) {
    ::unlink((state_dir + "/cluster.json").c_str());
    ::unlink((state_dir + "/devices.json").c_str());
  }
  LogInfo("stopped");
  return 0;
}

int HealthcheckCommand(const Command& command, int argc, char** argv) {
  HealthcheckFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  auto paths = kubelet::ComputeSocketPaths(flags.kubelet.kubelet_root, discovery::kDriverName, flags.kubelet.pod_uid);
  if (!paths.ok()) {
    std::fprintf(stderr, "liken-dra healthcheck: %s\n", std::string(paths.status().message()).c_str());
    return 2;
  }
  for (const std::string& path : {paths->dra, paths->registration}) {
    int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    int err = errno;
    if (fd >= 0) ::close(fd);
    if (!ok) {
      std::fprintf(stderr, "liken-dra healthcheck: %s does not answer: %s\n", path.c_str(), std::strerror(err));
      return 1;
    }
  }
  std::printf("ok\n");
  return 0;
}

}  // namespace liken::cmd
