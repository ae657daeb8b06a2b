// Which unit a device is: a device name says where it is plugged (the port or the PCI address); its identity says
// which piece of hardware sits there, so a claim prepared on one unit is not handed another one in the same port.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "discovery/inventory.h"

namespace liken::discovery {

// The identity of one unit, from its published attributes: vendor and product (`liken.sh/vendor`,
// `liken.sh/product`), and the serial where the unit has one (`liken.sh/serial`). Empty fields: not known.
struct DeviceIdentity {
  std::string vendor;
  std::string product;
  std::string serial;

  friend bool operator==(const DeviceIdentity&, const DeviceIdentity&) = default;
};

// The identity in `attributes` (a field absent or not a string is left empty). Thread-safe.
DeviceIdentity IdentityOf(const std::map<std::string, AttributeValue>& attributes);

// True when `found` is the same unit as `recorded` (what a claim was prepared on): vendor and product equal, and
// the serial equal where the recorded unit has one. A recorded identity that names neither vendor nor product (a
// record written before attributes were kept) matches any unit: nothing says it is another. Thread-safe.
bool SameUnit(const DeviceIdentity& recorded, const DeviceIdentity& found);

// The identity in one line for logs and the report: "vendor=0403 product=6001 serial=A1" (empty fields left out;
// "unknown" when all are). Thread-safe.
std::string IdentityText(const DeviceIdentity& identity);

}  // namespace liken::discovery
