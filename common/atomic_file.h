// Crash-safe file replacement: temp file in the same directory, rename; with fsyncs of the file and the directory
// when it must survive a power loss.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "common/files.h"

namespace liken {

// How a replacement is made durable.
enum class Durability {
  kSynced,    // fsync of the temp file before the rename and of the directory after it: survives a power loss
  kUnsynced,  // no fsync: atomic for every reader and across a crash of the process, not across a power loss
              // (for files rebuilt at start-up from a durable record)
};

// Atomically replaces `dir`/`name` with `content` (mode 0644). Never follows a symlink: `dir` is opened
// with O_NOFOLLOW and a symlink planted at `name` is replaced, not written through. On any failure
// (a full disk: ResourceExhausted) the old file is left intact and the temp file removed, except a failed fsync of
// `dir` after the rename (kSynced): the new version is in place, but its name may not survive a power loss.
// Thread-safe for distinct names; concurrent writers of one name leave one complete version.
absl::Status WriteFileAtomically(const std::string& dir, const std::string& name, const std::string& content,
                                 Durability durability = Durability::kSynced);

// Opens the directory `dir` for WriteFileAtomicallyAt and *at(2) calls. Its last segment is never followed: a symlink there is
// FailedPrecondition naming `dir` (earlier segments may be links, as /var/run is to /run). NotFound when absent.
// Thread-safe.
absl::StatusOr<ScopedFd> OpenDirectoryNoFollow(const std::string& dir);

// Opens the subdirectory `name` of the directory open as `dirfd` (called `dir` in errors), creating it (mode 0755)
// when missing and `create`. `name` is one relative segment (InvalidArgument otherwise: an absolute name would make
// openat(2) ignore `dirfd`). A symlink or other file at `name` is FailedPrecondition naming it, never followed;
// NotFound when absent and not `create`. FailedPrecondition too when the directory opened is not a child of `dirfd`
// (a library interposed on openat(2) that rewrote the name, as umockdev's preload does for "dev" or "sys" when the
// working directory is "/"). Thread-safe.
absl::StatusOr<ScopedFd> OpenDirectoryAt(int dirfd, const std::string& dir, const std::string& name, bool create);

// Removes the entry `name` of the directory open as `dirfd` (called `dir` in errors) and, when it is a directory,
// everything in it (at most 8 levels deep: deeper is FailedPrecondition), each directory emptied through a handle
// opened without following a symlink: a planted link is removed itself, never what it points to, also when it is
// swapped in while the tree is removed; a directory whose handle turns out not to be its child (OpenDirectoryAt) is
// FailedPrecondition, nothing in it removed. Succeeds when absent. Callers keep other writers out of the tree (an entry
// added meanwhile fails it with the directory not empty). Thread-safe.
absl::Status RemoveTreeAt(int dirfd, const std::string& dir, const std::string& name);

// WriteFileAtomically into the directory open as `dirfd` (called `dir` in errors): the write, its rename and the
// directory fsync all go through that one handle. Thread-safe for distinct names.
absl::Status WriteFileAtomicallyAt(int dirfd, const std::string& dir, const std::string& name,
                                   const std::string& content, Durability durability = Durability::kSynced);

// One file of a batch: its name in the directory and its new content.
struct FileWrite {
  std::string name;
  std::string content;
};

// Replaces each of `files` in `dir` as WriteFileAtomically does, paying for durability once for the whole
// batch: every temp file is written, then their fsyncs are issued concurrently (up to 32 threads; the journal
// commits them together), then each is renamed, then one fsync of `dir`, whose failure every renamed file
// reports. One status per file, in order; a file that failed before its rename keeps its old version. A crash before the
// renames leaves temp files only (RemoveLeftoverTempFiles), after them every file whole. Thread-safe for
// distinct names.
std::vector<absl::Status> WriteFilesAtomically(const std::string& dir, const std::vector<FileWrite>& files);

// Removes `dir`/`name`; succeeds when it is already absent. Never follows a symlink in `dir`. kSynced fsyncs the
// directory after the unlink; kUnsynced leaves that to the caller (SyncDirectory once for a batch). Thread-safe.
absl::Status RemoveFileIfPresent(const std::string& dir, const std::string& name,
                                 Durability durability = Durability::kSynced);

// Makes the directory's entries durable (fsync of `dir`): the one flush after a batch of unsynced removals.
// Thread-safe.
absl::Status SyncDirectory(const std::string& dir);

// Removes the temp files a crashed WriteFileAtomically left in `dir`: `.<target>.tmp.<suffix>` for each
// target name `match` accepts. Returns how many it removed; 0 when `dir` is absent. Callers make sure no
// writer of those targets is in flight (it would lose its temp file and fail). Thread-safe.
absl::StatusOr<int> RemoveLeftoverTempFiles(const std::string& dir,
                                            const std::function<bool(absl::string_view target)>& match);

}  // namespace liken
