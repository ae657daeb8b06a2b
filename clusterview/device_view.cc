#include "clusterview/device_view.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace liken::clusterview {
namespace {

std::string Identity(const apis::SliceDevice& device) {
  std::string id;
  auto vendor = LikenAttribute(device, "vendor");
  auto product = LikenAttribute(device, "product");
  if (vendor && product) id = absl::StrCat(*vendor, ":", *product);
  if (auto serial = LikenAttribute(device, "serial")) id = id.empty() ? *serial : absl::StrCat(id, " ", *serial);
  return id;
}

std::string TaintsText(const std::vector<apis::DeviceTaint>& taints) {
  std::vector<std::string> parts;
  for (const auto& t : taints) {
    parts.push_back(t.value.empty() ? absl::StrCat(t.key, ":", t.effect)
                                    : absl::StrCat(t.key, "=", t.value, ":", t.effect));
  }
  return absl::StrJoin(parts, ",");
}

bool Shared(const apis::SliceDevice& device) { return device.allow_multiple_allocations.value_or(false); }

bool AttributeMatches(const apis::SliceDevice& device, const std::string& name, const std::string& value) {
  std::string key = name.find('/') == std::string::npos ? absl::StrCat(kLikenDriver, "/", name) : name;
  auto it = device.attributes.find(key);
  if (it == device.attributes.end() && key.rfind(absl::StrCat(kLikenDriver, "/"), 0) == 0) {
    it = device.attributes.find(key.substr(std::string(kLikenDriver).size() + 1));
  }
  return it != device.attributes.end() && AttributeText(it->second) == value;
}

}  // namespace

absl::Status AddAttributeFilter(const std::string& text, DeviceFilter* filter) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return absl::InvalidArgumentError(absl::StrCat("--attribute '", text, "': want NAME=VALUE, e.g. serial=A50285BI"));
  }
  filter->attributes[text.substr(0, eq)] = text.substr(eq + 1);
  return absl::OkStatus();
}

std::vector<DeviceRow> BuildDeviceRows(const ClusterIndex& index, const DeviceFilter& filter) {
  std::vector<DeviceRow> rows;
  for (const auto& slice : index.snapshot().slices) {
    if (!filter.nodes.empty() &&
        std::find(filter.nodes.begin(), filter.nodes.end(), slice.node_name) == filter.nodes.end()) {
      continue;
    }
    for (const auto& device : slice.devices) {
      if (!filter.subsystem.empty() && LikenAttribute(device, "subsystem") != filter.subsystem) continue;
      bool attributes_match = true;
      for (const auto& [name, value] : filter.attributes) {
        if (!AttributeMatches(device, name, value)) attributes_match = false;
      }
      if (!attributes_match) continue;
      DeviceRow row{slice.node_name, slice.pool.name, slice.metadata.name, device,
                    index.HoldersOf(slice.pool.name, device.name)};
      if (filter.held_only && row.holders.empty()) continue;
      if (filter.free_only && !row.holders.empty()) continue;
      rows.push_back(std::move(row));
    }
  }
  std::sort(rows.begin(), rows.end(), [](const DeviceRow& a, const DeviceRow& b) {
    return std::tie(a.node, a.device.name) < std::tie(b.node, b.device.name);
  });
  return rows;
}

std::string HoldersText(const std::vector<DeviceHolder>& holders) {
  std::vector<std::string> parts;
  for (const auto& h : holders) {
    std::string text = absl::StrCat(h.namespace_name, "/", h.claim);
    if (h.admin_access) text += "(admin)";
    if (!h.pods.empty()) absl::StrAppend(&text, " -> ", absl::StrJoin(h.pods, ","));
    parts.push_back(text);
  }
  return absl::StrJoin(parts, "; ");
}

std::string RenderDevices(const std::vector<DeviceRow>& rows, OutputFormat format) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml) {
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json item;
      item["node"] = r.node;
      item["pool"] = r.pool;
      item["slice"] = r.slice;
      item["device"] = r.device.name;
      nlohmann::ordered_json attributes = nlohmann::ordered_json::object();
      for (const auto& [name, value] : r.device.attributes) attributes[name] = AttributeText(value);
      item["attributes"] = attributes;
      item["shared"] = Shared(r.device);
      nlohmann::ordered_json taints = nlohmann::ordered_json::array();
      for (const auto& t : r.device.taints) {
        nlohmann::ordered_json taint{{"key", t.key}, {"value", t.value}, {"effect", t.effect}};
        if (!t.time_added.empty()) taint["timeAdded"] = t.time_added;
        taints.push_back(taint);
      }
      item["taints"] = taints;
      nlohmann::ordered_json holders = nlohmann::ordered_json::array();
      for (const auto& h : r.holders) {
        holders.push_back(
            {{"namespace", h.namespace_name}, {"claim", h.claim}, {"pods", h.pods}, {"adminAccess", h.admin_access}});
      }
      item["heldBy"] = holders;
      items.push_back(item);
    }
    nlohmann::ordered_json doc{{"apiVersion", "v1"}, {"kind", "LikenDeviceList"}, {"items", items}};
    return RenderDocument(doc, format);
  }
  std::vector<std::string> header{"NODE", "DEVICE", "SUBSYSTEM", "IDENTITY", "SHARING", "TAINTS", "HELD-BY"};
  bool wide = format == OutputFormat::kWide;
  if (wide) header.insert(header.end(), {"ADDRESS", "DRIVER", "SLICE"});
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    std::vector<std::string> line{r.node,
                                  r.device.name,
                                  LikenAttribute(r.device, "subsystem").value_or(""),
                                  Identity(r.device),
                                  Shared(r.device) ? "shared" : "exclusive",
                                  TaintsText(r.device.taints),
                                  HoldersText(r.holders)};
    if (wide) {
      line.push_back(LikenAttribute(r.device, "address").value_or(""));
      line.push_back(LikenAttribute(r.device, "driver").value_or(""));
      line.push_back(r.slice);
    }
    table.push_back(std::move(line));
  }
  return RenderTable(header, table);
}

}  // namespace liken::clusterview
