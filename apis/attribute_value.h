// A device attribute value as resource.k8s.io/v1 types it: exactly one of string, bool, int, version.
#pragma once

#include <cstdint>
#include <string>
#include <variant>

namespace liken::apis {

// A semantic version value (`version:` in the API), kept distinct from a plain string.
struct VersionValue {
  std::string semver;
  friend bool operator==(const VersionValue&, const VersionValue&) = default;
};

// The typed value of one device attribute.
using AttributeValue = std::variant<std::string, bool, int64_t, VersionValue>;

}  // namespace liken::apis
