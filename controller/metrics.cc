#include "controller/metrics.h"

#include <netdb.h>
#include <prometheus/exposer.h>
#include <prometheus/text_serializer.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace liken::controller {
namespace {

prometheus::Histogram::BucketBoundaries LatencyBuckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
}

class ExposerServer final : public MetricsServer {
 public:
  ExposerServer(const std::string& address, std::shared_ptr<prometheus::Registry> registry)
      : exposer_(address) {
    exposer_.RegisterCollectable(registry);
  }

 private:
  prometheus::Exposer exposer_;
};

// Why `address` ("host:port", ":port", "[v6]:port") cannot be bound: binds a socket there as the server would
// and returns its error ("Address already in use"), or "" when that bind succeeds.
std::string WhyNotBindable(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos) return "";
  std::string host = address.substr(0, colon);
  const std::string port = address.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  hints.ai_family = host.empty() ? AF_INET : AF_UNSPEC;  // civetweb binds ":port" on IPv4's any address
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    return ::gai_strerror(rc);
  }
  std::string why;
  int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) {
    why = std::strerror(errno);
  } else {
    int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // as the server does: TIME_WAIT is no conflict
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0) {
      why = errno == EADDRINUSE ? "the address is in use (another process listens there)" : std::strerror(errno);
    }
    ::close(fd);
  }
  ::freeaddrinfo(found);
  return why;
}

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  auto gauge = [&](const char* name, const char* help) -> prometheus::Gauge* {
    return &prometheus::BuildGauge().Name(name).Help(help).Register(r).Add({});
  };
  auto counter = [&](const char* name, const char* help) -> prometheus::Counter* {
    return &prometheus::BuildCounter().Name(name).Help(help).Register(r).Add({});
  };
  published_ = gauge("liken_published_devices", "Devices published in this node's ResourceSlices.");
  withheld_ = gauge("liken_withheld_devices", "Devices with /dev nodes that the node keeps for itself.");
  unclaimed_ = gauge("liken_unclaimed_devices", "PCI and USB hardware with no kernel driver bound.");
  left_out_ = gauge("liken_left_out_devices",
                    "Devices with a driver bound that are not published because a claim would deliver nothing "
                    "(no device node in their sysfs subtree); `liken-dra report` names each and why.");
  idle_usb_ = gauge("liken_idle_usb_devices",
                    "USB devices left out because they are not authorized or not configured (no interfaces); "
                    "`liken-dra report` names each, why, and how to authorize or configure it.");
  slice_writes_ = &prometheus::BuildCounter()
                       .Name("liken_slice_writes_total")
                       .Help("ResourceSlice writes by operation and result.")
                       .Register(r);
  for (const char* op : {"create", "update", "delete"}) {
    for (const char* result : {"success", "conflict", "error"}) slice_writes_->Add({{"operation", op}, {"result", result}});
  }
  slices_refused_ = &prometheus::BuildCounter()
                         .Name("liken_slices_refused_total")
                         .Help("ResourceSlices refused by an API rule: by the driver's own validation (the pool is not "
                               "written) or by the API server (a 422; retried with backoff).")
                         .Register(r);
  for (const char* rule : {"ResourceSliceMaxDevices", "ResourceSliceMaxDevicesWithTaintsOrConsumesCounters", "other"}) {
    for (const char* by : {"driver", "server"}) slices_refused_->Add({{"rule", rule}, {"by", by}});
  }
  scan_duration_ = &prometheus::BuildHistogram()
                        .Name("liken_scan_duration_seconds")
                        .Help("Time to scan the machine's hardware.")
                        .Register(r)
                        .Add({}, LatencyBuckets());
  auto& uevents = prometheus::BuildCounter().Name("liken_uevents_total").Help("Kernel uevents read, by whether they triggered a resync.").Register(r);
  uevents_seen_ = &uevents.Add({{"acted", "false"}});
  uevents_acted_ = &uevents.Add({{"acted", "true"}});
  watch_restarts_ = &prometheus::BuildCounter()
                         .Name("liken_watch_restarts_total")
                         .Help("Watches re-established, by resource and reason.")
                         .Register(r);
  for (const char* res : {"resourceslices", "pods"}) {
    for (const char* reason : {"gone", "error", "timeout"}) watch_restarts_->Add({{"resource", res}, {"reason", reason}});
  }
  watch_events_ = &prometheus::BuildCounter()
                       .Name("liken_watch_events_total")
                       .Help("Watch events received, by resource and type (a node sees only its own pods and slices).")
                       .Register(r);
  for (const char* res : {"resourceslices", "pods"}) {
    for (const char* type : {"ADDED", "MODIFIED", "DELETED", "BOOKMARK"}) {
      watch_events_->Add({{"resource", res}, {"type", type}});
    }
  }
  queue_depth_ = gauge("liken_workqueue_depth", "Keys ready in the reconcile workqueue.");
  queue_retries_ = counter("liken_workqueue_retries_total", "Keys re-added to the workqueue after a failure.");
  auto& prepares = prometheus::BuildCounter().Name("liken_prepare_total").Help("Claims prepared, by result.").Register(r);
  prepare_ok_ = &prepares.Add({{"result", "success"}});
  prepare_error_ = &prepares.Add({{"result", "error"}});
  auto& unprepares = prometheus::BuildCounter().Name("liken_unprepare_total").Help("Claims unprepared, by result.").Register(r);
  unprepare_ok_ = &unprepares.Add({{"result", "success"}});
  unprepare_error_ = &unprepares.Add({{"result", "error"}});
  prepare_duration_ = &prometheus::BuildHistogram()
                           .Name("liken_prepare_duration_seconds")
                           .Help("Time to prepare one claim.")
                           .Register(r)
                           .Add({}, LatencyBuckets());
  unprepare_duration_ = &prometheus::BuildHistogram()
                             .Name("liken_unprepare_duration_seconds")
                             .Help("Time to unprepare one claim.")
                             .Register(r)
                             .Add({}, LatencyBuckets());
  prepared_claims_ = gauge("liken_prepared_claims", "Claims prepared on this node.");
  unhealthy_claimed_ = gauge("liken_unhealthy_claimed_devices",
                             "Devices prepared claims hold that this node no longer publishes (unplugged, driver "
                             "unbound); the kubelet reports them unhealthy where it watches device health.");
  cdi_refreshes_ = counter("liken_cdi_refreshes_total", "CDI specs rewritten because their device nodes changed.");
  rebind_failures_ = counter("liken_rebind_failures_total", "USB interfaces that could not be given back to a driver.");
  claim_get_fallbacks_ = counter("liken_claim_get_fallbacks_total",
                                 "ResourceClaims a prepare read from the API server because the node's claim cache lacked them.");
  flapping_ = gauge("liken_flapping_devices",
                    "Devices damped now for flapping: their presence changed too often; withheld until stable.");
  flap_damping_starts_ = counter("liken_flap_damping_starts_total", "Times a flapping device's damping started.");
  slice_writes_deferred_ = counter("liken_slice_writes_deferred_total",
                                   "Passes whose slice write waited for the node's write budget (a few a minute).");
  registered_ = gauge("liken_kubelet_registered", "1 when the kubelet accepted the plugin's registration.");
  auto& runtime_cdi = prometheus::BuildGauge()
                          .Name("liken_runtime_cdi")
                          .Help("1 for what the container runtime said about CDI at start-up (enabled, disabled, "
                                "unknown, outside_spec_dirs: on, but its CDI spec directories do not hold "
                                "--cdi-root); all 0 until asked, and when --runtime-endpoint is not set.")
                          .Register(r);
  for (const char* state : {"enabled", "disabled", "unknown", "outside_spec_dirs"}) runtime_cdi_[state] = &runtime_cdi.Add({{"state", state}});
  auto& features = prometheus::BuildGauge()
                       .Name("liken_cluster_feature_served")
                       .Help("1 when the API server serves the feature (render_sharing: allowMultipleAllocations kept; "
                             "node_scoped_claim_status: associated-node verbs checked; pod_health: "
                             "ResourceHealthStatus; device_taints: taints kept on devices); 0 when it does not or it "
                             "is not known yet.")
                       .Register(r);
  for (const auto& name : ClusterFeatureNames()) cluster_features_[name] = &features.Add({{"feature", name}});
}

std::string Metrics::Render() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void Metrics::OnIdleUsb(size_t idle) { idle_usb_->Set(static_cast<double>(idle)); }

void Metrics::OnScan(size_t published, size_t withheld, size_t unclaimed, size_t left_out, absl::Duration duration) {
  published_->Set(static_cast<double>(published));
  withheld_->Set(static_cast<double>(withheld));
  unclaimed_->Set(static_cast<double>(unclaimed));
  left_out_->Set(static_cast<double>(left_out));
  scan_duration_->Observe(absl::ToDoubleSeconds(duration));
}

void Metrics::OnDepth(size_t depth) { queue_depth_->Set(static_cast<double>(depth)); }
void Metrics::OnRetry() { queue_retries_->Increment(); }

void Metrics::OnSliceWrite(std::string_view operation, std::string_view result) {
  slice_writes_->Add({{"operation", std::string(operation)}, {"result", std::string(result)}}).Increment();
}

void Metrics::OnSliceRefused(std::string_view rule, std::string_view by) {
  slices_refused_->Add({{"rule", std::string(rule)}, {"by", std::string(by)}}).Increment();
}

void Metrics::OnWatchRestart(const std::string& resource, const std::string& reason) {
  watch_restarts_->Add({{"resource", resource}, {"reason", reason}}).Increment();
}

void Metrics::OnWatchEvent(const std::string& resource, const std::string& type) {
  // Only the known types get a series: a server cannot grow the label set.
  if (type != "ADDED" && type != "MODIFIED" && type != "DELETED" && type != "BOOKMARK") return;
  watch_events_->Add({{"resource", resource}, {"type", type}}).Increment();
}

void Metrics::OnUevent(bool acted) { (acted ? uevents_acted_ : uevents_seen_)->Increment(); }

void Metrics::OnPrepare(const absl::Status& result, absl::Duration duration) {
  (result.ok() ? prepare_ok_ : prepare_error_)->Increment();
  prepare_duration_->Observe(absl::ToDoubleSeconds(duration));
}

void Metrics::OnUnprepare(const absl::Status& result, absl::Duration duration) {
  (result.ok() ? unprepare_ok_ : unprepare_error_)->Increment();
  unprepare_duration_->Observe(absl::ToDoubleSeconds(duration));
}

void Metrics::OnRebindFailure(absl::string_view) { rebind_failures_->Increment(); }
void Metrics::OnClaimGetFallback() { claim_get_fallbacks_->Increment(); }
void Metrics::OnPreparedClaims(size_t count) { prepared_claims_->Set(static_cast<double>(count)); }
void Metrics::OnRegistration(bool registered, absl::string_view) { registered_->Set(registered ? 1 : 0); }
void Metrics::OnSpecsRefreshed(int count) { cdi_refreshes_->Increment(count); }
void Metrics::OnRuntimeCdi(std::string_view state) {
  if (runtime_cdi_.find(state) == runtime_cdi_.end()) return;
  for (auto& [name, gauge] : runtime_cdi_) gauge->Set(name == state ? 1 : 0);
}
void Metrics::OnFlapDamping(size_t damped_now, size_t starts_total) {
  flapping_->Set(static_cast<double>(damped_now));
  const double more = static_cast<double>(starts_total) - flap_damping_starts_->Value();
  if (more > 0) flap_damping_starts_->Increment(more);
}

void Metrics::OnSliceWriteDeferred() { slice_writes_deferred_->Increment(); }

void Metrics::OnUnhealthyClaimedDevices(size_t count) { unhealthy_claimed_->Set(static_cast<double>(count)); }
void Metrics::OnClusterFeature(const std::string& feature, bool served) {
  auto it = cluster_features_.find(feature);
  if (it != cluster_features_.end()) it->second->Set(served ? 1 : 0);
}

absl::StatusOr<std::unique_ptr<MetricsServer>> StartMetricsServer(const std::string& address,
                                                                  std::shared_ptr<prometheus::Registry> registry) {
  if (address.empty()) return std::unique_ptr<MetricsServer>();
  std::string bind = address[0] == ':' ? address.substr(1) : address;  // civetweb: "9410" is every interface
  try {
    return std::unique_ptr<MetricsServer>(std::make_unique<ExposerServer>(bind, std::move(registry)));
  } catch (const std::exception& e) {
    // The server's own message does not say why ("null context when constructing CivetServer"): find out.
    std::string why = WhyNotBindable(address);
    if (why.empty()) why = e.what();
    return absl::UnavailableError(absl::StrCat("cannot serve metrics at ", address, ": ", why));
  }
}

}  // namespace liken::controller
