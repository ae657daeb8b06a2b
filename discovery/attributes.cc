#include "discovery/attributes.h"

#include <charconv>

#include "apis/resource_slice.h"

namespace liken::discovery {

std::optional<std::string> PciClassWord(uint8_t class_byte) {
  switch (class_byte) {
    case 0x01: return "storage";
    case 0x02: return "network";
    case 0x03: return "display";
    case 0x04: return "multimedia";
    case 0x05: return "memory";
    case 0x06: return "bridge";
    case 0x07: return "communication";
    case 0x08: return "system";
    case 0x09: return "input";
    case 0x0c: return "serial-bus";
    case 0x0d: return "wireless";
    case 0x10: return "encryption";
    case 0x12: return "accelerator";
    default: return std::nullopt;
  }
}

std::optional<std::string> UsbClassWord(uint8_t interface_class) {
  switch (interface_class) {
    case 0x01: return "audio";
    case 0x02: return "communications";
    case 0x03: return "hid";
    case 0x06: return "imaging";
    case 0x07: return "printer";
    case 0x08: return "mass-storage";
    case 0x0a: return "cdc-data";
    case 0x0b: return "smart-card";
    case 0x0e: return "video";
    case 0x10: return "audio-video";
    case 0xe0: return "wireless";
    case 0xff: return "vendor-specific";
    default: return std::nullopt;
  }
}

std::optional<std::string> NormalizeHex(std::string_view raw, size_t digits) {
  while (!raw.empty() && (raw.back() == '\n' || raw.back() == ' ' || raw.back() == '\t')) raw.remove_suffix(1);
  while (!raw.empty() && (raw.front() == ' ' || raw.front() == '\t')) raw.remove_prefix(1);
  if (raw.size() > 2 && raw[0] == '0' && (raw[1] == 'x' || raw[1] == 'X')) raw.remove_prefix(2);
  if (raw.empty() || raw.size() > digits) return std::nullopt;
  std::string out;
  for (char c : raw) {
    if (c >= '0' && c <= '9') out += c;
    else if (c >= 'a' && c <= 'f') out += c;
    else if (c >= 'A' && c <= 'F') out += static_cast<char>(c - 'A' + 'a');
    else return std::nullopt;
  }
  return std::string(digits - out.size(), '0') + out;
}

bool IsCleanUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) return false;
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) {
      unsigned char cc = static_cast<unsigned char>(s[i + k]);
      if ((cc >> 6) != 0x2) return false;
      cp = (cp << 6) | (cc & 0x3f);
    }
    // Overlong forms, surrogates and values beyond Unicode.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
      return false;
    if (cp >= 0x80 && cp < 0xa0) return false;  // C1 controls
    i += len;
  }
  return true;
}

std::string CutUtf8(std::string_view s, size_t max_bytes) {
  if (s.size() <= max_bytes) return std::string(s);
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xc0) == 0x80) --cut;
  std::string out(s.substr(0, cut));
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

namespace {

std::string Trim(const std::string& s) {
  size_t start = s.find_first_not_of(" \t\n");
  if (start == std::string::npos) return {};
  size_t end = s.find_last_not_of(" \t\n");
  return s.substr(start, end - start + 1);
}

}  // namespace

void AttributeSet::AddString(const char* name, const std::optional<std::string>& value) {
  if (!value) return;
  std::string v = Trim(*value);
  if (v.empty()) return;  // absent, not empty
  if (!IsCleanUtf8(v)) {
    warnings_->push_back({device_, std::string(name) + " left out: not valid UTF-8 text"});
    return;
  }
  if (v.size() > apis::kMaxAttributeStringLength) {
    warnings_->push_back({device_, std::string(name) + " left out: " + std::to_string(v.size()) +
                                       " bytes exceed the API's 64"});
    return;
  }
  values_[name] = v;
}

void AttributeSet::AddName(const std::optional<std::string>& value) {
  if (!value) return;
  std::string v = Trim(*value);
  if (v.empty()) return;
  if (!IsCleanUtf8(v)) {
    warnings_->push_back({device_, std::string(kAttrName) + " left out: not valid UTF-8 text"});
    return;
  }
  values_[kAttrName] = CutUtf8(v, apis::kMaxAttributeStringLength);
}

void AttributeSet::AddBool(const char* name, bool value) { values_[name] = value; }

void AttributeSet::AddInt(const char* name, int64_t value) { values_[name] = value; }

AttributeSet PciAttributes(const std::string& device, const PciFunctionFacts& function, const PciIdsDatabase* pci_ids,
                           std::vector<ScanWarning>* warnings) {
  AttributeSet attrs(device, warnings);
  attrs.AddString(kAttrBus, "pci");
  attrs.AddString(kAttrAddress, function.address);
  attrs.AddString(kAttrDriver, function.driver);
  if (function.class_code) {
    attrs.AddString(kAttrClassCode, *function.class_code);
    uint8_t base_class = 0;
    std::from_chars(function.class_code->data(), function.class_code->data() + 2, base_class, 16);
    attrs.AddString(kAttrClass, PciClassWord(base_class));
  } else {
    warnings->push_back({device, "class left out: unreadable or not hex"});
  }
  if (function.vendor) attrs.AddString(kAttrVendor, function.vendor->text);
  if (function.product) attrs.AddString(kAttrProduct, function.product->text);
  if (function.vendor && function.product && pci_ids != nullptr) {
    attrs.AddName(pci_ids->DeviceName(function.vendor->value, function.product->value));
  }
  attrs.AddString(kAttrModalias, function.modalias);
  attrs.AddString(kAttrPcieRoot, function.pcie_root);
  attrs.AddString(kAttrPciBusId, function.address);
  if (function.numa_node) attrs.AddInt(kAttrNumaNode, *function.numa_node);
  return attrs;
}

AttributeSet UsbAttributes(const std::string& device, const UsbInterfaceFacts& interface,
                           const UsbDeviceFacts& usb_device, std::vector<ScanWarning>* warnings) {
  AttributeSet attrs(device, warnings);
  attrs.AddString(kAttrBus, "usb");
  attrs.AddString(kAttrAddress, usb_device.name);
  attrs.AddString(kAttrDriver, interface.driver);
  if (interface.interface_class) {
    attrs.AddString(kAttrClassCode, *interface.interface_class);
    uint8_t interface_class = 0;
    const std::string& code = *interface.interface_class;
    std::from_chars(code.data(), code.data() + code.size(), interface_class, 16);
    attrs.AddString(kAttrClass, UsbClassWord(interface_class));
  }
  attrs.AddName(usb_device.product_name);
  attrs.AddString(kAttrModalias, interface.modalias);
  attrs.AddString(kAttrSerial, usb_device.serial);
  attrs.AddString(kAttrVendor, usb_device.vendor);
  attrs.AddString(kAttrProduct, usb_device.product);
  attrs.AddString(kAttrPcieRoot, interface.pcie_root);
  if (usb_device.numa_node) attrs.AddInt(kAttrNumaNode, *usb_device.numa_node);
  return attrs;
}

}  // namespace liken::discovery
