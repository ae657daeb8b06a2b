// Turns the claims a prepare call names into what preparing them delivers: reads each ResourceClaim (from the
// node's claim cache, else one GET) and resolves its devices against the node's inventory.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "informers/claim_lookup.h"
#include "kubelet/claim_ref.h"
#include "kubelet/device_catalog.h"
#include "kubelet/prepared_claim.h"

namespace liken::kubelet {

// Reads and resolves claims; holds no lock while it waits. Dependencies are borrowed and must outlive it.
// Thread-safe.
class ClaimResolver {
 public:
  // At most this many claims of one call are read at a time; the client's rate limiter paces their GETs.
  static constexpr size_t kMaxConcurrentReads = 8;

  // `with_metadata`: the answer also carries the CDI IDs of the claim's device metadata files.
  ClaimResolver(std::string node_name, informers::ClaimLookup* lookup, DeviceCatalog* catalog, bool with_metadata);

  // The prepared form of one claim. NotFound when the claim does not exist; Unavailable when it cannot be
  // read; FailedPrecondition when it was recreated under a new UID, is not allocated, allocates nothing of
  // this driver in this node's pool or an invalid device name; the catalog's error for an absent device.
  // Thread-safe.
  absl::StatusOr<PreparedClaim> Resolve(const ClaimRef& ref) const;

  // Resolve of each claim, in order: those the lookup holds cached on the calling thread, the others (cache
  // misses, each a GET) up to kMaxConcurrentReads at a time on helper threads, so their reads overlap.
  // Thread-safe.
  std::vector<absl::StatusOr<PreparedClaim>> ResolveAll(const std::vector<const ClaimRef*>& refs) const;

 private:
  const std::string node_name_;
  informers::ClaimLookup* const lookup_;
  DeviceCatalog* const catalog_;
  const bool with_metadata_;
};

}  // namespace liken::kubelet
