// JSON rendered as kubectl-style YAML.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "common/json_yaml.h"

namespace liken {
namespace {

TEST(JsonYamlTest, RoundTripsThroughAYamlReaderWithTypesKept) {
  nlohmann::ordered_json doc = {{"name", "node-a-liken.sh"}, {"count", 3},     {"flag", true},
                                {"hex", "030000"},           {"word", "true"}, {"empty", nlohmann::ordered_json::array()},
                                {"none", nlohmann::ordered_json::object()},    {"text", "a: b # c"}};
  std::string yaml = JsonToYaml(doc);
  YAML::Node n = YAML::Load(yaml);
  EXPECT_EQ(n["name"].as<std::string>(), "node-a-liken.sh");
  EXPECT_EQ(n["count"].as<int>(), 3);
  EXPECT_TRUE(n["flag"].as<bool>());
  EXPECT_EQ(n["hex"].Tag(), "!");  // quoted: stays a string, not the number 30000
  EXPECT_EQ(n["word"].Tag(), "!");  // quoted: stays the string "true"
  EXPECT_EQ(n["text"].as<std::string>(), "a: b # c");
  EXPECT_TRUE(n["empty"].IsSequence());
  EXPECT_EQ(n["empty"].size(), 0u);
  EXPECT_NE(yaml.find("empty: []"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("none: {}"), std::string::npos) << yaml;
}

}  // namespace
}  // namespace liken
