// One device directory in sysfs: its identity (subsystem, driver, uevent) and its attribute files.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace liken::discovery {

// What liken reads of one sysfs device directory. A plain value; thread-compatible.
struct SysfsDevice {
  std::string dir;        // absolute directory, e.g. "/sys/devices/pci0000:00/0000:00:02.0"
  std::string name;       // last path segment, e.g. "0000:00:02.0"
  std::string subsystem;  // last segment of the `subsystem` link ("pci", "usb", "drm"), empty if none
  std::string driver;     // last segment of the `driver` link, empty when no driver is bound
  std::map<std::string, std::string> uevent;

  // Reads attribute `file` of this device (one trailing newline removed); nullopt when absent or unreadable.
  std::optional<std::string> Attribute(const std::string& file) const;
  // The uevent property `key`, or empty.
  std::string Property(const std::string& key) const;
};

// Reads the device at `dir`. NotFound when the directory or its uevent is missing. Thread-safe.
absl::StatusOr<SysfsDevice> ReadSysfsDevice(const std::string& dir);

// The last path segment of the symlink `dir`/`link`, or empty when it is not a readable link. Thread-safe.
std::string LinkBaseName(const std::string& dir, const char* link);

}  // namespace liken::discovery
