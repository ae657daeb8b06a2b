#include "kubelet/device_metadata_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>

#include "absl/strings/str_cat.h"
#include "cdi/claim_spec.h"
#include "common/atomic_file.h"
#include "common/files.h"
#include "discovery/inventory.h"

namespace liken::kubelet {
namespace {

cdi::MetadataValue ToMetadataValue(const discovery::AttributeValue& v) {
  return std::visit([](const auto& x) -> cdi::MetadataValue { return x; }, v);
}

// Bus and device number of a usbfs node "/dev/bus/usb/BBB/DDD".
bool ParseUsbfsNode(const discovery::DeviceNode& node, int64_t* bus, int64_t* device) {
  if (node.subsystem != "usb") return false;
  unsigned b = 0, d = 0;
  char tail = 0;
  if (std::sscanf(node.path.c_str(), "/dev/bus/usb/%3u/%3u%c", &b, &d, &tail) != 2) return false;
  *bus = b;
  *device = d;
  return true;
}

std::map<std::string, cdi::MetadataValue> MetadataAttributes(const DeliveredDevice& d) {
  std::map<std::string, cdi::MetadataValue> out;
  for (const auto& [key, value] : d.attributes) out[key] = ToMetadataValue(value);
  std::vector<std::string> paths;
  for (const auto& n : d.nodes) {
    paths.push_back(n.path);
    int64_t bus = 0, device = 0;
    if (ParseUsbfsNode(n, &bus, &device)) {
      out[kAttrUsbBusNumber] = bus;
      out[kAttrUsbDeviceNumber] = device;
    }
  }
  if (!paths.empty()) out[kAttrDevicePaths] = std::move(paths);
  return out;
}

// The root, opened without following a symlink; created (with its parents) when missing and `create`.
absl::StatusOr<ScopedFd> OpenRoot(const std::string& root, bool create) {
  auto fd = OpenDirectoryNoFollow(root);
  if (create && absl::IsNotFound(fd.status())) {
    if (auto made = MakeDirectories(root); !made.ok()) return made;
    fd = OpenDirectoryNoFollow(root);
  }
  return fd;
}

// The content of the regular file `name` in the directory open as `dirfd`, read through a handle that never
// follows a symlink; nullopt when it is absent, not a regular file, unreadable or larger than `limit`.
std::optional<std::string> ReadRegularFileAt(int dirfd, const std::string& name, size_t limit) {
  ScopedFd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  struct stat st;
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::nullopt;
    if (n == 0) return out;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > limit) return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<std::vector<cdi::DeviceMetadata>> MetadataFilesFor(const PreparedClaim& claim) {
  std::vector<cdi::DeviceMetadata> files;
  for (const auto& r : claim.results) {
    if (r.request_names.empty()) continue;
    const std::string& request = r.request_names.front();
    const std::string base = cdi::BaseRequestName(request);
    auto file = std::find_if(files.begin(), files.end(),
                             [&](const cdi::DeviceMetadata& f) { return cdi::BaseRequestName(f.request) == base; });
    if (file == files.end()) {
      cdi::DeviceMetadata m;
      m.claim_namespace = claim.ref.namespace_name;
      m.claim_name = claim.ref.name;
      m.claim_uid = claim.ref.uid;
      m.generation = claim.metadata_generation;
      m.pod_claim_name = claim.pod_claim_name;
      m.request = request;
      if (auto s = cdi::ValidateMetadataPath(m); !s.ok()) return s;
      files.push_back(std::move(m));
      file = files.end() - 1;
    }
    cdi::MetadataDevice device{discovery::kDriverName, r.pool, r.device, {}};
    auto delivered = std::find_if(claim.delivered.begin(), claim.delivered.end(),
                                  [&](const DeliveredDevice& d) { return d.name == r.device; });
    if (delivered != claim.delivered.end()) device.attributes = MetadataAttributes(*delivered);
    file->devices.push_back(std::move(device));
  }
  return files;
}

DeviceMetadataStore::DeviceMetadataStore(std::string root, Durability durability)
    : root_(std::move(root)), durability_(durability) {}

absl::Status DeviceMetadataStore::EnsureDirectory() const {
  // Made with its parents (which may be links, as /var/run is to /run), then opened like every write and removal
  // opens it: a root that is itself a symlink is refused here, at start-up, not at each prepare and unprepare.
  if (auto made = MakeDirectories(root_); !made.ok()) return made;
  auto root = OpenDirectoryNoFollow(root_);
  return root.ok() ? absl::OkStatus() : root.status();
}

std::string DeviceMetadataStore::HostPath(absl::string_view claim_uid, absl::string_view base_request) const {
  return absl::StrCat(root_, "/", claim_uid, "/", base_request, "/", cdi::MetadataFileName(discovery::kDriverName));
}

absl::Status DeviceMetadataStore::Write(absl::string_view claim_uid, const std::vector<cdi::DeviceMetadata>& files) const {
  // Every directory from the root down is opened (made when missing) without following a symlink, and each step
  // goes through the handle of the one above: a link planted or swapped in anywhere is refused, never written
  // through, and no path is resolved twice.
  auto root = OpenRoot(root_, /*create=*/true);
  if (!root.ok()) return root.status();
  const std::string uid(claim_uid);
  const std::string claim_dir = absl::StrCat(root_, "/", uid);
  auto claim = OpenDirectoryAt(root->get(), root_, uid, /*create=*/true);
  if (!claim.ok()) return claim.status();
  std::vector<std::string> wanted;
  for (const auto& f : files) {
    const std::string base = cdi::BaseRequestName(f.request);
    auto request = OpenDirectoryAt(claim->get(), claim_dir, base, /*create=*/true);
    if (!request.ok()) return request.status();
    if (auto s = WriteFileAtomicallyAt(request->get(), absl::StrCat(claim_dir, "/", base),
                                       cdi::MetadataFileName(discovery::kDriverName),
                                       cdi::EncodeDeviceMetadataStream(f), durability_);
        !s.ok()) {
      return s;
    }
    wanted.push_back(base);
  }
  auto present = ListDirectoryAt(claim->get(), claim_dir);
  if (!present.ok()) return present.status();
  for (const auto& name : *present) {
    if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) continue;
    if (auto s = RemoveTreeAt(claim->get(), claim_dir, name); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool DeviceMetadataStore::Matches(absl::string_view claim_uid, const std::vector<cdi::DeviceMetadata>& files) const {
  if (files.empty()) return true;
  auto root = OpenDirectoryNoFollow(root_);
  if (!root.ok()) return false;
  auto claim = OpenDirectoryAt(root->get(), root_, std::string(claim_uid), /*create=*/false);
  if (!claim.ok()) return false;
  for (const auto& f : files) {
    auto request = OpenDirectoryAt(claim->get(), root_, cdi::BaseRequestName(f.request), /*create=*/false);
    if (!request.ok()) return false;
    auto text = ReadRegularFileAt(request->get(), cdi::MetadataFileName(discovery::kDriverName), 4 << 20);
    if (!text || *text != cdi::EncodeDeviceMetadataStream(f)) return false;
  }
  return true;
}

bool DeviceMetadataStore::Present(absl::string_view claim_uid, const std::vector<std::string>& base_requests) const {
  if (base_requests.empty()) return true;
  auto root = OpenDirectoryNoFollow(root_);
  if (!root.ok()) return false;
  auto claim = OpenDirectoryAt(root->get(), root_, std::string(claim_uid), /*create=*/false);
  if (!claim.ok()) return false;
  const std::string file = cdi::MetadataFileName(discovery::kDriverName);
  for (const auto& base : base_requests) {
    auto request = OpenDirectoryAt(claim->get(), root_, base, /*create=*/false);
    struct stat st;
    if (!request.ok() || ::fstatat(request->get(), file.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISREG(st.st_mode)) {
      return false;
    }
  }
  return true;
}

absl::Status DeviceMetadataStore::Remove(absl::string_view claim_uid) const {
  auto root = OpenRoot(root_, /*create=*/false);  // a symlinked root: refused, nothing in its target removed
  if (!root.ok()) return absl::IsNotFound(root.status()) ? absl::OkStatus() : root.status();
  return RemoveTreeAt(root->get(), root_, std::string(claim_uid));
}

DeviceMetadataStore::RootState DeviceMetadataStore::RootStateNow() const {
  RootState state;
  struct stat st;
  if (::lstat(root_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return state;
  state.directory = true;
  state.dev = static_cast<int64_t>(st.st_dev);
  state.ino = static_cast<int64_t>(st.st_ino);
  state.nlink = static_cast<int64_t>(st.st_nlink);
  state.size = static_cast<int64_t>(st.st_size);
  state.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
  state.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
  return state;
}

absl::StatusOr<std::vector<std::string>> DeviceMetadataStore::ListClaimUids() const {
  auto root = OpenRoot(root_, /*create=*/false);
  if (!root.ok()) {
    if (absl::IsNotFound(root.status())) return std::vector<std::string>{};
    return root.status();
  }
  auto names = ListDirectoryAt(root->get(), root_);
  if (!names.ok()) return names.status();
  std::vector<std::string> out;
  for (const auto& name : *names) {
    if (!name.empty() && name[0] != '.') out.push_back(name);
  }
  return out;
}

void AddMetadataMounts(const PreparedClaim& claim, const std::vector<cdi::DeviceMetadata>& files,
                       const DeviceMetadataStore& store, cdi::Spec* spec) {
  for (const auto& f : files) {
    const std::string base = cdi::BaseRequestName(f.request);
    spec->devices.push_back(cdi::MetadataCdiDevice(claim.ref.uid, base, store.HostPath(claim.ref.uid, base),
                                                   cdi::MetadataContainerPath(discovery::kDriverName, f)));
  }
  spec->cdi_version = cdi::MinimumCdiVersion(*spec);
}

void AddMetadataCdiIds(const std::vector<cdi::DeviceMetadata>& files, PreparedClaim* claim) {
  for (const auto& f : files) {
    const std::string base = cdi::BaseRequestName(f.request);
    for (auto& r : claim->results) {
      if (r.request_names.empty() || cdi::BaseRequestName(r.request_names.front()) != base) continue;
      std::string id = cdi::QualifiedName(cdi::kClaimSpecKind, cdi::MetadataCdiDeviceName(claim->ref.uid, base));
      if (std::find(r.cdi_device_ids.begin(), r.cdi_device_ids.end(), id) == r.cdi_device_ids.end()) {
        r.cdi_device_ids.push_back(std::move(id));
      }
      break;
    }
  }
}

}  // namespace liken::kubelet
