// Renders JSON documents as YAML (block style, kubectl-like), for `-o yaml` output.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace liken {

// Returns `doc` as a YAML document; object keys keep their JSON order. Thread-safe.
std::string JsonToYaml(const nlohmann::ordered_json& doc);

}  // namespace liken
