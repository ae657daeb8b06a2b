// The contract's rules for turning the nodes of one bound device into published devices.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "discovery/delivery_walk.h"
#include "discovery/inventory.h"

namespace liken::discovery {

// One published device a bound unit (a PCI function or a USB interface) yields, before attributes.
struct DeliverySplit {
  std::string suffix;                    // "" for the primary, "-display", "-i2c-dev", "-drm-dp-aux-dev"
  std::vector<DeviceNode> nodes;         // the unit's own nodes this device delivers (usbfs not included)
  std::optional<std::string> subsystem;  // the one kind delivered; absent for a mix and for btusb
  bool render_node = false;
  bool display_node = false;
  bool allow_multiple_allocations = false;
};

// What the rules decided for a unit.
struct DeliveryDecision {
  std::vector<DeliverySplit> devices;  // empty: nothing to publish
  std::vector<std::string> notes;      // nodes delivered by nothing (framebuffer, strays in a GPU)
};

// Applies the GPU, sound, Bluetooth, one-kind and mix rules to a bound unit's walk. `driver` is the
// bound driver's name. Storage is decided before this (see storage_roles.h). Thread-safe (pure).
DeliveryDecision DecideDelivery(const std::string& driver, const WalkResult& walk);

}  // namespace liken::discovery
