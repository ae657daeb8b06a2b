// Connects the kubelet plugin to the claim status controller: prepared claims and each scan's inventory.
#pragma once

#include <string>

#include "controller/claim_status_controller.h"
#include "discovery/inventory.h"
#include "kubelet/prepared_claim_listener.h"

namespace liken::cmd {

// Turns the plugin's prepared claims into the controller's handler calls (which only record and enqueue).
// `statuses` is borrowed and must outlive the feed. Thread-safe.
class ClaimStatusFeed final : public kubelet::PreparedClaimListener {
 public:
  // `pool` is the node name: only allocation results of this pool are reported.
  ClaimStatusFeed(std::string pool, controller::ClaimStatusController* statuses);

  // kubelet::PreparedClaimListener.
  void OnPreparedClaimChanged(const kubelet::ClaimRef& ref, const kubelet::PreparedClaim* now) override;

  // The devices published by the latest scan (a device a prepared claim holds that is missing is unplugged).
  // Thread-safe.
  void OnInventory(const discovery::Inventory& inventory);

 private:
  const std::string pool_;
  controller::ClaimStatusController* const statuses_;
};

// What the controller reports for `claim`: one device per distinct (device, shareID) of `pool`, with the
// /dev nodes delivered. Thread-safe.
controller::PreparedClaimDevices ClaimDevicesOf(const kubelet::PreparedClaim& claim, const std::string& pool);

}  // namespace liken::cmd
