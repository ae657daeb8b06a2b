#include "discovery/report_format.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "discovery/amd_compute.h"
#include "discovery/attributes.h"
#include "discovery/slice_builder.h"

namespace liken::discovery {

nlohmann::ordered_json PlainAttributeValue(const AttributeValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* b = std::get_if<bool>(&value)) return *b;
  if (const auto* i = std::get_if<int64_t>(&value)) return *i;
  return std::get<apis::VersionValue>(value).semver;
}

nlohmann::ordered_json ReportToJson(const Inventory& inventory) {
  nlohmann::ordered_json out;
  out["published"] = nlohmann::ordered_json::array();
  for (const auto& d : inventory.published) {
    nlohmann::ordered_json item;
    item["name"] = d.name;
    nlohmann::ordered_json attrs = nlohmann::ordered_json::object();
    for (const auto& [key, value] : d.attributes) attrs[key] = PlainAttributeValue(value);
    item["attributes"] = std::move(attrs);
    nlohmann::ordered_json nodes = nlohmann::ordered_json::array();
    for (const auto& n : d.nodes) nodes.push_back(n.path);
    item["nodes"] = std::move(nodes);
    item["allowMultipleAllocations"] = d.allow_multiple_allocations;
    out["published"].push_back(std::move(item));
  }
  // Deliveries beyond the contract's walk, stated once for the operator.
  out["notes"] = nlohmann::ordered_json::array();
  if (std::any_of(inventory.published.begin(), inventory.published.end(), DeliversKfd)) out["notes"].push_back(kKfdNote);
  out["withheld"] = nlohmann::ordered_json::array();
  for (const auto& w : inventory.withheld) out["withheld"].push_back({{"name", w.name}, {"reason", w.reason}});
  out["leftOut"] = nlohmann::ordered_json::array();
  for (const auto& l : inventory.left_out) {
    nlohmann::ordered_json item = {{"name", l.name}, {"driver", l.driver}, {"reason", l.reason}};
    if (!l.idle.empty()) item["idle"] = l.idle;
    out["leftOut"].push_back(std::move(item));
  }
  out["unclaimed"] = nlohmann::ordered_json::array();
  for (const auto& u : inventory.unclaimed) {
    out["unclaimed"].push_back(
        {{"bus", u.bus}, {"address", u.address}, {"modalias", u.modalias}, {"modules", u.modules}});
  }
  out["warnings"] = nlohmann::ordered_json::array();
  for (const auto& w : inventory.warnings) out["warnings"].push_back({{"device", w.device}, {"message", w.message}});
  return out;
}

namespace {

std::string AttrString(const PublishedDevice& d, const char* key) {
  auto it = d.attributes.find(key);
  if (it == d.attributes.end()) return "-";
  if (const auto* s = std::get_if<std::string>(&it->second)) return *s;
  return "-";
}

std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s + " " : s + std::string(width - s.size(), ' ');
}

}  // namespace

std::string ReportToText(const Inventory& inventory) {
  std::ostringstream out;
  size_t name_w = 6, sub_w = 10;
  for (const auto& d : inventory.published) {
    name_w = std::max(name_w, d.name.size() + 2);
    sub_w = std::max(sub_w, AttrString(d, kAttrSubsystem).size() + 2);
  }
  out << "Published devices (" << inventory.published.size() << ")\n";
  out << Pad("NAME", name_w) << Pad("SUBSYSTEM", sub_w) << Pad("SHARED", 8) << Pad("DRIVER", 16) << "NODES\n";
  for (const auto& d : inventory.published) {
    std::string nodes;
    for (const auto& n : d.nodes) nodes += (nodes.empty() ? "" : ",") + n.path;
    out << Pad(d.name, name_w) << Pad(AttrString(d, kAttrSubsystem), sub_w)
        << Pad(d.allow_multiple_allocations ? "yes" : "no", 8) << Pad(AttrString(d, kAttrDriver), 16) << nodes
        << "\n";
  }
  if (std::any_of(inventory.published.begin(), inventory.published.end(), DeliversKfd)) {
    out << "Note: " << kKfdNote << "\n";
  }
  out << "\nWithheld devices (" << inventory.withheld.size() << ")\n";
  for (const auto& w : inventory.withheld) out << "  " << w.name << ": " << w.reason << "\n";
  const size_t idle = inventory.IdleUsb().size();
  out << "\nLeft out: a driver is bound, a claim would deliver nothing (" << inventory.left_out.size() - idle << ")\n";
  for (const auto& l : inventory.left_out) {
    if (l.idle.empty()) out << "  " << l.name << " (" << l.driver << "): " << l.reason << "\n";
  }
  if (idle > 0) {
    out << "\nLeft out: USB devices not authorized or not configured, no interfaces (" << idle << ")\n";
    for (const LeftOutDevice* l : inventory.IdleUsb()) {
      out << "  " << l->name << " (" << (l->driver.empty() ? "no driver" : l->driver) << "): " << l->reason << "\n";
    }
  }
  if (!inventory.warnings.empty()) {
    out << "\nWarnings (" << inventory.warnings.size() << ")\n";
    for (const auto& w : inventory.warnings) out << "  " << w.device << ": " << w.message << "\n";
  }
  out << "\n# Unclaimed hardware (" << inventory.unclaimed.size()
      << "): declare a module in the Machine's spec.modules to publish it.\n";
  out << "# spec:\n#   modules:\n";
  for (const auto& u : inventory.unclaimed) {
    std::string where = u.bus + " " + u.address + " " + u.modalias;
    if (u.modules.empty()) {
      out << "#   # (no known module)  # " << where << "\n";
    }
    for (const auto& m : u.modules) out << "#   - " << m << "  # " << where << "\n";
  }
  return out.str();
}

absl::StatusOr<nlohmann::ordered_json> ResourceSliceList(const std::string& node, const Inventory& inventory) {
  nlohmann::ordered_json list;
  list["apiVersion"] = "v1";
  list["kind"] = "List";
  list["items"] = nlohmann::ordered_json::array();
  for (const auto& slice : BuildResourceSlices(node, inventory, 1)) {
    if (absl::Status status = apis::ValidateResourceSlice(slice); !status.ok()) {
      return absl::InternalError(absl::StrCat("internal error: ", status.message()));
    }
    // Re-serialise in kubectl's field order.
    nlohmann::json j = apis::ResourceSliceToJson(slice);
    nlohmann::ordered_json item;
    item["apiVersion"] = j["apiVersion"];
    item["kind"] = j["kind"];
    item["metadata"] = j["metadata"];
    nlohmann::ordered_json spec;
    spec["driver"] = j["spec"]["driver"];
    spec["nodeName"] = j["spec"]["nodeName"];
    spec["pool"] = {{"name", j["spec"]["pool"]["name"]},
                    {"generation", j["spec"]["pool"]["generation"]},
                    {"resourceSliceCount", j["spec"]["pool"]["resourceSliceCount"]}};
    spec["devices"] = nlohmann::ordered_json::array();
    for (const auto& d : j["spec"]["devices"]) {
      nlohmann::ordered_json device;
      device["name"] = d["name"];
      if (d.contains("allowMultipleAllocations")) device["allowMultipleAllocations"] = d["allowMultipleAllocations"];
      device["attributes"] = d.value("attributes", nlohmann::json::object());
      spec["devices"].push_back(std::move(device));
    }
    item["spec"] = std::move(spec);
    list["items"].push_back(std::move(item));
  }
  return list;
}

}  // namespace liken::discovery
