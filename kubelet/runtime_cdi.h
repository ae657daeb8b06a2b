// Whether the node's container runtime resolves CDI devices: without CDI every pod with a claim fails to start
// ("unresolvable CDI devices"). Asked of the runtime itself over its CRI socket (Version and a verbose Status,
// whose `info` carries containerd's effective CRI configuration), read-only.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace liken::kubelet {

// The verdict.
enum class RuntimeCdiState { kUnknown, kEnabled, kDisabled };

// "unknown", "enabled", "disabled" (the metric's label values). Thread-safe.
const char* RuntimeCdiStateName(RuntimeCdiState state);

// What the check found. A plain value; thread-compatible.
struct RuntimeCdi {
  RuntimeCdiState state = RuntimeCdiState::kUnknown;
  std::string runtime;  // "containerd v1.7.27"
  std::string reason;   // one line for the operator: what was read, and what to do when CDI is off
};

// The verdict from the runtime's answers: `runtime_name`/`runtime_version` of its Version call and `info` of its
// verbose Status. containerd: its configuration's enableCDI when present; otherwise by version (before 1.7 no
// CDI, 2.x on by default). CRI-O: on since 1.23. Anything else: unknown. Thread-safe (pure).
RuntimeCdi JudgeRuntimeCdi(std::string_view runtime_name, std::string_view runtime_version,
                           const std::map<std::string, std::string>& info);

// Asks the runtime at `endpoint` ("unix:///run/containerd/containerd.sock", or a socket path) and judges its
// answers. Unavailable (naming the endpoint) when it does not answer within `timeout`. Thread-safe.
absl::StatusOr<RuntimeCdi> CheckRuntimeCdi(const std::string& endpoint, absl::Duration timeout);

}  // namespace liken::kubelet
