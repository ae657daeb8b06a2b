// How one claim's devices become one transient CDI spec: names, IDs and the spec itself.
#pragma once

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "cdi/cdi_spec.h"

namespace liken::cdi {

// The CDI kind of every spec liken writes.
inline constexpr char kClaimSpecKind[] = "liken.sh/device";

// One allocated device of a claim and the nodes it delivers.
struct ClaimDevice {
  std::string device_name;         // the ResourceSlice device name
  std::vector<DeviceNode> nodes;   // sorted by path
};

// "<claimUID>-<deviceName>": the CDI device name of one allocated device. Thread-safe.
std::string ClaimDeviceName(absl::string_view claim_uid, absl::string_view device_name);

// "liken.sh/device=<claimUID>-<deviceName>": what NodePrepareResources returns. Thread-safe.
std::string ClaimDeviceId(absl::string_view claim_uid, absl::string_view device_name);

// Builds the spec of a claim: one CDI device per allocated device, in the given order. Thread-safe.
Spec MakeClaimSpec(absl::string_view claim_uid, const std::vector<ClaimDevice>& devices);

}  // namespace liken::cdi
