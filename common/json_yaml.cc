#include "common/json_yaml.h"

#include <yaml-cpp/yaml.h>

namespace liken {
namespace {

// True when `s` reads back as the same string in plain YAML style: an identifier-like word that no
// YAML 1.1 or 1.2 reader takes for a bool, null or number.
bool IsPlainSafe(const std::string& s) {
  if (s.empty()) return false;
  char first = s[0];
  if (!((first >= 'a' && first <= 'z') || (first >= 'A' && first <= 'Z') || first == '/')) return false;
  for (char c : s) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '_' || c == '.' || c == '/';
    if (!ok) return false;
  }
  std::string lower;
  for (char c : s) lower += static_cast<char>((c >= 'A' && c <= 'Z') ? c - 'A' + 'a' : c);
  static const char* const kReserved[] = {"true", "false", "yes", "no", "on", "off", "y", "n", "null", ".inf", ".nan"};
  for (const char* r : kReserved) {
    if (lower == r) return false;
  }
  return true;
}

void Emit(YAML::Emitter& out, const nlohmann::ordered_json& v) {
  switch (v.type()) {
    case nlohmann::ordered_json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;  // "{}" on the key's line
        break;
      }
      out << YAML::BeginMap;
      for (auto it = v.begin(); it != v.end(); ++it) {
        out << YAML::Key << it.key() << YAML::Value;
        Emit(out, it.value());
      }
      out << YAML::EndMap;
      break;
    case nlohmann::ordered_json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;  // "[]" on the key's line
        break;
      }
      out << YAML::BeginSeq;
      for (const auto& e : v) Emit(out, e);
      out << YAML::EndSeq;
      break;
    case nlohmann::ordered_json::value_t::string: {
      const std::string& s = v.get_ref<const std::string&>();
      if (IsPlainSafe(s)) {
        out << s;
      } else {
        out << YAML::DoubleQuoted << s;
      }
      break;
    }
    case nlohmann::ordered_json::value_t::boolean:
      out << v.get<bool>();
      break;
    case nlohmann::ordered_json::value_t::number_integer:
      out << v.get<int64_t>();
      break;
    case nlohmann::ordered_json::value_t::number_unsigned:
      out << v.get<uint64_t>();
      break;
    case nlohmann::ordered_json::value_t::number_float:
      out << v.get<double>();
      break;
    case nlohmann::ordered_json::value_t::null:
    default:
      out << YAML::Null;
      break;
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::ordered_json& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  Emit(out, doc);
  std::string s = out.c_str();
  s += '\n';
  return s;
}

}  // namespace liken
