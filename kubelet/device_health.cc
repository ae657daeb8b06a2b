#include "kubelet/device_health.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "discovery/device_identity.h"

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

std::vector<DeviceHealthState> ComputeDeviceHealth(const discovery::Inventory& inventory,
                                                   const std::vector<nodestate::HeldDevice>& held) {
  std::vector<std::string> names;
  names.reserve(held.size());
  for (const auto& h : held) names.push_back(h.name);
  std::vector<DeviceHealthState> out = ComputeDeviceHealth(inventory, names);
  for (const auto& h : held) {
    const discovery::PublishedDevice* now = inventory.Find(h.name);
    if (now == nullptr) continue;
    const discovery::DeviceIdentity prepared = discovery::IdentityOf(h.attributes);
    const discovery::DeviceIdentity found = discovery::IdentityOf(now->attributes);
    if (discovery::SameUnit(prepared, found)) continue;
    auto it = std::lower_bound(out.begin(), out.end(), h.name,
                               [](const DeviceHealthState& s, const std::string& name) { return s.device < name; });
    if (it == out.end() || it->device != h.name) continue;
    it->healthy = false;
    it->message = absl::StrCat("device ", h.name, " holds another unit (", discovery::IdentityText(found),
                               ") than the one prepared (", discovery::IdentityText(prepared),
                               "); a claim still holds the prepared one");
  }
  return out;
}

}  // namespace liken::kubelet
