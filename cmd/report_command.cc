// `liken-dra report [-o text|json]`: the machine's hardware report, and what the cluster serves when the daemon
// runs on this node (its state file <kubelet-root>/plugins/liken.sh/cluster.json).
#include <cstdio>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "common/files.h"
#include "controller/cluster_features.h"
#include "discovery/inventory.h"
#include "discovery/report_format.h"

namespace liken::cmd {

int ReportCommand(int argc, char** argv) {
  auto flags = Flags::Parse(Command::kReport, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "liken-dra report: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->Has("help")) {
    std::fputs(Usage(Command::kReport).c_str(), stdout);
    return 0;
  }
  ApplyVerbosity(*flags);
  const std::string format = flags->Get("output");
  auto inventory = discovery::NewSysfsScanner(ScanOptionsFromFlags(*flags))->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra report: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  // The running daemon's view of the cluster (absent when no daemon runs here or it has not reached the API yet).
  nlohmann::json cluster;
  const std::string state = flags->Get("kubelet-root") + "/plugins/" + discovery::kDriverName + "/cluster.json";
  if (auto text = ReadFileToString(state); text.ok()) {
    cluster = nlohmann::json::parse(*text, nullptr, false);
    if (cluster.is_discarded()) cluster = nullptr;
  }
  std::string out;
  if (format == "json") {
    nlohmann::json j = discovery::ReportToJson(*inventory);
    if (!cluster.is_null()) j["cluster"] = cluster;
    out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    out = discovery::ReportToText(*inventory);
    if (!cluster.is_null()) out += "\n" + controller::ClusterFeaturesToText(cluster);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
