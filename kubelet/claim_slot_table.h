// The per-claim slots of the kubelet plugin: one mutex per claim UID that serialises the calls for that
// claim, the prepared state it guards, and the unprepare tombstones that keep a stale prepare out.
//
// Invariant (checked whole by CheckInvariant, which the preparer runs in every build after each refresh pass and,
// in debug builds or with LIKEN_ASSERT_INVARIANTS, after each prepare and unprepare call; its O(1) parts are
// checked in every build on every release, prepare end and sweep, and abort naming the breach):
//  - a slot exists only while a caller holds it, its claim is prepared, or its tombstone is newer than the
//    oldest prepare in flight (a prepare numbered below it may still reach the claim); while calls are in
//    progress, also while it is a sweep candidate (the next sweep erases it);
//  - a slot a caller holds is the table's slot for its UID: it is never erased while held, so two calls for
//    one claim always meet on the same mutex;
//  - every sweep candidate names a slot of the table.
// A slot is erased when its last holder releases it idle, or by the next sweep once it became idle.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "kubelet/prepared_claim.h"

namespace liken::kubelet {

// One claim's state. Lock `mu` to read or change it; a holder of `mu` never takes the table's lock.
struct ClaimSlot {
  absl::Mutex mu;
  std::optional<PreparedClaim> prepared ABSL_GUARDED_BY(mu);
  uint64_t unprepared_at ABSL_GUARDED_BY(mu) = 0;  // sequence number of the last unprepare; 0: none
};

// Holds the mutexes of several slots (each held from the table, none twice) until destroyed. Takes them in
// address order, one total order: two calls locking overlapping sets never wait on each other in a circle
// (a held slot is the table's slot for its UID, so both lock the same mutexes). Thread-compatible.
class ClaimSlotLocks {
 public:
  explicit ClaimSlotLocks(std::vector<ClaimSlot*> slots);
  ~ClaimSlotLocks();
  ClaimSlotLocks(const ClaimSlotLocks&) = delete;
  ClaimSlotLocks& operator=(const ClaimSlotLocks&) = delete;

 private:
  std::vector<ClaimSlot*> slots_;
};

// The table of slots and the sequence numbers of calls. Thread-safe.
class ClaimSlotTable {
 public:
  using Held = std::shared_ptr<ClaimSlot>;

  // Numbers a prepare call and records it in flight until EndPrepare. Thread-safe.
  uint64_t BeginPrepare() ABSL_LOCKS_EXCLUDED(mu_);
  // Ends the prepare numbered `seq` and sweeps. Thread-safe.
  void EndPrepare(uint64_t seq) ABSL_LOCKS_EXCLUDED(mu_);
  // Numbers an unprepare call. Thread-safe.
  uint64_t BeginUnprepare() ABSL_LOCKS_EXCLUDED(mu_);

  // The claim's slot, created empty when missing; hold it until Release. Thread-safe.
  Held Acquire(const std::string& uid) ABSL_LOCKS_EXCLUDED(mu_);
  // Gives back a slot from Acquire; erases it when no one else holds it and it is idle. Thread-safe.
  void Release(const std::string& uid, Held slot) ABSL_LOCKS_EXCLUDED(mu_);

  // Every slot with its UID, for a pass over all claims; the copies are not holds (not released). Thread-safe.
  std::vector<std::pair<std::string, Held>> Snapshot() const ABSL_LOCKS_EXCLUDED(mu_);
  // Marks slots whose claim was forgotten outside a hold (by a pass over a Snapshot), then sweeps. Thread-safe.
  void Forgotten(std::vector<std::string> uids) ABSL_LOCKS_EXCLUDED(mu_);
  // Erases the idle slots no one holds. Thread-safe.
  void Sweep() ABSL_LOCKS_EXCLUDED(mu_);

  // How many slots exist. Thread-safe.
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);
  // When CheckInvariant is called: with no claim call in progress, an idle slot no one holds is a breach; at any
  // time (calls in progress), only one that is not a sweep candidate either.
  enum class When { kQuiescent, kAnyTime };
  // Checks the invariant above over the whole table (linear): Internal names the first breach. Thread-safe.
  absl::Status CheckInvariant(When when = When::kQuiescent) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // True when `slot` holds nothing a later call needs; false when its mutex is taken (it is in use).
  bool IdleLocked(ClaimSlot& slot) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // Lock order: a slot's mu is taken while holding mu_ only with TryLock.
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Held> slots_ ABSL_GUARDED_BY(mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(mu_) = 1;
  std::multiset<uint64_t> prepares_in_flight_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> sweep_candidates_ ABSL_GUARDED_BY(mu_);
};

}  // namespace liken::kubelet
