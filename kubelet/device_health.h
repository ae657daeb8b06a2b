// Device health as the kubelet's DRAResourceHealth service reports it.
#pragma once

#include <string>
#include <vector>

#include "discovery/inventory.h"
#include "nodestate/node_devices.h"

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

// The same, for the devices as the prepared claims hold them: a held device whose name the inventory publishes
// for another unit (discovery::SameUnit: another serial, vendor or product in its port) is unhealthy too, with a
// message naming both units. Sorted by device name. Thread-safe.
std::vector<DeviceHealthState> ComputeDeviceHealth(const discovery::Inventory& inventory,
                                                   const std::vector<nodestate::HeldDevice>& held);

}  // namespace liken::kubelet
