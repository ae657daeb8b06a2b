#include "kubelet/claim_preparer.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "cdi/claim_spec.h"
#include "common/log.h"

namespace liken::kubelet {
namespace {

std::string ClaimName(const ClaimRef& ref) { return absl::StrCat(ref.namespace_name, "/", ref.name); }

absl::Status Annotate(const absl::Status& s, absl::string_view prefix) {
  return absl::Status(s.code(), absl::StrCat(prefix, s.message()));
}

}  // namespace

cdi::Spec ClaimSpecFor(const PreparedClaim& claim) {
  std::vector<cdi::ClaimDevice> devices;
  devices.reserve(claim.delivered.size());
  for (const auto& d : claim.delivered) {
    cdi::ClaimDevice cd{d.name, {}};
    for (const auto& n : d.nodes) cd.nodes.push_back({n.path, std::string(1, n.type), n.major, n.minor});
    devices.push_back(std::move(cd));
  }
  return cdi::MakeClaimSpec(claim.ref.uid, devices);
}

ClaimPreparer::ClaimPreparer(std::string node_name, informers::ClaimLookup* lookup, DeviceCatalog* catalog,
                             const cdi::ClaimSpecStore* specs, const ClaimCheckpoint* checkpoint,
                             UsbRebinder* rebinder, PluginObserver* observer, const DeviceMetadataStore* metadata)
    : node_name_(std::move(node_name)),
      lookup_(lookup),
      catalog_(catalog),
      specs_(specs),
      checkpoint_(checkpoint),
      rebinder_(rebinder),
      observer_(observer),
      metadata_(metadata) {}

cdi::Spec ClaimPreparer::SpecFor(const PreparedClaim& claim) const {
  cdi::Spec spec = ClaimSpecFor(claim);
  if (metadata_ == nullptr) return spec;
  auto files = MetadataFilesFor(claim);
  if (files.ok()) AddMetadataMounts(claim, *files, *metadata_, &spec);  // a bad name failed the prepare
  return spec;
}

absl::Status ClaimPreparer::EnsureMetadata(const PreparedClaim& claim, bool check_content) const {
  if (metadata_ == nullptr) return absl::OkStatus();
  if (!check_content) {  // the cheap check of every refresh pass: one lstat per request, nothing encoded
    std::vector<std::string> requests;
    for (const auto& r : claim.results) {
      if (r.request_names.empty()) continue;
      std::string base = cdi::BaseRequestName(r.request_names.front());
      if (std::find(requests.begin(), requests.end(), base) == requests.end()) requests.push_back(std::move(base));
    }
    if (metadata_->Present(claim.ref.uid, requests)) return absl::OkStatus();
  }
  auto files = MetadataFilesFor(claim);
  if (!files.ok()) return files.status();
  if (check_content && metadata_->Matches(claim.ref.uid, *files)) return absl::OkStatus();
  return metadata_->Write(claim.ref.uid, *files);
}

// ---- slots ----

std::shared_ptr<ClaimPreparer::ClaimSlot> ClaimPreparer::AcquireSlot(const std::string& uid) {
  absl::MutexLock lock(&table_mu_);
  auto& slot = slots_[uid];
  if (!slot) slot = std::make_shared<ClaimSlot>();
  return slot;
}

bool ClaimPreparer::IdleLocked(ClaimSlot& slot) {
  if (!slot.mu.TryLock()) return false;
  bool prepared = slot.prepared.has_value();
  uint64_t tombstone = slot.unprepared_at;
  slot.mu.Unlock();
  if (prepared) return false;
  if (tombstone == 0) return true;
  // The tombstone matters while a prepare that arrived before the unprepare is still running.
  return prepares_in_flight_.empty() || *prepares_in_flight_.begin() > tombstone;
}

void ClaimPreparer::ReleaseSlot(const std::string& uid, std::shared_ptr<ClaimSlot> slot) {
  absl::MutexLock lock(&table_mu_);
  // Only this caller and the table hold it: nobody can acquire it concurrently (that needs table_mu_).
  if (slot.use_count() == 2 && IdleLocked(*slot)) {
    slots_.erase(uid);
    sweep_candidates_.erase(uid);
    return;
  }
  sweep_candidates_.insert(uid);
}

void ClaimPreparer::SweepLocked() {
  for (auto it = sweep_candidates_.begin(); it != sweep_candidates_.end();) {
    auto slot_it = slots_.find(*it);
    if (slot_it == slots_.end()) {
      sweep_candidates_.erase(it++);
      continue;
    }
    if (slot_it->second.use_count() == 1) {
      ClaimSlot& slot = *slot_it->second;
      if (IdleLocked(slot)) {
        slots_.erase(slot_it);
        sweep_candidates_.erase(it++);
        continue;
      }
      bool prepared = false;
      if (slot.mu.TryLock()) {
        prepared = slot.prepared.has_value();
        slot.mu.Unlock();
      }
      if (prepared) {  // a prepared slot is not a candidate until it is unprepared
        sweep_candidates_.erase(it++);
        continue;
      }
    }
    ++it;
  }
}

void ClaimPreparer::SetPrepared(ClaimSlot& slot, std::optional<PreparedClaim> claim) {
  const bool was = slot.prepared.has_value();
  const bool is = claim.has_value();
  if (listener_ != nullptr && (was || is)) {
    listener_->OnPreparedClaimChanged(is ? claim->ref : slot.prepared->ref, is ? &*claim : nullptr);
  }
  absl::MutexLock lock(&devices_mu_);
  if (slot.prepared) {
    for (const auto& d : slot.prepared->delivered) {
      if (--prepared_device_refs_[d.name] <= 0) prepared_device_refs_.erase(d.name);
    }
  }
  if (claim) {
    for (const auto& d : claim->delivered) ++prepared_device_refs_[d.name];
  }
  slot.prepared = std::move(claim);
  if (was != is) {
    // Counted and reported under the lock, so concurrent changes reach the gauge in order.
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

// ---- recovery ----

absl::Status ClaimPreparer::Recover() {
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
  auto contents = checkpoint_->Load();
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
    // Its CDI spec (if any) is removed by the sweep below: nothing adds the UID to `known`.
    LogInfo("forgetting claim prepared before a reboot", {{"claim_uid", uid}});
    if (auto s = checkpoint_->Remove(uid); !s.ok()) LogWarning("remove claim record", {{"error", s.ToString()}});
  }
  for (auto& claim : contents->current_boot) {
    const std::string uid = claim.ref.uid;
    known.insert(uid);
    if (auto s = EnsureMetadata(claim, /*check_content=*/true); !s.ok()) {
      LogError("restore device metadata of prepared claim", {{"claim_uid", uid}, {"error", s.ToString()}});
    }
    cdi::Spec want = SpecFor(claim);
    auto have = specs_->Read(uid);
    if (!have.ok() || !(*have == want)) {
      if (auto s = specs_->Write(uid, want); !s.ok()) {
        LogError("restore CDI spec of prepared claim", {{"claim_uid", uid}, {"error", s.ToString()}});
      } else {
        LogInfo("restored CDI spec of prepared claim", {{"claim_uid", uid}});
      }
    }
    auto slot = AcquireSlot(uid);
    absl::MutexLock lock(&slot->mu);
    SetPrepared(*slot, std::move(claim));
  }
  for (const auto& uid : *spec_uids) {
    if (known.contains(uid)) continue;
    LogInfo("removing CDI spec of a claim that is not prepared", {{"claim_uid", uid}});
    if (auto s = specs_->Remove(uid); !s.ok()) LogWarning("remove CDI spec", {{"error", s.ToString()}});
  }
  for (const auto& uid : *metadata_uids) {
    if (known.contains(uid)) continue;
    LogInfo("removing device metadata of a claim that is not prepared", {{"claim_uid", uid}});
    if (auto s = metadata_->Remove(uid); !s.ok()) LogWarning("remove device metadata", {{"error", s.ToString()}});
  }
  LogInfo("kubelet plugin recovered prepared claims", {{"prepared", absl::StrCat(PreparedCount())}});
  return absl::OkStatus();
}

// ---- prepare ----

std::vector<PrepareOutcome> ClaimPreparer::Prepare(const std::vector<ClaimRef>& claims) {
  uint64_t seq;
  {
    absl::MutexLock lock(&table_mu_);
    seq = next_seq_++;
    prepares_in_flight_.insert(seq);
  }
  std::vector<PrepareOutcome> out;
  out.reserve(claims.size());
  for (const auto& ref : claims) {
    absl::Time start = absl::Now();
    out.push_back(PrepareOne(ref, seq));
    observer_->OnPrepare(out.back().status, absl::Now() - start);
    if (!out.back().status.ok()) {
      LogWarning("prepare claim failed", {{"claim", ClaimName(ref)},
                                          {"claim_uid", ref.uid},
                                          {"error", std::string(out.back().status.message())}});
    }
  }
  absl::MutexLock lock(&table_mu_);
  prepares_in_flight_.erase(prepares_in_flight_.find(seq));
  SweepLocked();
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
    if (auto s = EnsureMetadata(prepared, /*check_content=*/false); !s.ok()) {
      return PrepareOutcome{{}, Annotate(s, "rewrite device metadata: ")};
    }
    if (auto s = specs_->Write(ref.uid, SpecFor(prepared)); !s.ok()) {
      return PrepareOutcome{{}, Annotate(s, "rewrite vanished CDI spec: ")};
    }
    LogInfo("rewrote vanished CDI spec", {{"claim_uid", ref.uid}});
  } else if (auto s = EnsureMetadata(prepared, /*check_content=*/false); !s.ok()) {
    return PrepareOutcome{{}, Annotate(s, "rewrite device metadata: ")};
  }
  return PrepareOutcome{prepared.results, absl::OkStatus()};
}

absl::StatusOr<PreparedClaim> ClaimPreparer::BuildPreparedClaim(const ClaimRef& ref) {
  const std::string what = absl::StrCat("ResourceClaim ", ClaimName(ref));
  auto claim = lookup_->Get(ref.namespace_name, ref.name, ref.uid);
  if (!claim.ok()) {
    if (absl::IsNotFound(claim.status())) return absl::NotFoundError(absl::StrCat(what, " not found"));
    return absl::UnavailableError(absl::StrCat("read ", what, ": ", claim.status().message()));
  }
  if (claim->metadata.uid != ref.uid) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, " has UID ", claim->metadata.uid, ", not the requested ", ref.uid,
                     ": the claim was deleted and created again"));
  }
  if (!claim->allocated) return absl::FailedPreconditionError(absl::StrCat(what, " is not allocated"));
  auto results = claim->ResultsFor(discovery::kDriverName, node_name_);
  if (results.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(what, " has no device of driver ", discovery::kDriverName,
                                                      " allocated in pool ", node_name_));
  }
  PreparedClaim prepared;
  prepared.ref = ref;
  if (auto a = claim->metadata.raw.find("annotations"); a != claim->metadata.raw.end() && a->is_object()) {
    if (auto p = a->find(cdi::kPodClaimNameAnnotation); p != a->end() && p->is_string()) {
      prepared.pod_claim_name = p->get<std::string>();
    }
  }
  std::vector<std::string> names;
  for (const auto& r : results) {
    if (!cdi::IsValidDeviceName(cdi::ClaimDeviceName(ref.uid, r.device))) {
      return absl::FailedPreconditionError(absl::StrCat(what, " allocates device '", r.device,
                                                        "', which is not a valid device name"));
    }
    if (std::find(names.begin(), names.end(), r.device) == names.end()) names.push_back(r.device);
    PreparedResult pr;
    pr.request_names = {r.request};
    pr.pool = r.pool;
    pr.device = r.device;
    pr.cdi_device_ids = {cdi::ClaimDeviceId(ref.uid, r.device)};
    pr.share_id = r.share_id;
    prepared.results.push_back(std::move(pr));
  }
  auto devices = catalog_->Resolve(names);
  if (!devices.ok()) return Annotate(devices.status(), absl::StrCat(what, ": "));
  for (auto& d : *devices) {
    prepared.delivered.push_back(
        {d.name, std::move(d.nodes), std::move(d.usb_interfaces), std::move(d.sysfs_path), std::move(d.attributes)});
  }
  if (metadata_ != nullptr) {
    auto files = MetadataFilesFor(prepared);
    if (!files.ok()) return Annotate(files.status(), absl::StrCat(what, ": device metadata: "));
    AddMetadataCdiIds(*files, &prepared);
  }
  return prepared;
}

PrepareOutcome ClaimPreparer::PrepareOne(const ClaimRef& ref, uint64_t seq) {
  auto slot = AcquireSlot(ref.uid);
  PrepareOutcome outcome;
  bool done = false;
  {
    absl::MutexLock lock(&slot->mu);
    if (slot->prepared) {
      if (auto answer = AnswerPrepared(*slot, ref)) {
        outcome = *std::move(answer);
        done = true;
      }
    }
  }
  if (!done) {
    auto built = BuildPreparedClaim(ref);
    absl::MutexLock lock(&slot->mu);
    std::optional<PrepareOutcome> answer;
    if (slot->unprepared_at > seq) {
      outcome.status = absl::AbortedError(absl::StrCat(
          "claim ", ref.uid, " was unprepared after this prepare request arrived; not preparing it again"));
    } else if (slot->prepared && (answer = AnswerPrepared(*slot, ref))) {
      outcome = *std::move(answer);
    } else if (!built.ok()) {
      outcome.status = built.status();
    } else {
      outcome.status = WriteClaimFiles(*built);
      if (outcome.status.ok()) {
        outcome.devices = built->results;
        SetPrepared(*slot, std::move(*built));
      }
    }
  }
  ReleaseSlot(ref.uid, std::move(slot));
  return outcome;
}

absl::Status ClaimPreparer::WriteClaimFiles(const PreparedClaim& claim) {
  auto dir_lock = checkpoint_->LockDirectory();
  if (!dir_lock.ok()) return Annotate(dir_lock.status(), "lock claims directory: ");
  if (auto s = checkpoint_->Save(claim); !s.ok()) return Annotate(s, "record prepared claim: ");
  if (auto m = EnsureMetadata(claim, /*check_content=*/true); !m.ok()) {
    if (auto r = checkpoint_->Remove(claim.ref.uid); !r.ok()) {
      LogError("remove claim record after a failed metadata write", {{"claim_uid", claim.ref.uid}, {"error", r.ToString()}});
    }
    return Annotate(m, "write device metadata: ");
  }
  if (auto w = specs_->Write(claim.ref.uid, SpecFor(claim)); !w.ok()) {
    if (metadata_ != nullptr) (void)metadata_->Remove(claim.ref.uid);
    if (auto r = checkpoint_->Remove(claim.ref.uid); !r.ok()) {
      LogError("remove claim record after a failed CDI write", {{"claim_uid", claim.ref.uid}, {"error", r.ToString()}});
    }
    return Annotate(w, "write CDI spec: ");
  }
  return absl::OkStatus();
}

// ---- unprepare ----

std::vector<absl::Status> ClaimPreparer::Unprepare(const std::vector<ClaimRef>& claims) {
  uint64_t seq;
  {
    absl::MutexLock lock(&table_mu_);
    seq = next_seq_++;
  }
  std::vector<absl::Status> out;
  out.reserve(claims.size());
  for (const auto& ref : claims) {
    absl::Time start = absl::Now();
    out.push_back(UnprepareOne(ref, seq));
    observer_->OnUnprepare(out.back(), absl::Now() - start);
    if (!out.back().ok()) {
      LogWarning("unprepare claim failed", {{"claim_uid", ref.uid}, {"error", std::string(out.back().message())}});
    }
  }
  absl::MutexLock lock(&table_mu_);
  SweepLocked();
  return out;
}

void ClaimPreparer::Rebind(const PreparedClaim& claim) {
  for (const auto& d : claim.delivered) {
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
  auto slot = AcquireSlot(ref.uid);
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
      // Unknown here; remove leftovers (e.g. of a crashed unprepare or another driver instance).
      status = specs_->Remove(ref.uid);
      if (status.ok() && metadata_ != nullptr) status = metadata_->Remove(ref.uid);
      if (status.ok()) status = checkpoint_->Remove(ref.uid);
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
  ReleaseSlot(ref.uid, std::move(slot));
  return status;
}

// ---- refresh ----

absl::StatusOr<int> ClaimPreparer::Refresh(const InventorySnapshot& snapshot) {
  std::vector<std::pair<std::string, std::shared_ptr<ClaimSlot>>> slots;
  {
    absl::MutexLock lock(&table_mu_);
    slots.reserve(slots_.size());
    for (const auto& [uid, slot] : slots_) slots.emplace_back(uid, slot);
  }
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
  for (auto& [uid, slot] : slots) {
    absl::MutexLock lock(&slot->mu);
    if (!slot->prepared) continue;
    const PreparedClaim& current = *slot->prepared;
    std::optional<PreparedClaim> updated;  // copied only when a device changed (the common pass has none)
    for (size_t i = 0; i < current.delivered.size(); ++i) {
      const DeliveredDevice& d = current.delivered[i];
      const discovery::PublishedDevice* now = snapshot.Find(d.name);
      if (now == nullptr) continue;
      const bool attributes_changed = metadata_ != nullptr && now->attributes != d.attributes;
      if (now->nodes != d.nodes || now->usb_interfaces != d.usb_interfaces || now->sysfs_path != d.sysfs_path ||
          attributes_changed) {
        if (!updated) {
          updated = current;
          ++updated->metadata_generation;
        }
        DeliveredDevice& u = updated->delivered[i];
        u.nodes = now->nodes;
        u.usb_interfaces = now->usb_interfaces;
        u.sysfs_path = now->sysfs_path;
        if (metadata_ != nullptr) u.attributes = now->attributes;
      }
    }
    const bool changed = updated.has_value();
    const auto ensure_metadata = [&, &claim_uid = uid](const PreparedClaim& claim, bool check_content) {
      if (auto m = EnsureMetadata(claim, check_content); !m.ok()) {
        if (first_error.ok()) {
          first_error = Annotate(m, absl::StrCat("write device metadata of claim ", claim_uid, ": "));
        }
        return false;
      }
      return true;
    };
    if (!changed && !records_lost && specs_->Exists(uid)) {  // the common case: no lock taken
      ensure_metadata(current, /*check_content=*/false);
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
      if (auto s = specs_->Write(uid, SpecFor(changed ? *updated : current)); !s.ok()) {
        if (first_error.ok()) first_error = Annotate(s, absl::StrCat("write CDI spec of claim ", uid, ": "));
        continue;
      }
      LogInfo(changed ? "updated CDI spec with current device nodes" : "rewrote vanished CDI spec",
              {{"claim_uid", uid}});
      ++rewritten;
    }
    if (changed) SetPrepared(*slot, std::move(updated));
  }
  slots.clear();
  {
    absl::MutexLock lock(&table_mu_);
    for (auto& uid : forgotten) sweep_candidates_.insert(std::move(uid));
    SweepLocked();
  }
  if (rewritten > 0) observer_->OnSpecsRefreshed(rewritten);
  if (!first_error.ok()) return first_error;
  return rewritten;
}

}  // namespace liken::kubelet
