// The informer's store: the same answers whether it keeps parsed trees or CBOR bytes.
#include "informers/store.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace liken::informers {
namespace {

ObjectPtr Object(const std::string& ns, const std::string& name, const nlohmann::json& spec) {
  nlohmann::json o = {{"metadata", {{"name", name}}}, {"spec", spec}};
  if (!ns.empty()) o["metadata"]["namespace"] = ns;
  return std::make_shared<const nlohmann::json>(std::move(o));
}

std::vector<std::string> Names(const std::vector<ObjectPtr>& objects) {
  std::vector<std::string> out;
  for (const auto& o : objects) out.push_back(o->at("metadata").at("name").get<std::string>());
  return out;
}

class StoreTest : public ::testing::TestWithParam<StoreEncoding> {};

TEST_P(StoreTest, KeepsReplacesRemovesAndIndexesObjects) {
  Store store(GetParam());
  store.AddIndex("color", [](const nlohmann::json& o) {
    return std::vector<std::string>{o.at("spec").value("color", "")};
  });
  // Every JSON type a ResourceSlice carries, and a few it might: unsigned, negative, float, bool, null, nesting.
  const nlohmann::json spec = {{"color", "red"},     {"generation", 7},         {"delta", -3},
                               {"ratio", 0.5},       {"shared", true},          {"none", nullptr},
                               {"devices", {{{"name", "d1"}, {"attributes", {{"x", {{"int", 1}}}}}}}}};
  EXPECT_EQ(store.Upsert(Object("", "a", spec)), nullptr);
  ASSERT_NE(store.Get("a"), nullptr);
  EXPECT_EQ(store.Get("a")->at("spec"), spec);  // every value and type comes back
  EXPECT_EQ(store.Upsert(Object("ns", "b", {{"color", "blue"}})), nullptr);

  nlohmann::json green = spec;
  green["color"] = "green";
  ObjectPtr previous = store.Upsert(Object("", "a", green));
  ASSERT_NE(previous, nullptr);
  EXPECT_EQ(previous->at("spec"), spec);  // the version it replaced
  EXPECT_TRUE(store.ByIndex("color", "red").empty());
  EXPECT_EQ(Names(store.ByIndex("color", "green")), std::vector<std::string>{"a"});
  EXPECT_EQ(Names(store.List()), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(store.Size(), 2u);

  ObjectPtr removed = store.Remove("ns/b");
  ASSERT_NE(removed, nullptr);
  EXPECT_EQ(removed->at("spec").at("color"), "blue");
  EXPECT_EQ(store.Remove("ns/b"), nullptr);
  EXPECT_TRUE(store.ByIndex("color", "blue").empty());

  std::vector<ObjectPtr> dropped = store.Replace({Object("", "c", {{"color", "red"}})});
  EXPECT_EQ(Names(dropped), std::vector<std::string>{"a"});
  EXPECT_EQ(store.Get("a"), nullptr);
  EXPECT_EQ(Names(store.ByIndex("color", "red")), std::vector<std::string>{"c"});
  EXPECT_TRUE(store.ByIndex("color", "green").empty());
  EXPECT_TRUE(store.ByIndex("no-such-index", "red").empty());
}

TEST(StoreCborTest, EachReadIsAFreshCopyAndTreesAreShared) {
  Store trees(StoreEncoding::kTree);
  Store bytes(StoreEncoding::kCbor);
  ObjectPtr o = Object("", "a", {{"color", "red"}});
  trees.Upsert(o);
  bytes.Upsert(o);
  EXPECT_EQ(trees.Get("a"), o);  // the stored object itself
  ObjectPtr first = bytes.Get("a");
  ObjectPtr second = bytes.Get("a");
  EXPECT_NE(first, o);
  EXPECT_NE(first, second);
  EXPECT_EQ(*first, *o);
  EXPECT_EQ(*second, *o);
}

INSTANTIATE_TEST_SUITE_P(Encodings, StoreTest, ::testing::Values(StoreEncoding::kTree, StoreEncoding::kCbor),
                         [](const auto& info) { return info.param == StoreEncoding::kTree ? "Tree" : "Cbor"; });

}  // namespace
}  // namespace liken::informers
