// Device health as the kubelet's DRAResourceHealth service reports it.
#pragma once

#include <string>
#include <vector>

#include "discovery/inventory.h"

namespace liken::kubelet {

// The health of one device of this node's pool.
struct DeviceHealthState {
  std::string device;
  bool healthy = false;
  std::string message;

  friend bool operator==(const DeviceHealthState&, const DeviceHealthState&) = default;
};

// The full list: every published device is healthy; a device a prepared claim holds that is no longer
// published is unhealthy, with a message. Sorted by device name. Thread-safe.
std::vector<DeviceHealthState> ComputeDeviceHealth(const discovery::Inventory& inventory,
                                                   const std::vector<std::string>& prepared_devices);

}  // namespace liken::kubelet
