#include "kubelet/kubelet_plugin.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "common/log.h"
#include "common/files.h"
#include "kubelet/device_health.h"
#include "kubelet/dra_service.h"
#include "kubelet/health_service.h"
#include "kubelet/socket_files.h"

namespace liken::kubelet {
namespace {

absl::Status Annotate(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

std::unique_ptr<grpc::Server> Listen(const std::string& path, const std::vector<grpc::Service*>& services) {
  grpc::ServerBuilder builder;
  // One completion queue with one idle poller, not one queue per CPU core (gRPC's default: 2 x cores threads
  // on a big node for a socket the kubelet calls a few times a minute). A call being served starts another
  // poller, so calls still run concurrently.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 1);
  // The idle poller's wait: a call or the server's shutdown ends it at once, so a long one only spares wake-ups.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::CQ_TIMEOUT_MSEC, 60 * 1000);
  builder.AddListeningPort(absl::StrCat("unix:", path), grpc::InsecureServerCredentials());
  for (auto* s : services) builder.RegisterService(s);
  return builder.BuildAndStart();
}

}  // namespace

KubeletPlugin::KubeletPlugin(KubeletPluginOptions options, discovery::Scanner* scanner,
                             informers::ClaimLookup* lookup, nodestate::PluginObserver* observer)
    : options_(std::move(options)),
      lookup_(lookup),
      observer_(observer != nullptr ? observer : &default_observer_),
      catalog_(scanner),
      specs_(options_.cdi_root, Durability::kUnsynced),  // rebuilt from the records at start-up
      rebinder_(NewSysfsUsbRebinder(options_.sysfs_root)) {}

KubeletPlugin::~KubeletPlugin() { Stop(); }

absl::Status KubeletPlugin::Start(std::stop_token stop) {
  absl::MutexLock lock(&mu_);
  if (started_) return absl::FailedPreconditionError("kubelet plugin already started");
  started_ = true;
  absl::Status s = StartLocked(std::move(stop));
  if (absl::IsCancelled(s)) {
    LogInfo("kubelet plugin start cancelled", {{"reason", std::string(s.message())}});
  } else if (!s.ok()) {
    LogError("kubelet plugin failed to start", {{"error", s.ToString()}});
  }
  return s;
}

absl::Status KubeletPlugin::StartLocked(std::stop_token stop) {
  if (options_.node_name.empty()) return absl::InvalidArgumentError("kubelet plugin needs a node name");
  if (lookup_ == nullptr) return absl::InvalidArgumentError("kubelet plugin needs a claim lookup");
  auto paths = ComputeSocketPaths(options_.kubelet_root, discovery::kDriverName, options_.pod_uid);
  if (!paths.ok()) return paths.status();
  paths_ = *paths;
  auto boot_id = ReadBootId(options_.boot_id_path);
  if (!boot_id.ok()) return boot_id.status();

  checkpoint_ = std::make_unique<ClaimCheckpoint>(absl::StrCat(paths_.plugin_dir, "/claims"), *boot_id);
  for (const std::string* dir : {&paths_.registration_dir, &paths_.plugin_dir}) {
    if (auto st = MakeDirectories(*dir); !st.ok()) return st;
  }
  if (auto st = checkpoint_->EnsureDirectory(); !st.ok()) return st;
  if (auto st = specs_.EnsureDirectory(); !st.ok()) return Annotate(st, "CDI directory: ");
  if (options_.device_metadata) {
    metadata_ = std::make_unique<DeviceMetadataStore>(options_.metadata_root.empty()
                                                          ? absl::StrCat(paths_.plugin_dir, "/metadata")
                                                          : options_.metadata_root,
                                                      Durability::kUnsynced);  // rebuilt at start-up
    if (auto st = metadata_->EnsureDirectory(); !st.ok()) return Annotate(st, "device metadata directory: ");
  }

  preparer_ = std::make_unique<ClaimPreparer>(options_.node_name, lookup_, &catalog_, &specs_, checkpoint_.get(),
                                              rebinder_.get(), observer_, metadata_.get());
  preparer_->SetClaimEvents(options_.claim_events);
  if (auto st = preparer_->Recover(std::move(stop)); !st.ok()) return st;

  dra_services_.push_back(NewDraV1Service(preparer_.get()));
  dra_services_.push_back(NewDraV1beta1Service(preparer_.get()));
  HealthStreamOptions health{options_.node_name, options_.health_resend_interval, options_.health_timeout};
  dra_services_.push_back(NewHealthV1Service(health, &catalog_, preparer_.get()));
  dra_services_.push_back(NewHealthV1alpha1Service(health, &catalog_, preparer_.get()));
  std::vector<grpc::Service*> services;
  for (auto& svc : dra_services_) services.push_back(svc.get());

  if (auto st = RemoveStaleSocket(paths_.dra); !st.ok()) return st;
  dra_server_ = Listen(paths_.dra, services);
  if (!dra_server_) return absl::UnavailableError(absl::StrCat("cannot listen on ", paths_.dra));
  auto dra_inode = SocketInode(paths_.dra);
  if (!dra_inode.ok()) return dra_inode.status();
  dra_inode_ = *dra_inode;

  registration_ = std::make_unique<RegistrationService>(discovery::kDriverName, paths_.dra, observer_);
  if (auto st = RemoveStaleSocket(paths_.registration); !st.ok()) return st;
  registration_server_ = Listen(paths_.registration, {registration_.get()});
  if (!registration_server_) return absl::UnavailableError(absl::StrCat("cannot listen on ", paths_.registration));
  auto reg_inode = SocketInode(paths_.registration);
  if (!reg_inode.ok()) return reg_inode.status();
  registration_inode_ = *reg_inode;

  LogInfo("kubelet plugin serving",
          {{"registration_socket", paths_.registration}, {"dra_socket", paths_.dra}, {"cdi_root", options_.cdi_root}});
  return absl::OkStatus();
}

void KubeletPlugin::Stop() {
  absl::MutexLock lock(&mu_);
  if (stopped_) return;
  stopped_ = true;
  if (registration_server_) {
    RemoveOwnSocket(paths_.registration, registration_inode_);  // the kubelet deregisters the plugin
    registration_server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    registration_server_->Wait();
  }
  catalog_.Close();  // ends health streams
  if (dra_server_) {
    dra_server_->Shutdown(absl::ToChronoTime(absl::Now() + options_.shutdown_grace));
    dra_server_->Wait();
    RemoveOwnSocket(paths_.dra, dra_inode_);
  }
  LogInfo("kubelet plugin stopped", {});
}

void KubeletPlugin::UpdateInventory(const discovery::Inventory& inventory, ScanClock::time_point scan_started) {
  if (!catalog_.Update(inventory, scan_started)) {
    LogInfo("ignoring an inventory older than the one a prepare rescanned", {});
  }
}

absl::StatusOr<int> KubeletPlugin::RefreshPreparedClaims() {
  {
    absl::MutexLock lock(&mu_);
    if (!preparer_) return 0;
  }
  std::shared_ptr<const InventorySnapshot> snapshot = catalog_.Current();
  auto refreshed = preparer_->Refresh(*snapshot);
  if (snapshot->generation > 0) {  // nothing scanned yet is no news of unplugged devices
    const auto health = ComputeDeviceHealth(snapshot->inventory, preparer_->HeldDevices());
    observer_->OnUnhealthyClaimedDevices(static_cast<size_t>(
        std::count_if(health.begin(), health.end(), [](const DeviceHealthState& h) { return !h.healthy; })));
  }
  return refreshed;
}

absl::StatusOr<int> KubeletPlugin::RefreshPreparedClaims(const discovery::Inventory& inventory,
                                                         ScanClock::time_point scan_started) {
  UpdateInventory(inventory, scan_started);
  return RefreshPreparedClaims();
}

std::vector<nodestate::HeldDevice> KubeletPlugin::HeldDevices() const {
  absl::MutexLock lock(&mu_);
  return preparer_ ? preparer_->HeldDevices() : std::vector<nodestate::HeldDevice>{};
}

std::optional<std::set<std::string>> KubeletPlugin::PresentDevices() const {
  {
    absl::MutexLock lock(&mu_);
    if (!preparer_) return std::nullopt;
  }
  std::shared_ptr<const InventorySnapshot> snapshot = catalog_.Current();
  if (snapshot->generation == 0) return std::nullopt;
  std::set<std::string> names;
  for (const auto& device : snapshot->inventory.published) names.insert(device.name);
  // A claimed port that holds another unit does not hold the claimed device: it is not present for the claim.
  for (const auto& health : ComputeDeviceHealth(snapshot->inventory, HeldDevices())) {
    if (!health.healthy) names.erase(health.device);
  }
  return names;
}

bool KubeletPlugin::registered() const {
  absl::MutexLock lock(&mu_);
  return registration_ && registration_->registered();
}

size_t KubeletPlugin::prepared_claims() const {
  absl::MutexLock lock(&mu_);
  return preparer_ ? preparer_->PreparedCount() : 0;
}

}  // namespace liken::kubelet
