#include "kubelet/boot_id.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace liken::kubelet {

absl::StatusOr<std::string> ReadBootId(const std::string& path) {
  auto text = ReadFileToString(path, 4096);
  if (!text.ok()) {
    return absl::FailedPreconditionError(absl::StrCat("read boot ID: ", text.status().message()));
  }
  std::string id(absl::StripAsciiWhitespace(*text));
  if (id.empty()) return absl::FailedPreconditionError(absl::StrCat("boot ID file ", path, " is empty"));
  return id;
}

}  // namespace liken::kubelet
