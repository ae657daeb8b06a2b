// The socket files themselves: clearing a stale one before listening, removing our own at shutdown.
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace liken::kubelet {

// Removes a socket (or a dangling symlink) left at `path` by an earlier instance; succeeds when absent.
// FailedPrecondition when something else (a file, a directory) is there. Thread-safe.
absl::Status RemoveStaleSocket(const std::string& path);

// The inode of the socket at `path`, identifying the one this process created. Thread-safe.
absl::StatusOr<ino_t> SocketInode(const std::string& path);

// Removes the socket at `path` if it is still the one with `inode` (another instance may have replaced it).
// Thread-safe.
void RemoveOwnSocket(const std::string& path, ino_t inode);

}  // namespace liken::kubelet
