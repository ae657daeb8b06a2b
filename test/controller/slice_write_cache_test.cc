#include "controller/slice_write_cache.h"

#include <gtest/gtest.h>

namespace liken::controller {
namespace {

apis::ResourceSlice Slice(const std::string& name, const std::string& rv, const std::string& model,
                          const std::string& uid = "uid-1") {
  apis::ResourceSlice s;
  s.metadata.name = name;
  s.metadata.resource_version = rv;
  s.metadata.uid = uid;
  s.driver = "liken.sh";
  s.node_name = "node-a";
  s.pool.name = "node-a";
  apis::SliceDevice d;
  d.name = "dev-1";
  d.attributes["liken.sh/model"] = model;
  s.devices.push_back(d);
  return s;
}

std::string Model(const apis::ResourceSlice& s) {
  return std::get<std::string>(s.devices.at(0).attributes.at("liken.sh/model"));
}

TEST(ResourceVersionNumberTest, OnlyNonNegativeNumbers) {
  EXPECT_EQ(ResourceVersionNumber("42"), 42);
  EXPECT_EQ(ResourceVersionNumber(""), -1);
  EXPECT_EQ(ResourceVersionNumber("-3"), -1);
  EXPECT_EQ(ResourceVersionNumber("abc"), -1);
}

TEST(SliceWriteCacheTest, AWriteIsShownUntilTheCacheCatchesUp) {
  SliceWriteCache writes;
  writes.RecordWrite(Slice("s", "", "new"), apis::ResourceSliceToJson(Slice("s", "10", "new")));
  std::map<std::string, apis::ResourceSlice> view;  // the cache has not seen the create
  writes.Overlay("9", &view);
  ASSERT_EQ(view.count("s"), 1u);
  EXPECT_EQ(Model(view["s"]), "new");

  view = {{"s", Slice("s", "5", "old")}};  // an older copy is replaced
  writes.Overlay("9", &view);
  EXPECT_EQ(Model(view["s"]), "new");
  EXPECT_EQ(writes.writes(), 1u);

  view = {{"s", Slice("s", "10", "new")}};  // caught up: kept while equal
  writes.Overlay("10", &view);
  EXPECT_EQ(writes.writes(), 1u);
  view = {{"s", Slice("s", "11", "theirs")}};  // someone wrote after us: the cache wins
  writes.Overlay("11", &view);
  EXPECT_EQ(Model(view["s"]), "theirs");
  EXPECT_EQ(writes.writes(), 0u);
}

TEST(SliceWriteCacheTest, ASliceTheCacheHasPassedWithoutIsGone) {
  SliceWriteCache writes;
  writes.RecordWrite(Slice("s", "", "new"), apis::ResourceSliceToJson(Slice("s", "10", "new")));
  std::map<std::string, apis::ResourceSlice> view;
  writes.Overlay("12", &view);  // the cache saw past our write and has no such slice: deleted behind us
  EXPECT_TRUE(view.empty());
  EXPECT_EQ(writes.writes(), 0u);
}

TEST(SliceWriteCacheTest, IncomparableVersionsLetTheCacheWin) {
  SliceWriteCache writes;
  writes.RecordWrite(Slice("s", "", "new"), apis::ResourceSliceToJson(Slice("s", "10", "new")));
  std::map<std::string, apis::ResourceSlice> view = {{"s", Slice("s", "opaque", "cached")}};
  writes.Overlay("opaque", &view);
  EXPECT_EQ(Model(view["s"]), "cached");
  EXPECT_EQ(writes.writes(), 0u);
}

TEST(SliceWriteCacheTest, ADeleteHidesTheSliceWhileTheCacheHoldsThatUid) {
  SliceWriteCache writes;
  writes.RecordDelete("s", "uid-1");
  std::map<std::string, apis::ResourceSlice> view = {{"s", Slice("s", "5", "old", "uid-1")}};
  writes.Overlay("5", &view);
  EXPECT_TRUE(view.empty());
  EXPECT_EQ(writes.deletes(), 1u);
  view = {{"s", Slice("s", "8", "again", "uid-2")}};  // created again under a new uid: shown
  writes.Overlay("8", &view);
  EXPECT_EQ(view.count("s"), 1u);
  EXPECT_EQ(writes.deletes(), 0u);
}

TEST(SliceWriteCacheTest, AReplyThatDoesNotParseForgetsTheSlice) {
  SliceWriteCache writes;
  writes.RecordWrite(Slice("s", "", "new"), apis::ResourceSliceToJson(Slice("s", "10", "new")));
  writes.RecordWrite(Slice("s", "", "newer"), nlohmann::json::array());
  EXPECT_EQ(writes.writes(), 0u);
}

TEST(SliceWriteCacheTest, AsSentComparesWithWhatWeSentOnlyForOurExactReply) {
  SliceWriteCache writes;
  apis::ResourceSlice sent = Slice("s", "", "new");
  sent.devices[0].allow_multiple_allocations = true;
  apis::ResourceSlice stored = Slice("s", "10", "new");  // the server dropped the field
  writes.RecordWrite(sent, apis::ResourceSliceToJson(stored));
  EXPECT_EQ(writes.AsSent(stored).devices[0].allow_multiple_allocations, std::optional<bool>(true));
  apis::ResourceSlice later = Slice("s", "11", "new");
  EXPECT_EQ(&writes.AsSent(later), &later) << "another version is compared as it is";
  writes.RecordRead(later);
  EXPECT_NE(&writes.AsSent(later), &later) << "a slice read after a conflict is our latest copy";
  EXPECT_FALSE(writes.AsSent(later).devices[0].allow_multiple_allocations.has_value());
}

}  // namespace
}  // namespace liken::controller
