// Where the plugin's unix sockets live, with pod-UID names for rolling updates.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace liken::kubelet {

// The longest unix socket path (sun_path holds 108 bytes including the terminating NUL).
inline constexpr size_t kMaxSocketPathLength = 107;

// The registration and DRA service socket paths of one driver instance.
struct SocketPaths {
  std::string registration_dir;   // <kubelet-root>/plugins_registry
  std::string registration;       // <registration_dir>/<driver>-reg.sock or <driver>-<podUID>-reg.sock
  std::string plugin_dir;         // <kubelet-root>/plugins/<driver>
  std::string dra;                // <plugin_dir>/dra.sock or dra-<podUID>.sock
};

// Computes the socket paths. With a pod UID each name carries it; when a path would exceed
// kMaxSocketPathLength, the UID in that name is replaced by a 16-hex-digit FNV-1a hash of it.
// InvalidArgument when a path is too long even so, or the pod UID holds characters other than letters,
// digits, '-', '_' and '.'. Thread-safe.
absl::StatusOr<SocketPaths> ComputeSocketPaths(const std::string& kubelet_root, const std::string& driver_name,
                                               const std::string& pod_uid);

}  // namespace liken::kubelet
