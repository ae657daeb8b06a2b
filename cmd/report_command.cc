// `liken-dra report [-o text|json]`: the machine's hardware report.
#include <cstdio>

#include "cmd/commands.h"
#include "cmd/flags.h"
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
  std::string out = format == "json" ? discovery::ReportToJson(*inventory).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
                                     : discovery::ReportToText(*inventory);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
