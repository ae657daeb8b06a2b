// resource.k8s.io/v1 ResourceClaim status.devices: what a driver reports about the devices it prepared.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace liken::apis {

// One metav1.Condition of a device entry (observedGeneration is not used).
struct DeviceCondition {
  std::string type;
  std::string status;  // "True", "False" or "Unknown"
  std::string reason;
  std::string message;
  std::string last_transition_time;  // RFC 3339, as the server keeps it

  // Same type, status, reason and message (the transition time is not compared). Thread-safe (const).
  bool SameState(const DeviceCondition& other) const;
};

// One entry of status.devices, keyed by driver, pool, device and shareID.
struct AllocatedDeviceStatus {
  std::string driver;
  std::string pool;
  std::string device;
  std::optional<std::string> share_id;
  std::vector<DeviceCondition> conditions;
  nlohmann::json data;  // null: absent

  // True when both name the same allocated device (driver, pool, device, shareID). Thread-safe (const).
  bool SameDevice(const AllocatedDeviceStatus& other) const;
  // SameDevice, the same data, and conditions of the same types in the same states (times aside).
  // Thread-safe (const).
  bool SameState(const AllocatedDeviceStatus& other) const;
};

// Parses status.devices (a JSON array; null or absent is empty). InvalidArgument names the malformed entry.
// Thread-safe.
absl::StatusOr<std::vector<AllocatedDeviceStatus>> ParseAllocatedDeviceStatuses(const nlohmann::json& devices);

// The JSON of one entry, as the API expects it (conditions with lastTransitionTime; data only when set).
// Thread-safe.
nlohmann::json ToJson(const AllocatedDeviceStatus& status);

}  // namespace liken::apis
