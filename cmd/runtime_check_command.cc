// `liken-dra runtime-check [--runtime-endpoint unix://PATH] [--cdi-root DIR]`: asks the node's container runtime over
// its CRI socket whether it resolves CDI devices from the driver's CDI root, for an operator on the host before the
// first pod with a claim. Exit 0: it does; 1: it does not (CDI off, or its CDI spec directories do not hold DIR; the
// line says what to change); 3: unknown (no answer, or a runtime liken-dra cannot judge).
#include <cstdio>
#include <string>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "kubelet/runtime_cdi.h"

namespace liken::cmd {

int RuntimeCheckCommand(const Command& command, int argc, char** argv) {
  RuntimeCheckFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  auto cdi = kubelet::CheckRuntimeCdi(flags.runtime_endpoint, absl::Seconds(10), {.cdi_root = flags.cdi_root});
  if (!cdi.ok()) {
    std::fprintf(stderr, "liken-dra runtime-check: %s\n", std::string(cdi.status().message()).c_str());
    return 3;
  }
  std::printf("CDI %s: %s: %s\n", kubelet::RuntimeCdiStateName(cdi->state), cdi->runtime.c_str(),
              cdi->reason.c_str());
  switch (cdi->state) {
    case kubelet::RuntimeCdiState::kEnabled: return 0;
    case kubelet::RuntimeCdiState::kDisabled:
    case kubelet::RuntimeCdiState::kOutsideSpecDirs: return 1;
    case kubelet::RuntimeCdiState::kUnknown: break;
  }
  return 3;
}

}  // namespace liken::cmd
