#include "discovery/delivery_walk.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>

#include "common/files.h"
#include "discovery/sysfs_device.h"
#include "discovery/uevent.h"

namespace liken::discovery {
namespace {

constexpr int kMaxDepth = 24;

}  // namespace

bool ParseDevNumbers(const std::string& text, uint32_t* major, uint32_t* minor) {
  unsigned long ma = 0, mi = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%lu:%lu%c", &ma, &mi, &tail) != 2) return false;
  if (ma > 0xfff || mi > 0xfffff) return false;
  *major = static_cast<uint32_t>(ma);
  *minor = static_cast<uint32_t>(mi);
  return true;
}

std::string DevNameToPath(std::string devname) {
  if (devname.rfind("/dev/", 0) == 0) devname = devname.substr(5);
  if (devname.empty() || devname[0] == '/') return {};
  size_t pos = 0;
  while (pos <= devname.size()) {
    size_t end = devname.find('/', pos);
    if (end == std::string::npos) end = devname.size();
    std::string seg = devname.substr(pos, end - pos);
    if (seg.empty() || seg == "." || seg == "..") return {};
    pos = end + 1;
  }
  for (char c : devname) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return {};
  }
  return "/dev/" + devname;
}

namespace {

struct Entry {
  std::string name;
  bool is_dir;
};

std::vector<Entry> ListSubdirsAndFiles(const std::string& dir, bool* has_dev, bool* ok) {
  std::vector<Entry> out;
  *has_dev = false;
  DIR* d = ::opendir(dir.c_str());
  *ok = d != nullptr;
  if (!d) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    unsigned char type = e->d_type;
    if (type == DT_UNKNOWN) {
      struct stat st;
      if (::lstat((dir + "/" + name).c_str(), &st) != 0) continue;
      type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
    }
    if (type == DT_REG && name == "dev") *has_dev = true;
    if (type == DT_DIR) out.push_back({std::move(name), true});
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

// True for a child that is a device on a bus liken publishes on its own (PCI under a bridge, USB under a
// controller): its nodes are that device's. I2C and SPI clients are not: no slice lists them on their own.
bool IsDeviceOnBusBelow(const std::string& subsystem) { return subsystem == "pci" || subsystem == "usb"; }

// True for an I2C or SPI client device. An I2C adapter (a GPU's DDC bus, an LPSS controller's bus: DEVTYPE
// i2c_adapter, named i2c-<N>) is not.
bool IsBusClient(const std::string& path, const std::string& name, const std::string& subsystem) {
  if (subsystem == "spi") return true;
  if (subsystem != "i2c") return false;
  if (name.size() > 4 && name.rfind("i2c-", 0) == 0 &&
      name.find_first_not_of("0123456789", 4) == std::string::npos) {
    return false;
  }
  auto uevent = ReadFileToString(path + "/uevent", 64 * 1024);
  return !uevent.ok() || ParseUevent(*uevent)["DEVTYPE"] != "i2c_adapter";
}

void Walk(const std::string& dir, int depth, bool inside_sound, WalkResult* result) {
  if (depth > kMaxDepth) {
    result->warnings.push_back({dir, "sysfs subtree deeper than " + std::to_string(kMaxDepth) + " levels; not walked"});
    return;
  }
  bool has_dev = false, ok = false;
  std::vector<Entry> children = ListSubdirsAndFiles(dir, &has_dev, &ok);
  if (!ok) {
    if (depth > 0) result->warnings.push_back({dir, "cannot list directory; skipped"});
    return;
  }
  std::string subsystem = depth > 0 ? LinkBaseName(dir, "subsystem") : std::string();
  if (depth > 0 && has_dev) {
    auto uevent_text = ReadFileToString(dir + "/uevent", 256 * 1024);
    auto uevent = uevent_text.ok() ? ParseUevent(*uevent_text) : std::map<std::string, std::string>{};
    auto devname = uevent.find("DEVNAME");
    if (devname != uevent.end()) {
      auto dev = ReadAttribute(dir + "/dev");
      WalkedNode walked;
      walked.dir = dir;
      walked.inside_sound_card = inside_sound;
      walked.node.path = DevNameToPath(devname->second);
      walked.node.subsystem = subsystem;
      walked.node.type = subsystem == "block" ? 'b' : 'c';
      if (walked.node.path.empty()) {
        result->warnings.push_back({dir, "DEVNAME is not a safe /dev name; node skipped"});
      } else if (!dev.ok() || !ParseDevNumbers(*dev, &walked.node.major, &walked.node.minor)) {
        result->warnings.push_back({dir, "unreadable or malformed `dev` file; node skipped"});
      } else {
        result->nodes.push_back(std::move(walked));
      }
    }
  }
  bool child_inside_sound = inside_sound || subsystem == "sound";
  for (const Entry& child : children) {
    if (child.name == "power" || child.name == "msi_irqs") continue;
    if (child.name == "bluetooth") {
      result->has_bluetooth = true;
      continue;
    }
    std::string path = dir + "/" + child.name;
    std::string child_subsystem = LinkBaseName(path, "subsystem");
    if (IsDeviceOnBusBelow(child_subsystem)) {
      result->buses_below.insert(child_subsystem);
      continue;
    }
    if (IsBusClient(path, child.name, child_subsystem)) result->bus_clients.push_back(child.name);
    if (child_subsystem == "net") result->net_interfaces.push_back(child.name);
    if (child_subsystem == "bluetooth") {
      result->has_bluetooth = true;
      continue;
    }
    Walk(path, depth + 1, child_inside_sound, result);
  }
}

}  // namespace

WalkResult WalkDelivery(const std::string& device_dir) {
  WalkResult result;
  Walk(device_dir, 0, false, &result);
  return result;
}

}  // namespace liken::discovery
