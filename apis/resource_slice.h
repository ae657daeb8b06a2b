// resource.k8s.io/v1 ResourceSlice: typed, with a JSON round trip that keeps unknown fields.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"
#include "apis/attribute_value.h"
#include "apis/object_meta.h"

namespace liken::apis {

inline constexpr char kResourceApiVersion[] = "resource.k8s.io/v1";

// API server limits for resource.k8s.io/v1 objects that liken must respect.
// Devices in one slice: 128 (ResourceSliceMaxDevices), but only 64 in a slice in which any device has a taint or
// consumes counters (ResourceSliceMaxDevicesWithTaintsOrConsumesCounters, since Kubernetes 1.35).
inline constexpr size_t kMaxDevicesPerSlice = 128;
inline constexpr size_t kMaxDevicesPerSliceWithTaintsOrCounters = 64;
inline constexpr size_t kMaxAttributesPerDevice = 32;
inline constexpr size_t kMaxAttributeStringLength = 64;
inline constexpr size_t kMaxAttributeNameLength = 32;   // the C identifier after the domain
inline constexpr size_t kMaxDnsLabelLength = 63;
inline constexpr size_t kMaxDnsSubdomainLength = 253;
inline constexpr size_t kMaxTaintsPerDevice = 16;

// spec.devices[].taints[] of a ResourceSlice (DRADeviceTaints): the effect applies to every claim that does not
// tolerate the taint, and through the claim to its pods.
struct DeviceTaint {
  std::string key;         // a label name, e.g. "liken.sh/unplugged"
  std::string value;       // a label value; may be empty
  std::string effect;      // "NoSchedule", "NoExecute" or "None"
  std::string time_added;  // RFC 3339 ("2026-12-04T19:40:58Z"); empty: the server sets it

  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};

inline constexpr char kTaintEffectNoExecute[] = "NoExecute";

// spec.devices[] of a ResourceSlice.
struct SliceDevice {
  std::string name;
  std::map<std::string, AttributeValue> attributes;  // fully qualified names
  std::optional<bool> allow_multiple_allocations;
  std::vector<DeviceTaint> taints;                   // in order; absent from the JSON when empty
  nlohmann::json raw = nlohmann::json::object();     // as received; unknown fields kept

  // True when the published content (name, attributes, sharing, taints) equals `other`'s. Ignores `raw`.
  bool SameContent(const SliceDevice& other) const;
};

// spec.pool of a ResourceSlice.
struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 1;
};

// A ResourceSlice object.
struct ResourceSlice {
  ObjectMeta metadata;
  std::string driver;
  std::string node_name;
  ResourcePool pool;
  std::vector<SliceDevice> devices;
  nlohmann::json raw = nlohmann::json::object();  // whole object as received
};

// Parses a ResourceSlice. InvalidArgument names the offending field. Thread-safe.
absl::StatusOr<ResourceSlice> ParseResourceSlice(const nlohmann::json& j);

// Serialises a ResourceSlice over its raw copy; server-set fields present in `raw` are kept. Thread-safe.
nlohmann::json ResourceSliceToJson(const ResourceSlice& slice);

// Serialises one attribute value as the API's one-of object ({"string": ...}, {"bool": ...}, ...). Thread-safe.
nlohmann::json AttributeValueToJson(const AttributeValue& value);

// True when `device` has a taint or consumes counters (a non-empty `consumesCounters` kept in its raw JSON): a slice
// holding one may hold at most kMaxDevicesPerSliceWithTaintsOrCounters devices. Thread-safe.
bool HasTaintsOrConsumesCounters(const SliceDevice& device);

// The most devices a slice may hold given its devices: kMaxDevicesPerSliceWithTaintsOrCounters when any of them has
// a taint or consumes counters, kMaxDevicesPerSlice otherwise. Thread-safe.
size_t MaxDevicesInSlice(const std::vector<SliceDevice>& devices);

// Checks a slice against the API server's validation rules liken can hit: names, counts (the device limit by the
// 64/128 rule above, the error naming the rule), lengths.
// Returns InvalidArgument listing the first violation. Thread-safe.
absl::Status ValidateResourceSlice(const ResourceSlice& slice);

// True when `name` is a DNS label (RFC 1123, at most 63 characters). Thread-safe.
bool IsDnsLabel(std::string_view name);

// True when `name` is a DNS subdomain (RFC 1123, at most 253 characters). Thread-safe.
bool IsDnsSubdomain(std::string_view name);

}  // namespace liken::apis
