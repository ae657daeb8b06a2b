// The kubelet side of a node pass as the controller sees it: the one holder of the node's latest inventory,
// and the prepared claims that follow it. Declared here, implemented by kubelet::KubeletPlugin (the kubelet
// floor sits above this one), wired in cmd.
#pragma once

#include "absl/status/statusor.h"
#include "discovery/inventory.h"
#include "discovery/scanner.h"

namespace liken::controller {

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
};

}  // namespace liken::controller
