// liken-dra: a Kubernetes DRA driver that publishes a node's PCI and USB devices and delivers their /dev nodes.
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "absl/synchronization/mutex.h"
#include "cmd/commands.h"

namespace {

void Usage(FILE* out) {
  std::fprintf(out, "usage: liken-dra <command> [flags]\n\ncommands:\n");
  for (const auto& c : liken::cmd::kCommands) {
    std::fprintf(out, "  %-12s %.*s\n", std::string(c.name).c_str(), static_cast<int>(c.synopsis.size()),
                 c.synopsis.data());
  }
  std::fprintf(out, "\n`liken-dra <command> --help` describes a command's flags.\n");
}

}  // namespace

int main(int argc, char** argv) {
  // The distribution's Abseil checks every mutex acquisition for lock-order cycles, a debugging aid that costs
  // ~15% of a claim refresh pass and most of a cached lookup; the product turns it off.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  if (argc < 2) {
    Usage(stderr);
    return 2;
  }
  std::string_view command = argv[1];
  if (command == "-h" || command == "--help" || command == "help") {
    Usage(stdout);
    return 0;
  }
  if (command == "--version" || command == "version") {
    std::printf("liken-dra %s\n", LIKEN_VERSION);
    return 0;
  }
  for (const auto& c : liken::cmd::kCommands) {
    if (command == c.name) return c.main(c, argc - 1, argv + 1);
  }
  std::fprintf(stderr, "liken-dra: unknown command '%s'\n", argv[1]);
  Usage(stderr);
  return 2;
}
