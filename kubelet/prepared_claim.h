// What preparing a claim produced: the kubelet's answer and what the node delivered, as checkpointed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "discovery/inventory.h"
#include "kubelet/claim_ref.h"

namespace liken::kubelet {

// One device entry of a NodePrepareResources answer (one per allocation result).
struct PreparedResult {
  std::vector<std::string> request_names;
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;
  std::optional<std::string> share_id;  // sent to v1 kubelets only
  bool admin_access = false;             // allocated for admin access (DRAAdminAccess)

  friend bool operator==(const PreparedResult&, const PreparedResult&) = default;
};

// One allocated device as delivered: its nodes (the CDI spec) and what unprepare needs.
struct DeliveredDevice {
  std::string name;
  std::vector<discovery::DeviceNode> nodes;
  std::vector<std::string> usb_interfaces;
  std::string sysfs_path;
  std::map<std::string, discovery::AttributeValue> attributes;  // as published; for the metadata files
  // Every result delivering it is admin access: the device belongs to another claim, so unprepare leaves its
  // USB interfaces' driver binding alone (the owner's program may have detached the kernel driver).
  bool admin_access = false;

  friend bool operator==(const DeliveredDevice&, const DeliveredDevice&) = default;
};

// A prepared claim: the unit of the checkpoint and of the CDI spec.
struct PreparedClaim {
  ClaimRef ref;
  std::vector<PreparedResult> results;      // allocation order
  std::vector<DeliveredDevice> delivered;   // one per distinct device, allocation order
  std::optional<std::string> pod_claim_name;  // the pod's name for a claim made from a template
  int64_t metadata_generation = 1;            // of the device metadata files; one more at every change

  friend bool operator==(const PreparedClaim&, const PreparedClaim&) = default;
};

}  // namespace liken::kubelet
