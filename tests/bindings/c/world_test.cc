// sluice_world_from_env: torchrun's variables read by Mosaic's rule, above
// all where a binding once read them otherwise (LOCAL_WORLD_SIZE unset);
// sluice_world_resolve: the same with explicit values first.
#include "sluice.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "tests/common/scoped_env.h"

namespace {

// Sets exactly the given variables (the others unset) for one test.
class Env {
 public:
  explicit Env(const std::map<std::string, std::optional<std::string>>& vars)
      : env_(WithUnset(vars)) {}

 private:
  static std::map<std::string, std::optional<std::string>> WithUnset(
      std::map<std::string, std::optional<std::string>> vars) {
    for (const char* name : {"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE"}) {
      vars.emplace(name, std::nullopt);
    }
    return vars;
  }
  sluice::testing::ScopedEnv env_;
};

struct World {
  int64_t num_nodes = -1, ranks_per_node = -1, rank = -1;
  bool operator==(const World&) const = default;
};

World FromEnv(sluice_status want = SLUICE_OK) {
  World w;
  EXPECT_EQ(sluice_world_from_env(&w.num_nodes, &w.ranks_per_node, &w.rank), want)
      << sluice_last_error();
  return w;
}

TEST(CApiWorld, OneProcessWithoutVariables) {
  Env env(std::map<std::string, std::optional<std::string>>{});
  EXPECT_EQ(FromEnv(), (World{1, 1, 0}));
}

TEST(CApiWorld, Torchrun) {
  Env env({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "4"}});
  EXPECT_EQ(FromEnv(), (World{2, 4, 5}));
}

// Mosaic's get_local_world_size() is 1 without LOCAL_WORLD_SIZE: every
// rank is a node of its own (the engine once took WORLD_SIZE, one node).
TEST(CApiWorld, WithoutLocalWorldSizeEveryRankIsANode) {
  Env env({{"RANK", "3"}, {"WORLD_SIZE", "4"}});
  EXPECT_EQ(FromEnv(), (World{4, 1, 3}));
}

// Mosaic never reads LOCAL_RANK: without LOCAL_WORLD_SIZE it is ignored.
TEST(CApiWorld, LocalRankWithoutLocalWorldSizeIsIgnored) {
  Env env({{"RANK", "3"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "3"}});
  EXPECT_EQ(FromEnv(), (World{4, 1, 3}));
}

TEST(CApiWorld, DisagreeingOrMalformedVariablesAreErrors) {
  {
    Env env({{"RANK", "5"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "0"}, {"LOCAL_WORLD_SIZE", "4"}});
    FromEnv(SLUICE_EINVAL);
    EXPECT_EQ(std::string(sluice_last_error()).rfind(
                  "invalid argument: world: rank 5, world_size 8, local_rank 0, "
                  "local_world_size 4: inconsistent", 0), 0u) << sluice_last_error();
  }
  {
    Env env({{"RANK", "0"}, {"WORLD_SIZE", "6"}, {"LOCAL_WORLD_SIZE", "4"}});
    FromEnv(SLUICE_EINVAL);
  }
  {
    Env env({{"RANK", "0"}, {"WORLD_SIZE", "two"}});
    FromEnv(SLUICE_EINVAL);
    EXPECT_STREQ(sluice_last_error(),
                 "invalid argument: world: environment variable WORLD_SIZE 'two' is not an integer");
  }
  EXPECT_EQ(sluice_world_from_env(nullptr, nullptr, nullptr), SLUICE_EINVAL);
}

World Resolve(const char* json, sluice_status want = SLUICE_OK) {
  World w;
  EXPECT_EQ(sluice_world_resolve(json, &w.num_nodes, &w.ranks_per_node, &w.rank), want)
      << sluice_last_error();
  return w;
}

// A Ray task reading partition 2 of 3: no torchrun variables, the world given.
TEST(CApiWorld, ResolveTakesExplicitValues) {
  Env env(std::map<std::string, std::optional<std::string>>{});
  EXPECT_EQ(Resolve(R"({"rank": 2, "world_size": 3})"), (World{3, 1, 2}));
  EXPECT_EQ(Resolve(R"({"rank": 5, "world_size": 8, "local_world_size": 4})"), (World{2, 4, 5}));
  EXPECT_EQ(Resolve(R"({"rank": 5, "world_size": 8, "local_rank": 1, "local_world_size": 4})"),
            (World{2, 4, 5}));
  EXPECT_EQ(Resolve("{}"), (World{1, 1, 0}));
  EXPECT_EQ(Resolve(nullptr), (World{1, 1, 0}));
}

// A world given is the caller's alone: inside a torchrun job (LOCAL_RANK 1
// of 2 per node), a task reading partition 2 of 3 is rank 2 of 3 one-rank
// nodes, none of its fields taken from the environment.
TEST(CApiWorld, ResolveDoesNotMixAGivenWorldWithTheEnvironment) {
  Env env({{"RANK", "1"}, {"WORLD_SIZE", "4"}, {"LOCAL_WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}});
  EXPECT_EQ(Resolve(nullptr), (World{2, 2, 1}));
  EXPECT_EQ(Resolve("{}"), (World{2, 2, 1}));
  EXPECT_EQ(Resolve(R"({"rank": 2, "world_size": 3})"), (World{3, 1, 2}));
  EXPECT_EQ(Resolve(R"({"rank": 0, "local_rank": null})"), (World{1, 1, 0}));
}

TEST(CApiWorld, ResolveRefusesBadValues) {
  Env env(std::map<std::string, std::optional<std::string>>{});
  Resolve(R"({"rank": 3, "world_size": 3})", SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()).rfind(
                "invalid argument: world: rank 3, world_size 3, local_rank 0, "
                "local_world_size 1: inconsistent", 0), 0u) << sluice_last_error();
  Resolve(R"({"rank": "1"})", SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: dataset config: 'world.rank' must be an integer");
  Resolve(R"({"node": 1})", SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: dataset config: 'world.node' is not a known key");
  Resolve("[1, 2]", SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: dataset config: 'world' must be an object");
  int64_t n = 0;
  EXPECT_EQ(sluice_world_resolve("{}", &n, &n, nullptr), SLUICE_EINVAL);
}

// What sluice_world_env_warning says: NULL, or the text for WORLD_SIZE > 1
// without RANK ("" stands for NULL here).
std::string Warning(sluice_status want = SLUICE_OK) {
  char* text = reinterpret_cast<char*>(1);  // overwritten on success
  EXPECT_EQ(sluice_world_env_warning(&text), want) << sluice_last_error();
  if (want != SLUICE_OK) return "";
  std::string out = text != nullptr ? text : "";
  sluice_free(text);
  return out;
}

// PyTorch Lightning's own launcher sets WORLD_SIZE and LOCAL_RANK, not RANK:
// Mosaic's rule makes every process rank 0 (kept), and the engine says so.
TEST(CApiWorld, WorldSizeWithoutRankIsRankZeroWithAWarning) {
  Env env({{"WORLD_SIZE", "4"}, {"LOCAL_RANK", "2"}});
  EXPECT_EQ(FromEnv(), (World{4, 1, 0}));
  EXPECT_EQ(Warning(),
            "world: WORLD_SIZE is 4 but RANK is not set, so this process takes itself for rank 0 "
            "and reads the same samples as every other process started this way (PyTorch "
            "Lightning's own launcher sets WORLD_SIZE and LOCAL_RANK but not RANK). Launch with "
            "torchrun, which sets RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE for every "
            "process, or set RANK in each process.");
}

TEST(CApiWorld, NoWarningWithARankOrAWorldOfOne) {
  {
    Env env(std::map<std::string, std::optional<std::string>>{});
    EXPECT_EQ(Warning(), "");
  }
  {
    Env env(std::map<std::string, std::optional<std::string>>{{"WORLD_SIZE", "1"}});
    EXPECT_EQ(Warning(), "");
  }
  {
    Env env({{"RANK", "0"}, {"WORLD_SIZE", "4"}});
    EXPECT_EQ(Warning(), "");
  }
  {
    Env env(std::map<std::string, std::optional<std::string>>{{"WORLD_SIZE", "x"}});
    Warning(SLUICE_EINVAL);
    EXPECT_STREQ(sluice_last_error(),
                 "invalid argument: world: environment variable WORLD_SIZE 'x' is not an integer");
  }
  EXPECT_EQ(sluice_world_env_warning(nullptr), SLUICE_EINVAL);
}

}  // namespace
