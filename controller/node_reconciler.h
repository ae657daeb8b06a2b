// The owner of a node pass: scan → the node's inventory → desired slices → SliceSync → the refresh of
// prepared claims → their status; and the loop that runs it (a workqueue fed by uevents, slice events and the
// periodic resync).
#pragma once

#include <functional>
#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apis/resource_slice.h"
#include "common/clock.h"
#include "common/workqueue.h"
#include "controller/claim_status_controller.h"
#include "controller/flap_damper.h"
#include "controller/metrics.h"
#include "controller/node_pass_loop.h"
#include "controller/slice_sync.h"
#include "controller/slice_write_budget.h"
#include "controller/triggers.h"
#include "controller/unplugged_devices.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"
#include "informers/informer.h"
#include "informers/kube_client.h"
#include "nodestate/node_devices.h"

namespace liken::controller {

// How the node's loop runs.
struct NodeReconcilerOptions {
  std::string node_name;                                      // required: the pool and the slices' node
  absl::Duration resync_period = absl::Minutes(10);          // a full pass at least this often
  absl::Duration uevent_quiet = absl::Milliseconds(50);       // a uevent burst ends after this much quiet...
  absl::Duration uevent_max_delay = absl::Milliseconds(250);  // ...or this long after its first event
  ClusterFeatures* features = nullptr;  // may be null; else outlives the reconciler (SliceSync::SetClusterFeatures)
  // A pod follows its device: a device a prepared claim holds that went away stays published, tainted NoExecute
  // (UnpluggedDevices), while `features` says the server keeps taints (or is null).
  bool taint_unplugged = false;
  absl::Duration unplugged_taint_limit = kDefaultUnpluggedTaintLimit;  // the longest it stays published so
  // Where the taints' times are remembered across restarts (UnpluggedDevices' memory directory: the plugin's
  // directory); empty: not remembered.
  std::string unplugged_memory_dir;
  // Flap damping (FlapDamper): a device whose presence changes too often is left out of the inventory (withheld,
  // "flapping: ...") until it is stable. Off unless enabled (cmd turns it on).
  FlapDampingOptions flap_damping = {.enabled = false};
  // The node's slice-write budget (SliceWriteBudget): a pass whose slices changed past the budget waits, and the
  // last state is written in the end. Off unless enabled (cmd turns it on).
  SliceWriteBudgetOptions slice_write_budget = {.enabled = false};
  // Told the report lines of DeviceConditions when they change, on the worker thread (cmd writes them for
  // `liken-dra report`); may be empty.
  std::function<void(const std::vector<std::string>&)> on_device_conditions;
  // The claim status writer that the pass's last step tells which devices are present (a prepared claim's device
  // gone or back); may be null (no claim status); else outlives the reconciler.
  ClaimStatusController* claim_statuses = nullptr;
};

// The informer options of this node's slices (field selector spec.nodeName=<node>,spec.driver=liken.sh).
// Thread-safe.
informers::InformerOptions NodeSliceInformerOptions(const std::string& node_name);

// One pass (RunPass), on the worker thread: scan the machine; hand the inventory to `devices` (its one
// holder); build the desired slices from it (with the claimed devices that went away, tainted, when
// `taint_unplugged` is on); write the difference (SliceSync); then have `devices` refresh the
// prepared claims against the inventory it holds, and tell the claim status writer (`claim_statuses`) which
// devices that inventory publishes (both also after a failed scan or write: the CDI specs and the claims' status
// follow the hardware even while the API server is away for slices). A pass that publishes a tainted device asks
// for another when the first taint's time limit runs out (UnpluggedDevices::NextExpiry), so the device leaves the
// slice then, not at the next resync. Passes are asked for by uevents (coalesced), by any event
// on this node's slices, by retries with backoff and by the periodic resync; the loop (NodePassLoop) calls
// RunPass and nothing else. Thread-safe.
class NodeReconciler {
 public:
  // `client`, `clock`, `scanner`, `devices` and `metrics` (may be null) must outlive the reconciler;
  // `uevents` (may be null: the periodic resync then notices hot-plug) is taken. Raising `shutdown` stops
  // the slice informer at once (even during Start) and ends the refresh of prepared claims and the claim-status
  // step: a new driver pod may own the CDI specs by then. Nothing runs before Start.
  NodeReconciler(NodeReconcilerOptions options, informers::KubeClient* client, Clock* clock,
                 discovery::Scanner* scanner, nodestate::NodeDevices* devices, std::unique_ptr<UeventSource> uevents,
                 Metrics* metrics, std::stop_token shutdown);
  ~NodeReconciler();  // Stop()
  NodeReconciler(const NodeReconciler&) = delete;
  NodeReconciler& operator=(const NodeReconciler&) = delete;

  // Starts the slice informer and the uevent triggers, waits for the informer's first list (so the first
  // pass compares against what the server has, not an empty cache), then starts the worker with a first
  // pass. Returns false, without starting the worker, once `shutdown` was raised. Call once. Thread-safe.
  bool Start();

  // Stops the uevent triggers and the slice informer (a list or watch in flight ends at once): no pass is
  // asked for any more. Idempotent. Thread-safe.
  void StopTriggers();

  // StopTriggers, then shuts the queue down and joins the worker; a pass in flight finishes first (cancel
  // the API client's requests to end its writes at once). Idempotent. Thread-safe.
  void Stop();

  // Asks for a pass as soon as possible. Thread-safe.
  void Enqueue();

  // Runs one queued pass on the caller's thread, if one is ready; false when none was. For tests without
  // Start's worker. Not thread-safe against a running worker.
  bool ProcessOneForTest();

  // One pass, top to bottom: scan → the inventory to its holder → desired slices → SliceSync → the refresh
  // of prepared claims → the devices present to the claim status writer (the last two also after a failed scan
  // or write, not once `shutdown` was raised). Returns the scan's or the sync's error, for the loop's retry. Worker thread (the loop calls it; tests through ProcessOneForTest).
  absl::Status RunPass();

  // Passes run so far (successful or not). Thread-safe.
  int passes() const { return loop_.passes(); }

  // This node's slices as the informer sees them. Thread-safe.
  const informers::Store* slices() const { return slices_.store(); }

  // The devices damped after the last pass (FlapDamper), and the claimed devices whose name holds another unit
  // now, as lines for the report ("<device>: flapping: 12 changes in the last 60 s"). Thread-safe.
  std::vector<std::string> DeviceConditions() const;

  // Passes whose slice write waited for the node's write budget. Thread-safe.
  int deferred_writes() const { return deferred_writes_.load(); }

 private:
  // The steps of RunPass, each on the worker thread.
  absl::StatusOr<discovery::Inventory> Scan();
  // Observes the scan's devices in the damper and moves the damped ones from published to withheld.
  std::vector<DampedDevice> Damp(discovery::Inventory* inventory);
  std::vector<apis::SliceDevice> UnpluggedTainted(const discovery::Inventory& inventory,
                                                  const std::vector<DampedDevice>& damped);
  // The claimed devices whose name holds another unit now (discovery::SameUnit), logged once when it starts and
  // once when it ends; as report lines.
  std::vector<std::string> OtherUnits(const discovery::Inventory& inventory);
  absl::Status PublishSlices(const std::vector<apis::ResourceSlice>& desired);
  void RefreshPreparedClaims();
  void UpdateClaimStatus();  // the devices present now: a prepared claim's device gone or back
  void LogNewlyIdleUsb(const discovery::Inventory& inventory);  // once per device, when it becomes idle

  const NodeReconcilerOptions options_;
  Clock* const clock_;
  discovery::Scanner* const scanner_;
  nodestate::NodeDevices* const devices_;
  Metrics* const metrics_;
  const std::stop_token shutdown_;
  WorkQueue queue_;
  informers::Informer slices_;  // events go to loop_ (below); stopped by Stop before it is destroyed
  SliceSync sync_;
  UnpluggedDevices unplugged_;
  std::set<std::string> idle_usb_;  // idle USB devices of the last scan (not authorized, not configured); worker only
  FlapDamper damper_;
  SliceWriteBudget budget_;
  std::optional<std::vector<apis::ResourceSlice>> last_written_;  // what the last sync that wrote was given
  std::set<std::string> other_units_;                             // as of the last pass (logged on change)
  std::atomic<int> deferred_writes_{0};
  mutable absl::Mutex conditions_mu_;
  std::vector<std::string> conditions_ ABSL_GUARDED_BY(conditions_mu_);
  NodePassLoop loop_;
  Coalescer coalescer_;
  std::unique_ptr<UeventListener> uevents_;  // null without a uevent source
  std::stop_callback<std::function<void()>> stop_slices_;  // declared last: may run in the constructor
};

}  // namespace liken::controller
