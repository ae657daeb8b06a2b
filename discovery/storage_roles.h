// The host's storage roles: which block devices are mounted, used as swap, or held by dm/md.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "discovery/delivery_walk.h"

namespace liken::discovery {

// Facts about the host's use of block devices, read from /proc. A plain value; thread-compatible.
struct HostStorageFacts {
  std::set<std::pair<uint32_t, uint32_t>> mounted_numbers;  // major:minor of mounted filesystems
  std::set<std::string> mounted_sources;                    // mount sources that are /dev paths
  std::set<std::pair<uint32_t, uint32_t>> swap_numbers;
  std::set<std::string> swap_paths;
};

// Parses `<proc_root>/1/mountinfo` and `<proc_root>/swaps`; swap and mount sources under /dev are also
// stat'ed in `dev_root` for their device numbers. Fails when either file cannot be read. Thread-safe.
absl::StatusOr<HostStorageFacts> ReadHostStorageFacts(const std::string& proc_root, const std::string& dev_root);

// Parses mountinfo text into `facts` (exposed for tests and fuzzing). Malformed lines are skipped.
void ParseMountInfo(const std::string& text, HostStorageFacts* facts);

// Parses /proc/swaps text into `facts`. Malformed lines are skipped.
void ParseSwaps(const std::string& text, HostStorageFacts* facts);

// The entries of each block node's sysfs `holders` directory (dm, md and the like), by the node's sysfs
// directory; a read error is kept as it is. A plain value; thread-compatible.
using BlockHolders = std::map<std::string, absl::StatusOr<std::vector<std::string>>>;

// Reads the `holders` directory of every block node in `nodes`. Thread-safe.
BlockHolders ReadBlockHolders(const std::vector<WalkedNode>& nodes);

// Returns why the machine depends on any of `nodes`' block devices (mounted, swap, `holders` as read
// by ReadBlockHolders), or nullopt when none has a role. A holders directory that could not be read
// (other than absent) counts as a role. Thread-safe (pure).
std::optional<std::string> FindStorageRole(const HostStorageFacts& facts, const std::vector<WalkedNode>& nodes,
                                           const BlockHolders& holders);

}  // namespace liken::discovery
