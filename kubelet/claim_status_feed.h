// Connects the kubelet plugin to controller/'s claim status writer: prepared claims, and the node's inventory
// after each refresh of prepared claims.
#pragma once

#include <string>

#include "controller/claim_status_controller.h"
#include "discovery/inventory.h"
#include "kubelet/prepared_claim_listener.h"

namespace liken::kubelet {

// Turns the plugin's prepared claims into the controller's handler calls (which only record and enqueue).
// `statuses` is borrowed and must outlive the feed. Thread-safe.
class ClaimStatusFeed final : public PreparedClaimListener {
 public:
  // `pool` is the node name: only allocation results of this pool are reported.
  ClaimStatusFeed(std::string pool, controller::ClaimStatusController* statuses);

  // PreparedClaimListener.
  void OnPreparedClaimChanged(const ClaimRef& ref, const PreparedClaim* now) override;
  void OnInventory(const discovery::Inventory& inventory) override;

 private:
  const std::string pool_;
  controller::ClaimStatusController* const statuses_;
};

// What the controller reports for `claim`: one device per distinct (device, shareID) of `pool`, with the
// /dev nodes delivered. Thread-safe.
controller::PreparedClaimDevices ClaimDevicesOf(const PreparedClaim& claim, const std::string& pool);

}  // namespace liken::kubelet
