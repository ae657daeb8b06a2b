// `liken-dra run`: the node daemon (kubelet plugin, informers, reconcile loop, metrics), and
// `liken-dra healthcheck`, which checks that the running daemon's sockets answer.
#include <malloc.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <thread>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cmd/claim_status_feed.h"
#include "cmd/commands.h"
#include "cmd/flags.h"
#include "cmd/termination_signal.h"
#include "informers/forwarding_handler.h"
#include "common/log.h"
#include "controller/claim_status_controller.h"
#include "controller/claim_status_metrics.h"
#include "controller/clock.h"
#include "controller/metrics.h"
#include "controller/slice_controller.h"
#include "controller/slice_sync.h"
#include "controller/triggers.h"
#include "controller/workqueue.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"
#include "discovery/slice_builder.h"
#include "informers/claim_cache.h"
#include "informers/informer.h"
#include "informers/kube_config.h"
#include "informers/rest_client.h"
#include "kubelet/kubelet_plugin.h"
#include "kubelet/socket_paths.h"

namespace liken::cmd {
namespace {

// How long gRPC calls in flight at SIGTERM may go on (and read the API server) before they are cancelled.
constexpr absl::Duration kShutdownGrace = absl::Seconds(2);

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// Enqueues the one slice key on any informer event (handlers only enqueue).
// The latest inventory, shared by the sync pass and the claim refresh that follows it.
class LastInventory {
 public:
  // An inventory and when its scan started (so the plugin never lets it replace a fresher one).
  struct Scan {
    discovery::Inventory inventory;
    kubelet::ScanClock::time_point started;
  };
  void Set(const discovery::Inventory& inventory, kubelet::ScanClock::time_point started) {
    absl::MutexLock lock(&mu_);
    scan_ = std::make_shared<const Scan>(Scan{inventory, started});
  }
  std::shared_ptr<const Scan> Get() const {
    absl::MutexLock lock(&mu_);
    return scan_;
  }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const Scan> scan_ ABSL_GUARDED_BY(mu_);
};

absl::StatusOr<informers::KubeConfig> LoadConfig(const Flags& flags) {
  std::string kubeconfig = flags.Get("kubeconfig");
  absl::StatusOr<informers::KubeConfig> config =
      kubeconfig.empty()
          ? informers::InClusterConfig(Env("KUBERNETES_SERVICE_HOST"), Env("KUBERNETES_SERVICE_PORT"),
                                       flags.Get("service-account-dir"))
          : informers::LoadKubeconfig(kubeconfig, flags.Get("context"));
  if (!config.ok()) return config;
  double qps = config->qps;
  int burst = config->burst;
  if (flags.Has("kube-api-qps") && !absl::SimpleAtod(flags.Get("kube-api-qps"), &qps)) {
    return absl::InvalidArgumentError("--kube-api-qps must be a number");
  }
  if (flags.Has("kube-api-burst") && !absl::SimpleAtoi(flags.Get("kube-api-burst"), &burst)) {
    return absl::InvalidArgumentError("--kube-api-burst must be an integer");
  }
  config->qps = qps;
  config->burst = burst;
  return config;
}

}  // namespace

int RunCommand(int argc, char** argv) {
  // A long-running node agent: two malloc arenas keep freed memory from lingering per thread (-2.2 MB with
  // 1,000 claims).
  ::mallopt(M_ARENA_MAX, 2);
  auto flags = Flags::Parse(Command::kRun, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "liken-dra run: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->Has("help")) {
    std::fputs(Usage(Command::kRun).c_str(), stdout);
    return 0;
  }
  ApplyVerbosity(*flags);
  const std::string node = flags->Get("node-name");
  if (node.empty()) {
    std::fprintf(stderr, "liken-dra run: --node-name (or NODE_NAME) is required\n");
    return 2;
  }
  const absl::Duration resync = flags->Duration("resync-period");
  const discovery::ScanOptions scan_options = ScanOptionsFromFlags(*flags);
  auto config = LoadConfig(*flags);
  if (!config.ok()) {
    std::fprintf(stderr, "liken-dra run: API server configuration: %s\n", config.status().ToString().c_str());
    return 1;
  }

  // Signals are taken synchronously by one thread: block them before any other thread exists.
  TerminationSignal termination;

  std::unique_ptr<controller::Clock> clock = controller::NewRealClock();
  // Two I/O threads: the two watches and the requests are asynchronous on them.
  informers::SetHttpThreads(2);
  // Raised at shutdown: ends every API request, retry and rate-limit wait still running.
  informers::Cancellation api_stop;
  auto client = informers::NewRestClient(*config, clock.get(), &api_stop);
  if (!client.ok()) {
    std::fprintf(stderr, "liken-dra run: %s\n", client.status().ToString().c_str());
    return 1;
  }
  controller::Metrics metrics;
  auto metrics_server = controller::StartMetricsServer(flags->Get("metrics-address"), metrics.registry());
  if (!metrics_server.ok()) {
    std::fprintf(stderr, "liken-dra run: %s\n", metrics_server.status().ToString().c_str());
    return 1;
  }

  discovery::ScanOptions daemon_scan_options = scan_options;
  daemon_scan_options.match_modules = false;  // module names are for the report; the daemon would hold modules.alias
  std::unique_ptr<discovery::Scanner> scanner = discovery::NewSysfsScanner(daemon_scan_options);
  informers::ClaimCache claims(client->get(), clock.get(), node, &metrics);
  // status.devices of the claims prepared here: fed by the plugin and each scan, written by its own worker.
  controller::ClaimStatusMetrics status_metrics(*metrics.registry());
  controller::ClaimStatusController statuses(discovery::kDriverName, node, client->get(), &claims, clock.get(),
                                             &status_metrics);
  ClaimStatusFeed status_feed(node, &statuses);

  kubelet::KubeletPluginOptions plugin_options;
  plugin_options.node_name = node;
  plugin_options.kubelet_root = flags->Get("kubelet-root");
  plugin_options.cdi_root = flags->Get("cdi-root");
  plugin_options.pod_uid = flags->Get("pod-uid");
  plugin_options.sysfs_root = scan_options.sysfs_root;
  plugin_options.shutdown_grace = kShutdownGrace;
  plugin_options.claim_listener = &status_feed;
  kubelet::KubeletPlugin plugin(plugin_options, scanner.get(), &claims, &metrics);

  controller::WorkQueue queue(clock.get(),
                              controller::NewControllerRateLimiter(clock.get(), absl::Milliseconds(5),
                                                                   absl::Seconds(30), 10, 100),
                              &metrics);
  informers::ForwardingHandler enqueue;  // to `reconcile`, built below
  informers::InformerOptions slice_options;
  slice_options.resource = "resourceslices";
  slice_options.path = informers::ResourceSlicesPath();
  slice_options.field_selector = absl::StrCat("spec.nodeName=", node, ",spec.driver=", discovery::kDriverName);
  informers::Informer slices(client->get(), clock.get(), slice_options, &enqueue, &metrics);

  LastInventory last;
  controller::SliceSync sync(
      node, discovery::kDriverName, client->get(), slices.store(),
      [&]() -> absl::StatusOr<std::vector<apis::ResourceSlice>> {
        absl::Time start = absl::Now();
        auto started = kubelet::ScanClock::now();
        auto inventory = scanner->Scan();
        if (!inventory.ok()) return inventory.status();
        metrics.OnScan(inventory->published.size(), inventory->withheld.size(), inventory->unclaimed.size(),
                       absl::Now() - start);
        last.Set(*inventory, started);
        return discovery::BuildResourceSlices(node, *inventory, 0);
      },
      &metrics);
  std::atomic<bool> stopping{false};
  controller::SliceController reconcile(&sync, &queue, resync, [&] {
    // Every pass: re-resolve the device nodes of prepared claims; rewrite only changed CDI specs. Not once the
    // plugin stopped: a new driver pod may own the specs by then.
    if (stopping.load()) return;
    if (auto scan = last.Get()) {
      auto refreshed = plugin.RefreshPreparedClaims(scan->inventory, scan->started);
      if (!refreshed.ok()) LogWarning("claim refresh failed", {{"error", refreshed.status().ToString()}});
      status_feed.OnInventory(scan->inventory);
    }
    ::malloc_trim(0);  // a pass's temporary strings leave free pages inside the heap: give them back
  });
  controller::Coalescer coalescer(clock.get(), absl::Milliseconds(50), absl::Milliseconds(250),
                                  [&] { reconcile.Enqueue(); });
  std::unique_ptr<controller::UeventListener> uevents;
  if (!flags->Has("no-uevents")) {
    auto source = controller::OpenNetlinkUevents();
    if (source.ok()) {
      uevents = std::make_unique<controller::UeventListener>(*std::move(source), &coalescer, &metrics);
    } else {
      LogWarning("no uevents; hot-plug is noticed by the periodic resync only",
                 {{"error", source.status().ToString()}});
    }
  }

  LogInfo("starting", {{"node", node}, {"version", LIKEN_VERSION}, {"server", config->server}});
  // SIGTERM is honoured from here on: during start-up and recovery, while the first slice list is still
  // failing, and later.
  termination.Start([&](int sig) {
    LogInfo("shutting down; slices stay published", {{"signal", strsignal(sig)}});
    stopping.store(true);
    slices.Stop();  // ends WaitForSync below, and a list or watch in flight
  });
  claims.Start();
  statuses.Start();
  if (absl::Status s = plugin.Start(); !s.ok()) {
    LogError("kubelet plugin did not start", {{"error", s.ToString()}});
    termination.Close();  // its callback touches what is about to be destroyed
    api_stop.Cancel();
    slices.Stop();
    statuses.Stop();
    claims.Stop();
    return 1;
  }
  if (!termination.received()) {
    enqueue.set_target(&reconcile);
    slices.Start();
    coalescer.Start();
    if (uevents != nullptr) uevents->Start();
  }
  slices.WaitForSync();  // the first pass compares against what the server has, not an empty cache
  if (!stopping.load()) {
    reconcile.Start();
    LogInfo("running", {{"node", node}});
  }
  termination.Wait();

  // Shutdown, within a few seconds whatever the API server does. The plugin refuses new gRPC calls at once
  // and gives those in flight the grace; meanwhile the background work stops. Then every API request still
  // running (a prepare's claim read, a slice write, a claim fetch) is cancelled, so nothing waits out a
  // network timeout or a backoff.
  absl::Notification plugin_stopped;
  std::thread plugin_stopper([&] {
    plugin.Stop();
    plugin_stopped.Notify();
  });
  // The metrics server waits for its connections (a scraper's keep-alive, a half-sent request) for a while
  // before it ends: that runs alongside the grace, not after it.
  std::thread metrics_stopper([&] { metrics_server->reset(); });
  if (uevents != nullptr) uevents->Stop();
  coalescer.Stop();
  slices.Stop();
  claims.pod_informer()->Stop();
  plugin_stopped.WaitForNotificationWithTimeout(kShutdownGrace);
  api_stop.Cancel();
  reconcile.Stop();
  statuses.Stop();
  claims.Stop();
  plugin_stopper.join();
  metrics_stopper.join();
  LogInfo("stopped");
  return 0;
}

int HealthcheckCommand(int argc, char** argv) {
  auto flags = Flags::Parse(Command::kHealthcheck, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "liken-dra healthcheck: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->Has("help")) {
    std::fputs(Usage(Command::kHealthcheck).c_str(), stdout);
    return 0;
  }
  auto paths = kubelet::ComputeSocketPaths(flags->Get("kubelet-root"), discovery::kDriverName, flags->Get("pod-uid"));
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
