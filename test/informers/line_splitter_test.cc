#include "informers/line_splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "informers/kube_client.h"

namespace liken::informers {
namespace {

// Feeds `pieces` in order and returns the lines seen, or the first error.
absl::StatusOr<std::vector<std::string>> Split(LineSplitter& splitter, const std::vector<std::string>& pieces) {
  std::vector<std::string> lines;
  for (const auto& piece : pieces) {
    absl::Status s = splitter.Feed(piece, [&](std::string_view line) {
      lines.emplace_back(line);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
  }
  return lines;
}

TEST(LineSplitterTest, JoinsLinesAcrossPiecesAndDropsLineEnds) {
  LineSplitter splitter(100);
  auto lines = Split(splitter, {"a", "bc\n", "\n", "d\r\ne", "f", "\r", "\n", "\r\n", "g"});
  ASSERT_TRUE(lines.ok()) << lines.status();
  EXPECT_EQ(*lines, (std::vector<std::string>{"abc", "d", "ef"}));
  EXPECT_EQ(splitter.pending_bytes(), 1u) << "'g' waits for its newline";
}

TEST(LineSplitterTest, ALineOfExactlyTheLimitPassesOneByteMoreFails) {
  LineSplitter exact(8);
  auto ok = Split(exact, {"1234", "5678\n"});
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(*ok, (std::vector<std::string>{"12345678"}));
  LineSplitter over(8);
  auto bad = Split(over, {"1234", "56789\n"});
  EXPECT_TRUE(IsLimitExceeded(bad.status())) << bad.status();
  LineSplitter unfinished(8);
  auto endless = Split(unfinished, {"12345", "6789"});
  EXPECT_TRUE(IsLimitExceeded(endless.status())) << endless.status();
  EXPECT_EQ(unfinished.pending_bytes(), 0u) << "what was held is released";
  EXPECT_TRUE(IsLimitExceeded(Split(unfinished, {"\n"}).status())) << "no input is taken after the limit";
}

TEST(LineSplitterTest, AnEndlessLineHoldsAtMostTheLimit) {
  LineSplitter splitter(1 << 20);
  const std::string piece(4096, 'x');
  absl::Status s;
  size_t fed = 0;
  while (s.ok() && fed < (4u << 20)) {
    s = splitter.Feed(piece, [](std::string_view) { return absl::OkStatus(); });
    fed += piece.size();
    EXPECT_LE(splitter.pending_bytes(), size_t{1} << 20);
  }
  EXPECT_TRUE(IsLimitExceeded(s)) << s;
  EXPECT_LE(fed, (1u << 20) + piece.size());
}

TEST(LineSplitterTest, AnErrorFromTheCallbackStopsTheFeed) {
  LineSplitter splitter(100);
  std::vector<std::string> seen;
  absl::Status s = splitter.Feed("one\ntwo\nthree\n", [&](std::string_view line) {
    seen.emplace_back(line);
    return line == "two" ? absl::InvalidArgumentError("bad line") : absl::OkStatus();
  });
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(seen, (std::vector<std::string>{"one", "two"}));
}

}  // namespace
}  // namespace liken::informers
