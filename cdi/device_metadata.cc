#include "cdi/device_metadata.h"

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"

namespace liken::cdi {
namespace {

nlohmann::ordered_json ValueToJson(const MetadataValue& value) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  if (const auto* i = std::get_if<int64_t>(&value)) j["int"] = *i;
  if (const auto* b = std::get_if<bool>(&value)) j["bool"] = *b;
  if (const auto* s = std::get_if<std::string>(&value)) j["string"] = *s;
  if (const auto* v = std::get_if<apis::VersionValue>(&value)) j["version"] = v->semver;
  if (const auto* l = std::get_if<std::vector<std::string>>(&value)) j["strings"] = *l;
  return j;
}

// One version's object, its keys in the order of the API's Go types (which is how the standard's own
// writer orders them). Map keys (attributes) come sorted, as std::map holds them.
nlohmann::ordered_json ToJson(const DeviceMetadata& m, const std::string& version) {
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  meta["name"] = m.claim_name;
  meta["namespace"] = m.claim_namespace;
  meta["uid"] = m.claim_uid;
  meta["generation"] = m.generation;
  nlohmann::ordered_json devices = nlohmann::ordered_json::array();
  for (const auto& d : m.devices) {
    nlohmann::ordered_json dj = nlohmann::ordered_json::object();
    dj["driver"] = d.driver;
    dj["pool"] = d.pool;
    dj["name"] = d.name;
    if (!d.attributes.empty()) {
      nlohmann::ordered_json attrs = nlohmann::ordered_json::object();
      for (const auto& [key, value] : d.attributes) attrs[key] = ValueToJson(value);
      dj["attributes"] = std::move(attrs);
    }
    devices.push_back(std::move(dj));
  }
  nlohmann::ordered_json request = nlohmann::ordered_json::object();
  request["name"] = m.request;
  if (!devices.empty()) request["devices"] = std::move(devices);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["kind"] = kMetadataKind;
  j["apiVersion"] = absl::StrCat(kMetadataGroup, "/", version);
  j["metadata"] = std::move(meta);
  if (m.pod_claim_name) j["podClaimName"] = *m.pod_claim_name;
  j["requests"] = nlohmann::ordered_json::array({std::move(request)});
  return j;
}

// Escapes what the standard's encoder escapes beyond plain JSON, so the bytes match it too: '<', '>', '&'
// and the line and paragraph separators. They can occur only inside strings, so a plain replace is safe.
std::string EscapeLikeStandard(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xe2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xa8' || text[i + 2] == '\xa9')) {
      out += text[i + 2] == '\xa8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

bool IsSafeSegment(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

}  // namespace

const std::vector<std::string>& MetadataVersions() {
  static const std::vector<std::string> versions = {"v1beta1", "v1alpha1"};
  return versions;
}

std::string EncodeDeviceMetadataStream(const DeviceMetadata& metadata) {
  std::string out;
  for (const auto& version : MetadataVersions()) {
    out += EscapeLikeStandard(ToJson(metadata, version).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    out += '\n';
  }
  return out;
}

std::string BaseRequestName(absl::string_view request) {
  return std::string(request.substr(0, request.find('/')));
}

std::string MetadataFileName(absl::string_view driver) { return absl::StrCat(driver, "-metadata.json"); }

std::string MetadataContainerPath(absl::string_view driver, const DeviceMetadata& metadata) {
  const bool from_template = metadata.pod_claim_name && !metadata.pod_claim_name->empty();
  return absl::StrCat(kMetadataContainerDir, from_template ? "/resourceclaimtemplates/" : "/resourceclaims/",
                      from_template ? *metadata.pod_claim_name : metadata.claim_name, "/",
                      BaseRequestName(metadata.request), "/", MetadataFileName(driver));
}

absl::Status ValidateMetadataPath(const DeviceMetadata& metadata) {
  if (!IsSafeSegment(metadata.claim_name)) {
    return absl::InvalidArgumentError(absl::StrCat("claim name '", metadata.claim_name, "' cannot name a directory"));
  }
  if (metadata.pod_claim_name && !metadata.pod_claim_name->empty() && !IsSafeSegment(*metadata.pod_claim_name)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod claim name '", *metadata.pod_claim_name, "' cannot name a directory"));
  }
  std::string base = BaseRequestName(metadata.request);
  if (!IsSafeSegment(base) || base.find('_') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat("request name '", metadata.request, "' cannot name a directory"));
  }
  return absl::OkStatus();
}

std::string MetadataCdiDeviceName(absl::string_view claim_uid, absl::string_view base_request) {
  return absl::StrCat(claim_uid, "_", base_request);
}

Device MetadataCdiDevice(absl::string_view claim_uid, absl::string_view base_request, std::string host_path,
                         std::string container_path) {
  Device device;
  device.name = MetadataCdiDeviceName(claim_uid, base_request);
  device.container_edits.mounts.push_back(
      {std::move(host_path), std::move(container_path), {"ro", "nosuid", "nodev", "bind"}});
  return device;
}

}  // namespace liken::cdi
