#include "controller/slice_plan.h"

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"

namespace liken::controller {
namespace {

using Kind = SliceAction::Kind;

const SlicePlanContext kContext{"liken.sh", "node-a", apis::OwnerReference{"v1", "Node", "node-a", "uid-1", true}};

apis::ResourceSlice Desired(const std::string& name, const std::string& model, const std::string& pool = "node-a") {
  apis::ResourceSlice s;
  s.metadata.name = name;
  s.pool.name = pool;
  apis::SliceDevice d;
  d.name = "dev-" + name;
  d.attributes["liken.sh/model"] = model;
  s.devices.push_back(d);
  return s;
}

// `want` as the server holds it after we published it under `generation` in a pool of `count`.
apis::ResourceSlice OnServer(const apis::ResourceSlice& want, int64_t generation, int64_t count = 1) {
  apis::ResourceSlice s = want;
  s.driver = kContext.driver;
  s.node_name = kContext.node_name;
  s.pool.generation = generation;
  s.pool.resource_slice_count = count;
  s.metadata.uid = "slice-uid-" + want.metadata.name;
  s.metadata.resource_version = "7";
  s.metadata.owner_references = {kContext.owner};
  return s;
}

TEST(PlanSlicesTest, NothingOnTheServerCreatesThePoolAtGenerationOne) {
  SliceWriteCache writes;
  SlicePlan plan = PlanSlices(kContext, {Desired("a", "x"), Desired("b", "x")}, {}, writes, {}, {});
  ASSERT_EQ(plan.pools.size(), 1u);
  const PoolPlan& pool = plan.pools[0];
  EXPECT_EQ(pool.generation, 1);
  ASSERT_EQ(pool.actions.size(), 2u);
  for (const auto& action : pool.actions) {
    EXPECT_EQ(action.kind, Kind::kCreate);
    EXPECT_EQ(action.body.pool.resource_slice_count, 2);
    EXPECT_EQ(action.body.metadata.owner_references, std::vector<apis::OwnerReference>{kContext.owner});
    EXPECT_TRUE(action.body.metadata.resource_version.empty());
  }
  EXPECT_TRUE(plan.deletes.empty());
}

TEST(PlanSlicesTest, AnUnchangedPoolIsKeptAndAStaleSliceDeleted) {
  SliceWriteCache writes;
  std::map<std::string, apis::ResourceSlice> current = {{"a", OnServer(Desired("a", "x"), 3)},
                                                        {"old", OnServer(Desired("old", "x", "gone"), 1)}};
  SlicePlan plan = PlanSlices(kContext, {Desired("a", "x")}, current, writes, {}, {});
  ASSERT_EQ(plan.pools.size(), 1u);
  EXPECT_EQ(plan.pools[0].generation, 3);
  ASSERT_EQ(plan.pools[0].actions.size(), 1u);
  EXPECT_EQ(plan.pools[0].actions[0].kind, Kind::kKeep);
  ASSERT_EQ(plan.deletes.size(), 1u);
  EXPECT_EQ(plan.deletes[0].metadata.name, "old");
  EXPECT_EQ(plan.deletes[0].metadata.uid, "slice-uid-old");
}

TEST(PlanSlicesTest, ChangedContentUpdatesEverySliceOfThePoolUnderTheNextGeneration) {
  SliceWriteCache writes;
  std::map<std::string, apis::ResourceSlice> current = {{"a", OnServer(Desired("a", "x"), 3, 2)},
                                                        {"b", OnServer(Desired("b", "x"), 3, 2)}};
  current["a"].raw["status"] = "kept";  // unknown fields survive the update
  current["a"].metadata.owner_references.push_back({"v1", "ConfigMap", "other", "cm-uid", std::nullopt});
  SlicePlan plan = PlanSlices(kContext, {Desired("a", "x"), Desired("b", "changed")}, current, writes, {}, {});
  ASSERT_EQ(plan.pools.size(), 1u);
  EXPECT_EQ(plan.pools[0].generation, 4);
  ASSERT_EQ(plan.pools[0].actions.size(), 2u);
  const SliceAction& a = plan.pools[0].actions[0];
  EXPECT_EQ(a.kind, Kind::kUpdate) << "same devices, but the pool's generation moves";
  EXPECT_EQ(a.body.pool.generation, 4);
  EXPECT_EQ(a.body.metadata.resource_version, "7");
  EXPECT_EQ(a.body.raw["status"], "kept");
  ASSERT_EQ(a.body.metadata.owner_references.size(), 2u);
  EXPECT_EQ(a.body.metadata.owner_references[0], kContext.owner);
  EXPECT_EQ(a.body.metadata.owner_references[1].kind, "ConfigMap");
  EXPECT_EQ(plan.pools[0].actions[1].kind, Kind::kUpdate);
}

TEST(PlanSlicesTest, AnUnfinishedGenerationIsFinishedWithoutABump) {
  SliceWriteCache writes;
  std::vector<apis::ResourceSlice> want = {Desired("a", "y"), Desired("b", "y")};
  // The last pass published generation 2; the write of "b" failed, so it still holds generation 1.
  std::map<std::string, apis::ResourceSlice> current = {{"a", OnServer(want[0], 2, 2)},
                                                        {"b", OnServer(Desired("b", "x"), 1, 2)}};
  std::map<std::string, PublishedPool> published = {{"node-a", PublishedPool{2, 2, want, {"a"}}}};
  SlicePlan plan = PlanSlices(kContext, want, current, writes, published, {});
  ASSERT_EQ(plan.pools.size(), 1u);
  EXPECT_EQ(plan.pools[0].generation, 2);
  EXPECT_EQ(plan.pools[0].actions[0].kind, Kind::kKeep);
  EXPECT_EQ(plan.pools[0].actions[1].kind, Kind::kUpdate);
  // The same, after a slice of it was deleted behind our back: a new generation.
  plan = PlanSlices(kContext, want, current, writes, published, {"node-a"});
  EXPECT_EQ(plan.pools[0].generation, 3);
}

TEST(PlanSlicesTest, AnInvalidPoolPlansNoWriteButOtherPoolsDo) {
  SliceWriteCache writes;
  apis::ResourceSlice bad = Desired("a", "x", "bad-pool");
  bad.devices[0].name = "Not A DNS Label";
  SlicePlan plan = PlanSlices(kContext, {bad, Desired("b", "x", "good-pool")}, {}, writes, {}, {});
  ASSERT_EQ(plan.pools.size(), 2u);
  EXPECT_EQ(plan.pools[0].pool, "bad-pool");
  EXPECT_EQ(plan.pools[0].invalid.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(plan.pools[0].invalid.message().find("pool bad-pool"), std::string_view::npos);
  EXPECT_TRUE(plan.pools[0].actions.empty());
  EXPECT_TRUE(plan.pools[1].invalid.ok());
  EXPECT_EQ(plan.pools[1].actions.size(), 1u);
}

TEST(PlanSliceActionTest, ANewOwnerTurnsAKeepIntoAnUpdate) {
  SliceWriteCache writes;
  apis::ResourceSlice target = OnServer(Desired("a", "x"), 1);
  apis::ResourceSlice have = target;
  EXPECT_EQ(PlanSliceAction(kContext, target, &have, writes).kind, Kind::kKeep);
  SlicePlanContext recreated = kContext;
  recreated.owner.uid = "uid-2";
  SliceAction action = PlanSliceAction(recreated, target, &have, writes);
  EXPECT_EQ(action.kind, Kind::kUpdate);
  EXPECT_EQ(action.owner_uid, "uid-2");
  EXPECT_EQ(action.body.metadata.owner_references, std::vector<apis::OwnerReference>{recreated.owner})
      << "the old Node reference is replaced, not kept beside the new one";
}

TEST(PlanSliceActionTest, AFieldTheServerDroppedFromOurWriteCausesNoUpdate) {
  SliceWriteCache writes;
  apis::ResourceSlice target = OnServer(Desired("a", "x"), 1);
  target.devices[0].allow_multiple_allocations = true;
  apis::ResourceSlice stored = target;
  stored.devices[0].allow_multiple_allocations.reset();  // an older server does not know the field
  stored.metadata.resource_version = "9";
  EXPECT_EQ(PlanSliceAction(kContext, target, &stored, writes).kind, Kind::kUpdate);
  writes.RecordWrite(target, apis::ResourceSliceToJson(stored));
  EXPECT_EQ(PlanSliceAction(kContext, target, &stored, writes).kind, Kind::kKeep);
}

}  // namespace
}  // namespace liken::controller
