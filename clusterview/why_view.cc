#include "clusterview/why_view.h"

#include <algorithm>
#include <regex>

#include "absl/strings/str_cat.h"
#include "clusterview/json_fields.h"
#include "absl/strings/str_join.h"
#include "clusterview/device_view.h"

namespace liken::clusterview {
namespace {

constexpr char kNoCel[] =
    "kubectl-liken does not evaluate CEL (Debian ships no CEL library): which of these devices a selector accepts, "
    "and why none fits, is the scheduler's to say (above).";

std::vector<std::string> Selectors(const nlohmann::json& request) {
  std::vector<std::string> expressions;
  const nlohmann::json& selectors = JsonField(request, "selectors");
  if (!selectors.is_array()) return expressions;
  for (const auto& s : selectors) {
    std::string e = JsonString(JsonField(s, "cel"), "expression");
    if (!e.empty()) expressions.push_back(e);
  }
  return expressions;
}

WhyRequest RequestOf(const ClusterIndex& index, const std::string& name, const nlohmann::json& exact) {
  WhyRequest request;
  request.name = name;
  request.device_class = JsonString(exact, "deviceClassName");
  if (JsonString(exact, "allocationMode") == "All") {
    request.count = "All";
  } else {
    const nlohmann::json& count = JsonField(exact, "count");
    request.count = count.is_number_integer() ? std::to_string(count.get<int64_t>()) : "1";
  }
  if (const nlohmann::json* c = index.FindClass(request.device_class)) {
    request.class_selectors = ClassSelectors(*c);
  } else {
    request.class_missing = true;
  }
  request.request_selectors = Selectors(exact);
  return request;
}

WhyClaim ClaimOf(const ClusterIndex& index, const apis::ResourceClaim& claim) {
  WhyClaim out;
  out.name = claim.metadata.name;
  out.state = !claim.allocated ? "pending" : claim.reserved_for.empty() ? "allocated" : "reserved";
  for (const auto& r : claim.results) {
    if (r.driver == kLikenDriver) out.allocated.push_back(absl::StrCat(index.NodeOfPool(r.pool), "/", r.device));
  }
  const nlohmann::json& requests = JsonField(JsonField(JsonField(claim.raw, "spec"), "devices"), "requests");
  if (requests.is_array()) {
    for (const auto& r : requests) {
      std::string name = JsonString(r, "name");
      if (const nlohmann::json& exact = JsonField(r, "exactly"); exact.is_object()) {
        out.requests.push_back(RequestOf(index, name, exact));
      }
      if (const nlohmann::json& alternatives = JsonField(r, "firstAvailable"); alternatives.is_array()) {
        for (const auto& a : alternatives) {
          out.requests.push_back(RequestOf(index, absl::StrCat(name, "/", JsonString(a, "name")), a));
        }
      }
    }
  }
  return out;
}

bool NodeMatchesSelector(const nlohmann::json& node, const nlohmann::json& selector) {
  if (!selector.is_object()) return true;
  const nlohmann::json& labels = JsonField(JsonField(node, "metadata"), "labels");
  for (auto it = selector.begin(); it != selector.end(); ++it) {
    if (!it->is_string() || JsonString(labels, it.key().c_str()) != it->get<std::string>()) return false;
  }
  return true;
}

std::vector<std::string> SliceNodes(const ClusterIndex& index) {
  std::vector<std::string> nodes;
  for (const auto& s : index.snapshot().slices) {
    if (!s.node_name.empty() && std::find(nodes.begin(), nodes.end(), s.node_name) == nodes.end()) {
      nodes.push_back(s.node_name);
    }
  }
  std::sort(nodes.begin(), nodes.end());
  return nodes;
}

std::string EventText(const nlohmann::json& e) {
  std::string text = absl::StrCat(JsonString(e, "type"), " ", JsonString(e, "reason"));
  const nlohmann::json& count = JsonField(e, "count");
  if (count.is_number_integer() && count.get<int64_t>() > 1) absl::StrAppend(&text, " (x", count.get<int64_t>(), ")");
  absl::StrAppend(&text, ": ", JsonString(e, "message"));
  return text;
}

}  // namespace

absl::StatusOr<WhyTarget> ResolveWhyTarget(const ClusterIndex& index, const std::string& namespace_name,
                                           const std::string& name) {
  std::string kind;
  std::string bare = name;
  if (size_t slash = name.find('/'); slash != std::string::npos) {
    kind = name.substr(0, slash);
    bare = name.substr(slash + 1);
    if (kind == "pods" || kind == "po") kind = "pod";
    if (kind == "resourceclaims") kind = "resourceclaim";
    if (kind != "pod" && kind != "resourceclaim") {
      return absl::InvalidArgumentError(absl::StrCat("'", name, "': name a claim or a pod (resourceclaim/NAME, pod/NAME)"));
    }
  }
  WhyTarget target;
  target.namespace_name = namespace_name;
  if (kind != "pod") {
    if (const apis::ResourceClaim* claim = index.FindClaim(namespace_name, bare)) {
      target.claims.push_back(bare);
      std::vector<PodState> pods = index.PodsOfClaim(*claim);
      if (!pods.empty()) target.pod = pods.front().name;
      return target;
    }
  }
  if (kind != "resourceclaim") {
    if (const nlohmann::json* pod = index.FindPod(namespace_name, bare)) {
      target.pod = bare;
      for (const auto& c : ClaimsOfPod(*pod)) {
        if (index.FindClaim(namespace_name, c) != nullptr) target.claims.push_back(c);
      }
      return target;
    }
  }
  std::string what = kind == "pod" ? "pod" : kind == "resourceclaim" ? "claim" : "claim or pod";
  return absl::NotFoundError(absl::StrCat("no ", what, " '", bare, "' in namespace ", namespace_name));
}

std::vector<std::string> AttributesRead(const std::string& expression) {
  static const std::regex kDotted(R"re(attributes\s*\[\s*"([^"]+)"\s*\]\s*(?:\.\s*([A-Za-z_][A-Za-z0-9_]*)|\[\s*"([^"]+)"\s*\]))re");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(expression.begin(), expression.end(), kDotted); it != std::sregex_iterator();
       ++it) {
    std::string attribute = (*it)[2].matched ? (*it)[2].str() : (*it)[3].str();
    std::string name = absl::StrCat((*it)[1].str(), "/", attribute);
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

WhyReport BuildWhyReport(const ClusterIndex& index, const WhyTarget& target, const std::vector<nlohmann::json>& events) {
  WhyReport report;
  report.namespace_name = target.namespace_name;
  report.pod = target.pod;
  const nlohmann::json* pod = target.pod.empty() ? nullptr : index.FindPod(target.namespace_name, target.pod);
  if (pod != nullptr) {
    report.pod_phase = PodStateOf(*pod).phase;
    report.node_name = JsonString(JsonField(*pod, "spec"), "nodeName");
    const nlohmann::json& conditions = JsonField(JsonField(*pod, "status"), "conditions");
    if (conditions.is_array()) {
      for (const auto& c : conditions) {
        if (JsonString(c, "type") != "PodScheduled") continue;
        report.scheduled_status = JsonString(c, "status");
        report.scheduled_reason = JsonString(c, "reason");
        report.scheduled_message = JsonString(c, "message");
      }
    }
  }
  for (const auto& e : events) report.events.push_back(EventText(e));
  for (const auto& name : target.claims) {
    if (const apis::ResourceClaim* claim = index.FindClaim(target.namespace_name, name)) {
      report.claims.push_back(ClaimOf(index, *claim));
    }
  }
  for (const auto& c : report.claims) {
    for (const auto& r : c.requests) {
      for (const auto* list : {&r.class_selectors, &r.request_selectors}) {
        for (const auto& e : *list) {
          for (const auto& a : AttributesRead(e)) {
            if (std::find(report.attributes_read.begin(), report.attributes_read.end(), a) ==
                report.attributes_read.end()) {
              report.attributes_read.push_back(a);
            }
          }
        }
      }
    }
  }
  // The nodes that could run the pod: its node when bound, else those whose labels match its nodeSelector and
  // that take pods. Affinity and taints are the scheduler's; its message above covers them.
  std::vector<std::string> slice_nodes = SliceNodes(index);
  if (!report.node_name.empty()) {
    report.candidate_nodes.push_back(report.node_name);
    report.nodes_note = "the node the pod is bound to";
  } else if (index.snapshot().nodes_unreadable) {
    report.candidate_nodes = slice_nodes;
    report.nodes_note = absl::StrCat("every node with liken devices (nodes could not be read: ",
                                     *index.snapshot().nodes_unreadable, ")");
  } else {
    const nlohmann::json& selector = pod == nullptr ? nlohmann::json() : JsonField(JsonField(*pod, "spec"), "nodeSelector");
    for (const auto& n : index.snapshot().nodes) {
      std::string name = JsonString(JsonField(n, "metadata"), "name");
      if (std::find(slice_nodes.begin(), slice_nodes.end(), name) == slice_nodes.end()) continue;
      if (JsonField(JsonField(n, "spec"), "unschedulable").is_boolean() && n["spec"]["unschedulable"].get<bool>()) continue;
      if (!NodeMatchesSelector(n, selector)) continue;
      report.candidate_nodes.push_back(name);
    }
    std::sort(report.candidate_nodes.begin(), report.candidate_nodes.end());
    report.nodes_note = selector.is_object() && !selector.empty()
                            ? "nodes with liken devices that take pods and match the pod's nodeSelector"
                            : "nodes with liken devices that take pods";
  }
  for (const auto& node : report.candidate_nodes) {
    for (const auto& [pool, device] : index.DevicesOnNode(node)) {
      std::vector<DeviceHolder> holders = index.HoldersOf(pool, device->name);
      bool shared = device->allow_multiple_allocations.value_or(false);
      if (!holders.empty() && !shared) continue;
      WhyFreeDevice free{node, device->name, shared, holders.size(), "", {}};
      std::vector<std::string> taints;
      for (const auto& t : device->taints) taints.push_back(absl::StrCat(t.key, ":", t.effect));
      free.taints = absl::StrJoin(taints, ",");
      for (const auto& a : report.attributes_read) {
        auto it = device->attributes.find(a);
        if (it == device->attributes.end() && a.rfind(absl::StrCat(kLikenDriver, "/"), 0) == 0) {
          it = device->attributes.find(a.substr(std::string(kLikenDriver).size() + 1));
        }
        free.attributes.push_back(it == device->attributes.end() ? std::nullopt
                                                                 : std::optional(AttributeText(it->second)));
      }
      report.free_devices.push_back(std::move(free));
    }
  }
  std::sort(report.free_devices.begin(), report.free_devices.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node, a.device) < std::tie(b.node, b.device);
  });
  return report;
}

std::string RenderWhy(const WhyReport& r, OutputFormat format) {
  if (format == OutputFormat::kJson || format == OutputFormat::kYaml) {
    nlohmann::ordered_json claims = nlohmann::ordered_json::array();
    for (const auto& c : r.claims) {
      nlohmann::ordered_json requests = nlohmann::ordered_json::array();
      for (const auto& q : c.requests) {
        requests.push_back({{"name", q.name},
                            {"deviceClassName", q.device_class},
                            {"classFound", !q.class_missing},
                            {"count", q.count},
                            {"classSelectors", q.class_selectors},
                            {"requestSelectors", q.request_selectors}});
      }
      claims.push_back({{"name", c.name}, {"state", c.state}, {"allocated", c.allocated}, {"requests", requests}});
    }
    nlohmann::ordered_json free = nlohmann::ordered_json::array();
    for (const auto& d : r.free_devices) {
      nlohmann::ordered_json attributes = nlohmann::ordered_json::object();
      for (size_t i = 0; i < r.attributes_read.size(); ++i) {
        attributes[r.attributes_read[i]] = d.attributes[i] ? nlohmann::ordered_json(*d.attributes[i]) : nullptr;
      }
      free.push_back({{"node", d.node},
                      {"device", d.device},
                      {"shared", d.shared},
                      {"holders", d.holders},
                      {"taints", d.taints},
                      {"attributes", attributes}});
    }
    nlohmann::ordered_json pod = nullptr;
    if (!r.pod.empty()) {
      pod = {{"name", r.pod},
             {"phase", r.pod_phase},
             {"nodeName", r.node_name},
             {"podScheduled",
              {{"status", r.scheduled_status}, {"reason", r.scheduled_reason}, {"message", r.scheduled_message}}},
             {"events", r.events}};
    }
    nlohmann::ordered_json doc{{"apiVersion", "v1"},
                               {"kind", "LikenWhy"},
                               {"namespace", r.namespace_name},
                               {"pod", pod},
                               {"claims", claims},
                               {"attributesRead", r.attributes_read},
                               {"candidateNodes", r.candidate_nodes},
                               {"candidateNodesAre", r.nodes_note},
                               {"freeDevices", free},
                               {"celEvaluated", false}};
    return RenderDocument(doc, format);
  }
  std::string out;
  if (r.pod.empty()) {
    absl::StrAppend(&out, "Pod: none uses the claim yet; the scheduler allocates a claim for a pod\n");
  } else {
    absl::StrAppend(&out, "Pod ", r.namespace_name, "/", r.pod, ": ", r.pod_phase,
                    r.node_name.empty() ? "" : absl::StrCat(" on ", r.node_name), "\n");
    if (r.scheduled_status.empty()) {
      absl::StrAppend(&out, "  PodScheduled: not yet reported\n");
    } else {
      absl::StrAppend(&out, "  PodScheduled: ", r.scheduled_status,
                      r.scheduled_reason.empty() ? "" : absl::StrCat(" ", r.scheduled_reason),
                      r.scheduled_message.empty() ? "" : absl::StrCat(": ", r.scheduled_message), "\n");
    }
    if (!r.events.empty()) {
      absl::StrAppend(&out, "  Events:\n");
      for (const auto& e : r.events) absl::StrAppend(&out, "    ", e, "\n");
    }
  }
  if (r.claims.empty()) absl::StrAppend(&out, "Claims: none made yet\n");
  for (const auto& c : r.claims) {
    absl::StrAppend(&out, "Claim ", r.namespace_name, "/", c.name, ": ", c.state);
    if (!c.allocated.empty()) absl::StrAppend(&out, ", liken devices ", absl::StrJoin(c.allocated, ", "));
    absl::StrAppend(&out, "\n");
    for (const auto& q : c.requests) {
      absl::StrAppend(&out, "  Request ", q.name, ": class ", q.device_class, ", count ", q.count,
                      q.class_missing ? " (no such DeviceClass)" : "", "\n");
      for (const auto& e : q.class_selectors) absl::StrAppend(&out, "    class selector:   ", e, "\n");
      for (const auto& e : q.request_selectors) absl::StrAppend(&out, "    request selector: ", e, "\n");
    }
  }
  bool waiting = std::any_of(r.claims.begin(), r.claims.end(), [](const WhyClaim& c) { return c.state == "pending"; });
  if (!waiting && !r.claims.empty()) {
    absl::StrAppend(&out, "Nothing waits for a device: every claim is allocated.\n");
    return out;
  }
  absl::StrAppend(&out, "Free liken devices on ", r.nodes_note, " (", absl::StrJoin(r.candidate_nodes, ", "),
                  "): ", r.free_devices.size(), "\n");
  if (!r.free_devices.empty()) {
    std::vector<std::string> header{"NODE", "DEVICE", "SHARING", "TAINTS"};
    header.insert(header.end(), r.attributes_read.begin(), r.attributes_read.end());
    std::vector<std::vector<std::string>> table;
    for (const auto& d : r.free_devices) {
      std::vector<std::string> line{d.node, d.device,
                                    d.shared ? absl::StrCat("shared (", d.holders, " claims)") : "exclusive",
                                    d.taints};
      for (const auto& a : d.attributes) line.push_back(a ? (a->empty() ? "\"\"" : *a) : "");
      table.push_back(std::move(line));
    }
    out += RenderTable(header, table);
  }
  absl::StrAppend(&out, kNoCel, "\n");
  return out;
}

}  // namespace liken::clusterview
