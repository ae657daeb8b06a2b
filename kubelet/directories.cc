#include "kubelet/directories.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace liken::kubelet {

absl::Status MakeDirectories(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty directory path");
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(absl::StrCat("create directory ", prefix, ": ", std::strerror(errno)));
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

}  // namespace liken::kubelet
