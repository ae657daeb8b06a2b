// The delivery walk: the device nodes a device's own sysfs subtree holds.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "discovery/inventory.h"

namespace liken::discovery {

// A device node found in the subtree, with where it sat.
struct WalkedNode {
  DeviceNode node;
  std::string dir;              // the node's sysfs directory
  bool inside_sound_card = false;  // below a directory of subsystem "sound" (a card): jack inputs
};

// Everything the walk saw.
struct WalkResult {
  std::vector<WalkedNode> nodes;     // in walk order (sorted directory entries, depth first)
  bool has_bluetooth = false;        // the subtree holds a `bluetooth` child (an adapter's hciN)
  std::vector<std::string> net_interfaces;  // names of `net` class devices in the subtree ("eth0"), walk order
  std::set<std::string> buses_below;        // subsystems of the child devices the walk stopped at ("usb")
  std::vector<std::string> bus_clients;     // I2C and SPI client devices walked into ("i2c-ELAN1300:00"), walk order
  std::vector<ScanWarning> warnings;
};

// Turns a uevent DEVNAME ("dri/card0" or "/dev/dri/card0") into its /dev path; empty when the name
// is unsafe (absolute elsewhere, "..", empty segments, control characters). Thread-safe.
std::string DevNameToPath(std::string devname);

// Parses a sysfs `dev` file ("226:128"). False when malformed or out of range. Thread-safe.
bool ParseDevNumbers(const std::string& text, uint32_t* major, uint32_t* minor);

// Walks `device_dir` (not itself a node). Descends only into real directories (never symlinks), skips
// `power` and `msi_irqs`, and stops at child devices on a bus liken publishes on its own (pci, usb) and at
// `bluetooth` subtrees. I2C and SPI client devices are walked into: liken publishes no I2C or SPI bus, so
// their nodes belong to the PCI or USB device of their controller (docs/devices.md, "I2C and SPI"). A directory with a `dev` file and DEVNAME in its uevent is a node; odd entries
// (bad `dev`, unsafe DEVNAME) are skipped with a warning. Thread-safe.
WalkResult WalkDelivery(const std::string& device_dir);

}  // namespace liken::discovery
