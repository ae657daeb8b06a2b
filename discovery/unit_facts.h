// What the scan reads of one unit (a PCI function, or a USB interface and its device) before any rule
// of the contract applies. Reading only: every decision is made in device_rules.h and attributes.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"

namespace liken::discovery {

// A 16-bit ID as its attribute text ("8086") and its number.
struct HexId {
  std::string text;
  uint16_t value = 0;
};

// One PCI function. A plain value; thread-compatible.
struct PciFunctionFacts {
  std::string address;                    // "0000:00:02.0"
  std::string dir;                        // its directory under <sysfs>/devices
  std::string driver;                     // the bound driver; empty when none is bound
  std::optional<std::string> class_code;  // six lowercase hex digits; nullopt when unreadable or not hex
  std::string modalias;                   // the `modalias` attribute, else the uevent's MODALIAS
  std::optional<HexId> vendor;
  std::optional<HexId> product;
  std::optional<int64_t> numa_node;       // nullopt when absent, negative or not a number
  std::optional<std::string> pcie_root;   // "pci0000:00" when under a PCI root complex
};

// One USB interface. A plain value; thread-compatible.
struct UsbInterfaceFacts {
  std::string name;                            // "2-1:1.0"
  std::string dir;
  std::string driver;                          // empty when none is bound
  std::optional<std::string> interface_class;  // two lowercase hex digits
  std::string modalias;
  std::optional<std::string> pcie_root;
};

// The USB device an interface belongs to (the interface directory's parent). Thread-compatible.
struct UsbDeviceFacts {
  std::string name;                      // the port path ("2-1"), or "usbN" for the USB core's root hub
  std::string dir;
  std::optional<std::string> product_name;  // its own `product` string
  std::optional<std::string> serial;
  std::optional<std::string> vendor;     // idVendor, four lowercase hex digits
  std::optional<std::string> product;    // idProduct
  std::string devname;                   // the uevent's DEVNAME (its usbfs node)
  std::optional<std::string> dev;        // the `dev` file ("189:3")
  std::optional<int64_t> numa_node;      // of the nearest ancestor that has one (its host controller)
  std::string driver;                    // the bound driver ("usb"); empty when none is bound
  std::optional<std::string> authorized;           // "1", "0"; nullopt when absent
  std::optional<std::string> configuration_value;  // bConfigurationValue: "1", "" when not configured
  std::optional<std::string> device_class;         // bDeviceClass, two lowercase hex digits ("09": a hub)
};

// Reads the PCI function at `dir` (under `devices_root`, <sysfs>/devices). Fails when its uevent cannot
// be read. Thread-safe.
absl::StatusOr<PciFunctionFacts> ReadPciFunctionFacts(const std::string& address, const std::string& dir,
                                                      const std::string& devices_root);

// Reads the USB interface `name` at `dir`. Fails when its uevent cannot be read. Thread-safe.
absl::StatusOr<UsbInterfaceFacts> ReadUsbInterfaceFacts(const std::string& name, const std::string& dir,
                                                        const std::string& devices_root);

// Reads the USB device at `dir`. Fails when its uevent cannot be read. Thread-safe.
absl::StatusOr<UsbDeviceFacts> ReadUsbDeviceFacts(const std::string& dir, const std::string& devices_root);

// Parses a `numa_node` value: 0..4096, else nullopt (the kernel writes -1 for none). Thread-safe.
std::optional<int64_t> ParseNumaNode(const std::optional<std::string>& raw);

}  // namespace liken::discovery
