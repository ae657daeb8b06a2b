#include "kubelet/claim_slot_table.h"

#include <algorithm>
#include <functional>

#include "absl/base/internal/raw_logging.h"
#include "absl/strings/str_cat.h"

namespace liken::kubelet {

// The analysis cannot follow a set of mutexes; callers state each one with AssertHeld.
ClaimSlotLocks::ClaimSlotLocks(std::vector<ClaimSlot*> slots) ABSL_NO_THREAD_SAFETY_ANALYSIS : slots_(std::move(slots)) {
  std::sort(slots_.begin(), slots_.end(), std::less<ClaimSlot*>());
  ABSL_RAW_CHECK(std::adjacent_find(slots_.begin(), slots_.end()) == slots_.end(), "a claim slot locked twice");
  for (ClaimSlot* slot : slots_) slot->mu.Lock();
}

ClaimSlotLocks::~ClaimSlotLocks() ABSL_NO_THREAD_SAFETY_ANALYSIS {
  for (auto it = slots_.rbegin(); it != slots_.rend(); ++it) (*it)->mu.Unlock();
}

uint64_t ClaimSlotTable::BeginPrepare() {
  absl::MutexLock lock(&mu_);
  const uint64_t seq = next_seq_++;
  prepares_in_flight_.insert(seq);
  return seq;
}

void ClaimSlotTable::EndPrepare(uint64_t seq) {
  absl::MutexLock lock(&mu_);
  auto it = prepares_in_flight_.find(seq);
  ABSL_RAW_CHECK(it != prepares_in_flight_.end(), "ending a prepare that did not begin");
  prepares_in_flight_.erase(it);
  SweepLocked();
}

uint64_t ClaimSlotTable::BeginUnprepare() {
  absl::MutexLock lock(&mu_);
  return next_seq_++;
}

ClaimSlotTable::Held ClaimSlotTable::Acquire(const std::string& uid) {
  absl::MutexLock lock(&mu_);
  Held& slot = slots_[uid];
  if (!slot) slot = std::make_shared<ClaimSlot>();
  return slot;
}

bool ClaimSlotTable::IdleLocked(ClaimSlot& slot) const {
  if (!slot.mu.TryLock()) return false;
  const bool prepared = slot.prepared.has_value();
  const uint64_t tombstone = slot.unprepared_at;
  slot.mu.Unlock();
  if (prepared) return false;
  if (tombstone == 0) return true;
  // The tombstone matters while a prepare that arrived before the unprepare is still running.
  return prepares_in_flight_.empty() || *prepares_in_flight_.begin() > tombstone;
}

void ClaimSlotTable::Release(const std::string& uid, Held slot) {
  absl::MutexLock lock(&mu_);
  auto it = slots_.find(uid);
  ABSL_RAW_CHECK(it != slots_.end() && it->second == slot, "a held claim slot left the table");
  // Only this caller and the table hold it: nobody can acquire it concurrently (that needs mu_).
  if (slot.use_count() == 2 && IdleLocked(*slot)) {
    slots_.erase(it);
    sweep_candidates_.erase(uid);
    return;
  }
  sweep_candidates_.insert(uid);
}

std::vector<std::pair<std::string, ClaimSlotTable::Held>> ClaimSlotTable::Snapshot() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<std::string, Held>> out;
  out.reserve(slots_.size());
  for (const auto& [uid, slot] : slots_) out.emplace_back(uid, slot);
  return out;
}

void ClaimSlotTable::Forgotten(std::vector<std::string> uids) {
  absl::MutexLock lock(&mu_);
  for (auto& uid : uids) {
    if (slots_.contains(uid)) sweep_candidates_.insert(std::move(uid));
  }
  SweepLocked();
}

void ClaimSlotTable::Sweep() {
  absl::MutexLock lock(&mu_);
  SweepLocked();
}

void ClaimSlotTable::SweepLocked() {
  for (auto it = sweep_candidates_.begin(); it != sweep_candidates_.end();) {
    auto slot_it = slots_.find(*it);
    ABSL_RAW_CHECK(slot_it != slots_.end(), "a sweep candidate names no slot");
    if (slot_it->second.use_count() == 1) {  // only the table holds it
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

size_t ClaimSlotTable::size() const {
  absl::MutexLock lock(&mu_);
  return slots_.size();
}

absl::Status ClaimSlotTable::CheckInvariant(When when) const {
  absl::MutexLock lock(&mu_);
  for (const auto& uid : sweep_candidates_) {
    if (!slots_.contains(uid)) return absl::InternalError(absl::StrCat("sweep candidate ", uid, " names no slot"));
  }
  for (const auto& seq : prepares_in_flight_) {
    if (seq >= next_seq_) return absl::InternalError(absl::StrCat("prepare ", seq, " in flight was never numbered"));
  }
  for (const auto& [uid, slot] : slots_) {
    if (slot == nullptr) return absl::InternalError(absl::StrCat("slot ", uid, " is empty"));
    if (slot.use_count() > 1) continue;  // held by a caller
    if (!slot->mu.TryLock()) return absl::InternalError(absl::StrCat("slot ", uid, " is locked but not held"));
    const bool prepared = slot->prepared.has_value();
    const uint64_t tombstone = slot->unprepared_at;
    slot->mu.Unlock();
    if (prepared) continue;
    const bool tombstone_matters =
        tombstone != 0 && !prepares_in_flight_.empty() && *prepares_in_flight_.begin() < tombstone;
    if (tombstone_matters) continue;
    if (when == When::kAnyTime && sweep_candidates_.contains(uid)) continue;  // a sweep in progress erases it
    return absl::InternalError(absl::StrCat("idle slot ", uid, " is held by no one and was not erased"));
  }
  return absl::OkStatus();
}

}  // namespace liken::kubelet
