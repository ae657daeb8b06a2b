// metav1.ObjectMeta and OwnerReference: the fields liken reads and writes, the rest kept verbatim.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace liken::apis {

// metav1.OwnerReference.
struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

// metav1.ObjectMeta. `raw` holds the object as received; fields liken does not model survive a round trip.
struct ObjectMeta {
  std::string name;
  std::string namespace_name;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  std::vector<OwnerReference> owner_references;
  bool deleting = false;  // metadata.deletionTimestamp is set
  nlohmann::json raw = nlohmann::json::object();
};

// Parses metadata; tolerates missing fields. InvalidArgument (naming the field) when `j` is not an object
// or a known field has the wrong type; never throws. Thread-safe.
absl::StatusOr<ObjectMeta> ParseObjectMeta(const nlohmann::json& j);

// Serialises metadata over its raw copy (known fields replaced, unknown kept). Thread-safe.
nlohmann::json ObjectMetaToJson(const ObjectMeta& meta);

}  // namespace liken::apis
