#include "common/text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace liken {

std::string EchoInput(std::string_view text) {
  constexpr size_t kEchoPrefix = 64;
  const absl::string_view input(text.data(), text.size());
  if (input.size() <= kEchoPrefix) return absl::StrCat("'", absl::CHexEscape(input), "'");
  return absl::StrCat("'", absl::CHexEscape(input.substr(0, kEchoPrefix)), "'... (", input.size(), " bytes)");
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
    pos = end + 1;
  }
  return lines;
}

}  // namespace liken
