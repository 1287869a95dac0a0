// ResolveWorld: the world from torchrun's variables by Mosaic's rule, and
// the warning for WORLD_SIZE > 1 without RANK. Its own executable, so a
// change to the world builds little.
#include <gtest/gtest.h>

#include <optional>

#include "engine/dataset/dataset_config.h"
#include "tests/common/scoped_env.h"

namespace sluice {
namespace {

TEST(ResolveWorld, WorldFromEnvironmentAndErrors) {
  auto w = [] {
    testing::ScopedEnv torchrun(
        {{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}});
    return ResolveWorld({});
  }();
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->num_nodes, 2);
  EXPECT_EQ(w->node, 1);
  EXPECT_EQ(w->rank_in_node, 1);
  EXPECT_EQ(w->world_size, 8);
  auto single = ResolveWorld({});
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->num_nodes, 1);
  EXPECT_EQ(single->world_size, 1);
  WorldOptions bad;
  bad.rank = 2;
  bad.world_size = 4;
  bad.local_rank = 1;
  bad.local_world_size = 2;  // rank 2 is local rank 0
  auto r = ResolveWorld(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("local_rank 1"), std::string::npos);
}

// WORLD_SIZE > 1 from the environment without RANK: rank 0 (Mosaic's), with
// the warning; none once RANK, or the world itself, is given.
TEST(ResolveWorld, WorldSizeWithoutRankSetsTheWarning) {
  auto unranked = [] {
    testing::ScopedEnv env({{"RANK", std::nullopt}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", "1"},
                            {"LOCAL_WORLD_SIZE", std::nullopt}});
    return ResolveWorld({});
  }();
  ASSERT_TRUE(unranked.ok()) << unranked.status().message();
  EXPECT_EQ(unranked->global_rank, 0);
  EXPECT_EQ(unranked->unranked_warning.rfind("world: WORLD_SIZE is 3 but RANK is not set, ", 0),
            0u)
      << unranked->unranked_warning;
  auto ranked = [] {
    testing::ScopedEnv env({{"RANK", "2"}, {"WORLD_SIZE", "3"}, {"LOCAL_RANK", std::nullopt},
                            {"LOCAL_WORLD_SIZE", std::nullopt}});
    return ResolveWorld({});
  }();
  ASSERT_TRUE(ranked.ok());
  EXPECT_EQ(ranked->unranked_warning, "");
  auto given = [] {
    testing::ScopedEnv env({{"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt}});
    WorldOptions w;
    w.world_size = 2;  // a config's world: its own rank default, no variables named
    return ResolveWorld(w);
  }();
  ASSERT_TRUE(given.ok());
  EXPECT_EQ(given->unranked_warning, "");
}

// Mosaic's World.detect: LOCAL_WORLD_SIZE defaults to 1 (each rank a node),
// LOCAL_RANK is never read then; a world given reads no variable.
TEST(ResolveWorld, WorldWithoutLocalWorldSizeIsMosaics) {
  auto w = [] {
    testing::ScopedEnv env({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "3"},
                            {"LOCAL_WORLD_SIZE", std::nullopt}});
    return ResolveWorld({});
  }();
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->num_nodes, 4);
  EXPECT_EQ(w->ranks_per_node, 1);
  EXPECT_EQ(w->node, 3);
  EXPECT_EQ(w->rank_in_node, 0);
  auto explicit_world = [] {
    testing::ScopedEnv env({{"RANK", "x"}, {"WORLD_SIZE", "x"}, {"LOCAL_RANK", "x"},
                            {"LOCAL_WORLD_SIZE", "x"}});
    WorldOptions given;
    given.rank = 1;
    given.world_size = 2;
    given.local_rank = 1;
    given.local_world_size = 2;
    return ResolveWorld(given);  // reads none of them
  }();
  ASSERT_TRUE(explicit_world.ok()) << explicit_world.status().message();
  EXPECT_EQ(explicit_world->rank_in_node, 1);
  auto malformed = [] {
    testing::ScopedEnv env({{"RANK", "1.5"}, {"WORLD_SIZE", std::nullopt}});
    return ResolveWorld({});
  }();
  ASSERT_FALSE(malformed.ok());
  EXPECT_EQ(malformed.status().message(), "world: environment variable RANK '1.5' is not an integer");
}

// A world given only in part (rank and world_size, as a Ray task reading
// partition 2 of 3 inside a torchrun job gives it) is not completed from
// the environment: the fields not given take the defaults, so it is rank 2
// of 3 one-rank nodes, not a mix of the two worlds (an error here, as
// LOCAL_WORLD_SIZE 2 does not divide 3).
TEST(ResolveWorld, APartlyGivenWorldIsNotCompletedFromTheEnvironment) {
  testing::ScopedEnv env({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "1"},
                          {"LOCAL_WORLD_SIZE", "2"}});
  WorldOptions given;
  given.rank = 2;
  given.world_size = 3;
  auto w = ResolveWorld(given);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->num_nodes, 3);
  EXPECT_EQ(w->ranks_per_node, 1);
  EXPECT_EQ(w->node, 2);
  EXPECT_EQ(w->rank_in_node, 0);
  EXPECT_EQ(w->global_rank, 2);
  EXPECT_EQ(w->world_size, 3);
  WorldOptions only_local;
  only_local.local_world_size = 2;
  auto l = ResolveWorld(only_local);  // rank 0 of 1: local_world_size 2 does not divide 1
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().message().rfind(
                "world: rank 0, world_size 1, local_rank 0, local_world_size 2: inconsistent", 0),
            0u)
      << l.status().message();
  auto from_env = ResolveWorld({});
  ASSERT_TRUE(from_env.ok()) << from_env.status().message();
  EXPECT_EQ(from_env->global_rank, 1);
  EXPECT_EQ(from_env->ranks_per_node, 2);
}

}  // namespace
}  // namespace sluice
