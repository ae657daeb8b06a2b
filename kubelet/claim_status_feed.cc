#include "kubelet/claim_status_feed.h"

#include <algorithm>
#include <set>
#include <utility>

namespace liken::kubelet {

controller::PreparedClaimDevices ClaimDevicesOf(const PreparedClaim& claim, const std::string& pool) {
  controller::PreparedClaimDevices out;
  out.namespace_name = claim.ref.namespace_name;
  out.name = claim.ref.name;
  out.uid = claim.ref.uid;
  for (const auto& result : claim.results) {
    if (result.pool != pool) continue;
    bool seen = std::any_of(out.devices.begin(), out.devices.end(), [&](const controller::ClaimDevice& d) {
      return d.device == result.device && d.share_id == result.share_id;
    });
    if (seen) continue;
    controller::ClaimDevice device;
    device.device = result.device;
    device.share_id = result.share_id;
    for (const auto& delivered : claim.delivered) {
      if (delivered.name != result.device) continue;
      for (const auto& node : delivered.nodes) device.dev_paths.push_back(node.path);
    }
    out.devices.push_back(std::move(device));
  }
  return out;
}

ClaimStatusFeed::ClaimStatusFeed(std::string pool, controller::ClaimStatusController* statuses)
    : pool_(std::move(pool)), statuses_(statuses) {}

void ClaimStatusFeed::OnPreparedClaimChanged(const ClaimRef& ref, const PreparedClaim* now) {
  if (now != nullptr) {
    statuses_->SetPrepared(ClaimDevicesOf(*now, pool_));
  } else {
    statuses_->SetUnprepared(ref.namespace_name, ref.name, ref.uid);
  }
}

void ClaimStatusFeed::OnInventory(const discovery::Inventory& inventory) {
  std::set<std::string> names;
  for (const auto& device : inventory.published) names.insert(device.name);
  statuses_->SetPresentDevices(std::move(names));
}

}  // namespace liken::kubelet
