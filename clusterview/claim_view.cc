#include "clusterview/claim_view.h"

#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace liken::clusterview {
namespace {

std::string HealthOf(const apis::ResourceClaim& claim, const apis::DeviceRequestAllocationResult& result) {
  for (const auto& d : claim.devices) {
    if (d.driver != result.driver || d.pool != result.pool || d.device != result.device) continue;
    for (const auto& c : d.conditions) {
      if (c.type != "Ready") continue;
      if (c.status == "True") return "Ready";
      return c.reason.empty() ? absl::StrCat("Ready=", c.status) : c.reason;
    }
  }
  return "";
}

std::vector<std::string> RequestClasses(const apis::ResourceClaim& claim) {
  std::vector<std::string> classes;
  const auto& spec = claim.raw.is_object() ? claim.raw.value("spec", nlohmann::json::object()) : nlohmann::json();
  if (!spec.is_object() || !spec.contains("devices") || !spec["devices"].is_object()) return classes;
  const auto& requests = spec["devices"].value("requests", nlohmann::json::array());
  if (!requests.is_array()) return classes;
  auto add = [&](const nlohmann::json& j) {
    if (!j.is_object()) return;
    std::string c = j.value("deviceClassName", "");
    if (!c.empty() && std::find(classes.begin(), classes.end(), c) == classes.end()) classes.push_back(c);
  };
  for (const auto& r : requests) {
    if (!r.is_object()) continue;
    if (r.contains("exactly")) add(r["exactly"]);
    if (r.contains("firstAvailable") && r["firstAvailable"].is_array()) {
      for (const auto& a : r["firstAvailable"]) add(a);
    }
  }
  return classes;
}

std::string PodsText(const std::vector<PodState>& pods) {
  std::vector<std::string> parts;
  for (const auto& p : pods) parts.push_back(absl::StrCat(p.name, "(", p.phase, ")"));
  return absl::StrJoin(parts, ",");
}

std::string RunningText(const std::vector<PodState>& pods) {
  size_t running = std::count_if(pods.begin(), pods.end(), [](const PodState& p) { return p.running; });
  return absl::StrCat(running, "/", pods.size());
}

}  // namespace

std::vector<ClaimRow> BuildClaimRows(const ClusterIndex& index) {
  std::vector<ClaimRow> rows;
  for (const auto& claim : index.snapshot().claims) {
    if (!index.IsLikenClaim(claim)) continue;
    ClaimRow row;
    row.namespace_name = claim.metadata.namespace_name;
    row.name = claim.metadata.name;
    row.state = !claim.allocated ? "pending" : claim.reserved_for.empty() ? "allocated" : "reserved";
    std::vector<std::string> nodes;
    for (const auto& result : claim.results) {
      if (result.driver != kLikenDriver) continue;
      row.devices.push_back(ClaimDevice{result.pool, result.device, result.request, HealthOf(claim, result)});
      std::string node = index.NodeOfPool(result.pool);
      if (std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
    row.node = absl::StrJoin(nodes, ",");
    row.classes = RequestClasses(claim);
    row.pods = index.PodsOfClaim(claim);
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const ClaimRow& a, const ClaimRow& b) {
    return std::tie(a.namespace_name, a.name) < std::tie(b.namespace_name, b.name);
  });
  return rows;
}

std::string RenderClaims(const std::vector<ClaimRow>& rows, OutputFormat format, bool all_namespaces) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml) {
    nlohmann::ordered_json items = nlohmann::ordered_json::array();
    for (const auto& r : rows) {
      nlohmann::ordered_json devices = nlohmann::ordered_json::array();
      for (const auto& d : r.devices) {
        devices.push_back({{"request", d.request}, {"pool", d.pool}, {"device", d.device}, {"health", d.health}});
      }
      nlohmann::ordered_json pods = nlohmann::ordered_json::array();
      for (const auto& p : r.pods) pods.push_back({{"name", p.name}, {"phase", p.phase}, {"running", p.running}});
      items.push_back({{"namespace", r.namespace_name},
                       {"name", r.name},
                       {"state", r.state},
                       {"node", r.node},
                       {"deviceClasses", r.classes},
                       {"devices", devices},
                       {"pods", pods}});
    }
    nlohmann::ordered_json doc{{"apiVersion", "v1"}, {"kind", "LikenClaimList"}, {"items", items}};
    return RenderDocument(doc, format);
  }
  std::vector<std::string> header;
  if (all_namespaces) header.push_back("NAMESPACE");
  header.insert(header.end(), {"NAME", "STATE", "NODE", "DEVICES", "HEALTH", "PODS", "RUNNING"});
  bool wide = format == OutputFormat::kWide;
  if (wide) header.push_back("CLASSES");
  std::vector<std::vector<std::string>> table;
  for (const auto& r : rows) {
    std::vector<std::string> line;
    if (all_namespaces) line.push_back(r.namespace_name);
    std::vector<std::string> devices;
    std::vector<std::string> health;
    for (const auto& d : r.devices) {
      devices.push_back(d.device);
      health.push_back(d.health.empty() ? "-" : d.health);
    }
    bool any_health = std::any_of(r.devices.begin(), r.devices.end(), [](const ClaimDevice& d) {
      return !d.health.empty();
    });
    line.insert(line.end(), {r.name, r.state, r.node, absl::StrJoin(devices, ","),
                             any_health ? absl::StrJoin(health, ",") : "", PodsText(r.pods),
                             RunningText(r.pods)});
    if (wide) line.push_back(absl::StrJoin(r.classes, ","));
    table.push_back(std::move(line));
  }
  return RenderTable(header, table);
}

}  // namespace liken::clusterview
