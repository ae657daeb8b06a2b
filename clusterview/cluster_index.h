// Lookups over a ClusterSnapshot that every view needs: a device's attributes as text, which claims hold which
// device, which pods use which claim, and which device classes select liken devices.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "apis/resource_claim.h"
#include "apis/resource_slice.h"
#include "clusterview/cluster_snapshot.h"

namespace liken::clusterview {

// One claim holding a device: the claim and the pods it is reserved for.
struct DeviceHolder {
  std::string namespace_name;
  std::string claim;
  std::vector<std::string> pods;  // status.reservedFor's pods, in order
  bool admin_access = false;

  friend bool operator==(const DeviceHolder&, const DeviceHolder&) = default;
};

// A pod named by a claim or naming it: its name and phase, and whether all its containers run.
struct PodState {
  std::string name;
  std::string phase;  // status.phase ("Pending" when absent)
  bool running = false;  // phase Running and every container ready

  friend bool operator==(const PodState&, const PodState&) = default;
};

// An attribute value as text: strings as they are, booleans "true"/"false", integers in decimal, versions as
// written. Thread-safe.
std::string AttributeText(const apis::AttributeValue& value);

// The value of liken's attribute `name` ("serial": looked up as "liken.sh/serial", then "serial"), or nullopt.
// Thread-safe.
std::optional<std::string> LikenAttribute(const apis::SliceDevice& device, const std::string& name);

// The pod's state as PodState. Thread-safe.
PodState PodStateOf(const nlohmann::json& pod);

// True when the pod uses the claim `claim` of its namespace: named in spec.resourceClaims, in
// status.resourceClaimStatuses or status.extendedResourceClaimStatus. Thread-safe.
bool PodUsesClaim(const nlohmann::json& pod, const std::string& claim);

// The names of the claims a pod uses (as PodUsesClaim), in the pod's order, without duplicates; a template
// claim not yet made is absent. Thread-safe.
std::vector<std::string> ClaimsOfPod(const nlohmann::json& pod);

// The snapshot's indexes. Immutable after construction; thread-safe to read. `snapshot` must outlive it.
class ClusterIndex {
 public:
  explicit ClusterIndex(const ClusterSnapshot& snapshot);

  // The claims that hold liken device `device` of pool `pool`, in snapshot order.
  std::vector<DeviceHolder> HoldersOf(const std::string& pool, const std::string& device) const;
  // The node that publishes pool `pool` (liken names its pools after the node), or `pool` itself.
  std::string NodeOfPool(const std::string& pool) const;
  // The pod `name` of `namespace_name`, or nullptr.
  const nlohmann::json* FindPod(const std::string& namespace_name, const std::string& name) const;
  // The claim `name` of `namespace_name`, or nullptr.
  const apis::ResourceClaim* FindClaim(const std::string& namespace_name, const std::string& name) const;
  // The device class `name`, or nullptr.
  const nlohmann::json* FindClass(const std::string& name) const;
  // The pods of the claim's namespace that use it (PodUsesClaim) or that its status.reservedFor names.
  std::vector<PodState> PodsOfClaim(const apis::ResourceClaim& claim) const;
  // True when the claim has a liken allocation result, or a request whose class's selectors name liken.sh.
  bool IsLikenClaim(const apis::ResourceClaim& claim) const;
  // The liken devices published on `node`, with their slices' pools.
  std::vector<std::pair<std::string, const apis::SliceDevice*>> DevicesOnNode(const std::string& node) const;
  const ClusterSnapshot& snapshot() const { return snapshot_; }

 private:
  const ClusterSnapshot& snapshot_;
  std::map<std::pair<std::string, std::string>, std::vector<DeviceHolder>> holders_;  // (pool, device)
  std::map<std::string, std::string> pool_nodes_;
};

// The CEL expressions a device class selects with (spec.selectors[].cel.expression), as written. Thread-safe.
std::vector<std::string> ClassSelectors(const nlohmann::json& device_class);

}  // namespace liken::clusterview
