// Command-line flag parsing shared by the subcommands: `--name value`, `--name=value`, `-o value`.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "discovery/scanner.h"

namespace liken::cmd {

// Parsed flags of one subcommand.
class Flags {
 public:
  // Parses argv[1..argc) against `value_flags` (take a value) and `bool_flags` (take none, or `=value`).
  // `-v` / `--v=N` (verbosity, N from 0 to 10) is accepted everywhere. Unknown flags, missing values and a
  // bad N are InvalidArgument.
  // Thread-compatible.
  static absl::StatusOr<Flags> Parse(int argc, char** argv, const std::set<std::string>& value_flags,
                                     const std::set<std::string>& bool_flags);

  // The value of `name`, or `fallback` when absent.
  std::string Get(const std::string& name, const std::string& fallback = "") const;
  // True when `name` was given.
  bool Has(const std::string& name) const { return values_.count(name) > 0; }

  // The integer value of `name` (or `fallback` when absent), in [min, max]. InvalidArgument naming the flag
  // and the range otherwise. Thread-compatible, as are the getters below.
  absl::StatusOr<int64_t> GetInt(const std::string& name, int64_t fallback, int64_t min, int64_t max) const;
  // The number value of `name` (or `fallback`), in [min, max]; InvalidArgument naming the flag otherwise.
  absl::StatusOr<double> GetNumber(const std::string& name, double fallback, double min, double max) const;
  // The duration value of `name` ("60s", "1m30s"; or `fallback`), in [min, max]; InvalidArgument otherwise.
  absl::StatusOr<absl::Duration> GetDuration(const std::string& name, absl::Duration fallback, absl::Duration min,
                                             absl::Duration max) const;
  // The value of a path flag that must be absolute (or `fallback`); InvalidArgument saying so otherwise.
  absl::StatusOr<std::string> GetAbsolutePath(const std::string& name, const std::string& fallback) const;
  // The listen address of `name` ("" for none, ":PORT", "HOST:PORT"), its port in [0, 65535]; InvalidArgument
  // naming the flag otherwise.
  absl::StatusOr<std::string> GetListenAddress(const std::string& name, const std::string& fallback) const;

 private:
  std::map<std::string, std::string> values_;
};

// The value flags every discovery-reading command accepts (--sysfs-root, --dev-root, ...).
std::set<std::string> ScanValueFlags();

// Builds ScanOptions from the discovery flags. InvalidArgument for a bad --storage-roles or a root directory
// (--sysfs-root, --dev-root, --proc-root, --modules-root) that is not absolute. Thread-safe.
absl::StatusOr<discovery::ScanOptions> ScanOptionsFromFlags(const Flags& flags);

// Applies -v / --v=N to the log level (Parse has checked N).
void ApplyVerbosity(const Flags& flags);

// Range and form checks of `liken-dra run`'s own flags, each error naming its flag: --kube-api-qps in
// (0, 10000], --kube-api-burst in [1, 100000], --resync-period from 1s to 24h, --metrics-address's port,
// --kubelet-root and --cdi-root absolute. Thread-safe.
absl::Status ValidateRunFlags(const Flags& flags);

}  // namespace liken::cmd
