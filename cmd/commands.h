// The subcommands of the liken-dra binary, listed once (kCommands). Each parses its own typed flags
// (cmd/flags.h) and returns the process exit code.
#pragma once

#include <span>
#include <string_view>

namespace liken::cmd {

// One subcommand: how it is typed, what it does (one line, for both usage texts), and its entry point, which
// takes the command and its arguments (argv[0] is the command's name).
struct Command {
  std::string_view name;
  std::string_view synopsis;
  int (*main)(const Command& command, int argc, char** argv);
};

// `liken-dra scan`: prints the ResourceSlices this node would publish.
int ScanCommand(const Command& command, int argc, char** argv);
// `liken-dra report`: prints the machine's hardware report.
int ReportCommand(const Command& command, int argc, char** argv);
// `liken-dra run`: the node daemon (kubelet plugin, informers, reconcile loop, metrics).
int RunCommand(const Command& command, int argc, char** argv);
// `liken-dra deviceclasses`: DeviceClasses that serve a device plugin's resource names from liken devices.
int DeviceClassesCommand(const Command& command, int argc, char** argv);
// `liken-dra healthcheck`: exits 0 when the running daemon's sockets answer.
int HealthcheckCommand(const Command& command, int argc, char** argv);

// `liken-dra runtime-check`: asks the container runtime whether it resolves CDI devices.
int RuntimeCheckCommand(const Command& command, int argc, char** argv);

// Every subcommand, in usage order.
inline constexpr Command kCommands[] = {
    {"scan", "print the ResourceSlices this node would publish, as a v1 List", ScanCommand},
    {"report", "print the hardware report: published, withheld and unclaimed devices", ReportCommand},
    {"run", "run the node daemon", RunCommand},
    {"deviceclasses", "print DeviceClasses serving a device plugin's resource names (--from-generic-device-plugin FILE)",
     DeviceClassesCommand},
    {"healthcheck", "exit 0 when the daemon's registration and DRA sockets accept connections", HealthcheckCommand},
    {"runtime-check", "ask the container runtime whether it resolves CDI devices (0 yes, 1 no, 3 unknown)",
     RuntimeCheckCommand},
};

}  // namespace liken::cmd
