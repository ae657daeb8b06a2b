#include "kubelet/socket_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/log.h"

namespace liken::kubelet {

absl::Status RemoveStaleSocket(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::InternalError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode) && !S_ISLNK(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a socket; not removing it"));
  }
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(absl::StrCat("remove stale socket ", path, ": ", std::strerror(errno)));
  }
  LogInfo("removed stale socket", {{"path", path}});
  return absl::OkStatus();
}

absl::StatusOr<ino_t> SocketInode(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) {
    return absl::InternalError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  }
  if (!S_ISSOCK(st.st_mode)) return absl::FailedPreconditionError(absl::StrCat(path, " is not a socket"));
  return st.st_ino;
}

void RemoveOwnSocket(const std::string& path, ino_t inode) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode) || st.st_ino != inode) return;
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    LogWarning("remove socket at shutdown", {{"path", path}, {"error", std::strerror(errno)}});
  }
}

}  // namespace liken::kubelet
