// Hooks through which the daemon measures the kubelet plugin (the prepare side): implemented by controller::Metrics,
// called by the kubelet plugin, wired in cmd, so neither includes the other.
#pragma once

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace liken::nodestate {

// Receives plugin events. Every method has an empty default, so an implementation overrides what it needs.
// Implementations must be thread-safe: methods are called concurrently from gRPC threads and must not block.
class PluginObserver {
 public:
  virtual ~PluginObserver() = default;

  // One claim of a NodePrepareResources call finished: OK, or the error the kubelet got for it.
  virtual void OnPrepare(const absl::Status& result, absl::Duration duration) {}

  // One claim of a NodeUnprepareResources call finished.
  virtual void OnUnprepare(const absl::Status& result, absl::Duration duration) {}

  // Writing a USB interface to drivers_probe failed (the unprepare itself still succeeded).
  virtual void OnRebindFailure(absl::string_view usb_interface) {}

  // The number of claims prepared on this node changed (a gauge).
  virtual void OnPreparedClaims(size_t count) {}

  // The kubelet answered NotifyRegistrationStatus.
  virtual void OnRegistration(bool registered, absl::string_view error) {}

  // After a reconcile pass: how many devices prepared claims hold that the node no longer publishes (a gauge).
  virtual void OnUnhealthyClaimedDevices(size_t count) {}

  // A reconcile pass rewrote `count` CDI specs whose device nodes changed or whose file had vanished.
  virtual void OnSpecsRefreshed(int count) {}
};

}  // namespace liken::nodestate
