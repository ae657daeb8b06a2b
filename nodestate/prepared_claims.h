// The claims prepared on this node as their status sees them, and where the prepare side reports each change of
// them: implemented by controller::ClaimStatusController (whose handlers only record and enqueue), called by
// kubelet::ClaimPreparer, wired in cmd.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace liken::nodestate {

// One device of this driver's pool held by a prepared claim.
struct ClaimDevice {
  std::string device;
  std::optional<std::string> share_id;
  std::vector<std::string> dev_paths;  // the /dev nodes delivered, in CDI spec order
};

// A claim prepared on this node and the devices of this node's pool it holds.
struct PreparedClaimDevices {
  std::string namespace_name;
  std::string name;
  std::string uid;
  std::vector<ClaimDevice> devices;
};

// Receives every change of the set of prepared claims: first prepared, recovered at start-up, its delivered nodes
// changed, or no longer prepared. Implementations must be thread-safe, quick and non-blocking: they are called with
// the claim's lock held and must not call back into the prepare side.
class PreparedClaimEvents {
 public:
  virtual ~PreparedClaimEvents() = default;

  // The claim is prepared here with these devices (replacing what was told before for its namespace and name).
  virtual void SetPrepared(PreparedClaimDevices claim) = 0;

  // The claim with this UID is no longer prepared here.
  virtual void SetUnprepared(const std::string& namespace_name, const std::string& name, const std::string& uid) = 0;
};

}  // namespace liken::nodestate
