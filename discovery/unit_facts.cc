#include "discovery/unit_facts.h"

#include <charconv>

#include "common/files.h"
#include "discovery/attributes.h"
#include "discovery/sysfs_device.h"

namespace liken::discovery {
namespace {

std::optional<HexId> ReadHexId(const SysfsDevice& device, const char* file) {
  auto hex = NormalizeHex(device.Attribute(file).value_or(""), 4);
  if (!hex) return std::nullopt;
  uint16_t value = 0;
  std::from_chars(hex->data(), hex->data() + hex->size(), value, 16);  // four hex digits always fit
  return HexId{*hex, value};
}

std::string Modalias(const SysfsDevice& device) {
  return device.Attribute("modalias").value_or(device.Property("MODALIAS"));
}

// "pci0000:00" for a directory under a PCI root complex, else nullopt.
std::optional<std::string> PcieRoot(const std::string& devices_root, const std::string& dir) {
  if (dir.rfind(devices_root + "/", 0) != 0) return std::nullopt;
  std::string rest = dir.substr(devices_root.size() + 1);
  std::string top = rest.substr(0, rest.find('/'));
  if (top.rfind("pci", 0) != 0) return std::nullopt;
  return top;
}

// The numa_node of the closest ancestor (from `dir` up) that has one of 0 or more.
std::optional<int64_t> NearestNumaNode(const std::string& devices_root, std::string dir) {
  while (dir.size() > devices_root.size() && dir.rfind(devices_root, 0) == 0) {
    auto raw = ReadAttribute(dir + "/numa_node");
    if (raw.ok()) return ParseNumaNode(*raw);
    dir = DirName(dir);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> ParseNumaNode(const std::optional<std::string>& raw) {
  if (!raw) return std::nullopt;
  const char* begin = raw->data();
  const char* end = begin + raw->size();
  while (begin != end && (*begin == ' ' || *begin == '\t' || *begin == '\n')) ++begin;  // as strtol skips
  if (begin != end && *begin == '+') ++begin;
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(begin, end, v);
  if (ec != std::errc() || ptr != end || begin == end || v < 0 || v > 4096) return std::nullopt;
  return v;
}

absl::StatusOr<PciFunctionFacts> ReadPciFunctionFacts(const std::string& address, const std::string& dir,
                                                      const std::string& devices_root) {
  auto device = ReadSysfsDevice(dir);
  if (!device.ok()) return device.status();
  PciFunctionFacts facts;
  facts.address = address;
  facts.dir = dir;
  facts.driver = device->driver;
  facts.class_code = NormalizeHex(device->Attribute("class").value_or(""), 6);
  facts.modalias = Modalias(*device);
  facts.vendor = ReadHexId(*device, "vendor");
  facts.product = ReadHexId(*device, "device");
  facts.numa_node = ParseNumaNode(device->Attribute("numa_node"));
  facts.pcie_root = PcieRoot(devices_root, dir);
  return facts;
}

absl::StatusOr<UsbInterfaceFacts> ReadUsbInterfaceFacts(const std::string& name, const std::string& dir,
                                                        const std::string& devices_root) {
  auto device = ReadSysfsDevice(dir);
  if (!device.ok()) return device.status();
  UsbInterfaceFacts facts;
  facts.name = name;
  facts.dir = dir;
  facts.driver = device->driver;
  facts.interface_class = NormalizeHex(device->Attribute("bInterfaceClass").value_or(""), 2);
  facts.modalias = Modalias(*device);
  facts.pcie_root = PcieRoot(devices_root, dir);
  return facts;
}

absl::StatusOr<UsbDeviceFacts> ReadUsbDeviceFacts(const std::string& dir, const std::string& devices_root) {
  auto device = ReadSysfsDevice(dir);
  if (!device.ok()) return device.status();
  UsbDeviceFacts facts;
  facts.name = device->name;
  facts.dir = dir;
  facts.product_name = device->Attribute("product");
  facts.serial = device->Attribute("serial");
  facts.vendor = NormalizeHex(device->Attribute("idVendor").value_or(""), 4);
  facts.product = NormalizeHex(device->Attribute("idProduct").value_or(""), 4);
  facts.devname = device->Property("DEVNAME");
  facts.dev = device->Attribute("dev");
  facts.numa_node = NearestNumaNode(devices_root, dir);
  facts.driver = device->driver;
  facts.authorized = device->Attribute("authorized");
  facts.configuration_value = device->Attribute("bConfigurationValue");
  facts.device_class = NormalizeHex(device->Attribute("bDeviceClass").value_or(""), 2);
  return facts;
}

}  // namespace liken::discovery
