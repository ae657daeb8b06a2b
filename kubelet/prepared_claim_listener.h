// Tells another part of the daemon (the claim status writer) which claims are prepared on this node.
#pragma once

#include "discovery/inventory.h"
#include "kubelet/claim_ref.h"
#include "kubelet/prepared_claim.h"

namespace liken::kubelet {

// Receives every change of the set of prepared claims. Implementations must be thread-safe, quick and
// non-blocking: they are called with the claim's lock held, and must not call back into the plugin.
class PreparedClaimListener {
 public:
  virtual ~PreparedClaimListener() = default;
  // The claim `ref` is now prepared as `now` (first prepared, recovered at start-up, or its delivered nodes
  // changed), or is no longer prepared (`now` is null).
  virtual void OnPreparedClaimChanged(const ClaimRef& ref, const PreparedClaim* now) = 0;
  // The node's inventory after a node pass refreshed the prepared claims against it (a device a prepared claim
  // holds that is missing from it is unplugged). Called without any claim lock held.
  virtual void OnInventory(const discovery::Inventory& inventory) = 0;
};

}  // namespace liken::kubelet
