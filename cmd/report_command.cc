// `liken-dra report [-o text|json]`: the machine's hardware report, and what the cluster serves when the daemon
// runs on this node (its state file <kubelet-root>/plugins/liken.sh/cluster.json); as JSON, also the udev links to
// the nodes it publishes.
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "common/files.h"
#include "controller/cluster_features.h"
#include "discovery/inventory.h"
#include "discovery/report_format.h"
#include "migrate/generic_device_plugin.h"

namespace liken::cmd {

int ReportCommand(const Command& command, int argc, char** argv) {
  ReportFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  auto inventory = discovery::NewSysfsScanner(flags.discovery.scan)->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra report: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  // The running daemon's view of the cluster (absent when no daemon runs here or it has not reached the API yet).
  nlohmann::json cluster;
  const std::string state_dir = flags.kubelet_root + "/plugins/" + discovery::kDriverName;
  const std::string state = state_dir + "/cluster.json";
  if (auto text = ReadFileToString(state); text.ok()) {
    cluster = nlohmann::json::parse(*text, nullptr, false);
    if (cluster.is_discarded()) cluster = nullptr;
  }
  // The running daemon's device conditions: flapping devices it damps, other units in claimed devices' places.
  std::vector<std::string> conditions;
  if (auto text = ReadFileToString(state_dir + "/devices.json"); text.ok()) {
    nlohmann::json j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_object() && j.contains("conditions") && j["conditions"].is_array()) {
      for (const auto& line : j["conditions"]) {
        if (line.is_string() && conditions.size() < 1024) conditions.push_back(line.get<std::string>());
      }
    }
  }
  std::string out;
  if (flags.output == OutputFormat::kJson) {
    nlohmann::json j = discovery::ReportToJson(*inventory);
    // The udev links to the nodes it publishes: `deviceclasses --report` resolves a plugin's by-id paths with them.
    std::set<std::string> delivered;
    for (const auto& d : inventory->published) {
      for (const auto& n : d.nodes) delivered.insert(n.path);
    }
    nlohmann::json links = nlohmann::json::object();
    for (const auto& [link, target] :
         migrate::ReadUdevLinks(flags.discovery.scan.sysfs_root, flags.discovery.scan.dev_root)) {
      if (delivered.count(target)) links[link] = target;
    }
    j["links"] = std::move(links);
    if (!cluster.is_null()) j["cluster"] = cluster;
    if (!conditions.empty()) j["conditions"] = conditions;
    out = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  } else {
    out = discovery::ReportToText(*inventory);
    if (!conditions.empty()) {
      out += "\nDevices the running daemon holds back:\n";
      for (const auto& line : conditions) out += "  " + line + "\n";
    }
    if (!cluster.is_null()) out += "\n" + controller::ClusterFeaturesToText(cluster);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
