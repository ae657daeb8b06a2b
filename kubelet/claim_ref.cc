#include "kubelet/claim_ref.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace liken::kubelet {
namespace {

constexpr size_t kMaxUid = 128;
constexpr size_t kMaxLabel = 63;
constexpr size_t kMaxSubdomain = 253;
constexpr size_t kEchoPrefix = 64;

bool IsAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

bool ValidUid(const std::string& uid) {
  if (uid.empty() || uid.size() > kMaxUid || !IsAlnum(uid.front())) return false;
  for (char c : uid) {
    if (!IsAlnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

// An RFC 1123 label: lowercase alphanumerics and '-', starting and ending alphanumeric, at most 63.
bool IsDnsLabel(absl::string_view s) {
  if (s.empty() || s.size() > kMaxLabel || !IsLowerAlnum(s.front()) || !IsLowerAlnum(s.back())) return false;
  for (char c : s) {
    if (!IsLowerAlnum(c) && c != '-') return false;
  }
  return true;
}

// An RFC 1123 subdomain: labels joined by '.', at most 253 (so never "." or "..").
bool IsDnsSubdomain(absl::string_view s) {
  if (s.empty() || s.size() > kMaxSubdomain) return false;
  for (absl::string_view label : absl::StrSplit(s, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

}  // namespace

std::string EchoInput(absl::string_view input) {
  if (input.size() <= kEchoPrefix) return absl::StrCat("'", absl::CHexEscape(input), "'");
  return absl::StrCat("'", absl::CHexEscape(input.substr(0, kEchoPrefix)), "'... (", input.size(), " bytes)");
}

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
    if (!IsDnsLabel(c.namespace_name)) {
      return absl::InvalidArgumentError(absl::StrCat(at, " (uid ", c.uid, "): namespace ", EchoInput(c.namespace_name),
                                                     " is not a DNS label (RFC 1123)"));
    }
    if (!IsDnsSubdomain(c.name)) {
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
