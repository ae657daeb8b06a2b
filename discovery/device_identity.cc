#include "discovery/device_identity.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "discovery/attributes.h"

namespace liken::discovery {
namespace {

std::string StringAttribute(const std::map<std::string, AttributeValue>& attributes, const char* name) {
  auto it = attributes.find(name);
  if (it == attributes.end()) return "";
  const std::string* s = std::get_if<std::string>(&it->second);
  return s != nullptr ? *s : "";
}

}  // namespace

DeviceIdentity IdentityOf(const std::map<std::string, AttributeValue>& attributes) {
  return {StringAttribute(attributes, kAttrVendor), StringAttribute(attributes, kAttrProduct),
          StringAttribute(attributes, kAttrSerial)};
}

bool SameUnit(const DeviceIdentity& recorded, const DeviceIdentity& found) {
  if (recorded.vendor.empty() && recorded.product.empty()) return true;
  if (recorded.vendor != found.vendor || recorded.product != found.product) return false;
  return recorded.serial.empty() || recorded.serial == found.serial;
}

std::string IdentityText(const DeviceIdentity& identity) {
  std::vector<std::string> parts;
  if (!identity.vendor.empty()) parts.push_back(absl::StrCat("vendor=", identity.vendor));
  if (!identity.product.empty()) parts.push_back(absl::StrCat("product=", identity.product));
  if (!identity.serial.empty()) parts.push_back(absl::StrCat("serial=", identity.serial));
  return parts.empty() ? "unknown" : absl::StrJoin(parts, " ");
}

}  // namespace liken::discovery
