#include "discovery/amd_compute.h"

#include <algorithm>

#include "common/files.h"
#include "discovery/delivery_walk.h"
#include "discovery/sysfs_device.h"
#include "discovery/uevent.h"

namespace liken::discovery {

std::optional<DeviceNode> ReadKfdNode(const std::string& sysfs_root, std::vector<ScanWarning>* warnings) {
  const std::string dir = sysfs_root + "/devices/virtual/kfd/kfd";
  auto uevent_text = ReadFileToString(dir + "/uevent", 64 * 1024);
  if (!uevent_text.ok()) return std::nullopt;  // amdkfd is not loaded: nothing to deliver
  auto warn = [&](const std::string& why) {
    warnings->push_back({dir, why + "; /dev/kfd is not delivered"});
    return std::nullopt;
  };
  if (LinkBaseName(dir, "subsystem") != "kfd") return warn("the kfd device is not in subsystem kfd");
  auto uevent = ParseUevent(*uevent_text);
  DeviceNode node;
  node.path = DevNameToPath(uevent["DEVNAME"]);
  node.subsystem = "kfd";
  if (node.path != kKfdPath) return warn("the kfd device's DEVNAME is not kfd");
  auto dev = ReadAttribute(dir + "/dev");
  if (!dev.ok() || !ParseDevNumbers(*dev, &node.major, &node.minor)) {
    return warn("unreadable or malformed `dev` file of the kfd device");
  }
  return node;
}

void AddAmdComputeNode(const std::string& driver, const std::optional<DeviceNode>& kfd, DeliveryDecision* decision) {
  if (driver != kKfdDriver || !kfd) return;
  for (DeliverySplit& split : decision->devices) {
    if (!split.render_node) continue;
    split.nodes.push_back(*kfd);
    std::sort(split.nodes.begin(), split.nodes.end(),
              [](const DeviceNode& a, const DeviceNode& b) { return a.path < b.path; });
  }
}

bool DeliversKfd(const PublishedDevice& device) {
  return std::any_of(device.nodes.begin(), device.nodes.end(), [](const DeviceNode& n) { return n.path == kKfdPath; });
}

}  // namespace liken::discovery
