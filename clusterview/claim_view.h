// `kubectl liken claims`: each claim with liken devices (or waiting for one), its devices, node, pods and health.
#pragma once

#include <string>
#include <vector>

#include "clusterview/cluster_index.h"
#include "clusterview/output_format.h"

namespace liken::clusterview {

// One liken device of a claim and its health as the claim's status.devices reports it.
struct ClaimDevice {
  std::string pool;
  std::string device;
  std::string request;
  std::string health;  // the Ready condition: "Ready", its reason when not True ("DeviceUnplugged"), "" when absent
};

// One claim.
struct ClaimRow {
  std::string namespace_name;
  std::string name;
  std::string state;  // "reserved" (allocated and reserved for pods), "allocated", "pending" (not allocated)
  std::string node;   // the node of its liken devices; several joined by ","
  std::vector<ClaimDevice> devices;
  std::vector<std::string> classes;  // the device classes its requests name
  std::vector<PodState> pods;
};

// The claims of the snapshot that IsLikenClaim, sorted by namespace, then name. Thread-safe.
std::vector<ClaimRow> BuildClaimRows(const ClusterIndex& index);

// The rows as `format` prints them: columns [NAMESPACE] NAME STATE NODE DEVICES HEALTH PODS RUNNING (wide adds
// CLASSES), NAMESPACE when `all_namespaces`; or a document of kind LikenClaimList. Thread-safe.
std::string RenderClaims(const std::vector<ClaimRow>& rows, OutputFormat format, bool all_namespaces);

}  // namespace liken::clusterview
