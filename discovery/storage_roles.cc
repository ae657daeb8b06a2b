#include "discovery/storage_roles.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cstdio>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/files.h"

namespace liken::discovery {
namespace {

// Undoes mountinfo's octal escapes (\040 for a space).
std::string Unescape(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      int v = 0;
      bool ok = true;
      for (int k = 1; k <= 3; ++k) {
        if (s[i + k] < '0' || s[i + k] > '7') ok = false;
        else v = v * 8 + (s[i + k] - '0');
      }
      if (ok) {
        out += static_cast<char>(v);
        i += 3;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

void AddDevNumbers(const std::string& dev_root, const std::string& dev_path, std::set<std::pair<uint32_t, uint32_t>>* out) {
  if (dev_path.rfind("/dev/", 0) != 0) return;
  struct stat st;
  if (::stat((dev_root + dev_path.substr(4)).c_str(), &st) == 0 && S_ISBLK(st.st_mode)) {
    out->insert({major(st.st_rdev), minor(st.st_rdev)});
  }
}

}  // namespace

void ParseMountInfo(const std::string& text, HostStorageFacts* facts) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::vector<std::string> f;
    std::string word;
    while (fields >> word) f.push_back(word);
    if (f.size() < 10) continue;
    unsigned ma, mi;
    char tail;
    if (std::sscanf(f[2].c_str(), "%u:%u%c", &ma, &mi, &tail) == 2) facts->mounted_numbers.insert({ma, mi});
    for (size_t i = 6; i + 2 < f.size(); ++i) {
      if (f[i] == "-") {
        std::string source = Unescape(f[i + 2]);
        if (source.rfind("/dev/", 0) == 0) facts->mounted_sources.insert(source);
        break;
      }
    }
  }
}

void ParseSwaps(const std::string& text, HostStorageFacts* facts) {
  std::istringstream in(text);
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      if (line.rfind("Filename", 0) == 0) continue;
    }
    std::istringstream fields(line);
    std::string path;
    if (fields >> path) facts->swap_paths.insert(Unescape(path));
  }
}

absl::StatusOr<HostStorageFacts> ReadHostStorageFacts(const std::string& proc_root, const std::string& dev_root) {
  auto mountinfo = ReadFileToString(proc_root + "/1/mountinfo", 16u << 20);
  if (!mountinfo.ok()) return mountinfo.status();
  auto swaps = ReadFileToString(proc_root + "/swaps", 1u << 20);
  if (!swaps.ok()) return swaps.status();
  HostStorageFacts facts;
  ParseMountInfo(*mountinfo, &facts);
  ParseSwaps(*swaps, &facts);
  for (const auto& source : facts.mounted_sources) AddDevNumbers(dev_root, source, &facts.mounted_numbers);
  for (const auto& path : facts.swap_paths) AddDevNumbers(dev_root, path, &facts.swap_numbers);
  return facts;
}

BlockHolders ReadBlockHolders(const std::vector<WalkedNode>& nodes) {
  BlockHolders holders;
  for (const auto& w : nodes) {
    if (w.node.type == 'b') holders.emplace(w.dir, ListDirectory(w.dir + "/holders"));
  }
  return holders;
}

std::optional<std::string> FindStorageRole(const HostStorageFacts& facts, const std::vector<WalkedNode>& nodes,
                                           const BlockHolders& holders) {
  for (const auto& w : nodes) {
    if (w.node.type != 'b') continue;
    std::pair<uint32_t, uint32_t> numbers{w.node.major, w.node.minor};
    if (facts.mounted_numbers.count(numbers) || facts.mounted_sources.count(w.node.path)) {
      return absl::StrCat(w.node.path, " is mounted");
    }
    if (facts.swap_numbers.count(numbers) || facts.swap_paths.count(w.node.path)) {
      return absl::StrCat(w.node.path, " is in use as swap");
    }
    auto it = holders.find(w.dir);
    if (it == holders.end()) continue;  // not read: nothing known to hold it
    const auto& held = it->second;
    if (held.ok() && !held->empty()) return absl::StrCat(w.node.path, " is held by ", (*held)[0]);
    if (!held.ok() && !absl::IsNotFound(held.status())) {
      return absl::StrCat(w.node.path, ": holders unreadable (", held.status().message(), ")");
    }
  }
  return std::nullopt;
}

}  // namespace liken::discovery
