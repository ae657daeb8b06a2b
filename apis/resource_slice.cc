#include "apis/resource_slice.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace liken::apis {
namespace {

absl::StatusOr<AttributeValue> ParseAttributeValue(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || j.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(where, ": must hold exactly one of string, bool, int, version"));
  }
  auto it = j.begin();
  if (it.key() == "string" && it->is_string()) return AttributeValue(it->get<std::string>());
  if (it.key() == "bool" && it->is_boolean()) return AttributeValue(it->get<bool>());
  if (it.key() == "int" && it->is_number_integer()) return AttributeValue(it->get<int64_t>());
  if (it.key() == "version" && it->is_string()) return AttributeValue(VersionValue{it->get<std::string>()});
  return absl::InvalidArgumentError(absl::StrCat(where, ": unsupported value kind '", it.key(), "'"));
}

bool IsCIdentifier(const std::string& s) {
  if (s.empty() || s.size() > kMaxAttributeNameLength) return false;
  if (!(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

}  // namespace

bool SliceDevice::SameContent(const SliceDevice& other) const {
  return name == other.name && attributes == other.attributes &&
         allow_multiple_allocations.value_or(false) == other.allow_multiple_allocations.value_or(false) &&
         taints == other.taints;
}

nlohmann::json AttributeValueToJson(const AttributeValue& value) {
  nlohmann::json j = nlohmann::json::object();
  if (const auto* s = std::get_if<std::string>(&value)) j["string"] = *s;
  if (const auto* b = std::get_if<bool>(&value)) j["bool"] = *b;
  if (const auto* i = std::get_if<int64_t>(&value)) j["int"] = *i;
  if (const auto* v = std::get_if<VersionValue>(&value)) j["version"] = v->semver;
  return j;
}

absl::StatusOr<ResourceSlice> ParseResourceSlice(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("ResourceSlice is not a JSON object");
  ResourceSlice slice;
  slice.raw = j;
  if (j.contains("metadata")) {
    absl::StatusOr<ObjectMeta> meta = ParseObjectMeta(j["metadata"]);
    if (!meta.ok()) return absl::InvalidArgumentError(absl::StrCat("ResourceSlice ", meta.status().message()));
    slice.metadata = *std::move(meta);
  }
  const nlohmann::json spec = j.value("spec", nlohmann::json::object());
  if (!spec.is_object()) return absl::InvalidArgumentError("ResourceSlice spec is not an object");
  try {
    slice.driver = spec.value("driver", "");
    slice.node_name = spec.value("nodeName", "");
    if (spec.contains("pool")) {
      const auto& pool = spec["pool"];
      slice.pool.name = pool.value("name", "");
      slice.pool.generation = pool.value("generation", int64_t{0});
      slice.pool.resource_slice_count = pool.value("resourceSliceCount", int64_t{1});
    }
    if (spec.contains("devices") && !spec["devices"].is_null()) {
      if (!spec["devices"].is_array()) return absl::InvalidArgumentError("ResourceSlice spec.devices is not a list");
      for (const auto& d : spec["devices"]) {
        SliceDevice device;
        device.raw = d;
        device.name = d.value("name", "");
        if (d.contains("allowMultipleAllocations") && d["allowMultipleAllocations"].is_boolean()) {
          device.allow_multiple_allocations = d["allowMultipleAllocations"].get<bool>();
        }
        if (d.contains("taints") && !d["taints"].is_null()) {
          if (!d["taints"].is_array()) {
            return absl::InvalidArgumentError(absl::StrCat("device ", device.name, " taints is not a list"));
          }
          for (const auto& t : d["taints"]) {
            if (!t.is_object()) {
              return absl::InvalidArgumentError(absl::StrCat("device ", device.name, " has a taint that is not an object"));
            }
            device.taints.push_back(
                {t.value("key", ""), t.value("value", ""), t.value("effect", ""), t.value("timeAdded", "")});
          }
        }
        if (d.contains("attributes") && d["attributes"].is_object()) {
          for (auto a = d["attributes"].begin(); a != d["attributes"].end(); ++a) {
            auto value = ParseAttributeValue(*a, absl::StrCat("device ", device.name, " attribute ", a.key()));
            if (!value.ok()) return value.status();
            device.attributes[a.key()] = *value;
          }
        }
        slice.devices.push_back(std::move(device));
      }
    }
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ResourceSlice has a field of the wrong type: ", e.what()));
  }
  return slice;
}

nlohmann::json ResourceSliceToJson(const ResourceSlice& slice) {
  nlohmann::json j = slice.raw.is_object() ? slice.raw : nlohmann::json::object();
  j["apiVersion"] = kResourceApiVersion;
  j["kind"] = "ResourceSlice";
  j["metadata"] = ObjectMetaToJson(slice.metadata);
  nlohmann::json spec = (j.contains("spec") && j["spec"].is_object()) ? j["spec"] : nlohmann::json::object();
  spec["driver"] = slice.driver;
  if (slice.node_name.empty()) {
    spec.erase("nodeName");
  } else {
    spec["nodeName"] = slice.node_name;
  }
  nlohmann::json pool = (spec.contains("pool") && spec["pool"].is_object()) ? spec["pool"] : nlohmann::json::object();
  pool["name"] = slice.pool.name;
  pool["generation"] = slice.pool.generation;
  pool["resourceSliceCount"] = slice.pool.resource_slice_count;
  spec["pool"] = std::move(pool);
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : slice.devices) {
    nlohmann::json dj = d.raw.is_object() ? d.raw : nlohmann::json::object();
    dj["name"] = d.name;
    nlohmann::json attrs = nlohmann::json::object();
    for (const auto& [key, value] : d.attributes) attrs[key] = AttributeValueToJson(value);
    if (attrs.empty()) {
      dj.erase("attributes");
    } else {
      dj["attributes"] = std::move(attrs);
    }
    if (d.allow_multiple_allocations.value_or(false)) {
      dj["allowMultipleAllocations"] = true;
    } else {
      dj.erase("allowMultipleAllocations");
    }
    if (d.taints.empty()) {
      dj.erase("taints");
    } else {
      // Each taint over the one received at its place when that one has the same key (unknown fields kept).
      const nlohmann::json received = dj.contains("taints") && dj["taints"].is_array() ? dj["taints"] : nlohmann::json();
      nlohmann::json taints = nlohmann::json::array();
      for (size_t i = 0; i < d.taints.size(); ++i) {
        const DeviceTaint& t = d.taints[i];
        nlohmann::json tj = nlohmann::json::object();
        if (i < received.size() && received[i].is_object() && received[i].value("key", nlohmann::json()) == t.key) {
          tj = received[i];
        }
        tj["key"] = t.key;
        for (const auto& [field, value] : {std::pair<const char*, const std::string*>{"value", &t.value},
                                           {"effect", &t.effect}, {"timeAdded", &t.time_added}}) {
          if (value->empty()) {
            tj.erase(field);
          } else {
            tj[field] = *value;
          }
        }
        taints.push_back(std::move(tj));
      }
      dj["taints"] = std::move(taints);
    }
    devices.push_back(std::move(dj));
  }
  spec["devices"] = std::move(devices);
  j["spec"] = std::move(spec);
  return j;
}

bool IsDnsLabel(std::string_view name) {
  if (name.empty() || name.size() > kMaxDnsLabelLength) return false;
  for (char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return name.front() != '-' && name.back() != '-';
}

bool IsDnsSubdomain(std::string_view name) {
  if (name.empty() || name.size() > kMaxDnsSubdomainLength) return false;
  for (absl::string_view part : absl::StrSplit(absl::string_view(name.data(), name.size()), '.')) {
    if (!IsDnsLabel(std::string_view(part.data(), part.size()))) return false;
  }
  return true;
}

bool HasTaintsOrConsumesCounters(const SliceDevice& device) {
  if (!device.taints.empty()) return true;
  if (!device.raw.is_object()) return false;
  auto counters = device.raw.find("consumesCounters");
  return counters != device.raw.end() && counters->is_array() && !counters->empty();
}

size_t MaxDevicesInSlice(const std::vector<SliceDevice>& devices) {
  for (const auto& d : devices) {
    if (HasTaintsOrConsumesCounters(d)) return kMaxDevicesPerSliceWithTaintsOrCounters;
  }
  return kMaxDevicesPerSlice;
}

absl::Status ValidateResourceSlice(const ResourceSlice& slice) {
  if (!IsDnsSubdomain(slice.metadata.name)) {
    return absl::InvalidArgumentError(absl::StrCat("slice name '", slice.metadata.name, "' is not a DNS subdomain"));
  }
  if (!IsDnsSubdomain(slice.driver)) return absl::InvalidArgumentError("driver is not a DNS subdomain");
  if (!slice.node_name.empty() && !IsDnsSubdomain(slice.node_name)) {
    return absl::InvalidArgumentError(absl::StrCat("node name '", slice.node_name, "' is not a DNS subdomain"));
  }
  if (slice.pool.name.empty() || slice.pool.name.size() > kMaxDnsSubdomainLength) {
    return absl::InvalidArgumentError("pool name is empty or too long");
  }
  if (slice.pool.generation < 0 || slice.pool.resource_slice_count < 1) {
    return absl::InvalidArgumentError("pool generation or resourceSliceCount out of range");
  }
  if (const size_t limit = MaxDevicesInSlice(slice.devices); slice.devices.size() > limit) {
    if (limit == kMaxDevicesPerSlice) {
      return absl::InvalidArgumentError(absl::StrCat("slice ", slice.metadata.name, " holds ", slice.devices.size(),
                                                     " devices; the limit is ", kMaxDevicesPerSlice,
                                                     " (ResourceSliceMaxDevices)"));
    }
    std::string which;
    for (const auto& d : slice.devices) {
      if (HasTaintsOrConsumesCounters(d)) {
        which = d.name;
        break;
      }
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "slice ", slice.metadata.name, " holds ", slice.devices.size(), " devices; the limit is ",
        kMaxDevicesPerSliceWithTaintsOrCounters, " in a slice with a tainted device or one that consumes counters (",
        which, "), ", kMaxDevicesPerSlice, " otherwise (ResourceSliceMaxDevicesWithTaintsOrConsumesCounters)"));
  }
  for (const auto& d : slice.devices) {
    if (!IsDnsLabel(d.name)) return absl::InvalidArgumentError(absl::StrCat("device name '", d.name, "' is not a DNS label"));
    if (d.taints.size() > kMaxTaintsPerDevice) {
      return absl::InvalidArgumentError(absl::StrCat("device ", d.name, " has ", d.taints.size(), " taints"));
    }
    if (d.attributes.size() > kMaxAttributesPerDevice) {
      return absl::InvalidArgumentError(absl::StrCat("device ", d.name, " has ", d.attributes.size(), " attributes"));
    }
    for (const auto& [key, value] : d.attributes) {
      auto slash = key.find('/');
      std::string id = slash == std::string::npos ? key : key.substr(slash + 1);
      if (slash != std::string::npos && !IsDnsSubdomain(key.substr(0, slash))) {
        return absl::InvalidArgumentError(absl::StrCat("device ", d.name, " attribute ", key, ": bad domain"));
      }
      if (!IsCIdentifier(id)) {
        return absl::InvalidArgumentError(absl::StrCat("device ", d.name, " attribute ", key, ": not a C identifier"));
      }
      if (const auto* s = std::get_if<std::string>(&value); s && s->size() > kMaxAttributeStringLength) {
        return absl::InvalidArgumentError(absl::StrCat("device ", d.name, " attribute ", key, ": longer than 64"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace liken::apis
