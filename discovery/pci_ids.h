// The PCI ID database (pci.ids): vendor and device names by numeric ID.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "absl/status/statusor.h"

namespace liken::discovery {

// An immutable, parsed pci.ids. Thread-safe after construction (read-only).
class PciIdsDatabase {
 public:
  // Parses pci.ids text. Malformed lines are skipped; never fails. Thread-safe.
  static PciIdsDatabase Parse(std::string_view text);

  // Reads and parses the file at `path`. NotFound/PermissionDenied when it cannot be read. Thread-safe.
  static absl::StatusOr<PciIdsDatabase> Load(const std::string& path);

  // The vendor's name, if known.
  std::optional<std::string> VendorName(uint16_t vendor) const;

  // The device's name (without the vendor), if known.
  std::optional<std::string> DeviceName(uint16_t vendor, uint16_t device) const;

  // Number of device entries (for tests and diagnostics).
  size_t device_count() const { return devices_.size(); }

 private:
  std::unordered_map<uint16_t, std::string> vendors_;
  std::unordered_map<uint32_t, std::string> devices_;
};

}  // namespace liken::discovery
