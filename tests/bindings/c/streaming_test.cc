// sluice_stream_*: the streaming dataset through libsluice.so, as a C caller
// (e.g. Python's ctypes) uses it.
#include "sluice.h"
#include "tests/common/temp_dir.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

const std::string kMds = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/";

std::string Str(sluice_bytes b) { return std::string(reinterpret_cast<const char*>(b.data), b.size); }

class StreamCApi : public ::testing::Test {
 protected:
  void SetUp() override {
    cache_ = cache_dir_.path();
    ASSERT_EQ(sluice_dataset_open((kMds + "compressed_zstd_hashed").c_str(), 0, &reference_), SLUICE_OK);
    columns_ = sluice_dataset_num_columns(reference_);
  }
  void TearDown() override {
    sluice_dataset_close(reference_);
  }

  std::string Config(const std::string& extra) const {
    return R"({"remote": ")" + kMds + R"(compressed_zstd_hashed", "local": ")" + cache_ +
           R"(", "validate_hash": "xxh64", "allow_unsafe_types": true, "world": {"rank": 0, "world_size": 1})" +
           extra + "}";
  }

  // Every field of a sample joined, as the reference dataset reads it.
  std::string Expected(uint64_t sample) {
    std::vector<sluice_bytes> f(columns_);
    EXPECT_EQ(sluice_dataset_get(reference_, sample, f.data(), columns_), SLUICE_OK);
    std::string out;
    for (auto& b : f) out += Str(b) + '\xff';
    return out;
  }

  // Drains the current iteration in batches of `batch`.
  std::vector<std::pair<int64_t, std::string>> Drain(sluice_stream* s, uint32_t batch) {
    std::vector<std::pair<int64_t, std::string>> out;
    std::vector<int64_t> ids(batch);
    std::vector<sluice_bytes> fields(batch * columns_);
    while (true) {
      uint32_t n = 0;
      EXPECT_EQ(sluice_stream_next_batch(s, batch, ids.data(), fields.data(), &n), SLUICE_OK)
          << sluice_last_error();
      if (n == 0) break;
      for (uint32_t k = 0; k < n; ++k) {
        std::string joined;
        for (uint32_t c = 0; c < columns_; ++c) joined += Str(fields[k * columns_ + c]) + '\xff';
        out.emplace_back(ids[k], joined);
      }
    }
    return out;
  }

  sluice::testing::TempDir cache_dir_{"sluice_c_stream_test"};
  std::string cache_;
  sluice_dataset* reference_ = nullptr;
  uint32_t columns_ = 0;
};

TEST_F(StreamCApi, OpenDescribeAndRandomAccess) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config("").c_str(), &s), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_stream_num_samples(s), 32u);
  EXPECT_EQ(sluice_stream_len(s), 32u);
  // The shard table, as the reference reads index.json.
  EXPECT_EQ(sluice_stream_num_streams(s), 1u);
  ASSERT_EQ(sluice_stream_num_shards(s), sluice_dataset_num_shards(reference_));
  std::vector<uint64_t> shard_samples;
  for (uint64_t g = 0; g < sluice_stream_num_shards(s); ++g) {
    uint64_t samples = 0;
    uint32_t stream = 7;
    ASSERT_EQ(sluice_stream_shard_info(s, g, &samples, &stream), SLUICE_OK);
    EXPECT_EQ(stream, 0u);
    shard_samples.push_back(samples);
  }
  EXPECT_EQ(shard_samples, (std::vector<uint64_t>{7, 6, 7, 6, 6}));  // its index.json
  EXPECT_EQ(sluice_stream_shard_info(s, sluice_stream_num_shards(s), nullptr, nullptr),
            SLUICE_ERANGE);
  EXPECT_EQ(sluice_stream_num_shards(nullptr), 0u);
  ASSERT_EQ(sluice_stream_num_columns(s), columns_);
  for (uint32_t c = 0; c < columns_; ++c) {
    EXPECT_STREQ(sluice_stream_column_name(s, c), sluice_dataset_column_name(reference_, c));
    EXPECT_STREQ(sluice_stream_column_encoding(s, c), sluice_dataset_column_encoding(reference_, c));
  }
  EXPECT_EQ(sluice_stream_column_name(s, columns_), nullptr);
  std::vector<sluice_bytes> f(columns_);
  for (uint64_t i : {31u, 0u, 7u, 8u, 31u}) {
    ASSERT_EQ(sluice_stream_get(s, i, f.data(), columns_), SLUICE_OK) << sluice_last_error();
    std::string joined;
    for (auto& b : f) joined += Str(b) + '\xff';
    EXPECT_EQ(joined, Expected(i)) << i;
  }
  EXPECT_EQ(sluice_stream_get(s, 32, f.data(), columns_), SLUICE_ERANGE);
  EXPECT_EQ(sluice_stream_get(s, 0, f.data(), columns_ - 1), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("num_fields"), std::string::npos);
  sluice_stream_stats st{};
  ASSERT_EQ(sluice_stream_counters(s, &st), SLUICE_OK);
  EXPECT_GT(st.shards_downloaded, 0u);
  EXPECT_GT(st.bytes_downloaded, 0u);
  sluice_stream_close(s);
  sluice_stream_close(nullptr);
}

TEST_F(StreamCApi, CorruptShardIsSkippedAndCountedWhenAsked) {
  namespace fs = std::filesystem;
  const std::string remote = cache_ + "/remote";
  fs::copy(kMds + "compressed_zstd_hashed", remote);
  // Flip a byte in the middle of the first shard's compressed file.
  const std::string victim = remote + "/shard.00000.mds.zstd";
  ASSERT_TRUE(fs::exists(victim));
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(fs::file_size(victim) / 2));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(fs::file_size(victim) / 2));
    f.put(static_cast<char>(c ^ 0x5a));
  }
  auto config = [&](bool skip) {
    return R"({"remote": ")" + remote + R"(", "local": ")" + cache_ + "/cache" + (skip ? "1" : "0") +
           R"(", "validate_hash": "xxh64", "download_retry": 0, "allow_unsafe_types": true,
           "world": {"rank": 0, "world_size": 1}, "skip_corrupt_shards": )" +
           (skip ? "true" : "false") + "}";
  };
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(config(false).c_str(), &s), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  std::vector<int64_t> ids(64);
  std::vector<sluice_bytes> fields(64 * columns_);
  uint32_t n = 0;
  EXPECT_NE(sluice_stream_next_batch(s, 64, ids.data(), fields.data(), &n), SLUICE_OK);
  EXPECT_NE(std::string(sluice_last_error()).find("shard.00000.mds"), std::string::npos)
      << sluice_last_error();
  sluice_stream_close(s);

  ASSERT_EQ(sluice_stream_open(config(true).c_str(), &s), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  auto got = Drain(s, 5);
  sluice_stream_stats st{};
  ASSERT_EQ(sluice_stream_counters(s, &st), SLUICE_OK);
  EXPECT_EQ(st.shards_skipped, 1u);
  EXPECT_GT(st.samples_skipped, 0u);
  EXPECT_EQ(got.size() + st.samples_skipped, 32u);
  for (const auto& [id, joined] : got) EXPECT_EQ(joined, Expected(static_cast<uint64_t>(id))) << id;
  sluice_stream_close(s);
}

TEST_F(StreamCApi, WorkersCoverTheEpochAndResumeAtTheTail) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"(, "shuffle": true, "batch_size": 4, "shuffle_seed": 3)").c_str(), &s),
            SLUICE_OK)
      << sluice_last_error();
  std::multiset<int64_t> seen;
  for (uint32_t w = 0; w < 3; ++w) {
    ASSERT_EQ(sluice_stream_iter_begin(s, 1, 0, w, 3), SLUICE_OK) << sluice_last_error();
    for (auto& [id, bytes] : Drain(s, 5)) {
      seen.insert(id);
      EXPECT_EQ(bytes, Expected(static_cast<uint64_t>(id))) << id;
    }
  }
  EXPECT_EQ(seen.size(), 32u);
  for (int64_t i = 0; i < 32; ++i) EXPECT_EQ(seen.count(i), 1u) << i;

  // One worker: stop after 10 samples, save, resume in a new handle.
  ASSERT_EQ(sluice_stream_iter_begin(s, 1, 0, 0, 1), SLUICE_OK);
  auto full = Drain(s, 6);
  ASSERT_EQ(full.size(), 32u);
  ASSERT_EQ(sluice_stream_iter_begin(s, 1, 0, 0, 1), SLUICE_OK);
  std::vector<int64_t> ids(10);
  std::vector<sluice_bytes> fields(10 * columns_);
  // A call may return fewer samples than asked (it waits for its first
  // one only): take 10 in as many calls as it needs.
  for (uint32_t got = 0, n = 0; got < 10; got += n) {
    ASSERT_EQ(sluice_stream_next_batch(s, 10 - got, ids.data() + got, fields.data(), &n),
              SLUICE_OK);
    ASSERT_GT(n, 0u);
  }
  char* state = nullptr;
  ASSERT_EQ(sluice_stream_state_json(s, 10, &state), SLUICE_OK);
  // Mosaic's keys, then Sluice's order record.
  const std::string mosaic =
      R"({"epoch": 1, "sample_in_epoch": 10, "num_canonical_nodes": 1, "shuffle_seed": 3, "initial_physical_nodes": 1, "sluice_order": {"version": 1, )";
  EXPECT_EQ(std::string(state).substr(0, mosaic.size()), mosaic);
  sluice_stream* r = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"(, "shuffle": true, "batch_size": 4)").c_str(), &r), SLUICE_OK);
  uint64_t epoch = 0, offset = 0;
  ASSERT_EQ(sluice_stream_load_state(r, state, &epoch, &offset), SLUICE_OK) << sluice_last_error();
  sluice_free(state);
  EXPECT_EQ(epoch, 1u);
  EXPECT_EQ(offset, 10u);
  ASSERT_EQ(sluice_stream_iter_begin(r, epoch, offset, 0, 1), SLUICE_OK);
  auto tail = Drain(r, 7);
  EXPECT_EQ(tail, decltype(full)(full.begin() + 10, full.end()));
  sluice_stream_close(r);
  sluice_stream_close(s);
}

// next_ids walks next_batch's ids without reading them; get then reads each.
TEST_F(StreamCApi, NextIdsWalksNextBatchsIdsForGet) {
  const std::string shuffled = R"(, "shuffle": true, "batch_size": 4, "shuffle_seed": 9)";
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(shuffled).c_str(), &s), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  auto full = Drain(s, 5);
  ASSERT_EQ(full.size(), 32u);

  uint32_t n = 7;
  int64_t id = 0;
  EXPECT_EQ(sluice_stream_next_ids(s, 1, nullptr, &n), SLUICE_EINVAL);
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(sluice_stream_next_ids(s, 1, &id, nullptr), SLUICE_EINVAL);
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  std::vector<int64_t> ids(5);
  std::vector<sluice_bytes> fields(columns_);
  size_t at = 0;
  while (true) {
    ASSERT_EQ(sluice_stream_next_ids(s, 5, ids.data(), &n), SLUICE_OK) << sluice_last_error();
    if (n == 0) break;
    for (uint32_t k = 0; k < n; ++k, ++at) {
      ASSERT_LT(at, full.size());
      EXPECT_EQ(ids[k], full[at].first) << at;
      ASSERT_EQ(sluice_stream_get(s, static_cast<uint64_t>(ids[k]), fields.data(), columns_),
                SLUICE_OK);
      std::string joined;
      for (auto& b : fields) joined += Str(b) + '\xff';
      EXPECT_EQ(joined, full[at].second) << at;
      sluice_stream_release(s);
    }
  }
  EXPECT_EQ(at, full.size());

  // Each id's origin: shards' sample counts laid end to end.
  uint64_t first = 0, shard_samples = 0;
  for (uint64_t g = 0; g < sluice_stream_num_shards(s); ++g) {
    ASSERT_EQ(sluice_stream_shard_info(s, g, &shard_samples, nullptr), SLUICE_OK);
    for (uint64_t k = 0; k < shard_samples; ++k) {
      uint64_t shard = 99, index = 99;
      ASSERT_EQ(sluice_stream_sample_origin(s, first + k, &shard, &index), SLUICE_OK);
      EXPECT_EQ(shard, g);
      EXPECT_EQ(index, k);
    }
    first += shard_samples;
  }
  EXPECT_EQ(first, 32u);
  EXPECT_EQ(sluice_stream_sample_origin(s, 32, nullptr, nullptr), SLUICE_ERANGE);
  EXPECT_STREQ(sluice_last_error(), "out of range: sluice_stream_sample_origin: sample 32 of 32");
  sluice_stream_close(s);
}

// The order record: sluice_stream_load_state refuses other options (and
// accepts another world, as before the record); load_state_with's adapt and
// skip_steps; state_with_order and position_after for bindings.
TEST_F(StreamCApi, ResumeChecksTheOrderRecordAndSkipsSteps) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"(, "shuffle": true, "batch_size": 4, "shuffle_seed": 3)").c_str(), &s),
            SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  auto full = Drain(s, 5);
  ASSERT_EQ(full.size(), 32u);
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  char* state = nullptr;
  ASSERT_EQ(sluice_stream_state_json(s, 4, &state), SLUICE_OK);  // step 1 of global batch 4
  const std::string saved = state;
  sluice_free(state);

  sluice_stream* other = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"(, "shuffle": true, "batch_size": 8)").c_str(), &other), SLUICE_OK);
  uint64_t epoch = 9, offset = 9;
  EXPECT_EQ(sluice_stream_load_state(other, saved.c_str(), &epoch, &offset), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: resume state does not match this dataset: sampling batch_size "
               "changed: saved 4, now 8 (to resume anyway, adapt \"sampling\")");
  EXPECT_EQ(epoch, 9u);  // untouched
  EXPECT_EQ(sluice_stream_load_state_with(other, saved.c_str(), R"({"adapt": ["sampling"]})", &epoch,
                                          &offset),
            SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(offset, 4u);
  EXPECT_EQ(sluice_stream_load_state_with(other, saved.c_str(), R"({"adapt": "sampling"})", &epoch,
                                          &offset),
            SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: resume options: 'adapt' must be a list of part names");
  sluice_stream_close(other);

  // Steps 2 and 3 skipped: the rest keeps its order.
  sluice_stream* r = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"(, "shuffle": true, "batch_size": 4)").c_str(), &r), SLUICE_OK);
  ASSERT_EQ(sluice_stream_load_state_with(r, saved.c_str(), R"({"skip_steps": [[2, 4]]})", &epoch,
                                          &offset),
            SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(r, epoch, offset, 0, 1), SLUICE_OK);
  auto tail = Drain(r, 3);
  decltype(full) expected(full.begin() + 4, full.begin() + 8);
  expected.insert(expected.end(), full.begin() + 16, full.end());
  EXPECT_EQ(tail, expected);
  uint64_t position = 0;
  ASSERT_EQ(sluice_stream_position_after(r, 0, 4, 4, &position), SLUICE_OK);
  EXPECT_EQ(position, 16u);  // passed over steps 2 and 3
  ASSERT_EQ(sluice_stream_position_after(r, 0, 4, 3, &position), SLUICE_OK);
  EXPECT_EQ(position, 7u);
  char* with = nullptr;
  ASSERT_EQ(sluice_stream_state_with_order(r, R"({"epoch": 0, "sample_in_epoch": 16, "num_canonical_nodes": 1, "shuffle_seed": 3, "initial_physical_nodes": 1})",
                                           &with),
            SLUICE_OK)
      << sluice_last_error();
  const std::string prefix =
      R"({"epoch": 0, "sample_in_epoch": 16, "num_canonical_nodes": 1, "shuffle_seed": 3, "initial_physical_nodes": 1, "sluice_order": {"version": 1, )";
  EXPECT_EQ(std::string(with).substr(0, prefix.size()), prefix);
  EXPECT_NE(std::string(with).find(R"("skips": [[0, 8, 16]])"), std::string::npos) << with;
  sluice_free(with);
  sluice_stream_close(r);
  sluice_stream_close(s);
}

TEST_F(StreamCApi, Errors) {
  sluice_stream* s = nullptr;
  EXPECT_EQ(sluice_stream_open("{", &s), SLUICE_EINVAL);
  EXPECT_EQ(s, nullptr);
  EXPECT_EQ(sluice_stream_open(R"({"local": "/nonexistent/sluice", "bogus": 1})", &s), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: dataset config: 'bogus' is not a known key");
  EXPECT_EQ(sluice_stream_open(nullptr, &s), SLUICE_EINVAL);
  // Pickled columns need allow_unsafe_types, as in Mosaic.
  std::string unsafe = R"({"local": ")" + kMds + R"(compressed_zstd_hashed"})";
  EXPECT_EQ(sluice_stream_open(unsafe.c_str(), &s), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("unsafe type: pkl"), std::string::npos)
      << sluice_last_error();
  ASSERT_EQ(sluice_stream_open(Config("").c_str(), &s), SLUICE_OK);
  uint32_t n = 7;
  int64_t id = 0;
  sluice_bytes f{};
  EXPECT_EQ(sluice_stream_next_batch(s, 1, &id, &f, &n), SLUICE_EINVAL);  // before iter_begin
  EXPECT_EQ(n, 0u);
  EXPECT_EQ(sluice_stream_iter_begin(s, 0, 0, 2, 2), SLUICE_EINVAL);
  EXPECT_EQ(sluice_stream_load_state(s, R"({"epoch": 0})", nullptr, nullptr), SLUICE_EINVAL);
  EXPECT_EQ(sluice_stream_state_json(s, 0, nullptr), SLUICE_EINVAL);
  sluice_stream_close(s);
}

// A local-only stream is read in place; sluice_stream_format says what its
// fields hold: a JSONL field is its value's JSON text, a CSV field the cell's
// text, an MDS field the encoding's stored bytes.
TEST_F(StreamCApi, FormatSaysWhatTheFieldsHold) {
  struct Case {
    const char* dataset;
    const char* format;
    std::vector<std::string> sample1;  // id, name, score / the MDS columns' bytes
  };
  for (const Case& c : {Case{"json_plain", "json", {"1", "\"h\\u00e9llo1\"", "-2.8571428571428568"}},
                        Case{"csv_plain", "csv", {"1", "h\xc3\xa9llo1", "-2.8571428571428568"}}}) {
    SCOPED_TRACE(c.dataset);
    const std::string config = R"({"local": ")" + kMds + c.dataset + R"(", "world": {"rank": 0, "world_size": 1}})";
    sluice_stream* s = nullptr;
    ASSERT_EQ(sluice_stream_open(config.c_str(), &s), SLUICE_OK) << sluice_last_error();
    EXPECT_STREQ(sluice_stream_format(s), c.format);
    ASSERT_EQ(sluice_stream_num_columns(s), 3u);
    std::vector<sluice_bytes> f(3);
    ASSERT_EQ(sluice_stream_get(s, 1, f.data(), 3), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ((std::vector<std::string>{Str(f[0]), Str(f[1]), Str(f[2])}), c.sample1);
    sluice_stream_release(s);
    sluice_stream_close(s);
  }
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config("").c_str(), &s), SLUICE_OK) << sluice_last_error();
  EXPECT_STREQ(sluice_stream_format(s), "mds");
  sluice_stream_close(s);
  EXPECT_EQ(sluice_stream_format(nullptr), nullptr);
}

// Streams of different formats mix, as in Mosaic: each stream says what
// its fields are, and each sample's fields are its own shard's.
TEST_F(StreamCApi, StreamsOfDifferentFormatsMix) {
  const std::string config = R"({"streams": [{"local": ")" + kMds + R"(json_plain"}, {"local": ")" +
                             kMds + R"(csv_plain"}], "world": {"rank": 0, "world_size": 1}})";
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(config.c_str(), &s), SLUICE_OK) << sluice_last_error();
  EXPECT_STREQ(sluice_stream_format(s), "mixed");
  EXPECT_STREQ(sluice_stream_stream_format(s, 0), "json");
  EXPECT_STREQ(sluice_stream_stream_format(s, 1), "csv");
  EXPECT_EQ(sluice_stream_stream_format(s, 2), nullptr);
  EXPECT_EQ(sluice_stream_stream_format(nullptr, 0), nullptr);
  // Both declare id: int, name: str, score: float.
  ASSERT_EQ(sluice_stream_num_columns(s), 3u);
  for (uint32_t st : {0u, 1u}) {
    EXPECT_STREQ(sluice_stream_stream_column_encoding(s, st, 0), "int");
    EXPECT_STREQ(sluice_stream_stream_column_encoding(s, st, 2), "float");
  }
  EXPECT_EQ(sluice_stream_stream_column_encoding(s, 0, 3), nullptr);
  EXPECT_STREQ(sluice_stream_column_encoding(s, 1), "str");
  // json_plain and csv_plain have 150 samples each; sample 1 of each.
  ASSERT_EQ(sluice_stream_num_samples(s), 300u);
  sluice_bytes f[3];
  ASSERT_EQ(sluice_stream_get(s, 1, f, 3), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f[1].data), f[1].size),
            "\"h\\u00e9llo1\"");
  sluice_stream_release(s);
  ASSERT_EQ(sluice_stream_get(s, 151, f, 3), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f[1].data), f[1].size), "h\xc3\xa9llo1");
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(f[0].data), f[0].size), "1");
  sluice_stream_release(s);
  sluice_stream_close(s);
}

// Streams whose columns differ mix, as in Mosaic (each sample has its own
// shard's columns): the dataset's columns are every stream's, first seen
// first; a sample's fields are laid out by them, and a column its stream
// lacks is {NULL, 0}.
TEST_F(StreamCApi, StreamsWithOtherColumnsMix) {
  // single_shard_no_limit: x: int, y: str (10 samples); json_plain: id,
  // name, score (150 samples).
  const std::string config = R"({"streams": [{"local": ")" + kMds + R"(single_shard_no_limit"}, {"local": ")" +
                             kMds + R"(json_plain"}], "world": {"rank": 0, "world_size": 1}})";
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(config.c_str(), &s), SLUICE_OK) << sluice_last_error();
  const std::vector<std::string> names{"x", "y", "id", "name", "score"};
  ASSERT_EQ(sluice_stream_num_columns(s), names.size());
  for (uint32_t c = 0; c < names.size(); ++c) EXPECT_EQ(sluice_stream_column_name(s, c), names[c]);
  for (uint32_t c = 0; c < names.size(); ++c) EXPECT_STREQ(sluice_stream_column_encoding(s, c), "mixed");
  EXPECT_STREQ(sluice_stream_format(s), "mixed");
  EXPECT_STREQ(sluice_stream_stream_column_encoding(s, 0, 1), "str");
  EXPECT_STREQ(sluice_stream_stream_column_encoding(s, 0, 2), "");
  EXPECT_STREQ(sluice_stream_stream_column_encoding(s, 1, 0), "");
  EXPECT_STREQ(sluice_stream_stream_column_encoding(s, 1, 4), "float");
  EXPECT_EQ(sluice_stream_stream_column_encoding(s, 1, 5), nullptr);
  // Each stream's own columns, in its shards' order.
  ASSERT_EQ(sluice_stream_stream_num_columns(s, 0), 2u);
  ASSERT_EQ(sluice_stream_stream_num_columns(s, 1), 3u);
  EXPECT_EQ(sluice_stream_stream_column(s, 0, 1), 1u);
  EXPECT_EQ(sluice_stream_stream_column(s, 1, 0), 2u);
  EXPECT_EQ(sluice_stream_stream_column(s, 1, 2), 4u);
  EXPECT_EQ(sluice_stream_stream_column(s, 1, 3), UINT32_MAX);
  EXPECT_EQ(sluice_stream_stream_column(s, 2, 0), UINT32_MAX);
  EXPECT_EQ(sluice_stream_stream_num_columns(s, 2), 0u);
  EXPECT_EQ(sluice_stream_stream_num_columns(nullptr, 0), 0u);

  // The expected fields: each stream's own reader's, at its columns' places.
  sluice_dataset* own[2] = {nullptr, nullptr};
  ASSERT_EQ(sluice_dataset_open((kMds + "single_shard_no_limit").c_str(), 0, &own[0]), SLUICE_OK);
  ASSERT_EQ(sluice_dataset_open((kMds + "json_plain").c_str(), 0, &own[1]), SLUICE_OK);
  auto expected = [&](uint64_t id) {
    const int st = id < 10 ? 0 : 1;
    const uint32_t first = st == 0 ? 0 : 2, count = st == 0 ? 2 : 3;
    std::vector<sluice_bytes> f(count);
    EXPECT_EQ(sluice_dataset_get(own[st], id < 10 ? id : id - 10, f.data(), count), SLUICE_OK);
    std::vector<std::string> out(names.size(), "<absent>");
    for (uint32_t k = 0; k < count; ++k) out[first + k] = Str(f[k]);
    return out;
  };
  auto got = [&](const sluice_bytes* f) {
    std::vector<std::string> out;
    for (size_t c = 0; c < names.size(); ++c) out.push_back(f[c].data ? Str(f[c]) : "<absent>");
    return out;
  };
  ASSERT_EQ(sluice_stream_num_samples(s), 160u);
  std::vector<sluice_bytes> f(names.size());
  for (uint64_t id : {1u, 9u, 10u, 11u, 159u}) {
    ASSERT_EQ(sluice_stream_get(s, id, f.data(), 5), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(got(f.data()), expected(id)) << id;
    sluice_stream_release(s);
  }
  ASSERT_EQ(sluice_stream_get(s, 11, f.data(), 5), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(Str(f[3]), "\"h\\u00e9llo1\"");
  sluice_stream_release(s);

  // Iteration (no shuffle, one worker): every sample in id order, laid out alike.
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  std::vector<int64_t> ids(200);
  std::vector<sluice_bytes> fields(200 * names.size());
  int64_t next = 0;
  while (true) {
    uint32_t n = 0;
    ASSERT_EQ(sluice_stream_next_batch(s, 200, ids.data(), fields.data(), &n), SLUICE_OK)
        << sluice_last_error();
    if (n == 0) break;
    for (uint32_t k = 0; k < n; ++k, ++next) {
      ASSERT_EQ(ids[k], next);
      EXPECT_EQ(got(&fields[k * names.size()]), expected(static_cast<uint64_t>(next))) << next;
    }
    sluice_stream_release(s);
  }
  EXPECT_EQ(next, 160);

  // A batch of one column needs it in every sample: x is not in
  // json_plain's. Samples 9 and 10 in one batch, once the prefetcher has
  // opened sample 10's shard too (a call waits for its first sample only).
  // Resumed at 8, sample 8 read alone first: the prefetcher's threads start
  // at a pass's first read, so the wait before the batch is theirs to use.
  uint32_t n = 0;
  for (int attempt = 0; attempt < 50 && n != 2; ++attempt) {
    ASSERT_EQ(sluice_stream_iter_begin(s, 0, 8, 0, 1), SLUICE_OK) << sluice_last_error();
    ASSERT_EQ(sluice_stream_next_batch(s, 1, ids.data(), fields.data(), &n), SLUICE_OK)
        << sluice_last_error();
    ASSERT_EQ(n, 1u);
    ASSERT_EQ(ids[0], 8);
    sluice_stream_release(s);
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * (attempt + 1)));
    ASSERT_EQ(sluice_stream_next_batch(s, 2, ids.data(), fields.data(), &n), SLUICE_OK)
        << sluice_last_error();
  }
  ASSERT_EQ(n, 2u);
  ASSERT_EQ(ids[0], 9);
  ASSERT_EQ(ids[1], 10);
  uint64_t needed = 0;
  std::vector<uint8_t> out(16);
  EXPECT_EQ(sluice_stream_batch_column(s, 0, 8, out.data(), out.size(), nullptr, &needed),
            SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find(
                "column 'x' is not in stream 1, whose sample 0 of shard 1 is at batch position 1"),
            std::string::npos) << sluice_last_error();
  std::vector<uint64_t> offsets(3);
  EXPECT_EQ(sluice_stream_batch_column(s, 2, 0, out.data(), out.size(), offsets.data(), &needed),
            SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("column 'id' is not in stream 0, whose sample 9 "
                                                  "of shard 0 is at batch position 0"),
            std::string::npos) << sluice_last_error();
  sluice_stream_release(s);
  sluice_dataset_close(own[0]);
  sluice_dataset_close(own[1]);
  sluice_stream_close(s);
}

// Mosaic's texts, which users match: a local-only stream without index.json,
// and a pickled column without allow_unsafe_types.
TEST_F(StreamCApi, MosaicsTextsForAMissingIndexAndAnUnsafeColumn) {
  const std::string missing = cache_ + "/empty";
  std::filesystem::create_directories(missing);
  const std::string config = R"({"local": ")" + missing + R"(", "world": {"rank": 0, "world_size": 1}})";
  sluice_stream* s = nullptr;
  EXPECT_EQ(sluice_stream_open(config.c_str(), &s), SLUICE_ENOTFOUND);
  EXPECT_NE(std::string(sluice_last_error()).find("RuntimeError: No `remote` provided, but local file " +
                                                  missing + "/index.json does not exist either"),
            std::string::npos) << sluice_last_error();
  const std::string unsafe = R"({"local": ")" + kMds + R"(all_encodings", "world": {"rank": 0, "world_size": 1}})";
  EXPECT_EQ(sluice_stream_open(unsafe.c_str(), &s), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find(
                "ValueError: Column e_pkl contains an unsafe type: pkl. To proceed anyway, set "
                "``allow_unsafe_types=True``."),
            std::string::npos) << sluice_last_error();
}

}  // namespace

// sluice_stream_batch_column: each column of a batch in one buffer, the exact
// bytes the reference reader gives, packed with offsets or strided.
TEST_F(StreamCApi, BatchColumnCopiesEveryColumnOfTheBatch) {
  sluice_stream* s = nullptr;
  // In order, so that the first call's shard holds several samples (a call
  // waits for its first sample only, and a shuffled one may be alone).
  ASSERT_EQ(sluice_stream_open(Config("").c_str(), &s), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK) << sluice_last_error();
  std::vector<int64_t> ids(32);
  std::vector<sluice_bytes> fields(32 * columns_);
  uint32_t n = 0;
  ASSERT_EQ(sluice_stream_next_batch(s, 32, ids.data(), fields.data(), &n), SLUICE_OK);
  ASSERT_GT(n, 1u);
  uint32_t fixed_columns = 0, variable_columns = 0;
  for (uint32_t c = 0; c < columns_; ++c) {
    std::vector<std::string> want;  // the reference reader's bytes of column c
    for (uint32_t k = 0; k < n; ++k) {
      std::vector<sluice_bytes> f(columns_);
      ASSERT_EQ(sluice_dataset_get(reference_, static_cast<uint64_t>(ids[k]), f.data(), columns_), SLUICE_OK);
      want.push_back(Str(f[c]));
    }
    uint64_t needed = 1;
    std::vector<uint64_t> offsets(n + 1, 99);
    // Too small: ERANGE, the size needed, nothing written; then it fits.
    std::string out(3, 'x');
    uint64_t total = 0;
    for (auto& w : want) total += w.size();
    if (total > 3) {
      EXPECT_EQ(sluice_stream_batch_column(s, c, 0, reinterpret_cast<uint8_t*>(out.data()), 3,
                                           offsets.data(), &needed),
                SLUICE_ERANGE);
      EXPECT_EQ(needed, total);
      EXPECT_EQ(out, "xxx");
      EXPECT_EQ(offsets[0], 99u);
    }
    out.assign(total, '\0');
    ASSERT_EQ(sluice_stream_batch_column(s, c, 0, reinterpret_cast<uint8_t*>(out.data()), total,
                                         offsets.data(), &needed),
              SLUICE_OK)
        << sluice_last_error();
    EXPECT_EQ(needed, total);
    ASSERT_EQ(offsets[0], 0u);
    for (uint32_t k = 0; k < n; ++k) {
      EXPECT_EQ(out.substr(offsets[k], offsets[k + 1] - offsets[k]), want[k]) << c << " " << k;
    }
    EXPECT_EQ(offsets[n], total);
    // A fixed-size column: strided, offsets not needed. A variable one with
    // item_size set fails naming the column and sizes.
    const uint64_t size = std::max<uint64_t>(want[0].size(), 1);  // 0 would mean packed
    bool fixed = true;
    for (auto& w : want) fixed = fixed && w.size() == size;
    std::string strided(n * size, '\0');
    sluice_status st = sluice_stream_batch_column(s, c, size, reinterpret_cast<uint8_t*>(strided.data()),
                                                  strided.size(), nullptr, &needed);
    const std::string name = sluice_stream_column_name(s, c);
    ++(fixed ? fixed_columns : variable_columns);
    if (fixed) {
      ASSERT_EQ(st, SLUICE_OK) << sluice_last_error();
      for (uint32_t k = 0; k < n; ++k) EXPECT_EQ(strided.substr(k * size, size), want[k]);
    } else {
      EXPECT_EQ(st, SLUICE_EINVAL) << name;
      EXPECT_NE(std::string(sluice_last_error()).find("column '" + name + "' of sample "), std::string::npos)
          << sluice_last_error();
      EXPECT_NE(std::string(sluice_last_error()).find(", item_size is " + std::to_string(size)), std::string::npos)
          << sluice_last_error();
    }
  }
  EXPECT_GT(fixed_columns, 10u);  // int, intN, uintN, floatN, fixed ndarrays
  EXPECT_GT(variable_columns, 5u);
  EXPECT_EQ(sluice_stream_batch_column(s, columns_, 0, nullptr, 0, nullptr, nullptr), SLUICE_EINVAL);
  uint64_t needed = 5;
  EXPECT_EQ(sluice_stream_batch_column(s, columns_, 0, nullptr, 0, nullptr, &needed), SLUICE_ERANGE);
  EXPECT_EQ(sluice_stream_batch_column(s, 0, 0, nullptr, 0, nullptr, &needed), SLUICE_EINVAL);  // offsets
  // After release there is no batch: 0 bytes, nothing read from ended views.
  sluice_stream_release(s);
  uint64_t offset0 = 7;
  ASSERT_EQ(sluice_stream_batch_column(s, 0, 0, nullptr, 0, &offset0, &needed), SLUICE_OK);
  EXPECT_EQ(needed, 0u);
  EXPECT_EQ(offset0, 0u);
  sluice_stream_close(s);
}

// Provenance through the C ABI: every id a shuffled epoch hands out names
// its shard and index in it, as index.json's shard sizes (7, 6, 7, 6, 6) lay
// the global ids out.
TEST_F(StreamCApi, SampleOriginOfEveryIdIsItsShardAndIndex) {
  sluice_stream* s = nullptr;
  ASSERT_EQ(sluice_stream_open(Config(R"(, "shuffle": true, "batch_size": 4, "shuffle_seed": 5)").c_str(), &s),
            SLUICE_OK)
      << sluice_last_error();
  ASSERT_EQ(sluice_stream_iter_begin(s, 0, 0, 0, 1), SLUICE_OK);
  const auto epoch = Drain(s, 4);
  ASSERT_EQ(epoch.size(), 32u);
  const std::vector<std::pair<uint64_t, uint64_t>> layout = {
      {0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {1, 0}, {1, 1}, {1, 2}, {1, 3},
      {1, 4}, {1, 5}, {2, 0}, {2, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5}, {2, 6}, {3, 0}, {3, 1},
      {3, 2}, {3, 3}, {3, 4}, {3, 5}, {4, 0}, {4, 1}, {4, 2}, {4, 3}, {4, 4}, {4, 5}};
  std::vector<int64_t> ids;
  for (const auto& [id, bytes] : epoch) {
    ids.push_back(id);
    uint64_t shard = 99, index = 99;
    ASSERT_EQ(sluice_stream_sample_origin(s, static_cast<uint64_t>(id), &shard, &index), SLUICE_OK)
        << sluice_last_error();
    EXPECT_EQ(std::make_pair(shard, index), layout[static_cast<size_t>(id)]) << id;
    EXPECT_EQ(bytes, Expected(static_cast<uint64_t>(id)));
  }
  std::vector<int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_NE(ids, sorted);  // shuffled, each id once
  EXPECT_EQ(sorted.front(), 0);
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  uint64_t index = 99;
  EXPECT_EQ(sluice_stream_sample_origin(s, 31, nullptr, &index), SLUICE_OK);
  EXPECT_EQ(index, 5u);
  EXPECT_EQ(sluice_stream_sample_origin(s, 32, nullptr, nullptr), SLUICE_ERANGE);
  sluice_stream_close(s);
}
