#include "cdi/claim_spec_store.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cdi/claim_spec.h"
#include "common/atomic_file.h"
#include "common/files.h"

namespace liken::cdi {
namespace {

constexpr char kPrefix[] = "liken.sh-";
constexpr char kSuffix[] = ".json";
constexpr size_t kMaxSpecBytes = 4 << 20;

}  // namespace

ClaimSpecStore::ClaimSpecStore(std::string cdi_root, Durability durability)
    : root_(std::move(cdi_root)), durability_(durability) {}

std::string ClaimSpecStore::FileName(absl::string_view claim_uid) {
  return absl::StrCat(kPrefix, claim_uid, kSuffix);
}

absl::Status ClaimSpecStore::EnsureDirectory() const { return liken::MakeDirectories(root_); }

bool ClaimSpecStore::DirectoryExists() const {
  struct stat st;
  return ::stat(root_.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status ClaimSpecStore::Write(absl::string_view claim_uid, const Spec& spec) const {
  const std::string name = FileName(claim_uid);
  const std::string json = SpecToJson(spec);
  absl::Status s = WriteFileAtomically(root_, name, json, durability_);
  if (absl::IsNotFound(s) && !DirectoryExists()) {
    if (auto made = EnsureDirectory(); !made.ok()) return made;
    s = WriteFileAtomically(root_, name, json, durability_);
  }
  return s;
}

absl::StatusOr<int> ClaimSpecStore::RemoveTempFiles(std::optional<absl::string_view> claim_uid) const {
  const std::string one = claim_uid ? FileName(*claim_uid) : std::string();
  return RemoveLeftoverTempFiles(root_, [&](absl::string_view target) {
    if (claim_uid) return target == one;
    return absl::StartsWith(target, kPrefix) && absl::EndsWith(target, kSuffix);
  });
}

absl::StatusOr<Spec> ClaimSpecStore::Read(absl::string_view claim_uid) const {
  std::string path = absl::StrCat(root_, "/", FileName(claim_uid));
  auto text = ReadRegularFile(path, kMaxSpecBytes, FinalSymlink::kRefuse);
  if (!text.ok()) {
    if (absl::IsNotFound(text.status())) return absl::NotFoundError(absl::StrCat("no CDI spec ", path));
    if (absl::IsOutOfRange(text.status())) {
      return absl::InvalidArgumentError(absl::StrCat(path, " is larger than ", kMaxSpecBytes, " bytes"));
    }
    return text.status();
  }
  auto spec = ParseSpec(*text);
  if (!spec.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", spec.status().message()));
  return spec;
}

bool ClaimSpecStore::Exists(absl::string_view claim_uid) const {
  std::string path = absl::StrCat(root_, "/", FileName(claim_uid));
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

absl::Status ClaimSpecStore::Remove(absl::string_view claim_uid) const {
  // Through the same no-follow directory handle as Write: a symlinked CDI root is refused, and nothing in its
  // target is removed. Unsynced: no directory fsync either (a spec that came back after a power loss belongs to
  // an earlier boot and is swept at start-up).
  return RemoveFileIfPresent(root_, FileName(claim_uid), durability_);
}

absl::StatusOr<std::vector<std::string>> ClaimSpecStore::ListClaimUids() const {
  auto names = ListDirectory(root_);
  if (!names.ok()) {
    if (absl::IsNotFound(names.status())) return std::vector<std::string>{};
    return names.status();
  }
  std::vector<std::string> uids;
  for (const auto& name : *names) {
    if (!absl::StartsWith(name, kPrefix) || !absl::EndsWith(name, kSuffix)) continue;
    std::string uid = name.substr(sizeof(kPrefix) - 1, name.size() - (sizeof(kPrefix) - 1) - (sizeof(kSuffix) - 1));
    if (!uid.empty()) uids.push_back(std::move(uid));
  }
  std::sort(uids.begin(), uids.end());
  return uids;
}

}  // namespace liken::cdi
