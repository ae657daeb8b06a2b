#include "migrate/plugin_glob.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace liken::migrate {
namespace {

// testdata/plugin_glob_cases.tsv: the cases test/migrate/plugin_glob_check.sh also runs through the plugin's own
// glob, so each difference from fnmatch(3) is checked on both sides.
TEST(PluginGlob, CasesAsThePluginMatches) {
  std::ifstream in(LIKEN_PLUGIN_GLOB_CASES);
  ASSERT_TRUE(in) << LIKEN_PLUGIN_GLOB_CASES;
  int cases = 0;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    ASSERT_EQ(f.size(), 4u) << "line " << number;
    auto pattern = PluginGlobPattern(f[0]);
    std::string got = !pattern.ok() ? "error" : PluginGlobFinds(*pattern, f[1]) ? "match" : "no";
    EXPECT_EQ(got, f[2]) << "line " << number << ": " << f[0] << " on " << f[1] << " (" << f[3] << ")";
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(PluginGlob, GoPathMatchReadsClassesEscapesAndStarsAsGoDoes) {
  auto match = [](const char* p, const char* n) {
    auto m = GoPathMatch(p, n);
    return m.ok() ? (*m ? "match" : "no") : "error";
  };
  EXPECT_STREQ(match("[!a]", "!"), "match");
  EXPECT_STREQ(match("[!a]", "b"), "no");
  EXPECT_STREQ(match("[^a]", "b"), "match");
  EXPECT_STREQ(match("[^a]", "a"), "no");
  EXPECT_STREQ(match("a*b", "a/b"), "no");
  EXPECT_STREQ(match("a*", "ab/c"), "no");
  EXPECT_STREQ(match("a*/b", "abc/b"), "match");
  EXPECT_STREQ(match("*x*y", "axbxy"), "match");
  EXPECT_STREQ(match("a?c", "a/c"), "no");
  EXPECT_STREQ(match("\xc3\xa9?", "\xc3\xa9\xc3\xa9"), "match");  // '?' is one rune, not one byte
  EXPECT_STREQ(match("[\\]]", "]"), "match");
  EXPECT_STREQ(match("[a-c]x", "bx"), "match");
  EXPECT_STREQ(match("\\*", "*"), "match");
  EXPECT_STREQ(match("[", "a"), "error");
  EXPECT_STREQ(match("[]", "a"), "error");
  EXPECT_STREQ(match("[^]", "a"), "error");
  EXPECT_STREQ(match("x[a-]", "xa"), "error");
  EXPECT_STREQ(match("a\\", "a"), "error");
  EXPECT_STREQ(match("b*[", "a"), "error") << "checked also where the name failed already";
}

TEST(PluginGlob, CleanIsGosPathClean) {
  EXPECT_EQ(GoPathClean("/dev/snd/"), "/dev/snd");
  EXPECT_EQ(GoPathClean("/dev//snd"), "/dev/snd");
  EXPECT_EQ(GoPathClean("/dev/./snd/../dri"), "/dev/dri");
  EXPECT_EQ(GoPathClean("/../dev"), "/dev");
  EXPECT_EQ(GoPathClean("/"), "/");
  EXPECT_EQ(GoPathClean(""), ".");
  EXPECT_EQ(GoPathClean("a/../.."), "..");
  EXPECT_EQ(PluginGlobPattern("dev/x").status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace liken::migrate
