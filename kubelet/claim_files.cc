#include "kubelet/claim_files.h"

#include <algorithm>
#include <string>
#include <vector>

#include "cdi/claim_spec.h"
#include "cdi/device_metadata.h"
#include "discovery/device_identity.h"

namespace liken::kubelet {

cdi::Spec ClaimSpecFor(const PreparedClaim& claim) {
  std::vector<cdi::ClaimDevice> devices;
  devices.reserve(claim.delivered.size());
  for (const auto& d : claim.delivered) {
    cdi::ClaimDevice cd{d.name, {}};
    for (const auto& n : d.nodes) cd.nodes.push_back({n.path, std::string(1, n.type), n.major, n.minor});
    devices.push_back(std::move(cd));
  }
  return cdi::MakeClaimSpec(claim.ref.uid, devices);
}

cdi::Spec ClaimFiles::SpecFor(const PreparedClaim& claim, const Files& files) const {
  cdi::Spec spec = ClaimSpecFor(claim);
  if (metadata_ == nullptr) return spec;
  if (files) {
    AddMetadataMounts(claim, *files, *metadata_, &spec);
    return spec;
  }
  auto computed = MetadataFilesFor(claim);
  if (computed.ok()) AddMetadataMounts(claim, *computed, *metadata_, &spec);  // a bad name failed the prepare
  return spec;
}

bool ClaimFiles::MetadataPresent(const PreparedClaim& claim) const {
  if (metadata_ == nullptr) return true;
  std::vector<std::string> requests;  // the cheap check of a refresh pass: one stat per request, nothing encoded
  for (const auto& r : claim.results) {
    if (r.request_names.empty()) continue;
    std::string base = cdi::BaseRequestName(r.request_names.front());
    if (std::find(requests.begin(), requests.end(), base) == requests.end()) requests.push_back(std::move(base));
  }
  return metadata_->Present(claim.ref.uid, requests);
}

absl::Status ClaimFiles::EnsureMetadata(const PreparedClaim& claim, bool check_content, Files* out) const {
  if (metadata_ == nullptr) return absl::OkStatus();
  if (!check_content && MetadataPresent(claim)) return absl::OkStatus();
  auto files = MetadataFilesFor(claim);
  if (!files.ok()) return files.status();
  absl::Status s = check_content && metadata_->Matches(claim.ref.uid, *files)
                       ? absl::OkStatus()
                       : metadata_->Write(claim.ref.uid, *files);
  if (out != nullptr) *out = *std::move(files);
  return s;
}

std::optional<PreparedClaim> ClaimFiles::Rebased(const PreparedClaim& current, const InventorySnapshot& snapshot) const {
  std::optional<PreparedClaim> updated;  // copied only when a device changed (the common pass has none)
  for (size_t i = 0; i < current.delivered.size(); ++i) {
    const DeliveredDevice& d = current.delivered[i];
    const discovery::PublishedDevice* now = snapshot.Find(d.name);
    // Another unit in the device's port (or at its address) is not the prepared device come back: its nodes never
    // reach this claim's spec; the claim keeps what was recorded, as for a device that is gone.
    if (now == nullptr || !discovery::SameUnit(discovery::IdentityOf(d.attributes), discovery::IdentityOf(now->attributes))) {
      continue;
    }
    const bool attributes_changed = metadata_ != nullptr && now->attributes != d.attributes;
    if (now->nodes != d.nodes || now->usb_interfaces != d.usb_interfaces || now->sysfs_path != d.sysfs_path ||
        attributes_changed) {
      if (!updated) {
        updated = current;
        ++updated->metadata_generation;
      }
      DeliveredDevice& u = updated->delivered[i];
      u.nodes = now->nodes;
      u.usb_interfaces = now->usb_interfaces;
      u.sysfs_path = now->sysfs_path;
      if (metadata_ != nullptr) u.attributes = now->attributes;
    }
  }
  return updated;
}

}  // namespace liken::kubelet
