// What a node offers a migration: its devices from a hardware report, and the udev links to their nodes.
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/files.h"
#include "migrate/generic_device_plugin.h"

namespace liken::migrate {

absl::StatusOr<NodeDevices> NodeDevicesFromReport(const std::string& node, std::string_view report_json) {
  const nlohmann::json j = nlohmann::json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node, ": the report is not JSON (liken-dra report -o json)"));
  }
  const auto published = j.find("published");
  if (published == j.end() || !published->is_array()) {
    return absl::InvalidArgumentError(absl::StrCat("node ", node, ": the report has no published list"));
  }
  NodeDevices out;
  out.node = node;
  for (const auto& item : *published) {
    if (!item.is_object() || !item.contains("name") || !item["name"].is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("node ", node, ": a published device has no name"));
    }
    discovery::PublishedDevice d;
    d.name = item["name"].get<std::string>();
    if (auto a = item.find("attributes"); a != item.end() && a->is_object()) {
      for (const auto& [key, value] : a->items()) {
        if (value.is_string()) {
          d.attributes[key] = value.get<std::string>();
        } else if (value.is_boolean()) {
          d.attributes[key] = value.get<bool>();
        } else if (value.is_number_integer()) {
          d.attributes[key] = value.get<int64_t>();
        }
      }
    }
    if (auto n = item.find("nodes"); n != item.end() && n->is_array()) {
      for (const auto& path : *n) {
        if (!path.is_string()) {
          return absl::InvalidArgumentError(absl::StrCat("node ", node, ": device ", d.name, " has a node that is not a path"));
        }
        d.nodes.push_back({path.get<std::string>(), 'c', 0, 0, ""});
      }
    }
    if (auto m = item.find("allowMultipleAllocations"); m != item.end() && m->is_boolean()) {
      d.allow_multiple_allocations = m->get<bool>();
    }
    out.published.push_back(std::move(d));
  }
  if (auto links = j.find("links"); links != j.end() && links->is_object()) {
    for (const auto& [link, target] : links->items()) {
      if (target.is_string()) out.links[link] = target.get<std::string>();
    }
  } else {
    out.links_unknown = "this node's report lists no udev links (a report from a release before links were reported)";
  }
  return out;
}

namespace {

constexpr int kMaxDepth = 6;
constexpr size_t kMaxLinks = 4096;

// Every symlink under `dir` (standing for /dev + `rel`) whose target, resolved under `dev_root`, is a device node.
void WalkLinks(const std::string& dev_root, const std::string& rel, int depth, std::map<std::string, std::string>* out) {
  if (depth > kMaxDepth || out->size() >= kMaxLinks) return;
  auto entries = ListDirectory(dev_root + rel);
  if (!entries.ok()) return;
  for (const auto& e : *entries) {
    const std::string r = absl::StrCat(rel, "/", e);
    struct stat st;
    if (::lstat((dev_root + r).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      if (r == "/shm" || r == "/mqueue" || r == "/pts" || r == "/hugepages") continue;
      WalkLinks(dev_root, r, depth + 1, out);
      continue;
    }
    if (!S_ISLNK(st.st_mode)) continue;
    auto target = ReadLink(dev_root + r);
    if (!target.ok()) continue;
    // Resolve within /dev: an absolute target is a /dev path already; a relative one is relative to the link.
    std::string resolved = absl::StartsWith(*target, "/") ? *target
                                                          : ResolveRelative(absl::StrCat("/dev", rel), *target);
    if (!absl::StartsWith(resolved, "/dev/") || absl::StartsWith(resolved, "/dev/pts/")) continue;
    struct stat node;
    if (::stat((dev_root + resolved.substr(4)).c_str(), &node) != 0) continue;
    if (!S_ISCHR(node.st_mode) && !S_ISBLK(node.st_mode)) continue;
    (*out)[absl::StrCat("/dev", r)] = resolved;
  }
}

}  // namespace

std::map<std::string, std::string> ReadUdevLinks(const std::string& sysfs_root, const std::string& dev_root) {
  std::map<std::string, std::string> links;
  WalkLinks(dev_root, "", 0, &links);
  for (const char* kind : {"char", "block"}) {
    const std::string dir = absl::StrCat(sysfs_root, "/dev/", kind);
    auto entries = ListDirectory(dir);
    if (!entries.ok()) continue;
    for (const auto& e : *entries) {
      auto uevent = ReadFileToString(absl::StrCat(dir, "/", e, "/uevent"), 64 << 10);
      if (!uevent.ok()) continue;
      std::string devname;
      std::vector<std::string> devlinks;
      for (absl::string_view line : absl::StrSplit(*uevent, '\n')) {
        if (absl::ConsumePrefix(&line, "DEVNAME=")) {
          devname = absl::StartsWith(line, "/") ? std::string(line) : absl::StrCat("/dev/", line);
        } else if (absl::ConsumePrefix(&line, "DEVLINKS=")) {
          devlinks = absl::StrSplit(line, ' ', absl::SkipEmpty());
        }
      }
      if (devname.empty()) continue;
      for (const auto& l : devlinks) {
        if (absl::StartsWith(l, "/dev/") && !links.count(l)) links[l] = devname;
      }
    }
  }
  return links;
}

}  // namespace liken::migrate
