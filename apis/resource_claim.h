// resource.k8s.io/v1 ResourceClaim: the parts a node driver reads (identity and allocation results).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "apis/device_status.h"
#include "apis/object_meta.h"

namespace liken::apis {

// The annotation that names a template claim in its pod (resource.k8s.io's PodResourceClaimAnnotation).
inline constexpr char kPodClaimNameAnnotation[] = "resource.kubernetes.io/pod-claim-name";
// The annotation the scheduler puts on a claim it made for a pod's extended resources.
inline constexpr char kExtendedResourceClaimAnnotation[] = "resource.kubernetes.io/extended-resource-claim";

// status.allocation.devices.results[] of a ResourceClaim.
struct DeviceRequestAllocationResult {
  std::string request;  // request name (a subrequest is "request/sub")
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<std::string> share_id;  // set for devices with allowMultipleAllocations (newer servers)
  bool admin_access = false;  // adminAccess: the device was allocated for admin access, possibly while in use
};

// status.reservedFor[] of a ResourceClaim.
struct ResourceClaimConsumerReference {
  std::string resource;  // "pods"
  std::string name;
  std::string uid;
};

// A ResourceClaim as the node sees it.
struct ResourceClaim {
  ObjectMeta metadata;
  // The kPodClaimNameAnnotation's value: the pod's name for a claim made from a template; unset otherwise.
  // A parsed field, so it survives the node's claim cache, which drops the raw JSON.
  std::optional<std::string> pod_claim_name;
  bool extended_resource_claim = false;  // kExtendedResourceClaimAnnotation is "true": the scheduler made it
  bool allocated = false;  // status.allocation is present
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<ResourceClaimConsumerReference> reserved_for;
  std::vector<AllocatedDeviceStatus> devices;  // status.devices, every driver's
  nlohmann::json raw = nlohmann::json::object();

  // The allocation results for `driver` in pool `pool`, in allocation order. Thread-safe (const).
  std::vector<DeviceRequestAllocationResult> ResultsFor(const std::string& driver, const std::string& pool) const;
};

// Parses a ResourceClaim; InvalidArgument names the malformed field. Thread-safe.
absl::StatusOr<ResourceClaim> ParseResourceClaim(const nlohmann::json& j);

}  // namespace liken::apis
