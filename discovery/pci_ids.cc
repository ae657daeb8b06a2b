#include "discovery/pci_ids.h"

#include "common/files.h"
#include "common/text.h"

namespace liken::discovery {
namespace {

// Parses exactly four hex digits at the start of `s`.
bool ParseHex4(std::string_view s, uint16_t* out) {
  if (s.size() < 4) return false;
  uint16_t v = 0;
  for (int i = 0; i < 4; ++i) {
    char c = s[i];
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    v = static_cast<uint16_t>(v * 16 + d);
  }
  *out = v;
  return true;
}

// The name after the ID and its separating spaces, or empty when there is none.
std::string_view NameAfterId(std::string_view line) {
  if (line.size() <= 4) return {};
  std::string_view rest = line.substr(4);
  size_t start = rest.find_first_not_of(" \t");
  if (start == std::string_view::npos) return {};
  return rest.substr(start);
}

}  // namespace

PciIdsDatabase PciIdsDatabase::Parse(std::string_view text) {
  PciIdsDatabase db;
  bool in_vendor = false;  // false inside the class section ("C xx") and before the first vendor
  uint16_t vendor = 0;
  for (std::string_view line : SplitLines(text)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] != '\t') {
      uint16_t id;
      if (ParseHex4(line, &id) && !NameAfterId(line).empty()) {
        vendor = id;
        in_vendor = true;
        db.vendors_.emplace(id, std::string(NameAfterId(line)));
      } else {
        in_vendor = false;  // "C 03  Display controller" and anything unknown
      }
      continue;
    }
    if (!in_vendor) continue;
    if (line.size() > 1 && line[1] == '\t') continue;  // subsystem lines
    std::string_view body = line.substr(1);
    uint16_t device;
    if (ParseHex4(body, &device) && !NameAfterId(body).empty()) {
      db.devices_.emplace((static_cast<uint32_t>(vendor) << 16) | device, std::string(NameAfterId(body)));
    }
  }
  return db;
}

absl::StatusOr<PciIdsDatabase> PciIdsDatabase::Load(const std::string& path) {
  auto text = ReadFileToString(path, 64u << 20);
  if (!text.ok()) return text.status();
  return Parse(*text);
}

std::optional<std::string> PciIdsDatabase::VendorName(uint16_t vendor) const {
  auto it = vendors_.find(vendor);
  if (it == vendors_.end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> PciIdsDatabase::DeviceName(uint16_t vendor, uint16_t device) const {
  auto it = devices_.find((static_cast<uint32_t>(vendor) << 16) | device);
  if (it == devices_.end()) return std::nullopt;
  return it->second;
}

}  // namespace liken::discovery
