// `liken-dra report [-o text|json]`: the machine's hardware report.
#include <cstdio>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "discovery/report_format.h"

namespace liken::cmd {

int ReportCommand(int argc, char** argv) {
  auto value_flags = ScanValueFlags();
  value_flags.insert({"o", "output"});
  auto flags = Flags::Parse(argc, argv, value_flags, {"help", "h"});
  if (!flags.ok()) {
    std::fprintf(stderr, "liken-dra report: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->Has("help") || flags->Has("h")) {
    std::printf(
        "usage: liken-dra report [-o text|json] [--sysfs-root DIR] [--dev-root DIR] [--proc-root DIR]\n"
        "       [--storage-roles withhold|host] [--pci-ids FILE] [--modules-root DIR]\n");
    return 0;
  }
  ApplyVerbosity(*flags);
  std::string format = flags->Get("o", flags->Get("output", "text"));
  if (format != "text" && format != "json") {
    std::fprintf(stderr, "liken-dra report: -o must be text or json\n");
    return 2;
  }
  auto options = ScanOptionsFromFlags(*flags);
  if (!options.ok()) {
    std::fprintf(stderr, "liken-dra report: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }
  auto inventory = discovery::NewSysfsScanner(*options)->Scan();
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
