// The Container Device Interface spec model: the fields liken writes, JSON out and back in.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace liken::cdi {

// One containerEdits.deviceNodes[] entry. The container path equals the host path, so hostPath is not written.
struct DeviceNode {
  std::string path;       // "/dev/dri/renderD128"
  std::string type;       // "c" or "b"
  int64_t major = 0;
  int64_t minor = 0;

  friend bool operator==(const DeviceNode&, const DeviceNode&) = default;
};

// One containerEdits.mounts[] entry: a bind mount of a host file (no `type`, so cdiVersion 0.3.0 holds it).
struct Mount {
  std::string host_path;       // "/var/lib/kubelet/plugins/liken.sh/metadata/<uid>/gpu/liken.sh-metadata.json"
  std::string container_path;  // "/var/run/kubernetes.io/dra-device-attributes/..."
  std::vector<std::string> options;  // {"ro", "nosuid", "nodev", "bind"}

  friend bool operator==(const Mount&, const Mount&) = default;
};

// containerEdits: liken writes device nodes, and bind mounts of the claim's device metadata files.
struct ContainerEdits {
  std::vector<DeviceNode> device_nodes;
  std::vector<Mount> mounts;

  friend bool operator==(const ContainerEdits&, const ContainerEdits&) = default;
};

// One devices[] entry.
struct Device {
  std::string name;  // unqualified; the fully qualified ID is "<kind>=<name>"
  ContainerEdits container_edits;

  friend bool operator==(const Device&, const Device&) = default;
};

// A whole spec file.
struct Spec {
  std::string cdi_version;  // as read; SpecToJson writes MinimumCdiVersion() instead
  std::string kind;         // "vendor/class"
  std::vector<Device> devices;
  ContainerEdits container_edits;  // spec-wide edits (liken writes none)

  friend bool operator==(const Spec&, const Spec&) = default;
};

// The lowest cdiVersion that holds everything in `spec`: "0.3.0", or "0.5.0" when a device name starts
// with something other than a letter (a claim UID that starts with a digit). Thread-safe.
std::string MinimumCdiVersion(const Spec& spec);

// Serialises `spec` as JSON with cdiVersion set to MinimumCdiVersion(spec). Thread-safe.
std::string SpecToJson(const Spec& spec);

// Parses a JSON spec. InvalidArgument names the malformed field; unknown fields are ignored. Thread-safe.
absl::StatusOr<Spec> ParseSpec(absl::string_view json_text);

// Checks a CDI device name (letters, digits, '-', '_', '.', ':'; starts and ends alphanumeric). Thread-safe.
bool IsValidDeviceName(absl::string_view name);

// Returns the fully qualified CDI device ID "<kind>=<name>". Thread-safe.
std::string QualifiedName(absl::string_view kind, absl::string_view device_name);

}  // namespace liken::cdi
