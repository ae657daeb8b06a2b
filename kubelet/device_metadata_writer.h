// The device metadata files of prepared claims, on the host: what each holds, where it lives, and the CDI
// mounts that put it into the claim's containers (format and container paths: cdi/device_metadata.h).
//
// Host layout, under the plugin's own directory and never shared between claims (keyed by claim UID):
//   <root>/<claimUID>/<request>/liken.sh-metadata.json
// Each device entry carries the device's published attributes plus what a container needs to use it:
//   liken.sh/devicePaths      the /dev paths the claim delivers for the device (a list of strings)
//   liken.sh/usbBusNumber     for USB, the bus and device numbers of its current usbfs node
//   liken.sh/usbDeviceNumber  (/dev/bus/usb/<bus>/<device>), which change when the device re-enumerates
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "cdi/cdi_spec.h"
#include "cdi/device_metadata.h"
#include "common/atomic_file.h"
#include "kubelet/prepared_claim.h"

namespace liken::kubelet {

inline constexpr char kAttrDevicePaths[] = "liken.sh/devicePaths";
inline constexpr char kAttrUsbBusNumber[] = "liken.sh/usbBusNumber";
inline constexpr char kAttrUsbDeviceNumber[] = "liken.sh/usbDeviceNumber";

// The files of `claim`: one per request (subrequests folded into their request), devices in allocation
// order. InvalidArgument when a name cannot become a path segment. Thread-safe.
absl::StatusOr<std::vector<cdi::DeviceMetadata>> MetadataFilesFor(const PreparedClaim& claim);

// Writes, checks and removes the metadata files of claims under one root, like the CDI specs and claim records:
// every write, read and removal goes through directory handles opened from the root down without following a
// symlink (neither the root, a claim's directory nor a request's directory), each step through the handle of the
// directory above, so a directory swapped for a link between two steps is refused, never written, read or removed
// through. Thread-safe; callers serialise operations on one claim UID (the claim's slot and the claims directory's
// lock, as for its record and spec).
class DeviceMetadataStore {
 public:
  // `root` is the plugin's metadata directory ("<kubelet-root>/plugins/liken.sh/metadata"); `durability` of
  // each file written (kUnsynced: the files are rebuilt at start-up from the claims' records).
  explicit DeviceMetadataStore(std::string root, Durability durability = Durability::kSynced);

  // Creates the root (and its parents) when missing. A root that is itself a symlink is FailedPrecondition here,
  // at start-up: every write and removal would refuse it. Thread-safe.
  absl::Status EnsureDirectory() const;

  // "<root>/<claimUID>/<request>/liken.sh-metadata.json". Thread-safe.
  std::string HostPath(absl::string_view claim_uid, absl::string_view base_request) const;

  // Atomically writes each of `files` (temp file, fsync when synced, rename) and removes request directories of the
  // claim that `files` no longer has. Thread-safe.
  absl::Status Write(absl::string_view claim_uid, const std::vector<cdi::DeviceMetadata>& files) const;

  // True when every one of `files` is on disk, a regular file reached without following a link, with exactly the
  // content Write would give it. Thread-safe.
  bool Matches(absl::string_view claim_uid, const std::vector<cdi::DeviceMetadata>& files) const;

  // True when the file of every request in `base_requests` exists as a regular file reached without following a
  // link (content not read). Thread-safe.
  bool Present(absl::string_view claim_uid, const std::vector<std::string>& base_requests) const;

  // Removes the claim's directory and everything in it; succeeds when absent. Never follows a symlink, the root
  // included: a symlinked root is FailedPrecondition and nothing in its target is removed. Thread-safe.
  absl::Status Remove(absl::string_view claim_uid) const;

  // What the root looks like now: whether it is a directory, its identity, link count, size and times. Any claim
  // directory added, removed or renamed in it, or the root lost or recreated, changes it; a file removed deeper
  // down (inside a claim's request directory) does not. Compared between refresh passes, so a pass checks the
  // claims' files only when it changed. Thread-safe.
  struct RootState {
    bool directory = false;
    int64_t dev = 0, ino = 0, nlink = 0, size = 0, mtime_ns = 0, ctime_ns = 0;
    bool operator==(const RootState&) const = default;
  };
  RootState RootStateNow() const;

  // The claim UIDs that have an entry here, sorted; a symlinked root is FailedPrecondition. Thread-safe.
  absl::StatusOr<std::vector<std::string>> ListClaimUids() const;

  // The root directory. Thread-safe.
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  Durability durability_;
};

// Adds to `spec` one CDI device per metadata file of `claim`, each bind-mounting the host file read-only at
// its container path. Thread-safe.
void AddMetadataMounts(const PreparedClaim& claim, const std::vector<cdi::DeviceMetadata>& files,
                       const DeviceMetadataStore& store, cdi::Spec* spec);

// Appends each request's metadata CDI device ID to the first of its results, so the kubelet hands the
// mount to exactly the containers that use that request. Thread-safe.
void AddMetadataCdiIds(const std::vector<cdi::DeviceMetadata>& files, PreparedClaim* claim);

}  // namespace liken::kubelet
