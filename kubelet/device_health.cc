#include "kubelet/device_health.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace liken::kubelet {

std::vector<DeviceHealthState> ComputeDeviceHealth(const discovery::Inventory& inventory,
                                                   const std::vector<std::string>& prepared_devices) {
  std::vector<DeviceHealthState> out;
  absl::flat_hash_set<std::string> present;
  for (const auto& d : inventory.published) {
    if (present.insert(d.name).second) out.push_back({d.name, true, ""});
  }
  for (const auto& name : prepared_devices) {
    if (present.contains(name)) continue;
    present.insert(name);
    out.push_back({name, false, absl::StrCat("device ", name,
                                             " is no longer present on this node (unplugged, or its driver was "
                                             "unbound); a claim still holds it")});
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.device < b.device; });
  return out;
}

}  // namespace liken::kubelet
