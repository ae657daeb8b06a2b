// A claim as the kubelet names it in NodePrepareResources / NodeUnprepareResources, and request validation.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace liken::kubelet {

// One entry of a request's `claims` list.
struct ClaimRef {
  std::string namespace_name;
  std::string uid;
  std::string name;

  friend bool operator==(const ClaimRef&, const ClaimRef&) = default;
};

// Checks a request's claims: every field set and well formed (the UID becomes part of file and CDI device
// names: letters, digits, '-', '_', '.', at most 128 characters, starting alphanumeric), and no UID twice.
// InvalidArgument names the first offending entry. Thread-safe.
absl::Status ValidateClaimRefs(const std::vector<ClaimRef>& claims);

}  // namespace liken::kubelet
