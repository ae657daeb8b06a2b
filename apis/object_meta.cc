#include "apis/object_meta.h"

#include "absl/strings/str_cat.h"

namespace liken::apis {

absl::StatusOr<ObjectMeta> ParseObjectMeta(const nlohmann::json& j) {
  if (!j.is_object()) return absl::InvalidArgumentError("metadata is not an object");
  ObjectMeta meta;
  meta.raw = j;
  auto str = [&](const char* key, std::string* dst) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absl::OkStatus();
    if (!it->is_string()) return absl::InvalidArgumentError(absl::StrCat("metadata.", key, " is not a string"));
    *dst = it->get<std::string>();
    return absl::OkStatus();
  };
  for (auto [key, dst] : {std::pair<const char*, std::string*>{"name", &meta.name},
                          {"namespace", &meta.namespace_name},
                          {"uid", &meta.uid},
                          {"resourceVersion", &meta.resource_version}}) {
    if (absl::Status s = str(key, dst); !s.ok()) return s;
  }
  if (auto it = j.find("labels"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return absl::InvalidArgumentError("metadata.labels is not an object");
    for (auto l = it->begin(); l != it->end(); ++l) {
      if (!l->is_string()) {
        return absl::InvalidArgumentError(absl::StrCat("metadata.labels.", l.key(), " is not a string"));
      }
      meta.labels[l.key()] = l->get<std::string>();
    }
  }
  if (auto it = j.find("ownerReferences"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) return absl::InvalidArgumentError("metadata.ownerReferences is not a list");
    for (const auto& o : *it) {
      if (!o.is_object()) return absl::InvalidArgumentError("metadata.ownerReferences item is not an object");
      OwnerReference ref;
      for (auto [key, dst] : {std::pair<const char*, std::string*>{"apiVersion", &ref.api_version},
                              {"kind", &ref.kind}, {"name", &ref.name}, {"uid", &ref.uid}}) {
        auto f = o.find(key);
        if (f == o.end() || f->is_null()) continue;
        if (!f->is_string()) {
          return absl::InvalidArgumentError(absl::StrCat("metadata.ownerReferences[].", key, " is not a string"));
        }
        *dst = f->get<std::string>();
      }
      if (o.contains("controller") && o["controller"].is_boolean()) ref.controller = o["controller"].get<bool>();
      meta.owner_references.push_back(std::move(ref));
    }
  }
  meta.deleting = j.contains("deletionTimestamp") && !j["deletionTimestamp"].is_null();
  return meta;
}

nlohmann::json ObjectMetaToJson(const ObjectMeta& meta) {
  nlohmann::json j = meta.raw.is_object() ? meta.raw : nlohmann::json::object();
  auto set = [&](const char* key, const std::string& value) {
    if (value.empty()) {
      j.erase(key);
    } else {
      j[key] = value;
    }
  };
  set("name", meta.name);
  set("namespace", meta.namespace_name);
  set("uid", meta.uid);
  set("resourceVersion", meta.resource_version);
  if (meta.labels.empty()) {
    j.erase("labels");
  } else {
    j["labels"] = meta.labels;
  }
  if (meta.owner_references.empty()) {
    j.erase("ownerReferences");
  } else {
    nlohmann::json refs = nlohmann::json::array();
    for (size_t i = 0; i < meta.owner_references.size(); ++i) {
      const auto& r = meta.owner_references[i];
      nlohmann::json o = (j.contains("ownerReferences") && j["ownerReferences"].is_array() &&
                          i < j["ownerReferences"].size() && j["ownerReferences"][i].is_object())
                             ? j["ownerReferences"][i]
                             : nlohmann::json::object();
      o["apiVersion"] = r.api_version;
      o["kind"] = r.kind;
      o["name"] = r.name;
      o["uid"] = r.uid;
      if (r.controller) o["controller"] = *r.controller;
      refs.push_back(std::move(o));
    }
    j["ownerReferences"] = std::move(refs);
  }
  return j;
}

}  // namespace liken::apis
