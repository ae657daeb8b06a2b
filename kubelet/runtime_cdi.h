// Whether the node's container runtime resolves CDI devices: without CDI every pod with a claim fails to start
// ("unresolvable CDI devices"). Asked of the runtime itself over its CRI socket (Version and a verbose Status,
// whose `info` carries containerd's effective CRI configuration), read-only.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace liken::kubelet {

// The verdict. kOutsideSpecDirs: CDI is on, but the runtime reads its CDI specs from directories that do not hold
// the driver's --cdi-root, so it never finds the specs the driver writes (every pod with a claim fails as with CDI
// off).
enum class RuntimeCdiState { kUnknown, kEnabled, kDisabled, kOutsideSpecDirs };

// "unknown", "enabled", "disabled", "outside_spec_dirs" (the metric's label values). Thread-safe.
const char* RuntimeCdiStateName(RuntimeCdiState state);

// What the check found. A plain value; thread-compatible.
struct RuntimeCdi {
  RuntimeCdiState state = RuntimeCdiState::kUnknown;
  std::string runtime;  // "containerd v1.7.27"
  std::string reason;   // one line for the operator: what was read, and what to do when CDI is off
  std::vector<std::string> spec_dirs;  // the directories the runtime reads CDI specs from (its own or its default)
};

// Where the driver's CDI specs go, for the verdict. Plain value.
struct RuntimeCdiOptions {
  std::string cdi_root = "/var/run/cdi";  // the driver's --cdi-root
};

// The verdict from the runtime's answers: `runtime_name`/`runtime_version` of its Version call and `info` of its
// verbose Status. containerd: its configuration's enableCDI when present; otherwise by version (before 1.7 no
// CDI, 2.x on by default). CRI-O: on since 1.23. Anything else: unknown. Where CDI is on, the runtime's CDI spec
// directories (containerd's cdi_spec_dirs, shown as cdiSpecDirs in its status; CRI-O's cdi_spec_dirs where its
// status shows them; otherwise both runtimes' default, /etc/cdi and /var/run/cdi) must hold `options.cdi_root`
// (/var/run and /run read as one): kOutsideSpecDirs when they do not. Thread-safe (pure).
RuntimeCdi JudgeRuntimeCdi(std::string_view runtime_name, std::string_view runtime_version,
                           const std::map<std::string, std::string>& info, const RuntimeCdiOptions& options = {});

// Asks the runtime at `endpoint` ("unix:///run/containerd/containerd.sock", or a socket path) and judges its
// answers. Unavailable (naming the endpoint) when it does not answer within `timeout`. Thread-safe.
absl::StatusOr<RuntimeCdi> CheckRuntimeCdi(const std::string& endpoint, absl::Duration timeout,
                                           const RuntimeCdiOptions& options = {});

}  // namespace liken::kubelet
