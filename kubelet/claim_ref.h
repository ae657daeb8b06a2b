// A claim as the kubelet names it in NodePrepareResources / NodeUnprepareResources, and request validation.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace liken::kubelet {

// One entry of a request's `claims` list.
struct ClaimRef {
  std::string namespace_name;
  std::string uid;
  std::string name;

  friend bool operator==(const ClaimRef&, const ClaimRef&) = default;
};

// Checks a request's claims: every field set and well formed, and no UID twice. The namespace must be a DNS
// label and the name a DNS subdomain (RFC 1123, as Kubernetes requires; so never "." or ".." in an API
// path); the UID becomes part of file and CDI device names: letters, digits, '-', '_', '.', at most 128
// characters, starting alphanumeric. InvalidArgument names the first offending entry and echoes at most a
// short, escaped prefix of its input. Thread-safe.
absl::Status ValidateClaimRefs(const std::vector<ClaimRef>& claims);

}  // namespace liken::kubelet
