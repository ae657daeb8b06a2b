// The result of one hardware scan: what the node publishes, what it withholds, and what has no driver.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "apis/attribute_value.h"

namespace liken::discovery {

// The driver's name, its attribute domain and its CDI vendor.
inline constexpr char kDriverName[] = "liken.sh";

// One /dev entry a claim delivers.
struct DeviceNode {
  std::string path;       // absolute path in /dev, e.g. "/dev/dri/renderD128"
  char type = 'c';        // 'c' character device, 'b' block device
  uint32_t major = 0;     // from the sysfs `dev` file
  uint32_t minor = 0;
  std::string subsystem;  // kernel subsystem of the node ("drm", "tty", "usb" for the usbfs node)

  friend bool operator==(const DeviceNode&, const DeviceNode&) = default;
};

// An attribute value as the resource.k8s.io API types it.
using AttributeValue = apis::AttributeValue;

// One device of the ResourceSlice, with everything a claim on it delivers.
struct PublishedDevice {
  std::string name;                                   // DNS label, e.g. "pci-0000-00-02-0-display"
  std::map<std::string, AttributeValue> attributes;   // fully qualified names ("liken.sh/bus", ...)
  std::vector<DeviceNode> nodes;                      // sorted by path; usbfs node included for USB
  bool allow_multiple_allocations = false;
  std::string sysfs_path;                             // the device's directory under <sysfs>/devices
  std::vector<std::string> usb_interfaces;            // USB interface names ("2-1:1.0") for driver rebind

  friend bool operator==(const PublishedDevice&, const PublishedDevice&) = default;
};

// A device with nodes that is not offered, and why.
struct WithheldDevice {
  std::string name;
  std::string reason;
};

// A device that is left out because a claim on it would deliver nothing: one with a bound driver and no device
// node in its sysfs subtree (or only nodes no claim delivers), or an idle USB device (not authorized, not
// configured: no interfaces). Bus structure is not listed at all.
struct LeftOutDevice {
  std::string name;    // the name it would publish under ("pci-0000-41-00-0"; "usb-1-2" for an idle USB device)
  std::string driver;  // the bound driver ("nvidia"); empty for an idle USB device with none
  std::string reason;  // one line for the operator ("network interface only (eth0)")
  std::string idle;    // an idle USB device's state ("not authorized", "not configured"); empty for the others
};

// PCI or USB hardware with no driver bound, and the modules that could drive it.
struct UnclaimedDevice {
  std::string bus;      // "pci" or "usb"
  std::string address;  // "0000:03:00.0", or the USB port path "1-4" (the `address` attribute)
  std::string modalias;
  std::vector<std::string> modules;  // loadable modules whose alias matches (built-ins left out)
};

// A problem found while scanning that did not stop the scan (odd sysfs, an attribute left out).
struct ScanWarning {
  std::string device;   // device name or sysfs path it concerns
  std::string message;
};

// Everything one scan found. Devices are sorted by name.
struct Inventory {
  std::vector<PublishedDevice> published;
  std::vector<WithheldDevice> withheld;
  std::vector<LeftOutDevice> left_out;
  std::vector<UnclaimedDevice> unclaimed;
  std::vector<ScanWarning> warnings;

  // Returns the published device with `name`, or nullptr. Not thread-safe against mutation.
  const PublishedDevice* Find(const std::string& name) const;
  // The left-out devices that are idle USB devices (not authorized, not configured). Thread-compatible.
  std::vector<const LeftOutDevice*> IdleUsb() const;
};

}  // namespace liken::discovery
