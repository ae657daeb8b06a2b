// The kubelet plugin the node daemon owns: registration and DRA sockets, claim preparation, device health.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "cdi/claim_spec_store.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"
#include "informers/claim_lookup.h"
#include "kubelet/boot_id.h"
#include "kubelet/claim_checkpoint.h"
#include "kubelet/claim_preparer.h"
#include "kubelet/device_metadata_writer.h"
#include "kubelet/device_catalog.h"
#include "kubelet/registration_service.h"
#include "kubelet/socket_paths.h"
#include "kubelet/usb_rebinder.h"
#include "nodestate/node_devices.h"
#include "nodestate/plugin_observer.h"
#include "nodestate/prepared_claims.h"

namespace liken::kubelet {

// Where and how the plugin runs. Defaults are the real host's paths.
struct KubeletPluginOptions {
  std::string node_name;                        // required: the pool name of this node's devices
  std::string kubelet_root = "/var/lib/kubelet";
  std::string cdi_root = "/var/run/cdi";
  std::string pod_uid;                          // set during rolling updates: socket names carry it
  std::string sysfs_root = "/sys";              // for USB rebind at unprepare
  std::string boot_id_path = kDefaultBootIdPath;
  absl::Duration health_resend_interval = absl::Seconds(20);
  absl::Duration health_timeout = absl::Seconds(60);
  absl::Duration shutdown_grace = absl::Seconds(10);  // in-flight calls get this long at Stop()
  // Borrowed; told of every change of the prepared claims (the claim status writer's handlers); null: none.
  nodestate::PreparedClaimEvents* claim_events = nullptr;
  bool device_metadata = true;  // write each claim's DeviceMetadata files and mount them (device_metadata_writer.h)
  // Where those files are written; empty: <kubelet-root>/plugins/<driver>/metadata. They are rebuilt from the
  // records at start-up, so a tmpfs (the chart's /var/run/liken.sh/metadata) spares the disk 3 inodes per claim.
  std::string metadata_root;
};

// The kubelet plugin: construct, Start(), feed inventories, Stop(). The checkpoint lives in
// `<kubelet-root>/plugins/liken.sh/claims/<claimUID>.json`. Its device catalog is the one holder of the node's
// latest inventory; as nodestate::NodeDevices it takes each node pass's scan and refreshes the prepared
// claims after it. Thread-safe.
class KubeletPlugin final : public nodestate::NodeDevices {
 public:
  // `scanner` (for rescans when a claim names a device the last inventory lacks) and `lookup` are borrowed
  // and must outlive the plugin; `observer` may be null (no-op) and is
  // borrowed too. Nothing happens until Start().
  KubeletPlugin(KubeletPluginOptions options, discovery::Scanner* scanner, informers::ClaimLookup* lookup,
                nodestate::PluginObserver* observer);
  ~KubeletPlugin() override;  // calls Stop()

  KubeletPlugin(const KubeletPlugin&) = delete;
  KubeletPlugin& operator=(const KubeletPlugin&) = delete;

  // Reads the boot ID, recovers prepared claims (restoring their CDI specs), then listens on the DRA socket
  // and last on the registration socket (stale socket files are removed first). Cancelled, listening on
  // nothing, once `stop` is requested during the recovery. Call once. Thread-safe.
  absl::Status Start(std::stop_token stop = {});

  // Stops taking calls: removes the registration socket, lets in-flight calls finish (up to the shutdown
  // grace), ends health streams, removes the DRA socket. Idempotent. Thread-safe.
  void Stop();

  // Feeds the latest scan, begun at `scan_started` (take ScanClock::now() before scanning): claims resolve
  // against it and health streams report it. Ignored when the plugin already holds a scan that began later
  // (a prepare's rescan); the default stamp is right only for an inventory scanned just now. Thread-safe.
  void UpdateInventory(const discovery::Inventory& inventory,
                       ScanClock::time_point scan_started = ScanClock::now()) override;

  // nodestate::NodeDevices, after each node pass: rewrites the CDI specs of prepared claims whose device nodes
  // changed (against the freshest inventory held) or whose spec vanished; 0 before Start. Returns how many
  // specs it rewrote; fails (after doing the rest) when a write failed. Thread-safe.
  absl::StatusOr<int> RefreshPreparedClaims() override;

  // nodestate::NodeDevices: the devices the prepared claims hold; none before Start. Thread-safe.
  std::vector<nodestate::HeldDevice> HeldDevices() const override;

  // nodestate::NodeDevices: the names of the devices the catalog's inventory publishes, less those a prepared claim
  // holds whose name now holds another unit (discovery::SameUnit); nullopt before Start and while nothing was
  // scanned. Thread-safe.
  std::optional<std::set<std::string>> PresentDevices() const override;

  // UpdateInventory(inventory, scan_started), then RefreshPreparedClaims(). Thread-safe.
  absl::StatusOr<int> RefreshPreparedClaims(const discovery::Inventory& inventory,
                                            ScanClock::time_point scan_started = ScanClock::now());

  // True after the kubelet confirmed the registration. Thread-safe.
  bool registered() const;

  // How many claims are prepared. Thread-safe.
  size_t prepared_claims() const;

  // The socket paths (valid after a successful Start()). Thread-safe.
  const SocketPaths& socket_paths() const { return paths_; }

 private:
  absl::Status StartLocked(std::stop_token stop) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const KubeletPluginOptions options_;
  informers::ClaimLookup* const lookup_;
  nodestate::PluginObserver default_observer_;
  nodestate::PluginObserver* const observer_;

  DeviceCatalog catalog_;
  cdi::ClaimSpecStore specs_;
  std::unique_ptr<UsbRebinder> rebinder_;
  std::unique_ptr<ClaimCheckpoint> checkpoint_;        // set in Start()
  std::unique_ptr<DeviceMetadataStore> metadata_;      // set in Start() when device_metadata is on
  std::unique_ptr<ClaimPreparer> preparer_;            // set in Start()
  std::unique_ptr<RegistrationService> registration_;  // set in Start()
  std::vector<std::unique_ptr<grpc::Service>> dra_services_;
  SocketPaths paths_;                                  // set in Start()

  mutable absl::Mutex mu_;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<grpc::Server> dra_server_ ABSL_GUARDED_BY(mu_);
  std::unique_ptr<grpc::Server> registration_server_ ABSL_GUARDED_BY(mu_);
  ino_t dra_inode_ ABSL_GUARDED_BY(mu_) = 0;
  ino_t registration_inode_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace liken::kubelet
