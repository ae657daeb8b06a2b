#include "discovery/uevent.h"

#include "common/text.h"

namespace liken::discovery {

std::map<std::string, std::string> ParseUevent(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : SplitLines(text)) {
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;
    out[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
  }
  return out;
}

}  // namespace liken::discovery
