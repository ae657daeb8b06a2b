// Small, failure-aware helpers for reading sysfs-like files and directories.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace liken {

// How OpenRegularFile treats a symlink as the path's last segment.
enum class FinalSymlink {
  kFollow,  // open what it points to (kubeconfigs, Secret volumes' `..data/` links, sysfs)
  kRefuse,  // FailedPrecondition (files this program owns: checkpoint records, CDI specs)
};

// An open file descriptor, closed on destruction. Move-only; thread-compatible.
class ScopedFd {
 public:
  ScopedFd() = default;
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() { Reset(); }
  ScopedFd(ScopedFd&& other) noexcept : fd_(other.Release()) {}
  ScopedFd& operator=(ScopedFd&& other) noexcept {
    if (this != &other) {
      Reset();
      fd_ = other.Release();
    }
    return *this;
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;

  // The descriptor, or -1.
  int get() const { return fd_; }
  // Gives up ownership and returns the descriptor.
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  // Closes the descriptor, if any.
  void Reset();

 private:
  int fd_ = -1;
};

// Whether OpenRegularFile opens for reading or for writing (no create, no truncate: sysfs attributes).
enum class FileAccess { kRead, kWrite };

// Opens `path` only when it is a regular file. A FIFO, socket, character or block device or
// directory is refused at once (FailedPrecondition naming the kind) and is never left open: the type is
// checked before opening, the open never blocks (O_NONBLOCK) and never takes a terminal, and fstat checks the
// opened file again, so a file swapped in between is refused too. NotFound when absent. Thread-safe.
absl::StatusOr<ScopedFd> OpenRegularFile(const std::string& path, FinalSymlink symlink = FinalSymlink::kFollow,
                                         FileAccess access = FileAccess::kRead);

// Reads a whole regular file (at most `limit` bytes: OutOfRange beyond), opened with OpenRegularFile.
// NotFound when absent, FailedPrecondition when not a regular file, other errors as Internal/PermissionDenied.
// Thread-safe (no shared state).
absl::StatusOr<std::string> ReadRegularFile(const std::string& path, size_t limit = 1 << 20,
                                            FinalSymlink symlink = FinalSymlink::kFollow);

// ReadRegularFile following a final symlink: every file this program reads is a regular file (sysfs
// attributes, /proc files, kubeconfigs, tokens, CA files, pci.ids, modules.alias). Thread-safe.
absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t limit = 1 << 20);

// Reads a one-line sysfs attribute: the file's text with one trailing newline removed.
// Thread-safe.
absl::StatusOr<std::string> ReadAttribute(const std::string& path);

// Returns the target of a symlink. NotFound when absent, InvalidArgument when not a link. Thread-safe.
absl::StatusOr<std::string> ReadLink(const std::string& path);

// Lists a directory's entries (without "." and ".."), sorted. Thread-safe.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);

// Lists the entries (without "." and ".."), sorted, of the directory open as `dirfd`, which stays open and keeps
// no position; `path` names it in errors. No path is resolved, so a swapped symlink cannot redirect the listing.
// Thread-safe for distinct handles.
absl::StatusOr<std::vector<std::string>> ListDirectoryAt(int dirfd, const std::string& path);

// Joins `dir` and a relative link target and removes "." and ".." segments lexically. Thread-safe.
std::string ResolveRelative(const std::string& dir, const std::string& target);

// Creates `path` and its missing parents with mode 0755 (like mkdir -p). FailedPrecondition when `path`
// exists and is not a directory. Thread-safe.
absl::Status MakeDirectories(const std::string& path);

// Returns the last path segment of `path`. Thread-safe.
std::string BaseName(const std::string& path);

// Returns `path` without its last segment. Thread-safe.
std::string DirName(const std::string& path);

}  // namespace liken
