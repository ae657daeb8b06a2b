// Placeholder until the daemon lands: `run` and `healthcheck` report that they are not built yet.
#include <cstdio>

#include "cmd/commands.h"

namespace liken::cmd {

int RunCommand(int, char**) {
  std::fprintf(stderr, "liken-dra run: the node daemon is not part of this build yet\n");
  return 1;
}

int HealthcheckCommand(int, char**) {
  std::fprintf(stderr, "liken-dra healthcheck: the node daemon is not part of this build yet\n");
  return 1;
}

}  // namespace liken::cmd
