// The standard device metadata files (API group metadata.resource.k8s.io, kind DeviceMetadata): what one
// file holds, how it is encoded, and where it appears in a container.
//
// One file per claim and request. It is a stream of the same DeviceMetadata object encoded once per version
// the standard defines, newest first (v1beta1, then v1alpha1), each pretty-printed and followed by a newline,
// so a consumer takes the first object whose apiVersion it knows. In the container it is
//   /var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claimName>/<request>/liken.sh-metadata.json
// for a claim the pod names directly, and
//   /var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/<podClaimName>/<request>/liken.sh-metadata.json
// for a claim made from a template (the pod's own name for the claim, from the claim's
// resource.kubernetes.io/pod-claim-name annotation, apis::ResourceClaim::pod_claim_name).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "apis/attribute_value.h"
#include "cdi/cdi_spec.h"

namespace liken::cdi {

inline constexpr char kMetadataGroup[] = "metadata.resource.k8s.io";
inline constexpr char kMetadataKind[] = "DeviceMetadata";
inline constexpr char kMetadataContainerDir[] = "/var/run/kubernetes.io/dra-device-attributes";

// The API versions written, newest first. Thread-safe.
const std::vector<std::string>& MetadataVersions();

// One attribute value of a metadata file: the resource.k8s.io/v1 DeviceAttribute kinds liken writes
// (string, bool, int, version, and a list of strings).
using MetadataValue = std::variant<std::string, bool, int64_t, apis::VersionValue, std::vector<std::string>>;

// One allocated device. A plain value; thread-compatible.
struct MetadataDevice {
  std::string driver;
  std::string pool;
  std::string name;
  std::map<std::string, MetadataValue> attributes;  // qualified names, as in the ResourceSlice

  friend bool operator==(const MetadataDevice&, const MetadataDevice&) = default;
};

// The content of one file: a claim's identity and one of its requests. A plain value; thread-compatible.
struct DeviceMetadata {
  std::string claim_namespace;
  std::string claim_name;
  std::string claim_uid;
  int64_t generation = 1;                     // 1 when written first; one more at every change
  std::optional<std::string> pod_claim_name;  // set for a claim made from a template
  std::string request;                        // "gpu", or "gpu/subrequest" as allocated
  std::vector<MetadataDevice> devices;

  friend bool operator==(const DeviceMetadata&, const DeviceMetadata&) = default;
};

// The stream of `metadata` encoded once per MetadataVersions() entry. Thread-safe.
std::string EncodeDeviceMetadataStream(const DeviceMetadata& metadata);

// The request part of a file path: the request name without a subrequest ("gpu/high" -> "gpu"). Thread-safe.
std::string BaseRequestName(absl::string_view request);

// "<driver>-metadata.json". Thread-safe.
std::string MetadataFileName(absl::string_view driver);

// Where the file of `metadata`'s request appears in the container (see the top of this file). Thread-safe.
std::string MetadataContainerPath(absl::string_view driver, const DeviceMetadata& metadata);

// Checks that the names that become path segments (claim name, pod claim name, request) are safe: no '/',
// not "." or "..", not empty. InvalidArgument names the offender. Thread-safe.
absl::Status ValidateMetadataPath(const DeviceMetadata& metadata);

// "<claimUID>_<request>": the CDI device that mounts a request's file (request names hold no '_', so it
// never meets a "<claimUID>-<device>" name). Thread-safe.
std::string MetadataCdiDeviceName(absl::string_view claim_uid, absl::string_view base_request);

// The CDI device that bind-mounts `host_path` read-only at `container_path`. Thread-safe.
Device MetadataCdiDevice(absl::string_view claim_uid, absl::string_view base_request, std::string host_path,
                         std::string container_path);

}  // namespace liken::cdi
