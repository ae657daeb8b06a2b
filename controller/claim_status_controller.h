// Keeps ResourceClaim status.devices current for the claims prepared on this node (sample-controller style).
// Every event that starts a status write comes in here, through a handler that only records what is wanted and
// enqueues the claim's key: a claim prepared or unprepared (SetPrepared, SetUnprepared: the kubelet plugin's
// nodestate::PreparedClaimEvents), a device gone or back (SetPresentDevices: the node pass's claim-status step,
// NodeReconciler::RunPass). One worker syncs a key by comparing with the claim cache and, when they differ, writes
// the driver's entries with a server-side apply of the status subresource; ProcessOne alone decides the retry. Prepare never waits for it, and its writes stay off the prepare
// path: the keys of prepared and unprepared claims wait until a burst of such changes settles (see kQuietWindow).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apis/device_status.h"
#include "common/clock.h"
#include "common/workqueue.h"
#include "informers/claim_lookup.h"
#include "informers/kube_client.h"
#include "nodestate/prepared_claims.h"

namespace liken::controller {

// The entries this driver wants in a claim's status.devices: one per device, `Ready` True, or False with reason
// DeviceUnplugged when `present` (null: unknown, all present) lacks the device; `data` lists the /dev nodes.
// Transition times come from `current` (the entries the claim has) when the state is unchanged, else `now`.
// Thread-safe.
std::vector<apis::AllocatedDeviceStatus> DesiredDeviceStatuses(std::string_view driver, std::string_view pool,
                                                               const nodestate::PreparedClaimDevices& claim,
                                                               const std::set<std::string>* present,
                                                               const std::vector<apis::AllocatedDeviceStatus>& current,
                                                               absl::Time now);

// Receives the outcome of each status write (for metrics): "success", "conflict" or "error". Thread-safe.
class ClaimStatusObserver {
 public:
  virtual ~ClaimStatusObserver() = default;
  virtual void OnClaimStatusWrite(std::string_view result) = 0;
};

// The controller. Keys are "namespace/name". Thread-safe.
class ClaimStatusController final : public nodestate::PreparedClaimEvents {
 public:
  // A burst of prepares and unprepares has settled when none came for this long: then each claim it changed is
  // synced once (a claim prepared and unprepared within it costs no write). The kubelet's calls for pods that
  // start together (a scale-up, a node's pods after a restart) come milliseconds apart, as its pod workers run
  // in parallel and a call takes 0.2-4 ms, so 100 ms spans the gaps of a burst with a wide margin, while a person
  // or a controller reading the claim does not notice 100 ms.
  static constexpr absl::Duration kQuietWindow = absl::Milliseconds(100);
  // A stream of calls that never pauses for kQuietWindow is still written this long after its first change:
  // every claim's status is current within about a second, at a cost of at most one write per claim per second.
  static constexpr absl::Duration kMaxSettleDelay = absl::Seconds(1);

  // `client`, `claims` (the node's claim cache), `clock` and `observer` (may be null) must outlive it.
  // `pool` is the node name: entries of this driver in another pool are never touched.
  ClaimStatusController(std::string driver, std::string pool, informers::KubeClient* client,
                        informers::ClaimLookup* claims, Clock* clock, ClaimStatusObserver* observer = nullptr);
  ~ClaimStatusController() override;  // stops

  ClaimStatusController(const ClaimStatusController&) = delete;
  ClaimStatusController& operator=(const ClaimStatusController&) = delete;

  // Handlers (nodestate::PreparedClaimEvents; quick, never block on the API): a claim is prepared here with these
  // devices (replacing what was recorded for its key), or was unprepared (its entries are to be removed). The key
  // is synced once the burst of such changes settles (kQuietWindow, kMaxSettleDelay). Thread-safe.
  void SetPrepared(nodestate::PreparedClaimDevices claim) override;
  void SetUnprepared(const std::string& namespace_name, const std::string& name, const std::string& uid) override;

  // Handler of the node pass's claim-status step: the names of the devices the node publishes now; enqueues at
  // once every prepared claim whose devices' presence changed. Thread-safe.
  void SetPresentDevices(std::set<std::string> names);

  // Starts the worker. Call once. Thread-safe.
  void Start();

  // Shuts the queue down and joins the worker (a write in flight finishes or is cancelled by the client's
  // stop). Idempotent. Thread-safe.
  void Stop();

  // Makes the claim's entries match what is wanted: reads the claim (the cache, else one GET), and applies
  // this driver's entries only when they differ. OK when nothing is left to do (also when the claim is gone
  // or was replaced by one with another UID). Thread-safe.
  absl::Status Sync(const std::string& key);

  // Processes ready keys on the calling thread until none is ready (tests without Start). Returns how
  // many claim keys were processed. Not to be mixed with a running worker.
  int DrainForTest();

  // Keys recorded as prepared, sorted. Thread-safe.
  std::vector<std::string> PreparedKeys() const;

 private:
  // Syncs one key and decides its retry: OK forgets it; a refused write (400/422, e.g. the API server's
  // per-driver authorization) is retried 5 times, then logged and dropped (the next change enqueues it
  // again); anything else is retried with backoff.
  bool ProcessOne(std::optional<std::string> key);
  // Records a prepare's or unprepare's change of `key` and arms the settle timer.
  void AddSettling(const std::string& key);
  // The settle timer fired: when the burst has settled (or waited kMaxSettleDelay), queues its keys; else arms
  // the timer for when it will have.
  void Settle();
  absl::Status Apply(const std::string& namespace_name, const std::string& name, const std::string& uid,
                     const std::vector<apis::AllocatedDeviceStatus>& entries);

  const std::string driver_;
  const std::string pool_;
  informers::KubeClient* const client_;
  informers::ClaimLookup* const claims_;
  Clock* const clock_;
  ClaimStatusObserver* const observer_;
  WorkQueue queue_;
  std::jthread worker_;  // ended by the queue's shutdown (Stop)

  mutable absl::Mutex mu_;
  std::map<std::string, nodestate::PreparedClaimDevices> prepared_ ABSL_GUARDED_BY(mu_);
  std::optional<std::set<std::string>> present_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> settling_ ABSL_GUARDED_BY(mu_);  // keys changed by the burst not yet settled
  absl::Time burst_start_ ABSL_GUARDED_BY(mu_);          // its first change
  absl::Time last_change_ ABSL_GUARDED_BY(mu_);          // its latest change
  bool started_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace liken::controller
