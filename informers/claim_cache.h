// The node-local ResourceClaim cache: claims named by this node's pods, fetched one by one, dropped when
// no pod on the node uses them. Costs nothing for claims of other nodes.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "apis/resource_claim.h"
#include "common/clock.h"
#include "common/workqueue.h"
#include "informers/claim_lookup.h"
#include "informers/informer.h"
#include "informers/kube_client.h"

namespace liken::informers {

// "namespace/name" of every ResourceClaim `pod` names (spec.resourceClaims[].resourceClaimName,
// status.resourceClaimStatuses[].resourceClaimName, and status.extendedResourceClaimStatus.resourceClaimName:
// the claim the scheduler made for the pod's extended resources), sorted, without duplicates. Malformed parts
// are skipped. Thread-safe.
std::vector<std::string> ClaimKeysOfPod(const nlohmann::json& pod);

// The claim cache. Watches Pods with spec.nodeName=<node>; a worker fetches each named claim. Thread-safe.
class ClaimCache final : public ClaimLookup, private EventHandler {
 public:
  // How long Get waits at most for the worker's fetch of a claim a pod on this node names before it reads the
  // claim itself: the kubelet prepares a pod's claims right after the pod event, often before the fetch.
  static constexpr absl::Duration kDefaultFetchWait = absl::Seconds(5);

  // `client`, `clock` and `observer` (may be null) must outlive the cache. `fetch_wait`: Get's bound above (zero:
  // never wait).
  ClaimCache(KubeClient* client, Clock* clock, const std::string& node_name,
             InformerObserver* observer = nullptr, absl::Duration fetch_wait = kDefaultFetchWait);
  ~ClaimCache() override;  // stops

  // Starts the pod informer and the fetch worker. Call once. Thread-safe.
  void Start();

  // Stops the informer and the worker; a Get waiting for a fetch returns Cancelled at once. A claim fetch in flight
  // is waited for: raise the client's stop first to end it at once. Idempotent. Thread-safe.
  void Stop();

  // Blocks until the first pod list arrived (its claims are then queued for fetching), or Stop; returns
  // whether it arrived. Thread-safe.
  bool WaitForSync();

  // ClaimLookup: the cached claim. When the cache lacks it but a pod on this node names it and the worker's fetch of
  // it is queued or under way (or the pod's event is still being handled: no copy at all yet and no fetch of it
  // ended), Get waits for that
  // fetch to end, at most `fetch_wait` on the clock, and returns what it brought. Otherwise, or when the fetch brought nothing
  // usable, one GET (counted by the observer's OnClaimGetFallback; cached when a pod on this node names it).
  // Cancelled when the cache stops while Get waits. InvalidArgument, without a request, for a namespace that is no DNS label or a
  // name that is no DNS subdomain. A claim from the cache has its parsed fields only (`raw` and `metadata.raw` are
  // empty; apis::ResourceClaim parses what readers need, such as pod_claim_name). Thread-safe.
  absl::StatusOr<apis::ResourceClaim> Get(const std::string& namespace_name, const std::string& name,
                                          const std::string& uid) override;
  // ClaimLookup: the cached claim, never a request; FailedPrecondition when the cache lacks it (no pod on this
  // node names it yet) or holds another UID or an unallocated copy. Thread-safe.
  absl::StatusOr<apis::ResourceClaim> GetCached(const std::string& namespace_name, const std::string& name,
                                                const std::string& uid) override;

  // ClaimLookup: replaces the cached copy with `claim` (the answer to a write of this process) when a pod on
  // this node names it and the cached copy is not newer (numeric resourceVersions compared; others replace).
  // Thread-safe.
  void Remember(const apis::ResourceClaim& claim) override;

  // Keys ("namespace/name") of the cached claims, sorted. Thread-safe.
  std::vector<std::string> CachedKeys() const;

  // Processes queued claim keys until none is ready; for tests that run without Start's worker.
  // Not thread-safe against a running worker.
  void DrainForTest();

  // The pod informer (for tests and metrics). Thread-safe.
  Informer* pod_informer() { return &pods_; }

 private:
  // EventHandler (pod events): enqueue the claims the pod names.
  void OnAdd(const ObjectPtr& pod) override;
  void OnUpdate(const ObjectPtr& old_pod, const ObjectPtr& new_pod) override;
  void OnDelete(const ObjectPtr& pod) override;

  void Enqueue(const ObjectPtr& pod);
  absl::Status SyncClaim(const std::string& key);
  bool ProcessOne(std::optional<std::string> key);
  // Waits (bounded, cancellable) for the end of a fetch of `key`; the cached claim when usable afterwards.
  absl::StatusOr<std::optional<apis::ResourceClaim>> AwaitFetch(const std::string& key, const std::string& uid);
  // The cached claim of `key` when it is allocated and has `uid` (any when empty); null otherwise.
  const apis::ResourceClaim* UsableLocked(const std::string& key, const std::string& uid) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  bool UsedByPodOnNode(const std::string& key) const;
  // Caches `claim` under `key` unless the cached copy of the same claim is newer.
  void StoreLocked(const std::string& key, apis::ResourceClaim claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  KubeClient* const client_;
  InformerObserver* const observer_;  // may be null
  Clock* const clock_;
  const absl::Duration fetch_wait_;
  Informer pods_;
  WorkQueue queue_;
  std::jthread worker_;  // stopping it shuts the queue down
  mutable absl::Mutex mu_;
  ScopedClockWaker waker_{clock_, &mu_};  // a fake clock's jumps wake AwaitFetch
  std::map<std::string, std::shared_ptr<const apis::ResourceClaim>> claims_ ABSL_GUARDED_BY(mu_);
  // Keys some Get waits on: how many wait, and how many fetches of the key ended since the entry was made.
  struct Waiting {
    int waiters = 0;
    uint64_t fetches_ended = 0;
  };
  std::map<std::string, Waiting> waiting_ ABSL_GUARDED_BY(mu_);
  // Keys a pod on this node names whose last fetch ended without a claim to cache (NotFound, malformed, a name no
  // claim can have): a Get for one reads the server at once unless a fetch of it is queued again. Bounded by the
  // pods' claims: a key leaves when it is fetched again or no pod names it.
  std::set<std::string> fetched_absent_ ABSL_GUARDED_BY(mu_);
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace liken::informers
