#include "discovery/modules_alias.h"

#include <fnmatch.h>

#include <algorithm>

#include "common/files.h"
#include "common/text.h"

namespace liken::discovery {
namespace {

// Splits on runs of spaces/tabs.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < line.size()) {
    size_t start = line.find_first_not_of(" \t\r", pos);
    if (start == std::string_view::npos) break;
    size_t end = line.find_first_of(" \t\r", start);
    if (end == std::string_view::npos) end = line.size();
    out.push_back(line.substr(start, end - start));
    pos = end;
  }
  return out;
}

}  // namespace

std::string NormalizeModuleName(std::string_view name) {
  std::string out(name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

ModulesAlias ModulesAlias::Parse(std::string_view alias_text, std::string_view builtin_text) {
  std::unordered_set<std::string> builtin;
  for (std::string_view line : SplitLines(builtin_text)) {
    auto f = Fields(line);
    if (f.empty()) continue;
    std::string_view base = f[0].substr(f[0].find_last_of('/') == std::string_view::npos ? 0 : f[0].find_last_of('/') + 1);
    if (base.size() > 3 && base.substr(base.size() - 3) == ".ko") base.remove_suffix(3);
    builtin.insert(NormalizeModuleName(base));
  }
  ModulesAlias db;
  for (std::string_view line : SplitLines(alias_text)) {
    auto f = Fields(line);
    if (f.size() != 3 || f[0] != "alias") continue;
    if (f[1].substr(0, 4) != "pci:" && f[1].substr(0, 4) != "usb:") continue;
    std::string module = NormalizeModuleName(f[2]);
    if (builtin.count(module)) continue;
    db.aliases_.push_back({std::string(f[1]), std::move(module)});
  }
  return db;
}

absl::StatusOr<ModulesAlias> ModulesAlias::Load(const std::string& dir) {
  auto alias = ReadFileToString(dir + "/modules.alias", 64u << 20);
  if (!alias.ok()) return alias.status();
  auto builtin = ReadFileToString(dir + "/modules.builtin", 16u << 20);
  return Parse(*alias, builtin.ok() ? std::string_view(*builtin) : std::string_view());
}

std::vector<std::string> ModulesAlias::Match(std::string_view modalias) const {
  std::string subject(modalias);
  std::vector<std::string> out;
  for (const auto& a : aliases_) {
    if (::fnmatch(a.pattern.c_str(), subject.c_str(), 0) == 0) out.push_back(a.module);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace liken::discovery
