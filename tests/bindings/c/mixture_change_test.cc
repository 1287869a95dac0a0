// A mixture schedule changed at a checkpoint through the C ABI:
// sluice_stream_load_state refuses another schedule naming it, and
// sluice_stream_load_state_with {"adapt": ["schedule"]} keeps the past: the
// new schedule decides from the state's position, each stream continuing
// its pass; the states saved afterwards carry the change.
#include "sluice.h"
#include "tests/common/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace {

const std::string kMixMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/compressed_zstd_hashed";

class MixtureChangeCApi : public ::testing::Test {
 protected:
  // Two streams over the same 32 samples (ids 0..31 and 32..63).
  std::string Config(const std::string& mixture) const {
    const std::string cache = cache_.path();
    return R"({"streams": [{"remote": ")" + kMixMds + R"(", "local": ")" + cache + R"(/a"}, {"remote": ")" +
           kMixMds + R"(", "local": ")" + cache + R"(/b"}], "allow_unsafe_types": true, "world": {"rank": 0,
           "world_size": 1}, "epoch_size": 40, "batch_size": 4, "shuffle": true, "shuffle_seed": 3,
           "mixture": )" + mixture + "}";
  }
  sluice_stream* Open(const std::string& mixture) {
    sluice_stream* s = nullptr;
    EXPECT_EQ(sluice_stream_open(Config(mixture).c_str(), &s), SLUICE_OK) << sluice_last_error();
    return s;
  }
  // Up to `limit` ids of the current iteration.
  static std::vector<int64_t> Ids(sluice_stream* s, size_t limit = 1000) {
    std::vector<int64_t> out, ids(4);
    const uint32_t columns = 64;
    std::vector<sluice_bytes> fields(4 * columns);
    while (out.size() < limit) {
      uint32_t n = 0;
      const uint32_t want = uint32_t(std::min<size_t>(4, limit - out.size()));
      EXPECT_EQ(sluice_stream_next_batch(s, want, ids.data(), fields.data(), &n), SLUICE_OK) << sluice_last_error();
      if (n == 0) break;
      out.insert(out.end(), ids.begin(), ids.begin() + n);
    }
    return out;
  }
  static std::string State(sluice_stream* s, uint64_t rank_samples) {
    char* json = nullptr;
    EXPECT_EQ(sluice_stream_state_json(s, rank_samples, &json), SLUICE_OK);
    std::string out = json ? json : "";
    sluice_free(json);
    return out;
  }
  sluice::testing::TempDir cache_;
};

TEST_F(MixtureChangeCApi, AdaptScheduleKeepsThePast) {
  sluice_stream* s = Open("[[0, [1, 1]]]");
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  const std::vector<int64_t> head = Ids(s, 8);
  ASSERT_EQ(head.size(), 8u);
  const std::string saved = State(s, 8);
  sluice_stream_close(s);

  sluice_stream* other = Open("[[0, [1, 0]]]");
  uint64_t epoch = 9, offset = 9;
  EXPECT_EQ(sluice_stream_load_state(other, saved.c_str(), &epoch, &offset), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: resume state does not match this dataset: sampling mixture changed: saved "
               "[[0, [1.0, 1.0]]], now [[0, [1.0, 0.0]]] (to resume anyway, adapt \"schedule\")");
  ASSERT_EQ(sluice_stream_load_state_with(other, saved.c_str(), R"({"adapt": ["schedule"]})", &epoch, &offset),
            SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(offset, 8u);
  ASSERT_EQ(sluice_stream_iter_begin(other, epoch, offset, 0, 1), SLUICE_OK);
  const std::vector<int64_t> rest = Ids(other);
  ASSERT_EQ(rest.size(), 32u);
  // Stream 0 alone from 8 on; its 4 draws before and the next 28 are its
  // first pass: each of its 32 samples once.
  std::vector<int64_t> pass;
  for (int64_t id : head) {
    if (id < 32) pass.push_back(id);
  }
  EXPECT_EQ(pass.size(), 4u);
  EXPECT_TRUE(std::all_of(rest.begin(), rest.end(), [](int64_t id) { return id < 32; }));
  pass.insert(pass.end(), rest.begin(), rest.begin() + 28);
  std::sort(pass.begin(), pass.end());
  std::vector<int64_t> all(32);
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(pass, all);
  // A state saved after the change carries it; the new schedule resumes it
  // without adapt, the past replayed.
  ASSERT_EQ(sluice_stream_iter_begin(other, epoch, offset, 0, 1), SLUICE_OK);
  ASSERT_EQ(Ids(other, 4).size(), 4u);
  const std::string later = State(other, 4);
  EXPECT_NE(later.find(R"("mixture_past": [{"epoch": 0, "until": 8, "mixture": [[0, [1.0, 1.0]]], )"
                       R"("mixture_interpolation": "step"}])"),
            std::string::npos)
      << later;
  sluice_stream_close(other);
  sluice_stream* third = Open("[[0, [1, 0]]]");
  ASSERT_EQ(sluice_stream_load_state(third, later.c_str(), &epoch, &offset), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(offset, 12u);
  ASSERT_EQ(sluice_stream_iter_begin(third, epoch, offset, 0, 1), SLUICE_OK);
  EXPECT_EQ(Ids(third), std::vector<int64_t>(rest.begin() + 4, rest.end()));
  sluice_stream_close(third);
}

// The rule a state's schedule resumes by, as the engine reads the record
// (what Python's dataset.py asks instead of deciding).
TEST(MixtureRuleCApi, RecordedRuleOfASamplingPart) {
  const char* rule = "unset";
  ASSERT_EQ(sluice_recorded_mixture_rule(R"({"mixture": [[0, [1.0, 1.0]]], "mixture_rule": "tijdeman"})", &rule),
            SLUICE_OK);
  EXPECT_STREQ(rule, "tijdeman");
  // Recorded without one: saved before Tijdeman's rule, or under "deficit".
  ASSERT_EQ(sluice_recorded_mixture_rule(R"({"mixture": [[0, [1.0, 1.0]]]})", &rule), SLUICE_OK);
  EXPECT_STREQ(rule, "deficit");
  ASSERT_EQ(sluice_recorded_mixture_rule(R"({"shuffle": true})", &rule), SLUICE_OK);
  EXPECT_EQ(rule, nullptr);
  EXPECT_EQ(sluice_recorded_mixture_rule(R"({"mixture": [], "mixture_rule": "fair"})", &rule), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("'parts.sampling.mixture_rule' must be 'tijdeman' or 'deficit'"),
            std::string::npos)
      << sluice_last_error();
  EXPECT_EQ(sluice_recorded_mixture_rule("[1]", &rule), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("sluice_recorded_mixture_rule: sampling_json must be a JSON object"),
            std::string::npos)
      << sluice_last_error();
}

}  // namespace
