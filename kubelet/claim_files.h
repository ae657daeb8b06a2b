// What a prepared claim delivers besides its checkpoint record: its CDI spec and, when they are on, its device
// metadata files (mounted into the containers through that spec).
#pragma once

#include <optional>

#include "absl/status/status.h"
#include "cdi/cdi_spec.h"
#include "kubelet/device_catalog.h"
#include "kubelet/device_metadata_writer.h"
#include "kubelet/prepared_claim.h"

namespace liken::kubelet {

// The CDI spec of a prepared claim's devices, without metadata mounts. Thread-safe.
cdi::Spec ClaimSpecFor(const PreparedClaim& claim);

// Builds a claim's spec and keeps its metadata files. The store is borrowed and must outlive this. Thread-safe;
// callers serialise operations on one claim UID.
class ClaimFiles {
 public:
  // `metadata` may be null: no metadata files are written or mounted.
  explicit ClaimFiles(const DeviceMetadataStore* metadata) : metadata_(metadata) {}

  // The claim's metadata files, computed once by EnsureMetadata for the SpecFor that follows it.
  using Files = std::optional<std::vector<cdi::DeviceMetadata>>;

  // The claim's CDI spec: its devices, and the mounts of its metadata files when those are on (`files`: as
  // EnsureMetadata computed them for this claim; computed here when nullopt). Thread-safe.
  cdi::Spec SpecFor(const PreparedClaim& claim, const Files& files = std::nullopt) const;

  // True when every metadata file of the claim is present (content not read, nothing encoded); true when off. A
  // read only: the refresh pass asks it without the claims directory's lock and writes only under it. Thread-safe.
  bool MetadataPresent(const PreparedClaim& claim) const;

  // Writes the claim's metadata files unless they are present (`check_content`: and exact, else MetadataPresent);
  // OK when off. Callers hold the claim's slot and the claims directory's lock, as for its record and spec. Stores the files it computed in `*files` (may be null). Thread-safe.
  absl::Status EnsureMetadata(const PreparedClaim& claim, bool check_content, Files* files = nullptr) const;

  // The claim with each delivered device as `snapshot` has it now (nodes, USB interfaces, sysfs path, and the
  // attributes when metadata files are on) and metadata_generation + 1; nullopt when nothing changed. A device
  // missing from the snapshot, or found there as another unit (discovery::SameUnit: vendor, product, serial),
  // keeps what was recorded. Thread-safe.
  std::optional<PreparedClaim> Rebased(const PreparedClaim& current, const InventorySnapshot& snapshot) const;

 private:
  const DeviceMetadataStore* const metadata_;  // null: off
};

}  // namespace liken::kubelet
