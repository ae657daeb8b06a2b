// A prepared claim as its status sees it (nodestate::PreparedClaimDevices): what the preparer tells the claim
// status writer, through nodestate::PreparedClaimEvents, at every change of the prepared claims.
#pragma once

#include <string>

#include "kubelet/prepared_claim.h"
#include "nodestate/prepared_claims.h"

namespace liken::kubelet {

// What the claim status writer reports for `claim`: one device per distinct (device, shareID) of `pool`, with the
// /dev nodes delivered. Thread-safe.
nodestate::PreparedClaimDevices ClaimDevicesOf(const PreparedClaim& claim, const std::string& pool);

}  // namespace liken::kubelet
