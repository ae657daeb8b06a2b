// Kernel uevents as netlink messages (the triggers' input): parse both wire formats, decide which ones matter for
// the slices. Not discovery/uevent.h, which parses the `uevent` files of sysfs.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace liken::controller {

// One uevent, whatever format it came in.
struct Uevent {
  std::string action;     // add, remove, bind, unbind, change, ...
  std::string devpath;    // "/devices/pci0000:00/0000:00:14.0/usb1/1-4"
  std::string subsystem;  // "pci", "usb", "net", ...
  std::map<std::string, std::string> properties;
};

// Parses a netlink message: the kernel's format (`ACTION@DEVPATH\0KEY=VALUE\0...`) or libudev's monitor
// format ("libudev\0" + header with the properties' offset and length). InvalidArgument for anything
// else or a truncated message. Thread-safe.
absl::StatusOr<Uevent> ParseUeventMessage(std::string_view data);

// True when the event can change what the node publishes: add/remove/bind/unbind of PCI or USB
// devices, or of a device node under real hardware; never devices under /devices/virtual (veth, loop,
// tun ...). Thread-safe.
bool IsRelevantUevent(const Uevent& event);

}  // namespace liken::controller
