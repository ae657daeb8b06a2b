// `liken-dra scan --node-name NAME [-o yaml|json]`: the ResourceSlices this node would publish, as a List.
#include <cstdio>
#include <iostream>

#include "cmd/commands.h"
#include "cmd/flags.h"
#include "common/json_yaml.h"
#include "common/log.h"
#include "discovery/slice_builder.h"

namespace liken::cmd {

int ScanCommand(int argc, char** argv) {
  auto flags = Flags::Parse(Command::kScan, argc, argv);
  if (!flags.ok()) {
    std::fprintf(stderr, "liken-dra scan: %s\n", std::string(flags.status().message()).c_str());
    return 2;
  }
  if (flags->Has("help")) {
    std::fputs(Usage(Command::kScan).c_str(), stdout);
    return 0;
  }
  ApplyVerbosity(*flags);
  std::string node = flags->Get("node-name");
  if (node.empty()) {
    std::fprintf(stderr, "liken-dra scan: --node-name is required\n");
    return 2;
  }
  if (!apis::IsDnsSubdomain(node) || !apis::IsDnsSubdomain(discovery::PrimarySliceName(node) + "-99")) {
    std::fprintf(stderr, "liken-dra scan: --node-name '%s' is not a node name whose slices can be named "
                 "(a DNS subdomain of at most 241 characters)\n", node.c_str());
    return 2;
  }
  const std::string format = flags->Get("output");
  discovery::ScanOptions options = ScanOptionsFromFlags(*flags);
  options.match_modules = false;  // slices carry no module names
  auto inventory = discovery::NewSysfsScanner(options)->Scan();
  if (!inventory.ok()) {
    std::fprintf(stderr, "liken-dra scan: %s\n", std::string(inventory.status().message()).c_str());
    return 1;
  }
  for (const auto& w : inventory->warnings) {
    LogDebug("scan warning", {{"device", w.device}, {"message", w.message}});
  }
  nlohmann::ordered_json list;
  list["apiVersion"] = "v1";
  list["kind"] = "List";
  list["items"] = nlohmann::ordered_json::array();
  for (const auto& slice : discovery::BuildResourceSlices(node, *inventory, 1)) {
    auto status = apis::ValidateResourceSlice(slice);
    if (!status.ok()) {
      std::fprintf(stderr, "liken-dra scan: internal error: %s\n", std::string(status.message()).c_str());
      return 1;
    }
    // Re-serialise in kubectl's field order.
    nlohmann::json j = apis::ResourceSliceToJson(slice);
    nlohmann::ordered_json item;
    item["apiVersion"] = j["apiVersion"];
    item["kind"] = j["kind"];
    item["metadata"] = j["metadata"];
    nlohmann::ordered_json spec;
    spec["driver"] = j["spec"]["driver"];
    spec["nodeName"] = j["spec"]["nodeName"];
    spec["pool"] = {{"name", j["spec"]["pool"]["name"]},
                    {"generation", j["spec"]["pool"]["generation"]},
                    {"resourceSliceCount", j["spec"]["pool"]["resourceSliceCount"]}};
    spec["devices"] = nlohmann::ordered_json::array();
    for (const auto& d : j["spec"]["devices"]) {
      nlohmann::ordered_json device;
      device["name"] = d["name"];
      if (d.contains("allowMultipleAllocations")) device["allowMultipleAllocations"] = d["allowMultipleAllocations"];
      device["attributes"] = d.value("attributes", nlohmann::json::object());
      spec["devices"].push_back(std::move(device));
    }
    item["spec"] = std::move(spec);
    list["items"].push_back(std::move(item));
  }
  std::string out = format == "json" ? list.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n" : JsonToYaml(list);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace liken::cmd
