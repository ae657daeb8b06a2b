#include "kubelet/claim_preparer.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cdi/claim_spec.h"
#include "common/log.h"
#include "kubelet/prepared_claim_devices.h"

namespace liken::kubelet {
namespace {

std::string ClaimName(const ClaimRef& ref) { return absl::StrCat(ref.namespace_name, "/", ref.name); }

absl::Status Annotate(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

// The slot table's invariant (claim_slot_table.h), checked over the whole table: a breach aborts, naming it. Other
// calls may be in progress, so it is checked as it holds at any time. Linear in the table, so it runs in every build
// once per refresh pass (a pass is linear in the claims anyway); after each prepare and unprepare call only where
// checking it per call is affordable: debug and sanitizer builds, and wherever LIKEN_ASSERT_INVARIANTS is defined.
enum class InvariantScope { kPerPass, kPerCall };
void AssertSlotInvariant(const ClaimSlotTable& slots, const char* after, InvariantScope scope) {
#if defined(NDEBUG) && !defined(LIKEN_ASSERT_INVARIANTS)
  if (scope == InvariantScope::kPerCall) return;
#endif
  if (absl::Status s = slots.CheckInvariant(ClaimSlotTable::When::kAnyTime); !s.ok()) {
    ABSL_RAW_LOG(FATAL, "claim slot table invariant broken after %s: %s", after, s.ToString().c_str());
  }
}

}  // namespace

ClaimPreparer::ClaimPreparer(std::string node_name, informers::ClaimLookup* lookup, DeviceCatalog* catalog,
                             const cdi::ClaimSpecStore* specs, const ClaimCheckpoint* checkpoint,
                             UsbRebinder* rebinder, nodestate::PluginObserver* observer, const DeviceMetadataStore* metadata)
    : pool_(std::move(node_name)),
      resolver_(pool_, lookup, catalog, metadata != nullptr),
      specs_(specs),
      checkpoint_(checkpoint),
      rebinder_(rebinder),
      observer_(observer),
      metadata_(metadata),
      files_(metadata) {}

void ClaimPreparer::SetPrepared(ClaimSlot& slot, std::optional<PreparedClaim> claim) {
  const bool was = slot.prepared.has_value();
  const bool is = claim.has_value();
  // Told after the devices are counted: the unprepared event asks for a node pass, which must find the claim's
  // devices released (else a device that went away stays published tainted until the next resync).
  std::optional<nodestate::PreparedClaimDevices> prepared_event;
  std::optional<ClaimRef> unprepared_event;
  if (events_ != nullptr && is) {
    prepared_event = ClaimDevicesOf(*claim, pool_);
  } else if (events_ != nullptr && was) {
    unprepared_event = slot.prepared->ref;
  }
  CountDevices(slot, std::move(claim));
  if (prepared_event) events_->SetPrepared(*std::move(prepared_event));
  if (unprepared_event) {
    events_->SetUnprepared(unprepared_event->namespace_name, unprepared_event->name, unprepared_event->uid);
  }
}

void ClaimPreparer::CountDevices(ClaimSlot& slot, std::optional<PreparedClaim> claim) {
  const bool was = slot.prepared.has_value();
  const bool is = claim.has_value();
  absl::MutexLock lock(&devices_mu_);
  if (slot.prepared) {
    for (const auto& d : slot.prepared->delivered) {
      auto it = prepared_device_refs_.find(d.name);
      // Checked in every build (O(1) per device): a device of a prepared claim is counted, else the health and
      // unplug reports would miss a device in use.
      ABSL_RAW_CHECK(it != prepared_device_refs_.end() && it->second.refs > 0, "a prepared claim's device is not counted");
      if (!d.admin_access) --it->second.owner_refs;
      if (--it->second.refs == 0) prepared_device_refs_.erase(it);
    }
  }
  if (claim) {
    for (const auto& d : claim->delivered) {
      Held& held = prepared_device_refs_[d.name];
      ++held.refs;
      if (!d.admin_access) ++held.owner_refs;
      held.device = d;
    }
  }
  slot.prepared = std::move(claim);
  if (was != is) {
    // Counted and reported under the lock, so concurrent changes reach the gauge in order.
    ABSL_RAW_CHECK(is || prepared_count_.load() > 0, "more claims unprepared than were prepared");  // O(1), always
    size_t count = is ? prepared_count_.fetch_add(1) + 1 : prepared_count_.fetch_sub(1) - 1;
    observer_->OnPreparedClaims(count);
  }
}

std::vector<std::string> ClaimPreparer::PreparedDeviceNames() const {
  absl::MutexLock lock(&devices_mu_);
  std::vector<std::string> names;
  names.reserve(prepared_device_refs_.size());
  for (const auto& [name, refs] : prepared_device_refs_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<nodestate::HeldDevice> ClaimPreparer::HeldDevices() const {
  absl::MutexLock lock(&devices_mu_);
  std::vector<nodestate::HeldDevice> out;
  out.reserve(prepared_device_refs_.size());
  for (const auto& [name, held] : prepared_device_refs_) {
    out.push_back({name, held.device.attributes, held.device.sysfs_path, held.owner_refs <= 0});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

// ---- recovery ----

absl::Status ClaimPreparer::Recover(std::stop_token stop) {
  const auto cancelled = [] { return absl::CancelledError("start-up recovery was cancelled (shutting down)"); };
  // Stopped before it began: nothing is touched, not even a crash's temp files. Past this point the stop is looked at
  // before each record (and while they are read), so a recovery stops at a record boundary: every claim has all of
  // its restored files or none, and the sweeps of files no record names run only after every record.
  if (stop.stop_requested()) return cancelled();
  // Another driver instance (a rolling update) may be preparing now: see its writes whole or not at all.
  auto dir_lock = checkpoint_->LockDirectory();
  if (!dir_lock.ok()) return Annotate(dir_lock.status(), "lock claims directory: ");
  // Leftovers of a crash: temp files of records and specs (no writer is in flight while the lock is held).
  for (auto removed : {checkpoint_->RemoveTempFiles(std::nullopt), specs_->RemoveTempFiles(std::nullopt)}) {
    if (!removed.ok()) {
      LogWarning("remove leftover temp files", {{"error", removed.status().ToString()}});
    } else if (*removed > 0) {
      LogInfo("removed temp files a crash left behind", {{"count", absl::StrCat(*removed)}});
    }
  }
  auto spec_uids = specs_->ListClaimUids();  // listed before the records: see the write order
  if (!spec_uids.ok()) return Annotate(spec_uids.status(), "list CDI specs: ");
  absl::StatusOr<std::vector<std::string>> metadata_uids = std::vector<std::string>{};
  if (metadata_ != nullptr) metadata_uids = metadata_->ListClaimUids();
  if (!metadata_uids.ok()) return Annotate(metadata_uids.status(), "list device metadata: ");
  auto contents = checkpoint_->Load(stop);
  if (absl::IsCancelled(contents.status())) return cancelled();
  if (!contents.ok()) return Annotate(contents.status(), "read checkpoint: ");

  absl::flat_hash_set<std::string> known;
  for (size_t i = 0; i < contents->unreadable_uids.size(); ++i) {
    const std::string& uid = contents->unreadable_uids[i];
    // Maybe written by a newer version (a downgrade) or damaged: the claim may well be prepared and in use,
    // so its CDI spec stays. The kubelet's unprepare removes both files.
    LogWarning("keeping unreadable claim record and its CDI spec",
               {{"dir", checkpoint_->dir()},
                {"file", absl::StrCat(uid, ".json")},
                {"error", std::string(contents->unreadable_errors[i].message())}});
    known.insert(uid);
  }
  for (const auto& uid : contents->previous_boot_uids) {
    if (stop.stop_requested()) return cancelled();
    // Its CDI spec (if any) is removed by the sweep below: nothing adds the UID to `known`.
    LogInfo("forgetting claim prepared before a reboot", {{"claim_uid", uid}});
    if (auto s = checkpoint_->Remove(uid); !s.ok()) LogWarning("remove claim record", {{"error", s.ToString()}});
  }
  for (auto& claim : contents->current_boot) {
    if (stop.stop_requested()) return cancelled();
    const std::string uid = claim.ref.uid;
    known.insert(uid);
    ClaimFiles::Files files;
    if (auto s = files_.EnsureMetadata(claim, /*check_content=*/true, &files); !s.ok()) {
      LogError("restore device metadata of prepared claim", {{"claim_uid", uid}, {"error", s.ToString()}});
    }
    cdi::Spec want = files_.SpecFor(claim, files);
    auto have = specs_->Read(uid);
    if (!have.ok() || !(*have == want)) {
      if (auto s = specs_->Write(uid, want); !s.ok()) {
        LogError("restore CDI spec of prepared claim", {{"claim_uid", uid}, {"error", s.ToString()}});
      } else {
        LogInfo("restored CDI spec of prepared claim", {{"claim_uid", uid}});
      }
    }
    auto slot = slots_.Acquire(uid);
    {
      absl::MutexLock lock(&slot->mu);
      SetPrepared(*slot, std::move(claim));
    }
    slots_.Release(uid, std::move(slot));
  }
  for (const auto& uid : *spec_uids) {
    if (stop.stop_requested()) return cancelled();
    if (known.contains(uid)) continue;
    LogInfo("removing CDI spec of a claim that is not prepared", {{"claim_uid", uid}});
    if (auto s = specs_->Remove(uid); !s.ok()) LogWarning("remove CDI spec", {{"error", s.ToString()}});
  }
  for (const auto& uid : *metadata_uids) {
    if (stop.stop_requested()) return cancelled();
    if (known.contains(uid)) continue;
    LogInfo("removing device metadata of a claim that is not prepared", {{"claim_uid", uid}});
    if (auto s = metadata_->Remove(uid); !s.ok()) LogWarning("remove device metadata", {{"error", s.ToString()}});
  }
  LogInfo("kubelet plugin recovered prepared claims", {{"prepared", absl::StrCat(PreparedCount())}});
  return absl::OkStatus();
}

// ---- prepare ----

std::vector<PrepareOutcome> ClaimPreparer::Prepare(const std::vector<ClaimRef>& claims) {
  const absl::Time start = absl::Now();
  const uint64_t seq = slots_.BeginPrepare();
  std::vector<PrepareOutcome> out;
  for (size_t begin = 0; begin < claims.size(); begin += kMaxBatch) {
    std::vector<ClaimRef> batch(claims.begin() + begin, claims.begin() + std::min(claims.size(), begin + kMaxBatch));
    std::vector<PrepareOutcome> batch_out(batch.size());
    PrepareBatch(batch, seq, &batch_out);
    std::move(batch_out.begin(), batch_out.end(), std::back_inserter(out));
  }
  slots_.EndPrepare(seq);
  AssertSlotInvariant(slots_, "prepare", InvariantScope::kPerCall);
  const absl::Duration took = absl::Now() - start;  // every claim's answer waits for the whole call
  for (size_t i = 0; i < claims.size(); ++i) {
    observer_->OnPrepare(out[i].status, took);
    if (!out[i].status.ok()) {
      LogWarning("prepare claim failed", {{"claim", ClaimName(claims[i])},
                                          {"claim_uid", claims[i].uid},
                                          {"error", std::string(out[i].status.message())}});
    }
  }
  return out;
}

bool ClaimPreparer::ForgetIfUnpreparedElsewhere(ClaimSlot& slot, const std::string& uid) {
  if (checkpoint_->Exists(uid)) return false;
  // The record is gone: another driver instance sharing the directories (a rolling update) unprepared the
  // claim. Writing the spec again would leave an orphan and resurrect a released claim.
  LogInfo("forgetting claim unprepared by another driver instance", {{"claim_uid", uid}});
  SetPrepared(slot, std::nullopt);
  return true;
}

std::optional<PrepareOutcome> ClaimPreparer::AnswerPrepared(ClaimSlot& slot, const ClaimRef& ref) {
  const PreparedClaim& prepared = *slot.prepared;
  if (prepared.ref.namespace_name != ref.namespace_name || prepared.ref.name != ref.name) {
    return PrepareOutcome{{}, absl::FailedPreconditionError(absl::StrCat("claim UID ", ref.uid, " is prepared as ",
                                                                         ClaimName(prepared.ref), ", not ",
                                                                         ClaimName(ref)))};
  }
  if (!specs_->Exists(ref.uid)) {
    const bool records_lost = !checkpoint_->DirectoryExists();
    auto dir_lock = checkpoint_->LockDirectory();
    if (!dir_lock.ok()) return PrepareOutcome{{}, Annotate(dir_lock.status(), "lock claims directory: ")};
    if (specs_->Exists(ref.uid)) return PrepareOutcome{prepared.results, absl::OkStatus()};
    if (!records_lost && ForgetIfUnpreparedElsewhere(slot, ref.uid)) return std::nullopt;
    if (records_lost) {
      if (auto s = checkpoint_->Save(prepared); !s.ok()) {
        return PrepareOutcome{{}, Annotate(s, "record prepared claim again: ")};
      }
    }
    ClaimFiles::Files files;
    if (auto s = files_.EnsureMetadata(prepared, /*check_content=*/false, &files); !s.ok()) {
      return PrepareOutcome{{}, Annotate(s, "rewrite device metadata: ")};
    }
    if (auto s = specs_->Write(ref.uid, files_.SpecFor(prepared, files)); !s.ok()) {
      return PrepareOutcome{{}, Annotate(s, "rewrite vanished CDI spec: ")};
    }
    LogInfo("rewrote vanished CDI spec", {{"claim_uid", ref.uid}});
  } else if (auto s = files_.EnsureMetadata(prepared, /*check_content=*/false); !s.ok()) {
    return PrepareOutcome{{}, Annotate(s, "rewrite device metadata: ")};
  }
  return PrepareOutcome{prepared.results, absl::OkStatus()};
}

void ClaimPreparer::PrepareBatch(const std::vector<ClaimRef>& claims, uint64_t seq, std::vector<PrepareOutcome>* out) {
  struct Pending {
    size_t index;
    ClaimSlotTable::Held slot;
  };
  std::vector<Pending> pending;
  std::vector<const ClaimRef*> to_read;
  for (size_t i = 0; i < claims.size(); ++i) {  // the prepared ones answer from their record, no read
    const ClaimRef& ref = claims[i];
    auto slot = slots_.Acquire(ref.uid);
    std::optional<PrepareOutcome> answer;
    {
      absl::MutexLock lock(&slot->mu);
      if (slot->prepared) answer = AnswerPrepared(*slot, ref);
    }
    if (answer) {
      (*out)[i] = *std::move(answer);
      slots_.Release(ref.uid, std::move(slot));
      continue;
    }
    pending.push_back({i, std::move(slot)});
    to_read.push_back(&ref);
  }
  std::vector<absl::StatusOr<PreparedClaim>> built = resolver_.ResolveAll(to_read);  // no slot locked
  std::vector<ClaimSlot*> slots;
  for (const auto& p : pending) slots.push_back(p.slot.get());
  {
    ClaimSlotLocks locks(std::move(slots));
    std::vector<const PreparedClaim*> batch;
    std::vector<size_t> batch_at;  // index into pending
    for (size_t k = 0; k < pending.size(); ++k) {
      ClaimSlot& slot = *pending[k].slot;
      slot.mu.AssertHeld();
      PrepareOutcome& o = (*out)[pending[k].index];
      const ClaimRef& ref = claims[pending[k].index];
      std::optional<PrepareOutcome> answer;
      if (slot.unprepared_at > seq) {
        o.status = absl::AbortedError(absl::StrCat(
            "claim ", ref.uid, " was unprepared after this prepare request arrived; not preparing it again"));
      } else if (slot.prepared && (answer = AnswerPrepared(slot, ref))) {  // a concurrent call prepared it
        o = *std::move(answer);
      } else if (!built[k].ok()) {
        o.status = built[k].status();
      } else {
        batch.push_back(&*built[k]);
        batch_at.push_back(k);
      }
    }
    std::vector<absl::Status> written = WriteClaimFiles(batch);
    for (size_t j = 0; j < batch_at.size(); ++j) {
      const size_t k = batch_at[j];
      ClaimSlot& slot = *pending[k].slot;
      slot.mu.AssertHeld();
      PrepareOutcome& o = (*out)[pending[k].index];
      o.status = written[j];
      if (!o.status.ok()) continue;
      o.devices = built[k]->results;
      SetPrepared(slot, *std::move(built[k]));
    }
  }
  for (auto& p : pending) slots_.Release(claims[p.index].uid, std::move(p.slot));
}

std::vector<absl::Status> ClaimPreparer::WriteClaimFiles(const std::vector<const PreparedClaim*>& claims) {
  if (claims.empty()) return {};
  auto dir_lock = checkpoint_->LockDirectory();
  if (!dir_lock.ok()) {
    return std::vector<absl::Status>(claims.size(), Annotate(dir_lock.status(), "lock claims directory: "));
  }
  std::vector<absl::Status> out = checkpoint_->SaveBatch(claims);
  for (size_t i = 0; i < claims.size(); ++i) {
    const PreparedClaim& claim = *claims[i];
    if (!out[i].ok()) {
      out[i] = Annotate(out[i], "record prepared claim: ");
      continue;
    }
    ClaimFiles::Files files;
    if (auto m = files_.EnsureMetadata(claim, /*check_content=*/true, &files); !m.ok()) {
      out[i] = Annotate(m, "write device metadata: ");
    } else if (auto w = specs_->Write(claim.ref.uid, files_.SpecFor(claim, files)); !w.ok()) {
      if (metadata_ != nullptr) (void)metadata_->Remove(claim.ref.uid);
      out[i] = Annotate(w, "write CDI spec: ");
    }
    if (out[i].ok()) continue;
    if (auto r = checkpoint_->Remove(claim.ref.uid); !r.ok()) {
      LogError("remove claim record after a failed write", {{"claim_uid", claim.ref.uid}, {"error", r.ToString()}});
    }
  }
  return out;
}

// ---- unprepare ----

std::vector<absl::Status> ClaimPreparer::Unprepare(const std::vector<ClaimRef>& claims) {
  const uint64_t seq = slots_.BeginUnprepare();
  std::vector<absl::Status> out;
  out.reserve(claims.size());
  const absl::Time start = absl::Now();
  for (const auto& ref : claims) out.push_back(UnprepareOne(ref, seq));
  const absl::Duration each = (absl::Now() - start) / static_cast<int64_t>(std::max<size_t>(claims.size(), 1));
  for (size_t i = 0; i < claims.size(); ++i) {
    observer_->OnUnprepare(out[i], each);
    if (!out[i].ok()) {
      LogWarning("unprepare claim failed",
                 {{"claim_uid", claims[i].uid}, {"error", std::string(out[i].message())}});
    }
  }
  slots_.Sweep();
  AssertSlotInvariant(slots_, "unprepare", InvariantScope::kPerCall);
  return out;
}

void ClaimPreparer::Rebind(const PreparedClaim& claim) {
  for (const auto& d : claim.delivered) {
    if (d.admin_access) continue;  // the device's owner claim decides its binding
    for (const auto& iface : d.usb_interfaces) {
      if (auto s = rebinder_->RebindIfUnbound(iface); !s.ok()) {
        LogWarning("rebinding a USB interface to its driver failed",
                   {{"claim_uid", claim.ref.uid}, {"interface", iface}, {"error", std::string(s.message())}});
        observer_->OnRebindFailure(iface);
      }
    }
  }
}

absl::Status ClaimPreparer::UnprepareOne(const ClaimRef& ref, uint64_t seq) {
  auto slot = slots_.Acquire(ref.uid);
  absl::Status status;
  {
    absl::MutexLock lock(&slot->mu);
    slot->unprepared_at = std::max(slot->unprepared_at, seq);
    // Held from the spec's removal to the record's, so another driver instance never sees the record without
    // the spec and restores it.
    auto dir_lock = checkpoint_->LockDirectory();
    if (!dir_lock.ok()) {
      status = Annotate(dir_lock.status(), "lock claims directory: ");
    } else if (!slot->prepared) {
      // Not prepared here. A record means a driver prepared it (a crashed unprepare, an unreadable record kept at
      // start-up, the other instance of a rolling update): remove its files. Without one this driver never
      // prepared it, and a file named like its spec is not ours: nothing is removed.
      if (checkpoint_->Exists(ref.uid)) {
        status = specs_->Remove(ref.uid);
        if (status.ok() && metadata_ != nullptr) status = metadata_->Remove(ref.uid);
        if (status.ok()) status = checkpoint_->Remove(ref.uid);
      }
    } else if (auto s = specs_->Remove(ref.uid); !s.ok()) {
      status = Annotate(s, "remove CDI spec: ");
    } else if (auto m = metadata_ != nullptr ? metadata_->Remove(ref.uid) : absl::OkStatus(); !m.ok()) {
      status = Annotate(m, "remove device metadata: ");
    } else {
      Rebind(*slot->prepared);
      if (auto r = checkpoint_->Remove(ref.uid); !r.ok()) {
        status = Annotate(r, "remove claim record: ");
      } else {
        SetPrepared(*slot, std::nullopt);
      }
    }
    if (status.ok() && PreparedCount() == 0) {
      // The last claim is gone: so go a crash's leftovers (listing the directories once here, not on every
      // unprepare; no writer is in flight while the lock is held).
      for (auto removed : {checkpoint_->RemoveTempFiles(std::nullopt), specs_->RemoveTempFiles(std::nullopt)}) {
        if (!removed.ok()) LogWarning("remove leftover temp files", {{"error", removed.status().ToString()}});
      }
    }
  }
  slots_.Release(ref.uid, std::move(slot));
  return status;
}

// ---- refresh ----

absl::StatusOr<int> ClaimPreparer::Refresh(const InventorySnapshot& snapshot) {
  auto slots = slots_.Snapshot();
  int rewritten = 0;
  absl::Status first_error;
  std::vector<std::string> forgotten;
  // A vanished directory (a lost tmpfs, an operator's rm -r) is recreated with the files of every prepared
  // claim; records missing from a directory that is still there were removed by another driver instance.
  const bool records_lost = !checkpoint_->DirectoryExists();
  if (records_lost) {
    LogWarning("claims directory vanished; recreating it with the records of prepared claims",
               {{"dir", checkpoint_->dir()}});
    if (auto s = checkpoint_->EnsureDirectory(); !s.ok()) first_error = Annotate(s, "recreate claims directory: ");
  }
  if (!specs_->DirectoryExists()) {
    LogWarning("CDI directory vanished; recreating it with the specs of prepared claims", {});
    if (auto s = specs_->EnsureDirectory(); !s.ok() && first_error.ok()) {
      first_error = Annotate(s, "recreate CDI directory: ");
    }
  }
  // The metadata root is looked at once per pass, as the two directories above; each claim's files only when it
  // changed since the last pass that found every file (a claim's directory removed, the root lost or recreated,
  // or claims prepared or unprepared meanwhile). A no-change pass touches no metadata file.
  DeviceMetadataStore::RootState metadata_root;
  bool check_metadata = false;
  if (metadata_ != nullptr) {
    metadata_root = metadata_->RootStateNow();
    absl::MutexLock lock(&metadata_seen_mu_);
    check_metadata = !metadata_root.directory || !metadata_seen_ || !(*metadata_seen_ == metadata_root);
  }
  for (auto& [uid, slot] : slots) {
    absl::MutexLock lock(&slot->mu);
    if (!slot->prepared) continue;
    const PreparedClaim& current = *slot->prepared;
    std::optional<PreparedClaim> updated = files_.Rebased(current, snapshot);  // the common pass: nullopt
    const bool changed = updated.has_value();
    ClaimFiles::Files files;  // computed at most once per claim, for its metadata files and its spec
    const auto ensure_metadata = [&, &claim_uid = uid](const PreparedClaim& claim, bool check_content) {
      if (auto m = files_.EnsureMetadata(claim, check_content, &files); !m.ok()) {
        if (first_error.ok()) {
          first_error = Annotate(m, absl::StrCat("write device metadata of claim ", claim_uid, ": "));
        }
        return false;
      }
      return true;
    };
    // The common case takes no lock: nothing changed and the claim's files are there (its metadata files looked at
    // only when the root changed). A missing metadata file is written below under the claims directory's lock,
    // like every other write of a claim's files, so it never races another instance's unprepare of the claim.
    if (!changed && !records_lost && specs_->Exists(uid) && (!check_metadata || files_.MetadataPresent(current))) {
      continue;
    }
    auto dir_lock = checkpoint_->LockDirectory();
    if (!dir_lock.ok()) {
      if (first_error.ok()) first_error = Annotate(dir_lock.status(), "lock claims directory: ");
      continue;
    }
    const bool spec_present = specs_->Exists(uid);  // again, under the lock
    if (!changed && !records_lost && spec_present) {
      ensure_metadata(current, /*check_content=*/false);
      continue;
    }
    // Record gone from a directory still there: the other instance unprepared the claim (it removes spec and
    // record under this lock, so both are gone): forget it, also when its nodes changed.
    if (!records_lost && ForgetIfUnpreparedElsewhere(*slot, uid)) {
      forgotten.push_back(uid);
      continue;
    }
    if (changed || records_lost) {
      if (auto s = checkpoint_->Save(changed ? *updated : current); !s.ok()) {
        if (first_error.ok()) first_error = Annotate(s, absl::StrCat("record claim ", uid, ": "));
        continue;
      }
    }
    if (!ensure_metadata(changed ? *updated : current, /*check_content=*/changed)) continue;
    if (changed || !spec_present) {
      if (auto s = specs_->Write(uid, files_.SpecFor(changed ? *updated : current, files)); !s.ok()) {
        if (first_error.ok()) first_error = Annotate(s, absl::StrCat("write CDI spec of claim ", uid, ": "));
        continue;
      }
      LogInfo(changed ? "updated CDI spec with current device nodes" : "rewrote vanished CDI spec",
              {{"claim_uid", uid}});
      ++rewritten;
    }
    if (changed) SetPrepared(*slot, std::move(updated));
  }
  if (metadata_ != nullptr) {
    // Remembered only after a pass that found (or rewrote) every file: after a failure the next pass looks again.
    absl::MutexLock lock(&metadata_seen_mu_);
    if (first_error.ok()) {
      metadata_seen_ = metadata_root;
    } else {
      metadata_seen_.reset();
    }
  }
  // Marked as sweep candidates while this pass still holds them (so no idle slot is ever unheld and unmarked),
  // then swept once the pass let go.
  slots_.Forgotten(std::move(forgotten));
  slots.clear();
  slots_.Sweep();
  AssertSlotInvariant(slots_, "refresh", InvariantScope::kPerPass);
  if (rewritten > 0) observer_->OnSpecsRefreshed(rewritten);
  if (!first_error.ok()) return first_error;
  return rewritten;
}

}  // namespace liken::kubelet
