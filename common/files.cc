#include "common/files.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace liken {
namespace {

absl::Status ErrnoStatus(int err, const std::string& what) {
  std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  switch (err) {
    case ENOENT:
    case ENOTDIR: return absl::NotFoundError(msg);
    case EACCES:
    case EPERM: return absl::PermissionDeniedError(msg);
    case EINVAL: return absl::InvalidArgumentError(msg);
    case ELOOP: return absl::FailedPreconditionError(msg);
    default: return absl::InternalError(msg);
  }
}

const char* FileKind(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFIFO: return "a FIFO";
    case S_IFSOCK: return "a socket";
    case S_IFCHR: return "a character device";
    case S_IFBLK: return "a block device";
    case S_IFDIR: return "a directory";
    case S_IFLNK: return "a symlink";
    default: return "not a regular file";
  }
}

absl::Status NotRegular(const std::string& path, mode_t mode) {
  return absl::FailedPreconditionError(absl::StrCat(path, " is ", FileKind(mode), ", not a regular file"));
}

}  // namespace

void ScopedFd::Reset() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

absl::StatusOr<ScopedFd> OpenRegularFile(const std::string& path, FinalSymlink symlink, FileAccess access) {
  const bool follow = symlink == FinalSymlink::kFollow;
  // Checked before opening, so a device is never opened (opening one can have effects) ...
  struct stat st;
  if ((follow ? ::stat(path.c_str(), &st) : ::lstat(path.c_str(), &st)) != 0) {
    return ErrnoStatus(errno, "open " + path);
  }
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  // ... and after, for a file swapped in between: O_NONBLOCK keeps a FIFO from blocking the open.
  int flags = (access == FileAccess::kWrite ? O_WRONLY : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (follow ? 0 : O_NOFOLLOW);
  ScopedFd fd(::open(path.c_str(), flags));
  if (fd.get() < 0) {
    int err = errno;
    if (err == ELOOP && !follow) return absl::FailedPreconditionError(path + " is a symlink, not a regular file");
    return ErrnoStatus(err, "open " + path);
  }
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  return fd;
}

absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t limit, FinalSymlink symlink) {
  auto fd = OpenRegularFile(path, symlink);
  if (!fd.ok()) return fd.status();
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd->get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) {
      return absl::OutOfRangeError(absl::StrCat("read ", path, ": larger than ", limit, " bytes"));
    }
  }
  return out;
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t limit) {
  return ReadRegularFile(path, limit, FinalSymlink::kFollow);
}

absl::StatusOr<std::string> ReadAttribute(const std::string& path) {
  auto text = ReadFileToString(path, 64 * 1024);
  if (!text.ok()) return text.status();
  std::string value = std::move(*text);
  if (!value.empty() && value.back() == '\n') value.pop_back();
  return value;
}

absl::StatusOr<std::string> ReadLink(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n < 0) return ErrnoStatus(errno, "readlink " + path);
  return std::string(buf, static_cast<size_t>(n));
}

namespace {

// Reads every entry of an open listing but "." and "..", sorted, and closes it.
std::vector<std::string> ReadListing(DIR* dir) {
  std::vector<std::string> names;
  while (struct dirent* entry = ::readdir(dir)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    names.push_back(std::move(name));
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "opendir " + path);
  return ReadListing(dir);
}

absl::StatusOr<std::vector<std::string>> ListDirectoryAt(int dirfd, const std::string& path) {
  int listfd = ::dup(dirfd);
  if (listfd < 0) return ErrnoStatus(errno, "list directory " + path);
  DIR* dir = ::fdopendir(listfd);
  if (dir == nullptr) {
    int err = errno;
    ::close(listfd);
    return ErrnoStatus(err, "list directory " + path);
  }
  ::rewinddir(dir);  // the duplicate shares the handle's position
  return ReadListing(dir);
}

std::string ResolveRelative(const std::string& dir, const std::string& target) {
  std::string joined = (!target.empty() && target[0] == '/') ? target : dir + "/" + target;
  std::vector<std::string> parts;
  for (absl::string_view seg : absl::StrSplit(joined, '/', absl::SkipEmpty())) {
    if (seg == ".") continue;
    if (seg == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.emplace_back(seg);
  }
  std::string out;
  for (const auto& p : parts) absl::StrAppend(&out, "/", p);
  return out.empty() ? "/" : out;
}

absl::Status MakeDirectories(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty directory path");
  // The leaf first: when its parent exists (the common case, e.g. one more claim directory under a root made at
  // start-up) that is one mkdir, not one per path segment. Only a missing parent makes the walk up.
  if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) {
    if (errno != ENOENT) return ErrnoStatus(errno, "create directory " + path);
    const size_t slash = path.find_last_of('/', path.find_last_not_of('/'));
    if (slash == std::string::npos || slash == 0) return ErrnoStatus(ENOENT, "create directory " + path);
    if (auto s = MakeDirectories(path.substr(0, slash)); !s.ok()) return s;
    if (::mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus(errno, "create directory " + path);
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat(path, " exists and is not a directory"));
  }
  return absl::OkStatus();
}

std::string BaseName(const std::string& path) {
  auto pos = path.find_last_of('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

std::string DirName(const std::string& path) {
  auto pos = path.find_last_of('/');
  if (pos == std::string::npos) return ".";
  if (pos == 0) return "/";
  return path.substr(0, pos);
}

}  // namespace liken
