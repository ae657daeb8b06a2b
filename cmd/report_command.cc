// `liken-dra report [-o text|json]`: the machine's hardware report.
#include <cstdio>
#include <string>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "discovery/report_format.h"

namespace liken::cmd {

int ReportCommand(const Command& command, int argc, char** argv) {
  ReportFlags flags;
  if (auto exit_code = ParseFlags(command.name, command.synopsis, argc, argv, flags)) return *exit_code;
  auto inventory = discovery::NewSysfsScanner(flags.discovery.scan)->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra report: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  std::string out = flags.output == OutputFormat::kJson
                        ? discovery::ReportToJson(*inventory).dump(2, ' ', false,
                                                                   nlohmann::json::error_handler_t::replace) + "\n"
                        : discovery::ReportToText(*inventory);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
