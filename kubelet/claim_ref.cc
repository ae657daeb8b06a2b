#include "kubelet/claim_ref.h"

#include "apis/resource_slice.h"
#include "common/text.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace liken::kubelet {
namespace {

constexpr size_t kMaxUid = 128;

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

bool ValidUid(const std::string& uid) {
  if (uid.empty() || uid.size() > kMaxUid || !IsAlnum(uid.front())) return false;
  for (char c : uid) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
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
      return absl::InvalidArgumentError(
          absl::StrCat(at, ": uid ", EchoInput(c.uid), " is not a valid UID (letters, digits, '-', '_', '.', at most ",
                       kMaxUid, ", starting with a letter or digit)"));
    }
    if (!apis::IsDnsLabel(c.namespace_name)) {
      return absl::InvalidArgumentError(absl::StrCat(at, " (uid ", c.uid, "): namespace ", EchoInput(c.namespace_name),
                                                     " is not a DNS label (RFC 1123)"));
    }
    if (!apis::IsDnsSubdomain(c.name)) {
      return absl::InvalidArgumentError(absl::StrCat(at, " (uid ", c.uid, "): name ", EchoInput(c.name),
                                                     " is not a DNS subdomain (RFC 1123)"));
    }
    if (!seen.insert(c.uid).second) {
      return absl::InvalidArgumentError(absl::StrCat(at, ": uid ", c.uid, " appears more than once"));
    }
  }
  return absl::OkStatus();
}

}  // namespace liken::kubelet
