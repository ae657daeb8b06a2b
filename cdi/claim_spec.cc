#include "cdi/claim_spec.h"

#include "absl/strings/str_cat.h"

namespace liken::cdi {

std::string ClaimDeviceName(absl::string_view claim_uid, absl::string_view device_name) {
  return absl::StrCat(claim_uid, "-", device_name);
}

std::string ClaimDeviceId(absl::string_view claim_uid, absl::string_view device_name) {
  return QualifiedName(kClaimSpecKind, ClaimDeviceName(claim_uid, device_name));
}

Spec MakeClaimSpec(absl::string_view claim_uid, const std::vector<ClaimDevice>& devices) {
  Spec spec;
  spec.kind = kClaimSpecKind;
  for (const auto& d : devices) {
    spec.devices.push_back({ClaimDeviceName(claim_uid, d.device_name), ContainerEdits{d.nodes, {}}});
  }
  spec.cdi_version = MinimumCdiVersion(spec);
  return spec;
}

}  // namespace liken::cdi
