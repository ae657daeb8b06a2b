// The command line: every flag of every subcommand declared once (cmd/flags.cc's table: name, default,
// environment variable, help, and the check its value must pass), and the parser that reads
// `--name value`, `--name=value`, `-o value`, `-v` and `--v=N` against it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "discovery/scanner.h"

namespace liken::cmd {

// The subcommands that take flags.
enum class Command { kScan, kReport, kRun, kHealthcheck };

// The flags given to one subcommand, checked against the table.
class Flags {
 public:
  // Parses argv[1..argc) for `command`: each argument is `-name` or `--name`, a value follows as `=value`
  // or as the next argument; flags without a value (-v, --help, --no-uevents) take only `=value`.
  // InvalidArgument (one line naming the flag) for an unknown flag, a missing value, or a value that fails
  // its check (range, absolute path, listen address, one of a set). Thread-compatible.
  static absl::StatusOr<Flags> Parse(Command command, int argc, char** argv);

  // The value of `name`: as given, else its environment variable's (when set and not empty), else its
  // default. `name` must be one of the command's flags.
  std::string Get(std::string_view name) const;
  // True when `name` was given on the command line.
  bool Has(std::string_view name) const { return values_.count(std::string(name)) > 0; }
  // Get(name) as the number, integer or duration Parse checked it to be.
  double Number(std::string_view name) const;
  int64_t Int(std::string_view name) const;
  absl::Duration Duration(std::string_view name) const;

 private:
  explicit Flags(Command command) : command_(command) {}
  Command command_;
  std::map<std::string, std::string> values_;  // by the flag's name
};

// The `--help` text of `command`: its synopsis and every flag with its default and environment variable,
// from the table. Thread-safe.
std::string Usage(Command command);

// Builds ScanOptions from the discovery flags (Parse has checked them). Thread-safe.
discovery::ScanOptions ScanOptionsFromFlags(const Flags& flags);

// Applies -v / --v=N to the log level (Parse has checked N).
void ApplyVerbosity(const Flags& flags);

}  // namespace liken::cmd
