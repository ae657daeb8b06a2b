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
  // Returns the claim, from the cache when present, else from the API server.
  // NotFound when the claim does not exist. Thread-safe.
  virtual absl::StatusOr<apis::ResourceClaim> Get(const std::string& namespace_name, const std::string& name) = 0;
};

}  // namespace liken::informers
