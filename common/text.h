// Splitting text the way sysfs and /proc files are laid out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace liken {

// The lines of `text` without their '\n' (a trailing '\r' is dropped too); a final line without '\n' counts.
// The views point into `text`. Thread-safe.
std::vector<std::string_view> SplitLines(std::string_view text);

// `input` quoted for an error message: non-printable bytes escaped, cut to a 64-byte prefix followed by its
// full length when longer, so echoing hostile input never makes a large message. Thread-safe.
std::string EchoInput(std::string_view input);

}  // namespace liken
