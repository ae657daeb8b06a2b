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

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "open " + path);
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return ErrnoStatus(err, "read " + path);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) {
      ::close(fd);
      return absl::OutOfRangeError(absl::StrCat("read ", path, ": larger than ", limit, " bytes"));
    }
  }
  ::close(fd);
  return out;
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

absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) {
  DIR* dir = ::opendir(path.c_str());
  if (dir == nullptr) return ErrnoStatus(errno, "opendir " + path);
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
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) return ErrnoStatus(errno, "create directory " + prefix);
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
