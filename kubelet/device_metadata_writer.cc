#include "kubelet/device_metadata_writer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

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

bool IsDirectoryNoFollow(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

absl::Status RemovePath(const std::string& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("remove ", path, ": ", std::strerror(errno)));
}

absl::Status RemoveDirectory(const std::string& path) {
  if (::rmdir(path.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
  return absl::InternalError(absl::StrCat("remove directory ", path, ": ", std::strerror(errno)));
}

// Removes a request directory: its entries (files, links, leftover temp files) and itself.
absl::Status RemoveRequestDir(const std::string& dir) {
  auto names = ListDirectory(dir);
  if (!names.ok()) return absl::IsNotFound(names.status()) ? absl::OkStatus() : names.status();
  for (const auto& name : *names) {
    if (auto s = RemovePath(absl::StrCat(dir, "/", name)); !s.ok()) return s;
  }
  return RemoveDirectory(dir);
}

// Removes an entry of a claim's directory: a request directory with its files, or anything else (never followed).
absl::Status RemoveEntry(const std::string& path) {
  return IsDirectoryNoFollow(path) ? RemoveRequestDir(path) : RemovePath(path);
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

absl::Status DeviceMetadataStore::EnsureDirectory() const { return MakeDirectories(root_); }

std::string DeviceMetadataStore::HostPath(absl::string_view claim_uid, absl::string_view base_request) const {
  return absl::StrCat(root_, "/", claim_uid, "/", base_request, "/", cdi::MetadataFileName(discovery::kDriverName));
}

absl::Status DeviceMetadataStore::Write(absl::string_view claim_uid, const std::vector<cdi::DeviceMetadata>& files) const {
  // The root, the claim's directory and each request's are checked not to be symlinks before anything is written
  // in them; the file itself is written through a handle of its directory (WriteFileAtomically).
  auto root = OpenRoot(root_, /*create=*/true);
  if (!root.ok()) return root.status();
  const std::string uid(claim_uid);
  const std::string claim_dir = absl::StrCat(root_, "/", uid);
  // The claim's and each request's directory: made if missing, and refused if anything but a directory (a planted
  // symlink is never written through). mkdir does not follow a link in the last component.
  const auto make_real_directory = [](const std::string& dir) -> absl::Status {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      return absl::InternalError(absl::StrCat("create directory ", dir, ": ", std::strerror(errno)));
    }
    auto checked = OpenDirectoryNoFollow(dir);
    return checked.ok() ? absl::OkStatus() : checked.status();
  };
  if (auto s = make_real_directory(claim_dir); !s.ok()) return s;
  std::vector<std::string> wanted;
  for (const auto& f : files) {
    const std::string base = cdi::BaseRequestName(f.request);
    const std::string dir = absl::StrCat(claim_dir, "/", base);
    if (auto s = make_real_directory(dir); !s.ok()) return s;
    if (auto s = WriteFileAtomically(dir, cdi::MetadataFileName(discovery::kDriverName),
                                     cdi::EncodeDeviceMetadataStream(f), durability_);
        !s.ok()) {
      return s;
    }
    wanted.push_back(base);
  }
  auto present = ListDirectory(claim_dir);
  if (!present.ok()) return absl::IsNotFound(present.status()) ? absl::OkStatus() : present.status();
  for (const auto& name : *present) {
    if (std::find(wanted.begin(), wanted.end(), name) != wanted.end()) continue;
    if (auto s = RemoveEntry(absl::StrCat(claim_dir, "/", name)); !s.ok()) return s;
  }
  return absl::OkStatus();
}

bool DeviceMetadataStore::Matches(absl::string_view claim_uid, const std::vector<cdi::DeviceMetadata>& files) const {
  for (const auto& f : files) {
    const std::string path = HostPath(claim_uid, cdi::BaseRequestName(f.request));
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    auto text = ReadFileToString(path, 4 << 20);
    if (!text.ok() || *text != cdi::EncodeDeviceMetadataStream(f)) return false;
  }
  return true;
}

bool DeviceMetadataStore::Present(absl::string_view claim_uid, const std::vector<std::string>& base_requests) const {
  for (const auto& base : base_requests) {
    struct stat st;
    if (::lstat(HostPath(claim_uid, base).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
      return false;
    }
  }
  return true;
}

absl::Status DeviceMetadataStore::Remove(absl::string_view claim_uid) const {
  auto root = OpenRoot(root_, /*create=*/false);  // a symlinked root: refused, nothing in its target removed
  if (!root.ok()) return absl::IsNotFound(root.status()) ? absl::OkStatus() : root.status();
  const std::string claim_dir = absl::StrCat(root_, "/", claim_uid);
  if (!IsDirectoryNoFollow(claim_dir)) return RemovePath(claim_dir);  // absent, or something planted: unlinked
  auto names = ListDirectory(claim_dir);
  if (!names.ok()) return absl::IsNotFound(names.status()) ? absl::OkStatus() : names.status();
  for (const auto& name : *names) {
    if (auto s = RemoveEntry(absl::StrCat(claim_dir, "/", name)); !s.ok()) return s;
  }
  return RemoveDirectory(claim_dir);
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
  auto names = ListDirectory(root_);
  if (!names.ok()) {
    if (absl::IsNotFound(names.status())) return std::vector<std::string>{};
    return names.status();
  }
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
