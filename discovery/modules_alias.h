// modules.alias: which loadable kernel modules can drive a modalias.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"

namespace liken::discovery {

// An immutable, parsed modules.alias restricted to PCI and USB aliases. Thread-safe after construction.
class ModulesAlias {
 public:
  // Parses `alias PATTERN MODULE` lines of modules.alias; `builtin` lists built-in module names
  // (modules.builtin lines such as `kernel/drivers/usb/host/xhci-pci.ko`), which are left out. Never fails.
  static ModulesAlias Parse(std::string_view alias_text, std::string_view builtin_text);

  // Loads `<dir>/modules.alias` (required) and `<dir>/modules.builtin` (optional). Thread-safe.
  static absl::StatusOr<ModulesAlias> Load(const std::string& dir);

  // Loadable modules whose alias glob matches `modalias`, sorted and unique. Thread-safe.
  std::vector<std::string> Match(std::string_view modalias) const;

  // Number of aliases kept (for tests and diagnostics).
  size_t alias_count() const { return aliases_.size(); }

 private:
  struct Alias {
    std::string pattern;
    std::string module;
  };
  std::vector<Alias> aliases_;
};

// Normalizes a module name the way modprobe does ('-' becomes '_'). Thread-safe.
std::string NormalizeModuleName(std::string_view name);

}  // namespace liken::discovery
