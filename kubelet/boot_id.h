// The kernel's boot ID, which tells a driver restart (same boot) from a reboot.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace liken::kubelet {

// The default place the kernel publishes it.
inline constexpr char kDefaultBootIdPath[] = "/proc/sys/kernel/random/boot_id";

// Reads the boot ID from `path` (trimmed). FailedPrecondition when absent or empty. Thread-safe.
absl::StatusOr<std::string> ReadBootId(const std::string& path);

}  // namespace liken::kubelet
