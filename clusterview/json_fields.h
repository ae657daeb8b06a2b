// Reading optional fields of API objects as kubectl-liken shows them: a missing or mistyped field reads as empty,
// never as an error (a view prints what the object has).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace liken::clusterview {

// j[key] when j is an object and it holds a string there; "" otherwise. Thread-safe (reads only).
std::string JsonString(const nlohmann::json& j, const char* key);

// j[key] when j is an object that has it; a null value otherwise. The reference lives as long as j (or for the
// program, for the null). Thread-safe (reads only).
const nlohmann::json& JsonField(const nlohmann::json& j, const char* key);

}  // namespace liken::clusterview
