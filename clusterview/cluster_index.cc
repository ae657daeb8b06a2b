#include "clusterview/cluster_index.h"

#include <algorithm>
#include <variant>

#include "absl/strings/str_cat.h"
#include "clusterview/json_fields.h"

namespace liken::clusterview {

std::string AttributeText(const apis::AttributeValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  return std::get<apis::VersionValue>(value).semver;
}

std::optional<std::string> LikenAttribute(const apis::SliceDevice& device, const std::string& name) {
  for (const std::string& key : {absl::StrCat(kLikenDriver, "/", name), name}) {
    if (auto it = device.attributes.find(key); it != device.attributes.end()) return AttributeText(it->second);
  }
  return std::nullopt;
}

PodState PodStateOf(const nlohmann::json& pod) {
  PodState state;
  state.name = JsonString(JsonField(pod, "metadata"), "name");
  const nlohmann::json& status = JsonField(pod, "status");
  state.phase = JsonString(status, "phase");
  if (state.phase.empty()) state.phase = "Pending";
  bool all_ready = true;
  const nlohmann::json& containers = JsonField(status, "containerStatuses");
  if (!containers.is_array() || containers.empty()) all_ready = false;
  if (containers.is_array()) {
    for (const auto& c : containers) {
      if (!c.is_object() || !c.value("ready", false)) all_ready = false;
    }
  }
  state.running = state.phase == "Running" && all_ready;
  return state;
}

std::vector<std::string> ClaimsOfPod(const nlohmann::json& pod) {
  std::vector<std::string> names;
  auto add = [&](const std::string& name) {
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  };
  const nlohmann::json& spec_claims = JsonField(JsonField(pod, "spec"), "resourceClaims");
  if (spec_claims.is_array()) {
    for (const auto& c : spec_claims) add(JsonString(c, "resourceClaimName"));
  }
  const nlohmann::json& status = JsonField(pod, "status");
  const nlohmann::json& statuses = JsonField(status, "resourceClaimStatuses");
  if (statuses.is_array()) {
    for (const auto& c : statuses) add(JsonString(c, "resourceClaimName"));
  }
  add(JsonString(JsonField(status, "extendedResourceClaimStatus"), "resourceClaimName"));
  return names;
}

bool PodUsesClaim(const nlohmann::json& pod, const std::string& claim) {
  std::vector<std::string> names = ClaimsOfPod(pod);
  return std::find(names.begin(), names.end(), claim) != names.end();
}

std::vector<std::string> ClassSelectors(const nlohmann::json& device_class) {
  std::vector<std::string> expressions;
  const nlohmann::json& selectors = JsonField(JsonField(device_class, "spec"), "selectors");
  if (!selectors.is_array()) return expressions;
  for (const auto& s : selectors) {
    std::string e = JsonString(JsonField(s, "cel"), "expression");
    if (!e.empty()) expressions.push_back(e);
  }
  return expressions;
}

ClusterIndex::ClusterIndex(const ClusterSnapshot& snapshot) : snapshot_(snapshot) {
  for (const auto& slice : snapshot.slices) {
    if (!slice.node_name.empty()) pool_nodes_.emplace(slice.pool.name, slice.node_name);
  }
  for (const auto& claim : snapshot.claims) {
    std::vector<std::string> pods;
    for (const auto& r : claim.reserved_for) {
      if (r.resource == "pods") pods.push_back(r.name);
    }
    for (const auto& result : claim.results) {
      if (result.driver != kLikenDriver) continue;
      auto& holders = holders_[{result.pool, result.device}];
      DeviceHolder holder{claim.metadata.namespace_name, claim.metadata.name, pods, result.admin_access};
      if (std::find(holders.begin(), holders.end(), holder) == holders.end()) holders.push_back(holder);
    }
  }
}

std::vector<DeviceHolder> ClusterIndex::HoldersOf(const std::string& pool, const std::string& device) const {
  auto it = holders_.find({pool, device});
  return it == holders_.end() ? std::vector<DeviceHolder>{} : it->second;
}

std::string ClusterIndex::NodeOfPool(const std::string& pool) const {
  auto it = pool_nodes_.find(pool);
  return it == pool_nodes_.end() ? pool : it->second;
}

const nlohmann::json* ClusterIndex::FindPod(const std::string& namespace_name, const std::string& name) const {
  for (const auto& pod : snapshot_.pods) {
    const nlohmann::json& meta = JsonField(pod, "metadata");
    if (JsonString(meta, "name") == name && JsonString(meta, "namespace") == namespace_name) return &pod;
  }
  return nullptr;
}

const apis::ResourceClaim* ClusterIndex::FindClaim(const std::string& namespace_name, const std::string& name) const {
  for (const auto& claim : snapshot_.claims) {
    if (claim.metadata.name == name && claim.metadata.namespace_name == namespace_name) return &claim;
  }
  return nullptr;
}

const nlohmann::json* ClusterIndex::FindClass(const std::string& name) const {
  for (const auto& c : snapshot_.device_classes) {
    if (JsonString(JsonField(c, "metadata"), "name") == name) return &c;
  }
  return nullptr;
}

std::vector<PodState> ClusterIndex::PodsOfClaim(const apis::ResourceClaim& claim) const {
  std::vector<PodState> pods;
  auto add = [&](const nlohmann::json& pod) {
    PodState state = PodStateOf(pod);
    for (const auto& p : pods) {
      if (p.name == state.name) return;
    }
    pods.push_back(state);
  };
  for (const auto& r : claim.reserved_for) {
    if (r.resource != "pods") continue;
    if (const nlohmann::json* pod = FindPod(claim.metadata.namespace_name, r.name)) {
      add(*pod);
    } else {
      pods.push_back(PodState{r.name, "Unknown", false});
    }
  }
  for (const auto& pod : snapshot_.pods) {
    if (JsonString(JsonField(pod, "metadata"), "namespace") == claim.metadata.namespace_name &&
        PodUsesClaim(pod, claim.metadata.name)) {
      add(pod);
    }
  }
  return pods;
}

bool ClusterIndex::IsLikenClaim(const apis::ResourceClaim& claim) const {
  for (const auto& r : claim.results) {
    if (r.driver == kLikenDriver) return true;
  }
  const nlohmann::json& requests = JsonField(JsonField(JsonField(claim.raw, "spec"), "devices"), "requests");
  if (!requests.is_array()) return false;
  const std::string quoted = absl::StrCat("\"", kLikenDriver, "\"");
  for (const auto& request : requests) {
    std::vector<std::string> classes;
    if (std::string c = JsonString(JsonField(request, "exactly"), "deviceClassName"); !c.empty()) classes.push_back(c);
    const nlohmann::json& alternatives = JsonField(request, "firstAvailable");
    if (alternatives.is_array()) {
      for (const auto& a : alternatives) classes.push_back(JsonString(a, "deviceClassName"));
    }
    for (const auto& name : classes) {
      const nlohmann::json* c = FindClass(name);
      if (c == nullptr) continue;
      for (const auto& e : ClassSelectors(*c)) {
        if (e.find(quoted) != std::string::npos) return true;
      }
    }
  }
  return false;
}

std::vector<std::pair<std::string, const apis::SliceDevice*>> ClusterIndex::DevicesOnNode(
    const std::string& node) const {
  std::vector<std::pair<std::string, const apis::SliceDevice*>> devices;
  for (const auto& slice : snapshot_.slices) {
    if (slice.node_name != node) continue;
    for (const auto& d : slice.devices) devices.emplace_back(slice.pool.name, &d);
  }
  return devices;
}

}  // namespace liken::clusterview
