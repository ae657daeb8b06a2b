// Splitting text the way sysfs and /proc files are laid out.
#pragma once

#include <string_view>
#include <vector>

namespace liken {

// The lines of `text` without their '\n' (a trailing '\r' is dropped too); a final line without '\n' counts.
// The views point into `text`. Thread-safe.
std::vector<std::string_view> SplitLines(std::string_view text);

}  // namespace liken
