// get_sampling (order/units/sampling.json), Stream.apply_weights
// (order/units/weights.json), numpy's pairwise sum and epoch_size strings.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#include "engine/planner/mosaic_error.h"
#include "engine/planner/sampling.h"
#include "engine/planner/weights.h"
#include "tests/engine/planner/json_test_util.h"

namespace sluice::planner {
namespace {

using testing::Ints;
using testing::Str;

uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}
double FromHex(simdjson::dom::element e) { return std::strtod(Str(e["hex"]).c_str(), nullptr); }

TEST(SamplingTest, MatchesMosaicUnitVectors) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load(testing::MosaicOrderPath("units/sampling.json"));
  int cases = 0;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    simdjson::dom::element a = c["args"];
    SCOPED_TRACE(simdjson::minify(a));
    const auto sizes = Ints(a["samples_per_shard"]);
    auto got = GetSampling(sizes, int64_t(a["choose"]), int64_t(a["granularity"]), uint64_t(a["seed"]),
                           uint64_t(a["epoch"]), bool(a["use_epoch"]));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Ints(c["result"]));
    ++cases;
  }
  EXPECT_EQ(cases, 61);
}

TEST(SamplingTest, Errors) {
  const std::vector<int64_t> sizes{3, 4};
  EXPECT_FALSE(GetSampling(sizes, -1, 1, 0, 0, true).ok());
  EXPECT_FALSE(GetSampling(sizes, 5, 0, 0, 0, true).ok());
  EXPECT_FALSE(GetSampling(std::vector<int64_t>{0}, 5, 1, 0, 0, true).ok());
  auto r = GetSampling(sizes, 5, -2, 0, 0, true);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(SplitMosaicError(r.status()).type, "ValueError");
}

TEST(ResampleTest, IdentityAndPartialShards) {
  const std::vector<int64_t> a{3, 2}, b{4};
  std::vector<ResampleStream> streams{{a, 0, 5}, {b, 5, 4}};
  auto same = ResampleStreams(streams, {});
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->identity);
  EXPECT_EQ(same->shuffle_units, (std::vector<int64_t>{3, 2, 4}));
  // Stream 1 drawn 1.5 times: one whole copy plus 2 of its 4 samples, sorted.
  streams[1].choose = 6;
  auto more = ResampleStreams(streams, {});
  ASSERT_TRUE(more.ok());
  EXPECT_FALSE(more->identity);
  EXPECT_EQ(more->shuffle_units, (std::vector<int64_t>{3, 2, 4, 2}));
  ASSERT_EQ(more->small_per_big.size(), 11u);
  EXPECT_EQ(std::vector<int64_t>(more->small_per_big.begin(), more->small_per_big.begin() + 9),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_LT(more->small_per_big[9], more->small_per_big[10]);
  EXPECT_GE(more->small_per_big[9], 5);
  EXPECT_LE(more->small_per_big[10], 8);
}

TEST(WeightsTest, MatchesMosaicUnitVectors) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = parser.load(testing::MosaicOrderPath("units/weights.json"));
  int cases = 0, errors = 0;
  for (simdjson::dom::element c : doc["cases"].get_array()) {
    simdjson::dom::element a = c["args"];
    SCOPED_TRACE(simdjson::minify(a));
    std::vector<StreamWeight> weights;
    for (simdjson::dom::element w : a["weights"].get_array()) {
      StreamWeight sw;
      simdjson::dom::element v;
      if (w["proportion"].get(v) == simdjson::SUCCESS) sw.proportion = double(v);
      if (w["repeat"].get(v) == simdjson::SUCCESS) sw.repeat = double(v);
      if (w["choose"].get(v) == simdjson::SUCCESS) sw.choose = int64_t(v);
      weights.push_back(sw);
    }
    const auto samples = Ints(a["samples_per_stream"]);
    auto got = ApplyWeights(weights, samples, testing::OptInt(a["choose_per_epoch"]), uint64_t(a["seed"]));
    ++cases;
    simdjson::dom::element err;
    if (c["error"].get(err) == simdjson::SUCCESS) {
      ++errors;
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(SplitMosaicError(got.status()).type, Str(err["type"]));
      EXPECT_EQ(SplitMosaicError(got.status()).message, Str(err["message"]));
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->epoch_size, int64_t(c["epoch_size"]));
    size_t i = 0;
    for (simdjson::dom::element s : c["streams"].get_array()) {
      ASSERT_LT(i, got->streams.size());
      EXPECT_EQ(got->streams[i].choose, int64_t(s["choose"])) << "stream " << i;
      EXPECT_EQ(Bits(got->streams[i].proportion), Bits(FromHex(s["proportion"]))) << "stream " << i;
      EXPECT_EQ(Bits(got->streams[i].repeat), Bits(FromHex(s["repeat"]))) << "stream " << i;
      ++i;
    }
    EXPECT_EQ(i, got->streams.size());
  }
  EXPECT_EQ(cases, 19);
  EXPECT_EQ(errors, 2);
}

TEST(WeightsTest, NumpyPairwiseSum) {
  // 0.1 summed 10 times: pairwise (8 partials) differs from left-to-right.
  std::vector<double> x(10, 0.1);
  double seq = 0;
  for (double v : x) seq += v;
  const double pairwise = NumpySum(x);
  EXPECT_EQ(pairwise, ((0.1 + 0.1) + (0.1 + 0.1)) + ((0.1 + 0.1) + (0.1 + 0.1)) + 0.1 + 0.1);
  EXPECT_NE(Bits(pairwise), Bits(seq));
  std::vector<double> big(1000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = 1.0 / double(i + 1);
  // Split at 496 (500 rounded down to a multiple of 8), recursively.
  EXPECT_EQ(NumpySum(big), NumpySum(std::span(big).first(496)) + NumpySum(std::span(big).subspan(496)));
  EXPECT_EQ(NumpySum(std::vector<double>{}), 0.0);
}

TEST(WeightsTest, EpochSizeStrings) {
  EXPECT_EQ(ParseEpochSize("250").value(), 250);
  EXPECT_EQ(ParseEpochSize("1.5k").value(), 1500);
  EXPECT_EQ(ParseEpochSize("2m").value(), 2000000);
  EXPECT_EQ(ParseEpochSize("3b").value(), 3000000000);
  EXPECT_EQ(ParseEpochSize("1t").value(), 1000000000000);
  EXPECT_EQ(ParseEpochSize("0.25K").value(), 250);
  for (const char* bad : {"", "k", "12x", "1.5", "abc", "1..2k"}) {
    auto r = ParseEpochSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(SplitMosaicError(r.status()).type, "ValueError");
  }
}

TEST(WeightsTest, MoreThanOneWeightIsAnError) {
  std::vector<StreamWeight> w(1);
  w[0].proportion = 1;
  w[0].repeat = 2;
  EXPECT_FALSE(ApplyWeights(w, std::vector<int64_t>{10}, std::nullopt, 0).ok());
  w[0].repeat.reset();
  w[0].proportion = -1;
  EXPECT_FALSE(ApplyWeights(w, std::vector<int64_t>{10}, std::nullopt, 0).ok());
}

}  // namespace
}  // namespace sluice::planner
