// `liken-dra scan --node-name NAME [-o yaml|json]`: the ResourceSlices this node would publish, as a List.
#include <cstdio>
#include <string>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "common/json_yaml.h"
#include "common/log.h"
#include "discovery/report_format.h"
#include "discovery/slice_builder.h"

namespace liken::cmd {

int ScanCommand(const Command& command, int argc, char** argv) {
  ScanFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  const std::string& node = flags.node_name;
  if (node.empty()) {
    std::fprintf(stderr, "liken-dra scan: --node-name is required\n");
    return 2;
  }
  if (!apis::IsDnsSubdomain(node) || !apis::IsDnsSubdomain(discovery::PrimarySliceName(node) + "-99")) {
    std::fprintf(stderr, "liken-dra scan: --node-name '%s' is not a node name whose slices can be named "
                 "(a DNS subdomain of at most 241 characters)\n", node.c_str());
    return 2;
  }
  discovery::ScanOptions options = flags.discovery.scan;
  options.match_modules = false;  // slices carry no module names
  auto inventory = discovery::NewSysfsScanner(options)->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra scan: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  for (const auto& w : inventory->warnings) {
    LogDebug("scan warning", {{"device", w.device}, {"message", w.message}});
  }
  auto list = discovery::ResourceSliceList(node, *inventory);
  if (!list.ok()) {
    std::fprintf(stderr, "liken-dra scan: %s\n", std::string(list.status().message()).c_str());
    return 1;
  }
  std::string out = flags.output == OutputFormat::kJson
                        ? list->dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                        : JsonToYaml(*list);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
