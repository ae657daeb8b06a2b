// Builders for common hardware in a SysfsTree: PCI functions, USB devices and interfaces, nodes.
#pragma once

#include <map>
#include <string>

#include "test/discovery/sysfs_tree.h"

namespace liken::testing {

// PCI function attributes with sane defaults; `class_code` like "0x030000".
std::map<std::string, std::string> PciAttrs(const std::string& vendor, const std::string& device,
                                            const std::string& class_code, const std::string& numa = "-1");

// Adds a PCI function at `devpath` (last segment is the address) with `driver` ("" for none).
void AddPci(SysfsTree& t, const std::string& devpath, const std::string& driver, const std::string& vendor,
            const std::string& device, const std::string& class_code, const std::string& numa = "-1");

// Adds an xHCI controller at /devices/pci0000:00/0000:00:14.0 with root hub usb<bus>.
void AddXhciWithRootHub(SysfsTree& t, int bus = 1);

// Adds a USB device `port` ("1-2") under `parent_devpath` with busnum/devnum, ids, strings and its usbfs node.
// Returns its devpath.
std::string AddUsbDevice(SysfsTree& t, const std::string& parent_devpath, const std::string& port, int bus, int devnum,
                         const std::string& vendor, const std::string& product,
                         const std::map<std::string, std::string>& strings = {});

// Adds interface `<port>:1.<n>` under `device_devpath` with class `iclass` ("ff") and `driver` ("" for none).
// Returns its devpath.
std::string AddUsbInterface(SysfsTree& t, const std::string& device_devpath, int n, const std::string& iclass,
                            const std::string& driver);

}  // namespace liken::testing
