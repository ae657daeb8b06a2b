#include "controller/pool_generation.h"

#include <gtest/gtest.h>

namespace liken::controller {
namespace {

TEST(PickPoolGenerationTest, AFirstPublishStartsAtOne) {
  EXPECT_EQ(PickPoolGeneration({}), 1);
}

TEST(PickPoolGenerationTest, AServerThatAlreadyMatchesKeepsItsGeneration) {
  PoolGenerationFacts facts;
  facts.server_generation = 7;
  facts.server_matches = true;
  facts.highest_published = 3;
  EXPECT_EQ(PickPoolGeneration(facts), 7) << "no bump without a change, even after a restart";
}

TEST(PickPoolGenerationTest, ChangedContentGoesAboveEverythingSeen) {
  PoolGenerationFacts facts;
  facts.server_generation = 4;
  facts.highest_published = 9;  // a pool once published higher, then rewritten by someone else
  EXPECT_EQ(PickPoolGeneration(facts), 10);
  facts.highest_published = 2;
  EXPECT_EQ(PickPoolGeneration(facts), 5);
}

TEST(PickPoolGenerationTest, AnUnfinishedGenerationIsFinishedWithoutAnotherBump) {
  PoolGenerationFacts facts;
  facts.server_generation = 2;  // part of the pool went out under 2, the rest still lags at 1
  facts.server_matches = false;
  facts.unfinished_generation = 2;
  facts.highest_published = 2;
  EXPECT_EQ(PickPoolGeneration(facts), 2);
}

TEST(PickPoolGenerationTest, AServerAheadOfTheUnfinishedGenerationWins) {
  PoolGenerationFacts facts;
  facts.server_generation = 5;  // someone wrote past what we were finishing
  facts.unfinished_generation = 2;
  facts.highest_published = 2;
  EXPECT_EQ(PickPoolGeneration(facts), 6);
  facts.server_matches = true;
  EXPECT_EQ(PickPoolGeneration(facts), 5);
}

}  // namespace
}  // namespace liken::controller
