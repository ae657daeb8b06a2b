// The directory of transient per-claim CDI specs (`<cdi-root>/liken.sh-<claimUID>.json`).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cdi/cdi_spec.h"
#include "common/atomic_file.h"

namespace liken::cdi {

// Writes, reads and removes the specs of claims. Never follows a symlink planted in the directory.
// Thread-safe; callers serialise operations on one claim UID.
class ClaimSpecStore {
 public:
  // `cdi_root` is the directory the container runtime reads ("/var/run/cdi"); `durability` of each Write
  // (kUnsynced for specs rebuilt at start-up from a durable record).
  explicit ClaimSpecStore(std::string cdi_root, Durability durability = Durability::kSynced);

  // "liken.sh-<claimUID>.json". Thread-safe.
  static std::string FileName(absl::string_view claim_uid);

  // Creates the directory (and its parents, mode 0755) when missing. Thread-safe.
  absl::Status EnsureDirectory() const;

  // True when the directory exists. Thread-safe.
  bool DirectoryExists() const;

  // Atomically writes the claim's spec (temp file, fsync when synced, rename), recreating the directory when it vanished
  // (a lost tmpfs, an operator's rm -r). Thread-safe.
  absl::Status Write(absl::string_view claim_uid, const Spec& spec) const;

  // Reads and parses the claim's spec. NotFound when absent; FailedPrecondition when the name is not a
  // regular file (a planted symlink); InvalidArgument when it does not parse. Thread-safe.
  absl::StatusOr<Spec> Read(absl::string_view claim_uid) const;

  // True when a regular file holds the claim's spec (a symlink does not count). Thread-safe.
  bool Exists(absl::string_view claim_uid) const;

  // Removes the claim's spec; succeeds when absent. Goes through the directory opened without following a symlink,
  // as Write does: a symlinked root is FailedPrecondition and nothing in its target is removed. Thread-safe.
  absl::Status Remove(absl::string_view claim_uid) const;

  // Removes the temp files crashed writes left behind: of one claim's spec, or of every liken spec when
  // `claim_uid` is nullopt (other drivers' files are never touched). Returns how many. Thread-safe.
  absl::StatusOr<int> RemoveTempFiles(std::optional<absl::string_view> claim_uid) const;

  // The claim UIDs of every liken spec in the directory (temp files excluded), sorted. Thread-safe.
  absl::StatusOr<std::vector<std::string>> ListClaimUids() const;

 private:
  std::string root_;
  Durability durability_;
};

}  // namespace liken::cdi
