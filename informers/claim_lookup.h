// Where the kubelet plugin reads ResourceClaims from: the node's claim cache, falling back to one GET.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "apis/resource_claim.h"

namespace liken::informers {

// Looks up ResourceClaims by namespace and name.
class ClaimLookup {
 public:
  virtual ~ClaimLookup() = default;
  // Returns the claim, from the cache when present, else from the API server. A cached copy whose UID is not
  // `uid` (a claim deleted and created again under its name) or that is not allocated yet is read again from
  // the API server; an empty `uid` accepts any. NotFound when the claim does not exist. Thread-safe.
  virtual absl::StatusOr<apis::ResourceClaim> Get(const std::string& namespace_name, const std::string& name,
                                                  const std::string& uid) = 0;
  // Returns the claim only when this lookup holds it without asking the API server (same UID and allocation
  // rules as Get); FailedPrecondition when it does not. For readers that must not add requests, such as the
  // claim status writer. Default: FailedPrecondition (a lookup without a cache holds nothing). Thread-safe.
  virtual absl::StatusOr<apis::ResourceClaim> GetCached(const std::string& namespace_name, const std::string& name,
                                                        const std::string& uid) {
    return absl::FailedPreconditionError("no cached copy of " + namespace_name + "/" + name);
  }
  // Takes `claim` as the API server returned it from a write of this process, so later lookups see that write
  // without reading the claim again. Default: ignored. Thread-safe.
  virtual void Remember(const apis::ResourceClaim& claim) {}
};

}  // namespace liken::informers
