#include "clusterview/output_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/json_yaml.h"

namespace liken::clusterview {

absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text) {
  if (text.empty()) return OutputFormat::kTable;
  if (text == "wide") return OutputFormat::kWide;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return absl::InvalidArgumentError(absl::StrCat("unknown output format '", std::string(text), "': use wide, json or yaml"));
}

std::string RenderTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths(header.size(), 0);
  auto cell = [&](const std::vector<std::string>& row, size_t i) -> std::string {
    if (i >= row.size() || row[i].empty()) return "<none>";
    return row[i];
  };
  for (size_t i = 0; i < header.size(); ++i) widths[i] = header[i].size();
  for (const auto& row : rows) {
    for (size_t i = 0; i < header.size(); ++i) widths[i] = std::max(widths[i], cell(row, i).size());
  }
  std::string out;
  auto line = [&](auto&& text_of) {
    std::string l;
    for (size_t i = 0; i < header.size(); ++i) {
      std::string t = text_of(i);
      l += t;
      if (i + 1 < header.size()) l.append(widths[i] - t.size() + 3, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l;
    out += '\n';
  };
  line([&](size_t i) { return header[i]; });
  for (const auto& row : rows) line([&](size_t i) { return cell(row, i); });
  return out;
}

std::string RenderDocument(const nlohmann::ordered_json& doc, OutputFormat format) {
  if (format == OutputFormat::kYaml) {
    std::string yaml = JsonToYaml(doc);
    if (yaml.empty() || yaml.back() != '\n') yaml += '\n';
    return yaml;
  }
  return doc.dump(4) + "\n";
}

}  // namespace liken::clusterview
