// Devices and ResourceClaims for kubelet plugin tests.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "discovery/inventory.h"

namespace liken::testing {

// One allocation result: request name and device name (driver liken.sh, pool = node unless given).
// Every member past the first two has an initializer, so `{request, device}` leaves the rest to their defaults.
struct TestResult {
  std::string request;
  std::string device;
  std::string pool{};  // empty: the node name passed to ClaimJson
  std::string driver = "liken.sh";
  std::string share_id{};  // empty: none
  bool admin_access = false;  // allocated for admin access (adminAccess: true)
};

// A ResourceClaim as the API server returns it; `allocated` false leaves status.allocation out.
inline nlohmann::json ClaimJson(const std::string& ns, const std::string& name, const std::string& uid,
                                const std::string& node, const std::vector<TestResult>& results,
                                bool allocated = true) {
  nlohmann::json j = {{"apiVersion", "resource.k8s.io/v1"},
                      {"kind", "ResourceClaim"},
                      {"metadata", {{"namespace", ns}, {"name", name}, {"uid", uid}, {"resourceVersion", "1"}}},
                      {"spec", {{"devices", {{"requests", nlohmann::json::array()}}}}}};
  if (!allocated) return j;
  nlohmann::json rs = nlohmann::json::array();
  for (const auto& r : results) {
    nlohmann::json jr = {{"request", r.request}, {"driver", r.driver}, {"pool", r.pool.empty() ? node : r.pool},
                         {"device", r.device}};
    if (!r.share_id.empty()) jr["shareID"] = r.share_id;
    if (r.admin_access) jr["adminAccess"] = true;
    rs.push_back(jr);
  }
  j["status"] = {{"allocation", {{"devices", {{"results", rs}}}}}};
  return j;
}

// A device node.
inline discovery::DeviceNode Node(const std::string& path, uint32_t major, uint32_t minor,
                                  const std::string& subsystem) {
  return {path, 'c', major, minor, subsystem};
}

// The render half of an integrated GPU (shareable).
inline discovery::PublishedDevice GpuRender(const std::string& sysfs_path = "") {
  discovery::PublishedDevice d;
  d.name = "pci-0000-00-02-0";
  d.nodes = {Node("/dev/dri/renderD128", 226, 128, "drm")};
  d.allow_multiple_allocations = true;
  d.sysfs_path = sysfs_path;
  return d;
}

// The display half of the same GPU.
inline discovery::PublishedDevice GpuDisplay(const std::string& sysfs_path = "") {
  discovery::PublishedDevice d;
  d.name = "pci-0000-00-02-0-display";
  d.nodes = {Node("/dev/dri/card0", 226, 0, "drm")};
  d.sysfs_path = sysfs_path;
  return d;
}

// A USB serial adapter: its tty and its usbfs node.
inline discovery::PublishedDevice UsbSerial(const std::string& sysfs_path = "") {
  discovery::PublishedDevice d;
  d.name = "usb-1-2-1-0";
  d.nodes = {Node("/dev/bus/usb/001/004", 189, 3, "usb"), Node("/dev/ttyUSB0", 188, 0, "tty")};
  d.sysfs_path = sysfs_path;
  d.usb_interfaces = {"1-2:1.0"};
  return d;
}

// `count` numbered exclusive devices "dev-<i>" with one node each.
inline std::vector<discovery::PublishedDevice> NumberedDevices(int count) {
  std::vector<discovery::PublishedDevice> out;
  for (int i = 0; i < count; ++i) {
    discovery::PublishedDevice d;
    d.name = "dev-" + std::to_string(i);
    d.nodes = {Node("/dev/test" + std::to_string(i), 240, static_cast<uint32_t>(i), "test")};
    out.push_back(d);
  }
  return out;
}

// An inventory of the given devices, sorted by name.
inline discovery::Inventory InventoryOf(std::vector<discovery::PublishedDevice> devices) {
  discovery::Inventory inv;
  inv.published = std::move(devices);
  std::sort(inv.published.begin(), inv.published.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return inv;
}

}  // namespace liken::testing
