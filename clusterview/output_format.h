// kubectl's output conventions for kubectl-liken: aligned columns (default and -o wide), JSON and YAML documents.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "absl/status/statusor.h"

namespace liken::clusterview {

// The -o value.
enum class OutputFormat { kTable, kWide, kJson, kYaml };

// "" → kTable, "wide", "json", "yaml"; anything else InvalidArgument naming the choices. Thread-safe.
absl::StatusOr<OutputFormat> ParseOutputFormat(std::string_view text);

// A header line and one line per row, columns left-aligned and three spaces apart as kubectl prints them, every
// line ending in '\n'; an empty cell prints as "<none>". Rows shorter than the header are padded. Thread-safe.
std::string RenderTable(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);

// `doc` as kubectl -o json (4-space indent) or -o yaml prints it, ending in '\n'. Thread-safe.
std::string RenderDocument(const nlohmann::ordered_json& doc, OutputFormat format);

}  // namespace liken::clusterview
