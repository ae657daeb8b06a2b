// Command-line flag parsing shared by the subcommands: `--name value`, `--name=value`, `-o value`.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "discovery/scanner.h"

namespace liken::cmd {

// Parsed flags of one subcommand.
class Flags {
 public:
  // Parses argv[1..argc) against `value_flags` (take a value) and `bool_flags` (take none, or `=value`).
  // `-v` / `--v=N` (verbosity) is accepted everywhere. Unknown flags and missing values are InvalidArgument.
  // Thread-compatible.
  static absl::StatusOr<Flags> Parse(int argc, char** argv, const std::set<std::string>& value_flags,
                                     const std::set<std::string>& bool_flags);

  // The value of `name`, or `fallback` when absent.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // True when `name` was given.
  bool Has(const std::string& name) const { return values_.count(name) > 0; }

 private:
  std::map<std::string, std::string> values_;
};

// The value flags every discovery-reading command accepts (--sysfs-root, --dev-root, ...).
std::set<std::string> ScanValueFlags();

// Builds ScanOptions from the discovery flags. InvalidArgument for a bad --storage-roles. Thread-safe.
absl::StatusOr<discovery::ScanOptions> ScanOptionsFromFlags(const Flags& flags);

// Applies -v / --v=N to the log level.
void ApplyVerbosity(const Flags& flags);

}  // namespace liken::cmd
