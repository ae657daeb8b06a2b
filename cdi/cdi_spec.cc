#include "cdi/cdi_spec.h"

#include <cctype>

#include <nlohmann/json.hpp>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace liken::cdi {
namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiAlnum(char c) { return IsAsciiLetter(c) || (c >= '0' && c <= '9'); }

nlohmann::json EditsToJson(const ContainerEdits& edits) {
  nlohmann::json out = nlohmann::json::object();
  if (!edits.device_nodes.empty()) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const auto& n : edits.device_nodes) {
      nodes.push_back({{"path", n.path}, {"type", n.type}, {"major", n.major}, {"minor", n.minor}});
    }
    out["deviceNodes"] = std::move(nodes);
  }
  if (!edits.mounts.empty()) {
    nlohmann::json mounts = nlohmann::json::array();
    for (const auto& m : edits.mounts) {
      mounts.push_back({{"hostPath", m.host_path}, {"containerPath", m.container_path}, {"options", m.options}});
    }
    out["mounts"] = std::move(mounts);
  }
  return out;
}

absl::Status ParseMounts(const nlohmann::json& j, absl::string_view where, ContainerEdits* out) {
  auto it = j.find("mounts");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) return absl::InvalidArgumentError(absl::StrCat(where, ".mounts is not a list"));
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& m = (*it)[i];
    std::string at = absl::StrCat(where, ".mounts[", i, "]");
    if (!m.is_object()) return absl::InvalidArgumentError(absl::StrCat(at, " is not an object"));
    Mount mount;
    for (auto [key, field] : {std::pair{"hostPath", &mount.host_path}, std::pair{"containerPath", &mount.container_path}}) {
      if (!m.contains(key) || !m[key].is_string() || m[key].get<std::string>().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(at, ".", key, " is missing or not a string"));
      }
      *field = m[key].get<std::string>();
    }
    if (m.contains("options")) {
      if (!m["options"].is_array()) return absl::InvalidArgumentError(absl::StrCat(at, ".options is not a list"));
      for (const auto& o : m["options"]) {
        if (!o.is_string()) return absl::InvalidArgumentError(absl::StrCat(at, ".options holds a non-string"));
        mount.options.push_back(o.get<std::string>());
      }
    }
    out->mounts.push_back(std::move(mount));
  }
  return absl::OkStatus();
}

absl::Status ParseEdits(const nlohmann::json& j, absl::string_view where, ContainerEdits* out) {
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(where, " is not an object"));
  if (auto s = ParseMounts(j, where, out); !s.ok()) return s;
  auto it = j.find("deviceNodes");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_array()) return absl::InvalidArgumentError(absl::StrCat(where, ".deviceNodes is not a list"));
  for (size_t i = 0; i < it->size(); ++i) {
    const auto& n = (*it)[i];
    std::string at = absl::StrCat(where, ".deviceNodes[", i, "]");
    if (!n.is_object()) return absl::InvalidArgumentError(absl::StrCat(at, " is not an object"));
    DeviceNode node;
    if (!n.contains("path") || !n["path"].is_string() || n["path"].get<std::string>().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".path is missing or not a string"));
    }
    node.path = n["path"].get<std::string>();
    if (n.contains("type")) {
      if (!n["type"].is_string()) return absl::InvalidArgumentError(absl::StrCat(at, ".type is not a string"));
      node.type = n["type"].get<std::string>();
    }
    for (auto [key, field] : {std::pair{"major", &node.major}, std::pair{"minor", &node.minor}}) {
      if (!n.contains(key)) continue;
      if (!n[key].is_number_integer()) {
        return absl::InvalidArgumentError(absl::StrCat(at, ".", key, " is not an integer"));
      }
      *field = n[key].get<int64_t>();
    }
    out->device_nodes.push_back(std::move(node));
  }
  return absl::OkStatus();
}

}  // namespace

bool IsValidDeviceName(absl::string_view name) {
  if (name.empty() || !IsAsciiAlnum(name.front()) || !IsAsciiAlnum(name.back())) return false;
  for (char c : name) {
    if (!IsAsciiAlnum(c) && c != '-' && c != '_' && c != '.' && c != ':') return false;
  }
  return true;
}

std::string QualifiedName(absl::string_view kind, absl::string_view device_name) {
  return absl::StrCat(kind, "=", device_name);
}

std::string MinimumCdiVersion(const Spec& spec) {
  for (const auto& d : spec.devices) {
    if (!d.name.empty() && !IsAsciiLetter(d.name.front())) return "0.5.0";
  }
  return "0.3.0";
}

std::string SpecToJson(const Spec& spec) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : spec.devices) {
    devices.push_back({{"name", d.name}, {"containerEdits", EditsToJson(d.container_edits)}});
  }
  nlohmann::json j = {{"cdiVersion", MinimumCdiVersion(spec)}, {"kind", spec.kind}, {"devices", std::move(devices)}};
  if (!spec.container_edits.device_nodes.empty() || !spec.container_edits.mounts.empty()) j["containerEdits"] = EditsToJson(spec.container_edits);
  return j.dump(2) + "\n";
}

absl::StatusOr<Spec> ParseSpec(absl::string_view json_text) {
  nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InvalidArgumentError("CDI spec is not valid JSON");
  if (!j.is_object()) return absl::InvalidArgumentError("CDI spec is not a JSON object");
  Spec spec;
  for (auto [key, field] : {std::pair{"cdiVersion", &spec.cdi_version}, std::pair{"kind", &spec.kind}}) {
    if (!j.contains(key) || !j[key].is_string() || j[key].get<std::string>().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("CDI spec field ", key, " is missing or not a string"));
    }
    *field = j[key].get<std::string>();
  }
  if (spec.kind.find('/') == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("CDI spec kind '", spec.kind, "' is not vendor/class"));
  }
  if (j.contains("containerEdits")) {
    if (auto s = ParseEdits(j["containerEdits"], "containerEdits", &spec.container_edits); !s.ok()) return s;
  }
  if (!j.contains("devices") || !j["devices"].is_array()) {
    return absl::InvalidArgumentError("CDI spec field devices is missing or not a list");
  }
  const auto& devices = j["devices"];
  for (size_t i = 0; i < devices.size(); ++i) {
    const auto& d = devices[i];
    std::string at = absl::StrCat("devices[", i, "]");
    if (!d.is_object()) return absl::InvalidArgumentError(absl::StrCat(at, " is not an object"));
    Device device;
    if (!d.contains("name") || !d["name"].is_string() || !IsValidDeviceName(d["name"].get<std::string>())) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".name is missing or not a valid CDI device name"));
    }
    device.name = d["name"].get<std::string>();
    if (!d.contains("containerEdits")) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".containerEdits is missing"));
    }
    if (auto s = ParseEdits(d["containerEdits"], at + ".containerEdits", &device.container_edits); !s.ok()) return s;
    spec.devices.push_back(std::move(device));
  }
  return spec;
}

}  // namespace liken::cdi
