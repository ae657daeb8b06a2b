// Small, failure-aware helpers for reading sysfs-like files and directories.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace liken {

// Reads a whole file (at most `limit` bytes). NotFound when absent, other errors as Internal/PermissionDenied.
// Thread-safe (no shared state).
absl::StatusOr<std::string> ReadFileToString(const std::string& path, size_t limit = 1 << 20);

// Reads a one-line sysfs attribute: the file's text with one trailing newline removed.
// Thread-safe.
absl::StatusOr<std::string> ReadAttribute(const std::string& path);

// Returns the target of a symlink. NotFound when absent, InvalidArgument when not a link. Thread-safe.
absl::StatusOr<std::string> ReadLink(const std::string& path);

// Lists a directory's entries (without "." and ".."), sorted. Thread-safe.
absl::StatusOr<std::vector<std::string>> ListDirectory(const std::string& path);

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
