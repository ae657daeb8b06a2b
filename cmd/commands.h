// The subcommands of the liken-dra binary. Each returns the process exit code.
#pragma once

namespace liken::cmd {

// `liken-dra scan`: prints the ResourceSlices this node would publish.
int ScanCommand(int argc, char** argv);
// `liken-dra report`: prints the machine's hardware report.
int ReportCommand(int argc, char** argv);
// `liken-dra run`: the node daemon (kubelet plugin, informers, reconcile loop, metrics).
int RunCommand(int argc, char** argv);
// `liken-dra deviceclasses`: DeviceClasses that serve a device plugin's resource names from liken devices.
int DeviceClassesCommand(int argc, char** argv);
// `liken-dra healthcheck`: exits 0 when the running daemon's sockets answer.
int HealthcheckCommand(int argc, char** argv);

}  // namespace liken::cmd
