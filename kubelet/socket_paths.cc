#include "kubelet/socket_paths.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace liken::kubelet {
namespace {

std::string ShortHash(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("%016x", h);
}

bool ValidPodUid(const std::string& uid) {
  for (char c : uid) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.';
    if (!ok) return false;
  }
  return uid != "." && uid != "..";
}

std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// `make(id)` builds the path for an ID; tries the pod UID, then its hash.
template <typename MakePath>
absl::StatusOr<std::string> Fit(const std::string& pod_uid, MakePath make) {
  std::string path = make(pod_uid);
  if (path.size() <= kMaxSocketPathLength) return path;
  if (!pod_uid.empty()) {
    path = make(ShortHash(pod_uid));
    if (path.size() <= kMaxSocketPathLength) return path;
  }
  return absl::InvalidArgumentError(absl::StrCat("socket path ", path, " is longer than ", kMaxSocketPathLength,
                                                 " bytes; use a shorter --kubelet-root"));
}

}  // namespace

absl::StatusOr<SocketPaths> ComputeSocketPaths(const std::string& kubelet_root, const std::string& driver_name,
                                               const std::string& pod_uid) {
  if (!ValidPodUid(pod_uid)) return absl::InvalidArgumentError(absl::StrCat("invalid pod UID '", pod_uid, "'"));
  if (kubelet_root.empty()) return absl::InvalidArgumentError("empty kubelet root directory");
  std::string root = StripTrailingSlashes(kubelet_root);
  SocketPaths paths;
  paths.registration_dir = absl::StrCat(root, "/plugins_registry");
  paths.plugin_dir = absl::StrCat(root, "/plugins/", driver_name);
  auto reg = Fit(pod_uid, [&](const std::string& id) {
    return id.empty() ? absl::StrCat(paths.registration_dir, "/", driver_name, "-reg.sock")
                      : absl::StrCat(paths.registration_dir, "/", driver_name, "-", id, "-reg.sock");
  });
  if (!reg.ok()) return reg.status();
  auto dra = Fit(pod_uid, [&](const std::string& id) {
    return id.empty() ? absl::StrCat(paths.plugin_dir, "/dra.sock") : absl::StrCat(paths.plugin_dir, "/dra-", id, ".sock");
  });
  if (!dra.ok()) return dra.status();
  paths.registration = std::move(*reg);
  paths.dra = std::move(*dra);
  return paths;
}

}  // namespace liken::kubelet
