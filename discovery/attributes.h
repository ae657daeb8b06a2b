// The contract's device attributes: names, value normalisation, and the API's limits on values.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "discovery/inventory.h"
#include "discovery/pci_ids.h"
#include "discovery/unit_facts.h"

namespace liken::discovery {

// Attribute names (fully qualified).
inline constexpr char kAttrBus[] = "liken.sh/bus";
inline constexpr char kAttrAddress[] = "liken.sh/address";
inline constexpr char kAttrDriver[] = "liken.sh/driver";
inline constexpr char kAttrClass[] = "liken.sh/class";
inline constexpr char kAttrClassCode[] = "liken.sh/classCode";
inline constexpr char kAttrSubsystem[] = "liken.sh/subsystem";
inline constexpr char kAttrRenderNode[] = "liken.sh/renderNode";
inline constexpr char kAttrDisplayNode[] = "liken.sh/displayNode";
inline constexpr char kAttrName[] = "liken.sh/name";
inline constexpr char kAttrModalias[] = "liken.sh/modalias";
inline constexpr char kAttrSerial[] = "liken.sh/serial";
inline constexpr char kAttrVendor[] = "liken.sh/vendor";
inline constexpr char kAttrProduct[] = "liken.sh/product";
inline constexpr char kAttrPcieRoot[] = "resource.kubernetes.io/pcieRoot";
inline constexpr char kAttrPciBusId[] = "resource.kubernetes.io/pciBusID";
inline constexpr char kAttrNumaNode[] = "resource.kubernetes.io/numaNode";

// The class word for a PCI class byte (0x03 → "display"), or nullopt. Thread-safe.
std::optional<std::string> PciClassWord(uint8_t class_byte);

// The class word for a USB interface class (0x0e → "video"), or nullopt. Thread-safe.
std::optional<std::string> UsbClassWord(uint8_t interface_class);

// Normalises a hex ID ("0x8086\n", "0403") to lowercase digits without prefix, exactly `digits` long
// (left-padded with zeros). nullopt when it is not hex or is longer. Thread-safe.
std::optional<std::string> NormalizeHex(std::string_view raw, size_t digits);

// True when `s` is valid UTF-8 without control characters. Thread-safe.
bool IsCleanUtf8(std::string_view s);

// Cuts `s` to at most `max_bytes` at a UTF-8 character boundary. Thread-safe.
std::string CutUtf8(std::string_view s, size_t max_bytes);

// Collects one device's attributes, leaving out (with a warning) any value the API would refuse.
class AttributeSet {
 public:
  // `device` names the device in warnings; `warnings` receives them (not owned; must outlive this).
  AttributeSet(std::string device, std::vector<ScanWarning>* warnings)
      : device_(std::move(device)), warnings_(warnings) {}

  // Adds a string value if present, clean UTF-8 and at most 64 bytes; otherwise leaves it out with a warning.
  void AddString(const char* name, const std::optional<std::string>& value);
  // Adds a name: cut at a UTF-8 boundary to 64 bytes (never left out for length).
  void AddName(const std::optional<std::string>& value);
  // Adds a bool value.
  void AddBool(const char* name, bool value);
  // Adds an int value.
  void AddInt(const char* name, int64_t value);

  // The collected attributes.
  const std::map<std::string, AttributeValue>& values() const { return values_; }

 private:
  std::string device_;
  std::vector<ScanWarning>* warnings_;
  std::map<std::string, AttributeValue> values_;
};

// Attributes of a PCI function's devices: bus, address, driver, class, IDs, the name from `pci_ids`
// (may be null), modalias and topology. A value the API would refuse is left out with a warning naming
// `device` in `warnings` (not owned; must outlive the set). Thread-safe (pure but for `warnings`).
AttributeSet PciAttributes(const std::string& device, const PciFunctionFacts& function, const PciIdsDatabase* pci_ids,
                           std::vector<ScanWarning>* warnings);

// Attributes of a USB interface's device: the address is the port path of `usb_device`, the name, serial
// and IDs are the device's own, the class is the interface's. As PciAttributes otherwise.
AttributeSet UsbAttributes(const std::string& device, const UsbInterfaceFacts& interface,
                           const UsbDeviceFacts& usb_device, std::vector<ScanWarning>* warnings);

}  // namespace liken::discovery
