// Checks the numpy Generator port against tests/data/mosaic/order/units/rng.json,
// which numpy 1.24.2 itself produced: seeding, raw outputs, and every op of
// each seed run in order on one generator.
#include <openssl/evp.h>

#include <bit>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <simdjson.h>

#include "base/bytes.h"
#include "engine/random/numpy_random.h"

namespace sluice::numpy {
namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

std::string VectorsPath() {
  return std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/order/units/rng.json";
}

// Typed reads; a missing key or a wrong type fails the test with the key's
// name instead of throwing.
template <typename J>
int64_t I64(J e) {
  int64_t v = 0;
  EXPECT_EQ(e.get(v), simdjson::SUCCESS);
  return v;
}
template <typename J>
uint64_t U64(J e) {
  uint64_t v = 0;
  EXPECT_EQ(e.get(v), simdjson::SUCCESS);
  return v;
}
template <typename J>
std::string_view Str(J e) {
  std::string_view v;
  EXPECT_EQ(e.get(v), simdjson::SUCCESS);
  return v;
}
template <typename J>
array Arr(J e) {
  array v;
  EXPECT_EQ(e.get(v), simdjson::SUCCESS);
  return v;
}

template <typename J>
std::vector<int64_t> Ints(J e) {
  std::vector<int64_t> out;
  for (element v : Arr(e)) out.push_back(I64(v));
  return out;
}

template <typename T, typename J>
std::vector<T> Uints(J e) {
  std::vector<T> out;
  for (element v : Arr(e)) out.push_back(static_cast<T>(U64(v)));
  return out;
}

unsigned __int128 ParseHex128(std::string_view hex) {
  unsigned __int128 v = 0;
  for (char c : hex) {
    int d = (c >= '0' && c <= '9') ? c - '0' : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
    EXPECT_GE(d, 0) << "bad hex digit in " << hex;
    v = (v << 4) | static_cast<unsigned>(d);
  }
  return v;
}

// {"hex": float.hex(), "repr": ...} -> the exact double.
template <typename J>
double ExactDouble(J e) {
  std::string hex(Str(e["hex"]));
  char* end = nullptr;
  double d = std::strtod(hex.c_str(), &end);
  EXPECT_EQ(*end, '\0') << "unparsed hex float " << hex;
  return d;
}

uint64_t Bits(double d) { return std::bit_cast<uint64_t>(d); }

template <typename J>
void ExpectSameDoubles(const std::vector<double>& got, J expected) {
  std::vector<double> want;
  for (element v : Arr(expected)) want.push_back(ExactDouble(v));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(Bits(got[i]), Bits(want[i])) << "element " << i << ": got " << got[i]
                                           << ", want " << want[i];
  }
}

std::string Sha256LeInt64(const std::vector<int64_t>& values) {
  std::string bytes;
  for (int64_t v : values) AppendLE<uint64_t>(bytes, static_cast<uint64_t>(v));
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EXPECT_EQ(EVP_Digest(bytes.data(), bytes.size(), digest, &len, EVP_sha256(), nullptr), 1);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), len));
}

class RngVectors : public ::testing::Test {
 protected:
  void SetUp() override {
    auto loaded = simdjson::padded_string::load(VectorsPath());
    ASSERT_EQ(loaded.error(), simdjson::SUCCESS) << VectorsPath();
    json_ = std::move(loaded).value_unsafe();
    ASSERT_EQ(parser_.parse(json_).get(root_), simdjson::SUCCESS);
    ASSERT_EQ(Str(root_["numpy_version"]), "1.24.2");
    ASSERT_EQ(Arr(root_["seeds"]).size(), 7u);
  }

  simdjson::padded_string json_;
  simdjson::dom::parser parser_;
  element root_;
};

TEST_F(RngVectors, Seeding) {
  for (element seed : Arr(root_["seeds"])) {
    SCOPED_TRACE(std::string(Str(seed["seed"])));
    std::vector<uint32_t> words = Uints<uint32_t>(seed["seed_words_u32_little_endian"]);

    // Seeds that fit in 64 bits must give the same words through SeedWords.
    element seed_int = seed["seed_int"];
    if (!seed_int.is_null()) {
      EXPECT_EQ(SeedWords(U64(seed_int)), words);
    }

    SeedSequence seq(words);
    std::vector<uint32_t> pool(seq.pool(), seq.pool() + 4);
    EXPECT_EQ(pool, Uints<uint32_t>(seed["seedsequence_pool_u32"]));
    EXPECT_EQ(seq.GenerateState32(8), Uints<uint32_t>(seed["seedsequence_generate_state_u32_8"]));
    std::vector<uint64_t> want64;
    for (element h : Arr(seed["seedsequence_generate_state_u64_4_hex"])) {
      want64.push_back(static_cast<uint64_t>(ParseHex128(Str(h))));
    }
    EXPECT_EQ(seq.GenerateState64(4), want64);

    Pcg64 pcg(seq);
    EXPECT_TRUE(pcg.state() == ParseHex128(Str(seed["pcg64_state_hex"])));
    EXPECT_TRUE(pcg.inc() == ParseHex128(Str(seed["pcg64_inc_hex"])));
    for (element h : Arr(seed["next_uint64_first8_hex"])) {
      EXPECT_EQ(pcg.NextU64(), static_cast<uint64_t>(ParseHex128(Str(h))));
    }

    // Both Generator constructors seed the same way.
    Generator from_words(words);
    EXPECT_TRUE(from_words.bit_generator().state() == Pcg64(seq).state());
    if (!seed_int.is_null()) {
      Generator from_int(U64(seed_int));
      EXPECT_TRUE(from_int.bit_generator().state() == from_words.bit_generator().state());
      EXPECT_TRUE(from_int.bit_generator().inc() == from_words.bit_generator().inc());
    }
  }
}

// Runs one recorded op on `gen` and compares with what numpy returned.
void RunOp(Generator& gen, object op) {
  std::string_view name = Str(op["op"]);
  if (name == "permutation") {
    EXPECT_EQ(gen.Permutation(I64(op["n"])), Ints(op["out"]));
  } else if (name == "integers") {
    auto got = gen.Integers(I64(op["low"]), I64(op["high"]), U64(op["size"]));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, Ints(op["out"]));
  } else if (name == "integers_scalar") {
    auto got = gen.Integers(I64(op["low"]), I64(op["high"]));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, I64(op["out"]));
  } else if (name == "random") {
    ExpectSameDoubles(gen.Random(Arr(op["out"]).size()), op["out"]);
  } else if (name == "uniform") {
    ExpectSameDoubles(gen.Uniform(ExactDouble(op["low"]), ExactDouble(op["high"]), U64(op["size"])),
                      op["out"]);
  } else if (name == "shuffle_list") {
    std::vector<int64_t> x(U64(op["n"]));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int64_t>(i);
    gen.Shuffle(x);
    std::vector<int64_t> want = Ints(op["out_first_elements"]);
    ASSERT_LE(want.size(), x.size());
    EXPECT_EQ(std::vector<int64_t>(x.begin(), x.begin() + static_cast<ptrdiff_t>(want.size())), want);
  } else if (name == "shuffle_ndarray_arange") {
    std::vector<int64_t> x;
    for (int64_t v = I64(op["start"]); v < I64(op["stop"]); ++v) x.push_back(v);
    gen.Shuffle(x);
    EXPECT_EQ(x, Ints(op["out"]));
  } else if (name == "shuffle_ndarray_slice") {
    std::vector<int64_t> x = Ints(op["array"]);
    std::vector<int64_t> slice = Ints(op["slice"]);
    ASSERT_EQ(slice.size(), 2u);
    gen.Shuffle(std::span<int64_t>(x).subspan(static_cast<size_t>(slice[0]),
                                              static_cast<size_t>(slice[1] - slice[0])));
    EXPECT_EQ(x, Ints(op["out"]));
  } else if (name == "choice_noreplace") {
    auto got = gen.Choice(I64(op["pop"]), I64(op["size"]));
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    element out;
    if (op["out"].get(out) == simdjson::SUCCESS) {
      EXPECT_EQ(*got, Ints(out));
    } else {
      EXPECT_EQ(got->size(), U64(op["out_len"]));
      std::vector<int64_t> head = Ints(op["out_head"]);
      ASSERT_LE(head.size(), got->size());
      EXPECT_EQ(std::vector<int64_t>(got->begin(), got->begin() + static_cast<ptrdiff_t>(head.size())),
                head);
      int64_t sum = 0;
      for (int64_t v : *got) sum += v;
      EXPECT_EQ(sum, I64(op["out_sum"]));
      EXPECT_EQ(Sha256LeInt64(*got), Str(op["out_sha256_le_int64"]));
    }
  } else {
    ADD_FAILURE() << "unknown op " << name;
  }
}

TEST_F(RngVectors, OpsInOrderOnOneGenerator) {
  size_t ops_run = 0;
  for (element seed : Arr(root_["seeds"])) {
    std::string seed_text(Str(seed["seed"]));
    Generator gen(Uints<uint32_t>(seed["seed_words_u32_little_endian"]));
    size_t index = 0;
    for (element op : Arr(seed["ops"])) {
      SCOPED_TRACE("seed " + seed_text + ", op #" + std::to_string(index) + ": " +
                   simdjson::minify(op).substr(0, 160));
      RunOp(gen, object(op));
      ++index;
      ++ops_run;
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(ops_run, 7u * 45u);
}

}  // namespace
}  // namespace sluice::numpy
