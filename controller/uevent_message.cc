#include "controller/uevent_message.h"

#include <arpa/inet.h>

#include <cstdint>
#include <cstring>

namespace liken::controller {
namespace {

constexpr char kLibudevPrefix[] = "libudev";  // 8 bytes with its NUL
constexpr uint32_t kLibudevMagic = 0xfeedcafe;

// Reads KEY=VALUE\0 pairs from `props` into `event`.
void ReadProperties(std::string_view props, Uevent* event) {
  size_t pos = 0;
  while (pos < props.size()) {
    size_t end = props.find('\0', pos);
    if (end == std::string_view::npos) end = props.size();
    std::string_view kv = props.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    event->properties[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  auto get = [&](const char* key) {
    auto it = event->properties.find(key);
    return it == event->properties.end() ? std::string() : it->second;
  };
  if (event->action.empty()) event->action = get("ACTION");
  if (event->devpath.empty()) event->devpath = get("DEVPATH");
  event->subsystem = get("SUBSYSTEM");
}

}  // namespace

absl::StatusOr<Uevent> ParseUeventMessage(std::string_view data) {
  Uevent event;
  if (data.size() >= 8 && std::memcmp(data.data(), kLibudevPrefix, 8) == 0) {
    // struct udev_monitor_netlink_header: prefix[8], magic, header_size, properties_off, properties_len, ...
    if (data.size() < 8 + 4 * 4) return absl::InvalidArgumentError("libudev uevent: truncated header");
    uint32_t fields[4];
    std::memcpy(fields, data.data() + 8, sizeof(fields));
    if (ntohl(fields[0]) != kLibudevMagic) return absl::InvalidArgumentError("libudev uevent: bad magic");
    uint32_t off = fields[2], len = fields[3];
    if (off < 8 + 16 || off > data.size() || len > data.size() - off) {
      return absl::InvalidArgumentError("libudev uevent: properties outside the message");
    }
    ReadProperties(data.substr(off, len), &event);
  } else {
    size_t end = data.find('\0');
    std::string_view head = data.substr(0, end);
    size_t at = head.find('@');
    if (at == std::string_view::npos || at == 0) return absl::InvalidArgumentError("kernel uevent: no ACTION@DEVPATH");
    event.action = std::string(head.substr(0, at));
    event.devpath = std::string(head.substr(at + 1));
    if (end != std::string_view::npos) ReadProperties(data.substr(end + 1), &event);
  }
  if (event.action.empty() || event.devpath.empty()) {
    return absl::InvalidArgumentError("uevent without ACTION or DEVPATH");
  }
  return event;
}

bool IsRelevantUevent(const Uevent& event) {
  const std::string& a = event.action;
  if (a != "add" && a != "remove" && a != "bind" && a != "unbind") return false;
  if (event.devpath.rfind("/devices/virtual/", 0) == 0) return false;
  if (event.subsystem == "pci" || event.subsystem == "usb") return true;
  return (a == "add" || a == "remove") && event.properties.count("DEVNAME") > 0;
}

}  // namespace liken::controller
