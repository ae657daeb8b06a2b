// Publishes this node's ResourceSlices: desired slices (from discovery) against the informer's cache,
// writing only what differs. One Sync reads (cache + SliceWriteCache), plans (slice_plan.h, with
// pool_generation.h), then applies the plan here.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "apis/resource_slice.h"
#include "controller/cluster_features.h"
#include "controller/slice_plan.h"
#include "controller/slice_write_cache.h"
#include "informers/kube_client.h"
#include "informers/store.h"

namespace liken::controller {

// Receives the outcome of each slice write (for metrics). Implementations must be thread-safe.
class SliceSyncObserver {
 public:
  virtual ~SliceSyncObserver() = default;
  // `operation` is "create", "update" or "delete"; `result` is "success", "conflict" or "error".
  virtual void OnSliceWrite(std::string_view operation, std::string_view result) = 0;
  // A pool (by = "driver": its own validation, nothing of it sent) or one slice write (by = "server": a 422) was
  // refused for `rule` (SliceRuleOf).
  virtual void OnSliceRefused(std::string_view /*rule*/, std::string_view /*by*/) {}
};

// What one Sync pass wrote.
struct SliceSyncResult {
  int created = 0;
  int updated = 0;
  int deleted = 0;
};

// The API rule a refusal names: "ResourceSliceMaxDevicesWithTaintsOrConsumesCounters" (64 devices in a slice with
// a taint or counters), "ResourceSliceMaxDevices" (128), or "other"; from the driver's own validation message or
// the API server's ("must have at most 64 items"). Thread-safe (pure).
std::string_view SliceRuleOf(absl::string_view message);

// Reconciles the node's slices. One Sync at a time (the workqueue guarantees it): not thread-safe.
class SliceSync {
 public:
  // `client`, `cache` (this node's slices as the informer sees them: field selector spec.nodeName=<node>,
  // spec.driver=<driver>) and `observer` (may be null) must outlive the sync.
  SliceSync(std::string node_name, std::string driver, informers::KubeClient* client, const informers::Store* cache,
            SliceSyncObserver* observer = nullptr);

  // Publishes `desired` (the slices this node should publish now: names, pools, devices; generation and
  // owner are the sync's business): reads the current slices, plans, and creates/updates/deletes the
  // difference. A pool's generation goes up (on every slice of the pool) only when its content changes. A pool
  // that fails validation is not written at all (a PermanentError naming the rule); a write the server refuses
  // (422) is logged with the rule and returned for the loop's backoff, and the retry finishes the same generation. A
  // slice an update finds gone (deleted behind our back, perhaps with a re-created Node) makes it read the
  // Node again and plan once more in the same call. A 409 fetches the fresh object and returns the conflict
  // so the caller requeues. Not thread-safe.
  absl::StatusOr<SliceSyncResult> Sync(const std::vector<apis::ResourceSlice>& desired);

  // Makes the next Sync read the Node again (its UID owns the slices; a Node deleted and registered
  // again under the same name has a new one). Sync calls it itself when a slice it published is gone (the
  // garbage collector deletes the slices of a Node re-created under a new UID); nothing reads the Node
  // periodically. Not thread-safe: call it from the thread that calls Sync.
  void RecheckOwner();

  // Tells each write's outcome to `features` (may be null; must outlive the sync) and ignores
  // allowMultipleAllocations in the diff unless it says the server keeps it (ClusterFeatures::SharingMayBeDropped).
  // Call before the first Sync.
  void SetClusterFeatures(ClusterFeatures* features) { features_ = features; }

 private:
  absl::Status EnsureNodeUid();
  std::map<std::string, apis::ResourceSlice> CurrentSlices();
  // What Apply did with a plan.
  struct Applied {
    SliceSyncResult result;
    absl::Status first_error;       // the first write that failed (and was not a slice found gone)
    std::vector<std::string> gone;  // slices an update found deleted since the cache saw them
  };
  // One planning round: the current slices, the owner, the plan. Not thread-safe.
  absl::StatusOr<SlicePlan> Plan(const std::vector<apis::ResourceSlice>& desired,
                                 std::map<std::string, apis::ResourceSlice>* current);
  // Writes the plan as it is (no planning): each action and delete through the helper below, then what
  // went out of each pool into `published_`. Not thread-safe.
  Applied Apply(SlicePlan plan);
  // The three writes, one shape: send, report, record in `writes_`, count in `applied`. Each returns
  // true when the slice is on the server as the plan wants it.
  bool Create(const SliceAction& action, Applied* applied);
  bool Update(const SliceAction& action, Applied* applied);
  bool Delete(const apis::ResourceSlice& slice, Applied* applied);
  void Refresh(const std::string& name);
  void Report(std::string_view op, const absl::Status& status);
  // A write the server refused as invalid (422): logged with the slice, the pool's generation and the rule, and
  // told to the observer.
  void ReportRefusal(const SliceAction& action, const absl::Status& status);

  const std::string node_name_;
  const std::string driver_;
  informers::KubeClient* const client_;
  const informers::Store* const cache_;
  SliceSyncObserver* const observer_;
  ClusterFeatures* features_ = nullptr;            // may be null
  std::string node_uid_;                           // empty: read the Node on the next pass
  std::string node_uid_stale_;                     // the UID before RecheckOwner (for the log)
  SliceWriteCache writes_;                         // our recent writes; overlays a stale cache
  std::map<std::string, PublishedPool> published_;  // pool -> what went out last, under which generation
};

}  // namespace liken::controller
