// Gives a USB interface back to a kernel driver after a libusb program detached it.
#pragma once

#include <memory>
#include <string>

#include "absl/status/status.h"

namespace liken::kubelet {

// Rebinds USB interfaces that have no driver.
class UsbRebinder {
 public:
  virtual ~UsbRebinder() = default;
  // When `interface_name` ("2-1:1.0") exists and has no driver, asks the kernel to probe drivers for it.
  // OK when it has a driver or is gone. Thread-safe.
  virtual absl::Status RebindIfUnbound(const std::string& interface_name) = 0;
};

// The sysfs implementation: writes the interface name to `<sysfs_root>/bus/usb/drivers_probe`.
std::unique_ptr<UsbRebinder> NewSysfsUsbRebinder(std::string sysfs_root);

}  // namespace liken::kubelet
