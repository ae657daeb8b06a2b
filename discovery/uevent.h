// Parser for sysfs `uevent` files: KEY=VALUE lines.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace liken::discovery {

// Parses `KEY=VALUE` lines. Lines without '=' or with an empty key are skipped; the last value of a
// repeated key wins; a trailing '\r' is dropped. Never fails. Thread-safe.
std::map<std::string, std::string> ParseUevent(std::string_view text);

}  // namespace liken::discovery
