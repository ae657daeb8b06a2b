#include "discovery/sysfs_device.h"

#include "common/files.h"
#include "discovery/uevent.h"

namespace liken::discovery {

std::optional<std::string> SysfsDevice::Attribute(const std::string& file) const {
  auto value = ReadAttribute(dir + "/" + file);
  if (!value.ok()) return std::nullopt;
  return *value;
}

std::string SysfsDevice::Property(const std::string& key) const {
  auto it = uevent.find(key);
  return it == uevent.end() ? std::string() : it->second;
}

std::string LinkBaseName(const std::string& dir, const char* link) {
  auto target = ReadLink(dir + "/" + link);
  if (!target.ok()) return {};
  std::string base = BaseName(*target);
  return base == ".." || base == "." ? std::string() : base;
}

absl::StatusOr<SysfsDevice> ReadSysfsDevice(const std::string& dir) {
  auto text = ReadFileToString(dir + "/uevent", 256 * 1024);
  if (!text.ok()) return text.status();
  SysfsDevice device;
  device.dir = dir;
  device.name = BaseName(dir);
  device.uevent = ParseUevent(*text);
  device.subsystem = LinkBaseName(dir, "subsystem");
  device.driver = LinkBaseName(dir, "driver");
  return device;
}

}  // namespace liken::discovery
