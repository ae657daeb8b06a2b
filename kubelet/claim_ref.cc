#include "kubelet/claim_ref.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace liken::kubelet {
namespace {

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool ValidUid(const std::string& uid) {
  if (uid.empty() || uid.size() > 128 || !IsAlnum(uid.front())) return false;
  for (char c : uid) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// Kubernetes object names and namespaces: DNS subdomains (lowercase alphanumerics, '-', '.').
bool ValidObjectName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

absl::Status ValidateClaimRefs(const std::vector<ClaimRef>& claims) {
  absl::flat_hash_set<std::string> seen;
  for (size_t i = 0; i < claims.size(); ++i) {
    const ClaimRef& c = claims[i];
    std::string at = absl::StrCat("claims[", i, "]");
    if (!ValidUid(c.uid)) {
      return absl::InvalidArgumentError(absl::StrCat(at, ": uid '", c.uid, "' is empty or not a valid UID"));
    }
    if (!ValidObjectName(c.namespace_name)) {
      return absl::InvalidArgumentError(
          absl::StrCat(at, " (uid ", c.uid, "): namespace '", c.namespace_name, "' is empty or invalid"));
    }
    if (!ValidObjectName(c.name)) {
      return absl::InvalidArgumentError(absl::StrCat(at, " (uid ", c.uid, "): name '", c.name, "' is empty or invalid"));
    }
    if (!seen.insert(c.uid).second) {
      return absl::InvalidArgumentError(absl::StrCat(at, ": uid ", c.uid, " appears more than once"));
    }
  }
  return absl::OkStatus();
}

}  // namespace liken::kubelet
