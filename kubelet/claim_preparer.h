// Prepares and unprepares claims: the one implementation behind every DRA service version.
//
// Idempotency and ordering rules:
//  - Preparing a prepared claim returns the recorded answer (no API read) and rewrites its CDI spec if the
//    file vanished, unless its checkpoint record vanished too: then another driver instance sharing the
//    directories (a rolling update) unprepared it, and it is forgotten and prepared afresh. Unpreparing an unknown or unprepared claim succeeds; it removes the claim's
//    files only when the claim has a record (a crashed unprepare, an unreadable record), and nothing without one.
//    Every removal goes through directory handles opened without following a symlink, as the writes do.
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
//  - One call with N claims reads them concurrently (ClaimResolver), then records all of them
//    (ClaimCheckpoint::SaveBatch) before writing their metadata files and CDI specs. Nothing on the prepare and
//    unprepare paths is fsynced: every file is replaced atomically (temp file, rename), which a crash of the
//    process cannot tear; what fsync would add is survival of a power loss, which is a reboot, after which the
//    records are dropped (boot ID) and the kubelet prepares each claim again.
//  - Per-claim serialisation and tombstones live in ClaimSlotTable (claim_slot_table.h).
//
// Invariants the shipped (Release) binary checks, each aborting with its name when broken: the slot table's whole
// invariant once per refresh pass (linear, like the pass); on every change of a claim's prepared state (O(1) per
// device) that each device of a prepared claim is counted in the devices in use and that no more claims are
// unprepared than were prepared. The whole slot invariant after every prepare and unprepare call (linear per call)
// only in debug and sanitizer builds or with LIKEN_ASSERT_INVARIANTS.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
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
#include "kubelet/claim_files.h"
#include "kubelet/claim_ref.h"
#include "kubelet/claim_resolver.h"
#include "kubelet/claim_slot_table.h"
#include "kubelet/device_catalog.h"
#include "kubelet/device_metadata_writer.h"
#include "kubelet/prepared_claim.h"
#include "kubelet/usb_rebinder.h"
#include "nodestate/node_devices.h"
#include "nodestate/plugin_observer.h"
#include "nodestate/prepared_claims.h"

namespace liken::kubelet {

// The answer for one claim of a prepare call: its devices, or the error the kubelet sees.
struct PrepareOutcome {
  std::vector<PreparedResult> devices;
  absl::Status status;
};

// Prepares claims of this node. Calls for different claims run in parallel; calls for one claim are
// serialised. All dependencies are borrowed and must outlive the preparer. Thread-safe.
class ClaimPreparer {
 public:
  // `metadata` may be null: no device metadata files are written.
  ClaimPreparer(std::string node_name, informers::ClaimLookup* lookup, DeviceCatalog* catalog,
                const cdi::ClaimSpecStore* specs, const ClaimCheckpoint* checkpoint, UsbRebinder* rebinder,
                nodestate::PluginObserver* observer, const DeviceMetadataStore* metadata = nullptr);

  // Tells `events` (borrowed; null: none) of every change of the prepared claims, with the devices of this node's
  // pool (ClaimDevicesOf), under the claim's lock. Call before Recover. Not thread-safe.
  void SetClaimEvents(nodestate::PreparedClaimEvents* events) { events_ = events; }

  // Start-up recovery, before serving: reloads claims prepared in this boot and restores their CDI specs,
  // forgets claims of an earlier boot, and removes liken specs no record accounts for. Fails only when the
  // checkpoint or CDI directory cannot be read, or Cancelled as soon as `stop` is requested (checked before each
  // claim; what was restored stays, the rest is done by the next start). Not to be called concurrently with
  // other methods.
  absl::Status Recover(std::stop_token stop = {});

  // The most claims of one call whose slots are locked, and whose records are committed, together; a larger
  // call is prepared in batches of this size. Bounds how many mutexes one thread holds (ThreadSanitizer's
  // deadlock detector tracks at most 64).
  static constexpr size_t kMaxBatch = 32;

  // Prepares each claim (validated by ValidateClaimRefs: no UID twice), in batches of at most kMaxBatch; one
  // outcome per claim, in order. Thread-safe.
  std::vector<PrepareOutcome> Prepare(const std::vector<ClaimRef>& claims);

  // Unprepares each claim; one status per claim, in order. USB rebind failures are logged and counted,
  // never returned. Thread-safe.
  std::vector<absl::Status> Unprepare(const std::vector<ClaimRef>& claims);

  // Re-resolves every prepared claim's devices against `snapshot` and rewrites the CDI specs whose nodes
  // changed or whose file vanished (with their metadata files, generation + 1 on a change; a vanished
  // metadata file alone is rewritten without counting, found when the metadata root changed since the last pass:
  // a claim's directory removed, the root lost; a single file removed deeper down is rewritten by the claim's next
  // prepare or a restart); recreates a vanished CDI or claims directory with the
  // files of every prepared claim; returns how many specs it rewrote. A claim whose spec and record both vanished
  // was unprepared by another driver instance sharing the directories: it is forgotten, not rewritten. A device missing from the snapshot keeps
  // its recorded nodes. Fails (after doing the rest) when a write failed. Thread-safe.
  absl::StatusOr<int> Refresh(const InventorySnapshot& snapshot);

  // Names of the devices held by prepared claims, sorted. Thread-safe.
  std::vector<std::string> PreparedDeviceNames() const;

  // The devices held by prepared claims, as delivered (the latest prepare or refresh's copy), sorted by name.
  // Thread-safe.
  std::vector<nodestate::HeldDevice> HeldDevices() const;

  // How many claims are prepared. Thread-safe.
  size_t PreparedCount() const { return prepared_count_.load(); }

 private:
  // The body of Prepare: answers prepared claims from their records, reads the others concurrently, then
  // records and writes them in one batch.
  void PrepareBatch(const std::vector<ClaimRef>& claims, uint64_t seq, std::vector<PrepareOutcome>* out);
  absl::Status UnprepareOne(const ClaimRef& ref, uint64_t seq);
  // The recorded answer for the prepared claim in `slot`, restoring a vanished spec; nullopt when the claim
  // was unprepared elsewhere (forgotten here: prepare it afresh).
  std::optional<PrepareOutcome> AnswerPrepared(ClaimSlot& slot, const ClaimRef& ref)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  // For a prepared claim about to be rewritten: when its record is gone (another driver instance unprepared
  // it), forgets it here and returns true. Call with the claims directory's lock held.
  bool ForgetIfUnpreparedElsewhere(ClaimSlot& slot, const std::string& uid) ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  // Records the claims in one batch, then writes each one's metadata files and CDI spec (removing its record
  // again when either fails), holding the claims directory's lock. One status per claim.
  std::vector<absl::Status> WriteClaimFiles(const std::vector<const PreparedClaim*>& claims);
  // Makes `claim` (nullopt: none) the slot's prepared claim: counts its devices (CountDevices), then tells the
  // claim events (so an unprepared claim's devices are released before the node pass it asks for runs).
  void SetPrepared(ClaimSlot& slot, std::optional<PreparedClaim> claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu);
  // The device reference counts and the prepared-claims gauge follow the slot's change to `claim`.
  void CountDevices(ClaimSlot& slot, std::optional<PreparedClaim> claim) ABSL_EXCLUSIVE_LOCKS_REQUIRED(slot.mu)
      ABSL_LOCKS_EXCLUDED(devices_mu_);
  void Rebind(const PreparedClaim& claim);

  const std::string pool_;  // the node name: the pool whose devices the claim events carry
  const ClaimResolver resolver_;
  const cdi::ClaimSpecStore* const specs_;
  const ClaimCheckpoint* const checkpoint_;
  UsbRebinder* const rebinder_;
  nodestate::PluginObserver* const observer_;
  const DeviceMetadataStore* const metadata_;  // null: off
  nodestate::PreparedClaimEvents* events_ = nullptr;  // set before serving; then read-only
  const ClaimFiles files_;

  // Lock order: slot mutexes (several only through ClaimSlotLocks), then the claims directory's lock, then devices_mu_
  // (a leaf). The table's own lock is never taken while a slot's mutex is held.
  ClaimSlotTable slots_;

  // The metadata root as the last refresh pass that found every claim's files saw it (nullopt: check them all).
  absl::Mutex metadata_seen_mu_;
  std::optional<DeviceMetadataStore::RootState> metadata_seen_ ABSL_GUARDED_BY(metadata_seen_mu_);

  mutable absl::Mutex devices_mu_;
  // A device the prepared claims hold: how many hold it, how many of those not for admin access, and as delivered.
  struct Held {
    int refs = 0;
    int owner_refs = 0;
    DeliveredDevice device;
  };
  absl::flat_hash_map<std::string, Held> prepared_device_refs_ ABSL_GUARDED_BY(devices_mu_);
  std::atomic<size_t> prepared_count_{0};  // changed (and reported) under devices_mu_; read without it
};

}  // namespace liken::kubelet
