// The prepare side of a node pass as the publish side sees it: the one holder of the node's latest inventory,
// and the prepared claims that follow it. Implemented by kubelet::KubeletPlugin, used by
// controller::NodeReconciler, wired in cmd (both stand on the floor above this one).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"

namespace liken::nodestate {

// A device a prepared claim holds, as the claim's prepare delivered it.
struct HeldDevice {
  std::string name;
  std::map<std::string, discovery::AttributeValue> attributes;  // as published when it was prepared
  std::string sysfs_path;  // its directory under <sysfs>/devices; empty: not known
  // Only admin-access claims hold it (DRAAdminAccess): its allocation belongs to no claim of this node.
  bool admin_access_only = false;

  friend bool operator==(const HeldDevice&, const HeldDevice&) = default;
};

// Where a node pass hands its scan, and what it asks of the prepared claims after publishing.
// Implementations are thread-safe: a pass and the kubelet's gRPC calls use them concurrently.
class NodeDevices {
 public:
  virtual ~NodeDevices() = default;

  // Takes `inventory`, whose scan began at `scan_started`, as the node's inventory, unless the holder already
  // has one from a scan that began later (a prepare's rescan). Thread-safe.
  virtual void UpdateInventory(const discovery::Inventory& inventory,
                               discovery::ScanClock::time_point scan_started) = 0;

  // Re-resolves the device nodes of every prepared claim against the inventory held and rewrites the CDI specs
  // that changed or vanished; returns how many it rewrote, or the first write error (after doing the rest).
  // Thread-safe.
  virtual absl::StatusOr<int> RefreshPreparedClaims() = 0;

  // The devices the prepared claims hold, sorted by name (each once). Thread-safe.
  virtual std::vector<HeldDevice> HeldDevices() const = 0;

  // The names of the devices the inventory held now publishes, less a prepared claim's device whose name now holds
  // another unit (discovery::SameUnit); nullopt while it holds none (nothing scanned yet,
  // or not started): no news of unplugged devices. Thread-safe.
  virtual std::optional<std::set<std::string>> PresentDevices() const = 0;
};

}  // namespace liken::nodestate
