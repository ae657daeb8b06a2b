// The contract's rules (../shared/spec/liken-devices.md): which units a node publishes, under which
// names, split into which devices. Each rule is one named function; the scan (sysfs_scanner.cc) only
// reads facts (unit_facts.h, delivery_walk.h, storage_roles.h) and calls them.
// docs/layout.md ("Where each rule lives") maps each section of the contract to its function here (or in
// the file named for it) and to the test that states it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "discovery/delivery_walk.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"
#include "discovery/storage_roles.h"
#include "discovery/unit_facts.h"

namespace liken::discovery {

// The order of a device's nodes: paths compared with their digit runs as numbers (natural order, GNU
// strverscmp), so event8 sorts before event10. Thread-safe (pure).
bool NaturalPathLess(const std::string& a, const std::string& b);

// Rule 1: a driver is bound (`driver` is the bound driver's name, empty for none). Hardware without one
// goes to the unclaimed report. Thread-safe (pure).
bool HasBoundDriver(const std::string& driver);

// Bus structure on PCI: bridges (base class 06) and PCIe ports (driver pcieport). Thread-safe (pure).
bool IsPciBusStructure(const PciFunctionFacts& function);

// Bus structure on USB: a hub's interface (interface class 09, or driver hub). Thread-safe (pure).
bool IsUsbHub(const UsbInterfaceFacts& interface);

// Bus structure on USB: the USB core's own root hub device (usbN). Thread-safe (pure).
bool IsUsbRootHub(const UsbDeviceFacts& device);

// Device names: the bus and the address with dashes for punctuation, lower case
// ("pci", "0000:00:02.0" → "pci-0000-00-02-0"). Thread-safe (pure).
std::string DeviceNameFor(const std::string& bus, const std::string& address);

// Device names: true when `base` and every name derived from it (the longest suffix) are DNS labels.
// Thread-safe (pure).
bool IsPublishableDeviceName(const std::string& base);

// The host's storage facts as rule 3 needs them under --storage-roles=host.
struct StorageFactsForUnit {
  const HostStorageFacts* host = nullptr;  // null when unreadable (`host_error` says why)
  std::string host_error;
  BlockHolders holders;                    // of the unit's block nodes
};

// Rule 3: why a unit whose walk found `nodes` is withheld, or nullopt when it may be offered. Only a
// unit with a block or flash (mtd) node is withheld: flash always; a block node always under kWithholdAll,
// under kHost when it has a storage role (FindStorageRole) or the host's roles are unreadable. Thread-safe.
std::optional<std::string> StorageWithholdReason(StorageRoles roles, const std::vector<WalkedNode>& nodes,
                                                 const StorageFactsForUnit& facts);

// True when any of `nodes` is a block or flash (mtd) node (only then does rule 3 apply). Thread-safe.
bool DeliversBlockNode(const std::vector<WalkedNode>& nodes);

// USB devices: the usbfs node a claim on any interface of `device` also delivers; nullopt when DEVNAME
// or `dev` is missing or unusable. Thread-safe (pure).
std::optional<DeviceNode> UsbfsNode(const UsbDeviceFacts& device);

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

// Rule 2 and Sharing: applies the GPU, sound, Bluetooth, one-kind and mix rules to a bound unit's walk.
// `driver` is the bound driver's name. Storage is decided before this. Thread-safe (pure).
DeliveryDecision DecideDelivery(const std::string& driver, const WalkResult& walk);

// Rule 2, for the report: why a bound unit that publishes nothing (`decision` has no devices) is left out, one
// line with no device name ("network interface only (eth0)"). `pci_class` is the PCI class code, nullopt for
// a USB interface. Thread-safe (pure).
std::string LeftOutReason(const std::string& driver, const std::optional<std::string>& pci_class,
                          const WalkResult& walk, const DeliveryDecision& decision);

// A USB device with no interfaces (not authorized, or not configured): its state and one line for the
// operator saying why a claim would deliver nothing and what to do.
struct IdleUsbFinding {
  std::string state;   // "not authorized", "not configured", "no interfaces"
  std::string reason;  // with the remedy ("echo 1 > /sys/bus/usb/devices/1-2/authorized")
};

// What a USB device none of whose interfaces the scan saw is, for the report; nullopt for bus structure (the
// USB core's root hubs, hubs). Rule 2 leaves such a device out, with this reason. Thread-safe (pure).
std::optional<IdleUsbFinding> IdleUsbState(const UsbDeviceFacts& device);

}  // namespace liken::discovery
