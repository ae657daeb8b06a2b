// The plugin's durable record of prepared claims: one JSON file per claim, stamped with the boot ID.
#pragma once

#include <optional>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "kubelet/prepared_claim.h"

namespace liken::kubelet {

// Serialises one record: {"version":1,"bootID":...,"claim":{...},"results":[...],"delivered":[...]}.
// Thread-safe.
std::string PreparedClaimToJson(const PreparedClaim& claim, absl::string_view boot_id);

// A parsed record and the boot it was written in.
struct CheckpointRecord {
  PreparedClaim claim;
  std::string boot_id;
};

// Parses a record; InvalidArgument names what is wrong. Thread-safe.
absl::StatusOr<CheckpointRecord> ParsePreparedClaim(absl::string_view json_text);

// The claims directory's advisory lock (flock, exclusive), held while alive. Every driver process sharing the
// directory (two pods of a rolling update) takes it around each check-and-write of a claim's record and CDI
// spec, so one never acts on what it saw before the other changed it. Locks taken through separate
// LockDirectory calls exclude each other, also within one process. Move-only; thread-compatible.
class DirectoryLock {
 public:
  explicit DirectoryLock(ScopedFd fd) : fd_(std::move(fd)) {}

 private:
  ScopedFd fd_;  // closing it releases the lock
};

// Records of prepared claims under `<dir>/<claimUID>.json`, each replaced atomically (temp file, rename) and never
// fsynced: a record must survive what the page cache survives (a crash of the process, a restart of the pod or
// the kubelet); what it does not survive (a power loss, a kernel crash) is a reboot, and a record written in
// another boot is a claim of a machine that has since rebooted: its devices and CDI spec are gone, and the kubelet
// prepares the claim again. Thread-safe; callers serialise operations on one claim UID.
class ClaimCheckpoint {
 public:
  // `dir` is the plugin's claims directory; `boot_id` the current boot's ID.
  ClaimCheckpoint(std::string dir, std::string boot_id);

  // Creates the directory when missing. Thread-safe.
  absl::Status EnsureDirectory() const;

  // True when the directory exists. Thread-safe.
  bool DirectoryExists() const;

  // Takes the directory's lock (see DirectoryLock), creating the directory when missing; blocks until it is
  // free. Not reentrant: a thread holding one must not ask for another. Thread-safe.
  absl::StatusOr<DirectoryLock> LockDirectory() const;

  // Records `claim` as prepared in this boot (no fsync), recreating the directory when it vanished.
  // Thread-safe.
  absl::Status Save(const PreparedClaim& claim) const;

  // Records each of `claims` as prepared in this boot as Save does, recreating the directory when it vanished.
  // One status per claim, in order. A crash before a claim's rename leaves its temp file only: not recorded.
  // Thread-safe.
  std::vector<absl::Status> SaveBatch(const std::vector<const PreparedClaim*>& claims) const;

  // Removes the temp files crashed writes left behind: of one claim, or of every claim when `claim_uid` is
  // nullopt. Returns how many. Call with the directory lock held. Thread-safe.
  absl::StatusOr<int> RemoveTempFiles(std::optional<absl::string_view> claim_uid) const;

  // Forgets the claim (an unlink, no fsync); succeeds when there is no record. Thread-safe.
  absl::Status Remove(absl::string_view claim_uid) const;

  // Everything found at start-up.
  struct Contents {
    std::vector<PreparedClaim> current_boot;      // prepared in this boot
    // Written before a reboot; also an empty or all-NUL file, which only a power loss leaves (the rename reached
    // the disk, the data did not), so it is of an earlier boot too.
    std::vector<std::string> previous_boot_uids;
    // Claim UIDs (file names less ".json") of records that cannot be read or parsed, e.g. written by a newer
    // version; left in place, and their claims' CDI specs must be kept.
    std::vector<std::string> unreadable_uids;
    std::vector<absl::Status> unreadable_errors;  // why, one per unreadable_uids entry
  };

  // Reads every record. Fails only when the directory cannot be listed, or Cancelled once `stop` is requested
  // (checked before each record). Thread-safe.
  absl::StatusOr<Contents> Load(std::stop_token stop = {}) const;

  // True when a record for the claim exists (readable or not) in the directory itself: a symlinked directory holds
  // none. Thread-safe.
  bool Exists(absl::string_view claim_uid) const;

  // The directory. Thread-safe.
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string boot_id_;
};

}  // namespace liken::kubelet
