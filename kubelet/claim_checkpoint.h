// The plugin's durable record of prepared claims: one JSON file per claim, stamped with the boot ID.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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

// Records of prepared claims under `<dir>/<claimUID>.json`, each replaced atomically. A record written in
// another boot is a claim of a machine that has since rebooted: its devices and CDI spec are gone.
// Thread-safe; callers serialise operations on one claim UID.
class ClaimCheckpoint {
 public:
  // `dir` is the plugin's claims directory; `boot_id` the current boot's ID.
  ClaimCheckpoint(std::string dir, std::string boot_id);

  // Creates the directory when missing. Thread-safe.
  absl::Status EnsureDirectory() const;

  // Durably records `claim` as prepared in this boot. Thread-safe.
  absl::Status Save(const PreparedClaim& claim) const;

  // Forgets the claim; succeeds when there is no record. Thread-safe.
  absl::Status Remove(absl::string_view claim_uid) const;

  // Everything found at start-up.
  struct Contents {
    std::vector<PreparedClaim> current_boot;      // prepared in this boot
    std::vector<std::string> previous_boot_uids;  // written before a reboot
    // Claim UIDs (file names less ".json") of records that cannot be read or parsed, e.g. written by a newer
    // version; left in place, and their claims' CDI specs must be kept.
    std::vector<std::string> unreadable_uids;
    std::vector<absl::Status> unreadable_errors;  // why, one per unreadable_uids entry
  };

  // Reads every record. Fails only when the directory cannot be listed. Thread-safe.
  absl::StatusOr<Contents> Load() const;

  // True when a record for the claim exists (readable or not). Thread-safe.
  bool Exists(absl::string_view claim_uid) const;

  // The directory. Thread-safe.
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::string boot_id_;
};

}  // namespace liken::kubelet
