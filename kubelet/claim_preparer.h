// Prepares and unprepares claims: the one implementation behind every DRA service version.
//
// Idempotency and ordering rules:
//  - Preparing a prepared claim returns the recorded answer (no API read) and rewrites its CDI spec if the
//    file vanished, unless its checkpoint record vanished too: then another driver instance sharing the
//    directories (a rolling update) unprepared it, and it is forgotten and prepared afresh. Unpreparing an unknown or unprepared claim succeeds (and removes any leftover files).
//  - Every call gets a sequence number when it reaches the plugin. Unpreparing a claim leaves a tombstone
//    with the unprepare's number. A prepare numbered below the tombstone (it reached the plugin before the
//    unprepare, but got to the claim after it) is stale: it fails for that claim and writes nothing. A
//    prepare that reaches the plugin after the unprepare is a new request from the kubelet and is honored;
//    the kubelet prepares the same claim UID again when a shared claim gets a new pod on this node. A
//    tombstone is dropped once no older prepare is in flight; no request outlives a driver restart, so
//    tombstones are not persisted.
//  - Order of writes: prepare records the claim in the checkpoint, then writes its device metadata files,
//    then the CDI spec that mounts them; unprepare removes the CDI spec and the metadata files, rebinds USB
//    interfaces, then removes the record. A crash in between leaves a
//    record, so a restart restores the spec and the kubelet's retried unprepare finishes the job.
//  - Each such sequence, and each check-then-write (a vanished spec rewritten only while its record exists),
//    holds the claims directory's advisory lock (ClaimCheckpoint::LockDirectory), so two driver instances
//    sharing the directories (a rolling update) never interleave on one claim. Start-up recovery holds it
//    throughout and removes the temp files a crash left; so does the unprepare of the last prepared claim.
//  - A vanished CDI or claims directory is recreated by the next Refresh, with every prepared claim's files.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "cdi/cdi_spec.h"
#include "cdi/claim_spec_store.h"
#include "informers/claim_lookup.h"
#include "kubelet/claim_checkpoint.h"
#include "kubelet/claim_ref.h"
#include "kubelet/device_catalog.h"
#include "kubelet/device_metadata_writer.h"
#include "kubelet/plugin_observer.h"
#include "kubelet/prepared_claim.h"
#include "kubelet/prepared_claim_listener.h"
#include "kubelet/usb_rebinder.h"

namespace liken::kubelet {

// The answer for one claim of a prepare call: its devices, or the error the kubelet sees.
struct PrepareOutcome {
  std::vector<PreparedResult> devices;
  absl::Status status;
};

// The CDI spec a prepared claim delivers. Thread-safe.
cdi::Spec ClaimSpecFor(const PreparedClaim& claim);

// Prepares claims of this node. Calls for different claims run in parallel; calls for one claim are
// serialised. All dependencies are borrowed and must outlive the preparer. Thread-safe.
class ClaimPreparer {
 public:
  // `metadata` may be null: no device metadata files are written.
  ClaimPreparer(std::string node_name, informers::ClaimLookup* lookup, DeviceCatalog* catalog,
                const cdi::ClaimSpecStore* specs, const ClaimCheckpoint* checkpoint, UsbRebinder* rebinder,
                PluginObserver* observer, const DeviceMetadataStore* metadata = nullptr);

  // Tells `listener` (borrowed; null: none) of every change of the prepared claims. Call before Recover.
  // Not thread-safe.
  void SetListener(PreparedClaimListener* listener) { listener_ = listener; }

  // Start-up recovery, before serving: reloads claims prepared in this boot and restores their CDI specs,
  // forgets claims of an earlier boot, and removes liken specs no record accounts for. Fails only when the
  // checkpoint or CDI directory cannot be read. Not to be called concurrently with other methods.
  absl::Status Recover();

  // Prepares each claim (validated by ValidateClaimRefs); one outcome per claim, in order. Thread-safe.
  std::vector<PrepareOutcome> Prepare(const std::vector<ClaimRef>& claims);

  // Unprepares each claim; one status per claim, in order. USB rebind failures are logged and counted,
  // never returned. Thread-safe.
  std::vector<absl::Status> Unprepare(const std::vector<ClaimRef>& claims);

  // Re-resolves every prepared claim's devices against `snapshot` and rewrites the CDI specs whose nodes
  // changed or whose file vanished (with their metadata files, generation + 1 on a change; a vanished
  // metadata file alone is rewritten without counting); recreates a vanished CDI or claims directory with the
  // files of every prepared claim; returns how many specs it rewrote. A claim whose spec and record both vanished
  // was unprepared by another driver instance sharing the directories: it is forgotten, not rewritten. A device missing from the snapshot keeps
  // its recorded nodes. Fails (after doing the rest) when a write failed. Thread-safe.
  absl::StatusOr<int> Refresh(const InventorySnapshot& snapshot);

  // Names of the devices held by prepared claims, sorted. Thread-safe.
  std::vector<std::string> PreparedDeviceNames() const;

  // How many claims are prepared. Thread-safe.
  size_t PreparedCount() const { return prepared_count_.load(); }

 private:
  // Per-claim state; a slot exists while the claim is prepared, in use, or holds a tombstone that matters.
  struct ClaimSlot {
    absl::Mutex mu;
    std::optional<PreparedClaim> prepared ABSL_GUARDED_BY(mu);
    uint64_t unprepared_at ABSL_GUARDED_BY(mu) = 0;  // sequence number of the last unprepare; 0: none
  };

  std::shared_ptr<ClaimSlot> AcquireSlot(const std::string& uid) ABSL_LOCKS_EXCLUDED(table_mu_);
  void ReleaseSlot(const std::string& uid, std::shared_ptr<ClaimSlot> slot) ABSL_LOCKS_EXCLUDED(table_mu_);
  void SweepLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(table_mu_);
  // True when the slot holds nothing a later call needs; the caller must hold the only other reference.
  bool IdleLocked(ClaimSlot& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(table_mu_);

  PrepareOutcome PrepareOne(const ClaimRef& ref, uint64_t seq);
  absl::Status UnprepareOne(const ClaimRef& ref, uint64_t seq);
  // Reads the claim and resolves its devices (no lock held).
  absl::StatusOr<PreparedClaim> BuildPreparedClaim(const ClaimRef& ref);
  // The recorded answer for the prepared claim in `slot`, restoring a vanished spec; nullopt when the claim
  // was unprepared elsewhere (forgotten here: prepare it afresh).
  std::optional<PrepareOutcome> AnswerPrepared(ClaimSlot& slot, const ClaimRef& ref)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  // For a prepared claim about to be rewritten: when its record is gone (another driver instance unprepared
  // it), forgets it here and returns true. Call with the claims directory's lock held.
  bool ForgetIfUnpreparedElsewhere(ClaimSlot& slot, const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  // Records the claim, then writes its metadata files and CDI spec (removing the record again when either
  // fails), holding the claims directory's lock.
  absl::Status WriteClaimFiles(const PreparedClaim& claim);
  void SetPrepared(ClaimSlot& slot, std::optional<PreparedClaim> claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  void Rebind(const PreparedClaim& claim);
  // The claim's CDI spec: its devices, and the mounts of its metadata files when those are written.
  cdi::Spec SpecFor(const PreparedClaim& claim) const;
  // Writes the claim's metadata files unless they are present (`check_content`: and exact); OK when off.
  absl::Status EnsureMetadata(const PreparedClaim& claim, bool check_content) const;

  const std::string node_name_;
  informers::ClaimLookup* const lookup_;
  DeviceCatalog* const catalog_;
  const cdi::ClaimSpecStore* const specs_;
  const ClaimCheckpoint* const checkpoint_;
  UsbRebinder* const rebinder_;
  PluginObserver* const observer_;
  const DeviceMetadataStore* const metadata_;  // null: off
  PreparedClaimListener* listener_ = nullptr;  // set before serving; then read-only

  // Lock order: a slot's mu may be taken while holding table_mu_ only with TryLock; holders of a slot's mu
  // never take table_mu_. devices_mu_ is a leaf.
  mutable absl::Mutex table_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<ClaimSlot>> slots_ ABSL_GUARDED_BY(table_mu_);
  uint64_t next_seq_ ABSL_GUARDED_BY(table_mu_) = 1;
  std::multiset<uint64_t> prepares_in_flight_ ABSL_GUARDED_BY(table_mu_);
  absl::flat_hash_set<std::string> sweep_candidates_ ABSL_GUARDED_BY(table_mu_);

  mutable absl::Mutex devices_mu_;
  absl::flat_hash_map<std::string, int> prepared_device_refs_ ABSL_GUARDED_BY(devices_mu_);
  std::atomic<size_t> prepared_count_{0};  // changed (and reported) under devices_mu_; read without it
};

}  // namespace liken::kubelet
