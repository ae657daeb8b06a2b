#include "kubelet/prepared_claim_devices.h"

#include <algorithm>
#include <utility>

namespace liken::kubelet {

nodestate::PreparedClaimDevices ClaimDevicesOf(const PreparedClaim& claim, const std::string& pool) {
  nodestate::PreparedClaimDevices out;
  out.namespace_name = claim.ref.namespace_name;
  out.name = claim.ref.name;
  out.uid = claim.ref.uid;
  for (const auto& result : claim.results) {
    if (result.pool != pool) continue;
    bool seen = std::any_of(out.devices.begin(), out.devices.end(), [&](const nodestate::ClaimDevice& d) {
      return d.device == result.device && d.share_id == result.share_id;
    });
    if (seen) continue;
    nodestate::ClaimDevice device;
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

}  // namespace liken::kubelet
