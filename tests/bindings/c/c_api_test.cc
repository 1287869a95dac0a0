// The C ABI, exercised through libsluice.so exactly as a C caller would.
#include "sluice.h"
#include "tests/common/temp_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::string kData = SLUICE_TEST_DATA_DIR;
const std::string kMds = kData + "/mosaic/mds/";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Str(sluice_bytes b) { return std::string(reinterpret_cast<const char*>(b.data), b.size); }

TEST(CApiTest, Version) {
  EXPECT_EQ(sluice_abi_version(), static_cast<uint32_t>(SLUICE_ABI_VERSION));
  EXPECT_STREQ(sluice_version(), "0.1.0");
}

TEST(CApiTest, ReadsAndDecodesCompatDataset) {
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open((kMds + "all_encodings").c_str(), SLUICE_OPEN_VERIFY_HASHES, &ds),
            SLUICE_OK)
      << sluice_last_error();
  EXPECT_EQ(sluice_dataset_num_samples(ds), 240u);
  EXPECT_EQ(sluice_dataset_num_shards(ds), 10u);
  // The index's entries (Mosaic wrote shards up to a byte size).
  const uint64_t per_shard[] = {30, 30, 29, 11, 1, 30, 30, 29, 30, 20};
  uint64_t samples = 0;
  for (uint32_t s = 0; s < 10; ++s) {
    ASSERT_EQ(sluice_dataset_shard_samples(ds, s, &samples), SLUICE_OK);
    EXPECT_EQ(samples, per_shard[s]) << s;
  }
  EXPECT_EQ(sluice_dataset_shard_samples(ds, 10, &samples), SLUICE_ERANGE);
  EXPECT_STREQ(sluice_last_error(), "out of range: sluice_dataset_shard_samples: shard 10 of 10");
  EXPECT_EQ(sluice_dataset_shard_samples(ds, 0, nullptr), SLUICE_EINVAL);
  ASSERT_EQ(sluice_dataset_num_columns(ds), 32u);
  EXPECT_STREQ(sluice_dataset_format(ds), "mds");
  EXPECT_STREQ(sluice_dataset_column_name(ds, 1), "a_int");
  EXPECT_STREQ(sluice_dataset_column_encoding(ds, 3), "int16");
  EXPECT_EQ(sluice_dataset_column_name(ds, 32), nullptr);

  std::vector<sluice_bytes> f(32);
  ASSERT_EQ(sluice_dataset_get(ds, 0, f.data(), 32), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(Str(f[2]), "0");  // a_str
  int64_t i16 = 0;
  ASSERT_EQ(sluice_decode_int64("int16", f[3], &i16), SLUICE_OK);
  EXPECT_EQ(i16, -32768);
  double f64 = 1;
  ASSERT_EQ(sluice_decode_double("float64", f[13], &f64), SLUICE_OK);
  EXPECT_EQ(f64, 0.0);
  sluice_ndarray nd;
  ASSERT_EQ(sluice_decode_ndarray("ndarray:uint8:5", f[31], &nd), SLUICE_OK);
  EXPECT_STREQ(nd.dtype, "uint8");
  ASSERT_EQ(nd.ndim, 1u);
  EXPECT_EQ(nd.shape[0], 5u);
  EXPECT_EQ(nd.data.size, 5u);

  // A decoder asked for the wrong type says so.
  uint64_t u = 0;
  EXPECT_EQ(sluice_decode_uint64("int16", f[3], &u), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("int16"), std::string::npos);

  EXPECT_EQ(sluice_dataset_get(ds, 240, f.data(), 32), SLUICE_ERANGE);
  EXPECT_NE(std::string(sluice_last_error()).find("sample 240"), std::string::npos);
  EXPECT_EQ(sluice_dataset_get(ds, 0, f.data(), 31), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("32 columns"), std::string::npos);
  sluice_dataset_close(ds);
}

TEST(CApiTest, OpenErrorsNameThePath) {
  sluice_dataset* ds = reinterpret_cast<sluice_dataset*>(0x1);
  EXPECT_EQ(sluice_dataset_open("/nonexistent/sluice-ds", 0, &ds), SLUICE_ENOTFOUND);
  EXPECT_EQ(ds, nullptr);
  EXPECT_NE(std::string(sluice_last_error()).find("/nonexistent/sluice-ds/index.json"),
            std::string::npos);
  EXPECT_EQ(sluice_dataset_open(nullptr, 0, &ds), SLUICE_EINVAL);
  EXPECT_EQ(sluice_dataset_open((kMds + "all_encodings").c_str(), 0x80, &ds), SLUICE_EINVAL);
  sluice_dataset_close(nullptr);  // fine
}

// SLUICE_OPEN_REFUSE_UNSAFE_TYPES: Mosaic's ValueError for a pkl column, as
// sluice_stream_open words it; without the flag the column opens.
TEST(CApiTest, RefusesUnsafeTypesWhenAsked) {
  sluice_dataset* ds = nullptr;
  EXPECT_EQ(sluice_dataset_open((kMds + "all_encodings").c_str(), SLUICE_OPEN_REFUSE_UNSAFE_TYPES,
                                &ds),
            SLUICE_EINVAL);
  EXPECT_EQ(ds, nullptr);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: ValueError: Column e_pkl contains an unsafe type: pkl. To "
               "proceed anyway, set ``allow_unsafe_types=True``.");
  ASSERT_EQ(sluice_dataset_open((kMds + "all_encodings").c_str(), 0, &ds), SLUICE_OK)
      << sluice_last_error();
  sluice_dataset_close(ds);
  ASSERT_EQ(sluice_dataset_open((kMds + "fixed_size_only").c_str(),
                                SLUICE_OPEN_REFUSE_UNSAFE_TYPES, &ds),
            SLUICE_OK)
      << sluice_last_error();
  sluice_dataset_close(ds);
}

// Reading a Mosaic dataset through the C ABI and writing its fields back
// with the same settings reproduces Mosaic's files byte for byte.
void RoundTrip(const std::string& name, const sluice_writer_options& options) {
  sluice_dataset* ds = nullptr;
  ASSERT_EQ(sluice_dataset_open((kMds + name).c_str(), 0, &ds), SLUICE_OK) << sluice_last_error();
  uint32_t ncol = sluice_dataset_num_columns(ds);
  std::vector<const char*> names, encodings;
  // Give the columns in reverse to check the writer maps them to stored order.
  for (uint32_t c = ncol; c-- > 0;) {
    names.push_back(sluice_dataset_column_name(ds, c));
    encodings.push_back(sluice_dataset_column_encoding(ds, c));
  }
  sluice::testing::TempDir out_dir("sluice_c_api_test");
  const std::string out = out_dir.path();
  sluice_writer* w = nullptr;
  ASSERT_EQ(sluice_writer_open(out.c_str(), names.data(), encodings.data(), ncol, &options, &w),
            SLUICE_OK)
      << sluice_last_error();
  std::vector<sluice_bytes> f(ncol), given(ncol);
  for (uint64_t i = 0; i < sluice_dataset_num_samples(ds); ++i) {
    ASSERT_EQ(sluice_dataset_get(ds, i, f.data(), ncol), SLUICE_OK) << sluice_last_error();
    for (uint32_t c = 0; c < ncol; ++c) given[c] = f[ncol - 1 - c];
    ASSERT_EQ(sluice_writer_write(w, given.data(), ncol), SLUICE_OK) << sluice_last_error();
  }
  ASSERT_EQ(sluice_writer_finish(w), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_writer_write(w, given.data(), ncol), SLUICE_EINVAL);
  sluice_writer_close(w);
  EXPECT_EQ(Slurp(out + "/index.json"), Slurp(kMds + name + "/index.json"));
  for (uint32_t s = 0; s < sluice_dataset_num_shards(ds); ++s) {
    char shard[32];
    std::snprintf(shard, sizeof shard, "/shard.%05u.mds", s);
    EXPECT_EQ(Slurp(out + shard), Slurp(kMds + name + shard)) << name << shard;
  }
  sluice_dataset_close(ds);
}

TEST(CApiTest, WriterIsByteIdenticalToMosaic) {
  sluice_writer_options unlimited{};
  unlimited.no_size_limit = 1;
  RoundTrip("single_shard_no_limit", unlimited);
  sluice_writer_options limited{};
  limited.size_limit = 65536;
  RoundTrip("all_encodings", limited);
  limited.size_limit = 100;
  RoundTrip("quirk_oversized_samples", limited);
  const char* hashes[] = {"xxh64", "blake2b", "blake2s", "md5", "sha1", "sha224", "sha256",
                          "sha384", "sha3_224", "sha3_256", "sha3_384", "sha3_512", "sha512",
                          "xxh128", "xxh32", "xxh3_128", "xxh3_64"};
  sluice_writer_options hashed{};
  hashed.hashes = hashes;
  hashed.num_hashes = 17;
  hashed.size_limit = 16384;
  RoundTrip("hashed_all_algos", hashed);
}

TEST(CApiTest, WriterRejectsBadInput) {
  sluice::testing::TempDir out_dir("sluice_c_api_test");
  const std::string out = out_dir.path();
  const char* names[] = {"x"};
  const char* bad_enc[] = {"int128"};
  sluice_writer* w = nullptr;
  EXPECT_EQ(sluice_writer_open(out.c_str(), names, bad_enc, 1, nullptr, &w), SLUICE_EUNIMPLEMENTED);
  EXPECT_NE(std::string(sluice_last_error()).find("int128"), std::string::npos);
  const char* enc[] = {"int16"};
  sluice_writer_options o{};
  o.compression = "zstd:99";
  EXPECT_NE(sluice_writer_open(out.c_str(), names, enc, 1, &o, &w), SLUICE_OK);
  EXPECT_NE(std::string(sluice_last_error()).find("zstd"), std::string::npos);
  ASSERT_EQ(sluice_writer_open(out.c_str(), names, enc, 1, nullptr, &w), SLUICE_OK);
  sluice_bytes three{reinterpret_cast<const uint8_t*>("abc"), 3};
  EXPECT_EQ(sluice_writer_write(w, &three, 1), SLUICE_EINVAL);  // int16 needs 2 bytes
  EXPECT_EQ(sluice_writer_write(w, &three, 2), SLUICE_EINVAL);
  sluice_writer_close(w);
}

TEST(CApiTest, EncodesScalarsAsMosaic) {
  uint8_t buf[8];
  uint64_t len = 0;
  ASSERT_EQ(sluice_encode_int64("int16", -2, buf, sizeof buf, &len), SLUICE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("\xfe\xff", 2));
  EXPECT_EQ(sluice_encode_int64("int16", 40000, buf, sizeof buf, &len), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("40000"), std::string::npos);
  ASSERT_EQ(sluice_encode_double("float16", 70000.0, buf, sizeof buf, &len), SLUICE_OK);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), len), std::string("\x00\x7c", 2));  // inf
  EXPECT_EQ(sluice_encode_int64("int64", 1, buf, 4, &len), SLUICE_ERANGE);
  EXPECT_EQ(len, 8u);
}

TEST(CApiTest, PlansLikeMosaic) {
  std::string cfg = Slurp(kData + "/mosaic/order/configs/seq_2n2r2w_bs4.json");
  sluice_plan* plan = nullptr;
  ASSERT_EQ(sluice_plan_create(cfg.c_str(), &plan), SLUICE_OK) << sluice_last_error();
  uint64_t shape[5];
  sluice_plan_shape(plan, shape);
  EXPECT_EQ(std::vector<uint64_t>(shape, shape + 5), (std::vector<uint64_t>{2, 2, 2, 15, 4}));
  const int64_t* ids = nullptr;
  uint64_t n = 0;
  ASSERT_EQ(sluice_plan_worker_ids(plan, 0, 0, 0, &ids, &n), SLUICE_OK);
  // work[0][0][0] = [0,2,4,6], [16,18,20,22], ..., [224,-1,-1,-1]: 57 ids.
  ASSERT_EQ(n, 57u);
  EXPECT_EQ(ids[0], 0);
  EXPECT_EQ(ids[4], 16);
  EXPECT_EQ(ids[56], 224);
  EXPECT_EQ(sluice_plan_worker_ids(plan, 2, 0, 0, &ids, &n), SLUICE_ERANGE);
  char* json = nullptr;
  ASSERT_EQ(sluice_plan_to_json(plan, &json), SLUICE_OK);
  EXPECT_EQ(std::string(json).rfind("{\"work\":[[[[[0,2,4,6],[16,18,20,22]", 0), 0u) << json;
  sluice_free(json);
  sluice_plan_free(plan);

  std::string bad = Slurp(kData + "/mosaic/order/configs/orig_not_divisible_error.json");
  EXPECT_EQ(sluice_plan_create(bad.c_str(), &plan), SLUICE_EINVAL);
  EXPECT_EQ(plan, nullptr);
  EXPECT_NE(std::string(sluice_last_error()).find("ValueError: Either canonical or physical nodes"),
            std::string::npos)
      << sluice_last_error();
}

// sluice_plan_steps: at step s each rank takes its DataLoader's s-th batch,
// worker s mod 2's; rows (step, rank, id) step by step, rank by rank.
TEST(CApiTest, PlansTheSamplesOfSteps) {
  std::string cfg = Slurp(kData + "/mosaic/order/configs/seq_2n2r2w_bs4.json");
  sluice_plan* plan = nullptr;
  ASSERT_EQ(sluice_plan_create(cfg.c_str(), &plan), SLUICE_OK) << sluice_last_error();
  std::vector<int64_t> want;  // rank 3 (node 1, rank 1), steps 1 to 3
  for (int64_t step = 1; step < 4; ++step) {
    const int64_t* ids = nullptr;
    uint64_t n = 0;
    ASSERT_EQ(sluice_plan_worker_ids(plan, 1, 1, uint32_t(step % 2), &ids, &n), SLUICE_OK);
    for (uint64_t i = uint64_t(step / 2) * 4; i < uint64_t(step / 2) * 4 + 4 && i < n; ++i) {
      want.insert(want.end(), {step, 3, ids[i]});
    }
  }
  sluice_plan_free(plan);
  int64_t* rows = nullptr;
  uint64_t count = 0;
  ASSERT_EQ(sluice_plan_steps(cfg.c_str(), 3, 1, 4, &rows, &count), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(count, 12u);
  EXPECT_EQ(std::vector<int64_t>(rows, rows + 3 * count), want);
  sluice_free(rows);
  ASSERT_EQ(sluice_plan_steps(cfg.c_str(), -1, 0, 1, &rows, &count), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(count, 16u);  // every rank's first batch, ranks in order
  EXPECT_EQ(std::vector<int64_t>({rows[0], rows[1], rows[2], rows[45], rows[46]}),
            (std::vector<int64_t>{0, 0, 0, 0, 3}));
  sluice_free(rows);
  EXPECT_EQ(sluice_plan_steps(cfg.c_str(), 0, 30, 31, &rows, &count), SLUICE_EINVAL);
  EXPECT_EQ(rows, nullptr);
  EXPECT_NE(std::string(sluice_last_error()).find("steps start at step 30, past the last: the rank takes 29 steps"),
            std::string::npos)
      << sluice_last_error();
  EXPECT_EQ(sluice_plan_steps(cfg.c_str(), 4, 0, 1, &rows, &count), SLUICE_EINVAL);
  EXPECT_EQ(sluice_plan_steps(nullptr, 0, 0, 1, &rows, &count), SLUICE_EINVAL);
}

}  // namespace

// The JSON / CSV / TSV writers through the C ABI: values given as text.
#include <algorithm>
#include <filesystem>

namespace {

// Rewrites csv_plain's samples (id int, name str, score float; the same
// values as json_plain and tsv_plain) in `format` into the folder `out`.
void RewriteTextSamples(const char* format, const std::string& out) {
  sluice_dataset* ds = nullptr;
  EXPECT_EQ(sluice_dataset_open((kMds + "csv_plain").c_str(), 0, &ds), SLUICE_OK)
      << sluice_last_error();
  if (ds == nullptr) return;
  // Given in an order other than the stored (sorted) one.
  const char* names[] = {"score", "id", "name"};
  const char* encs[] = {"float", "int", "str"};
  sluice_writer_options opts{};
  opts.format = format;
  opts.size_limit = 2048;
  sluice_writer* w = nullptr;
  EXPECT_EQ(sluice_writer_open(out.c_str(), names, encs, 3, &opts, &w), SLUICE_OK)
      << sluice_last_error();
  sluice_bytes f[3];
  for (uint64_t i = 0; i < sluice_dataset_num_samples(ds) && w != nullptr; ++i) {
    EXPECT_EQ(sluice_dataset_get(ds, i, f, 3), SLUICE_OK);  // stored: id, name, score
    sluice_bytes given[3] = {f[2], f[0], f[1]};
    EXPECT_EQ(sluice_writer_write(w, given, 3), SLUICE_OK) << sluice_last_error();
  }
  EXPECT_EQ(sluice_writer_finish(w), SLUICE_OK) << sluice_last_error();
  sluice_writer_close(w);
  sluice_dataset_close(ds);
}

void ExpectSameFiles(const std::string& got, const std::string& want) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(want)) {
    if (e.path().filename() != "expected.jsonl") names.push_back(e.path().filename());
  }
  std::sort(names.begin(), names.end());
  std::vector<std::string> got_names;
  for (const auto& e : std::filesystem::directory_iterator(got)) got_names.push_back(e.path().filename());
  std::sort(got_names.begin(), got_names.end());
  EXPECT_EQ(got_names, names);
  for (const auto& n : names) EXPECT_EQ(Slurp(got + "/" + n), Slurp(want + "/" + n)) << n;
}

TEST(CApiTextWriterTest, JsonIsByteIdenticalToMosaic) {
  sluice::testing::TempDir out("sluice_c_api_test");
  RewriteTextSamples("json", out.path());
  ExpectSameFiles(out.path(), kMds + "json_plain");
}

TEST(CApiTextWriterTest, CsvIsByteIdenticalToMosaic) {
  sluice::testing::TempDir out("sluice_c_api_test");
  RewriteTextSamples("csv", out.path());
  ExpectSameFiles(out.path(), kMds + "csv_plain");
}

TEST(CApiTextWriterTest, TsvIsByteIdenticalToMosaic) {
  sluice::testing::TempDir out("sluice_c_api_test");
  RewriteTextSamples("tsv", out.path());
  ExpectSameFiles(out.path(), kMds + "tsv_plain");
}

// A user's own MDS encodings: named with their sizes in the options,
// stored as given; text formats refuse them.
TEST(CApiWriterTest, CustomEncodings) {
  sluice::testing::TempDir tmp("sluice_c_api_test");
  const std::string out = tmp.path();
  const char* names[] = {"z", "f"};
  const char* encs[] = {"complex128", "pair"};
  const char* custom[] = {"complex128", "pair"};
  const int64_t sizes[] = {-1, 2};
  sluice_writer_options opts{};
  opts.custom_encodings = custom;
  opts.custom_encoding_sizes = sizes;
  opts.num_custom_encodings = 2;
  sluice_writer* w = nullptr;
  ASSERT_EQ(sluice_writer_open(out.c_str(), names, encs, 2, &opts, &w), SLUICE_OK)
      << sluice_last_error();
  const std::string z = "abc", f = "xy";
  sluice_bytes fields[2] = {{reinterpret_cast<const uint8_t*>(z.data()), z.size()},
                            {reinterpret_cast<const uint8_t*>(f.data()), f.size()}};
  ASSERT_EQ(sluice_writer_write(w, fields, 2), SLUICE_OK) << sluice_last_error();
  ASSERT_EQ(sluice_writer_finish(w), SLUICE_OK) << sluice_last_error();
  sluice_writer_close(w);
  std::string index = Slurp(out + "/index.json");
  // Columns stored sorted by name: f, z.
  EXPECT_NE(index.find("\"column_encodings\": [\"pair\", \"complex128\"]"), std::string::npos)
      << index;
  EXPECT_NE(index.find("\"column_sizes\": [2, null]"), std::string::npos) << index;
  // A reader that registers neither is refused at open, naming the index,
  // shard, column and encoding (columns sorted: f's "pair" comes first).
  sluice_dataset* ds = nullptr;
  EXPECT_EQ(sluice_dataset_open(out.c_str(), 0, &ds), SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(ds, nullptr);
  EXPECT_EQ(std::string(sluice_last_error()),
            "unimplemented: " + out + "/index.json: shard 0: column 'f' has encoding 'pair', "
            "which is neither built in nor registered");
  const char* only_pair[] = {"pair"};
  EXPECT_EQ(sluice_dataset_open_with_encodings(out.c_str(), 0, only_pair, 1, &ds),
            SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(std::string(sluice_last_error()),
            "unimplemented: " + out + "/index.json: shard 0: column 'z' has encoding "
            "'complex128', which is neither built in nor registered");
  EXPECT_EQ(sluice_dataset_open_with_encodings(out.c_str(), 0, nullptr, 1, &ds), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(),
               "invalid argument: sluice_dataset_open_with_encodings: argument "
               "'custom_encodings' must not be NULL");
  // Registered (by name, or all with SLUICE_OPEN_ANY_CUSTOM_ENCODING): the
  // stored bytes as given.
  for (uint32_t flags : {0u, SLUICE_OPEN_ANY_CUSTOM_ENCODING}) {
    const uint32_t n = flags == 0 ? 2 : 0;
    ASSERT_EQ(sluice_dataset_open_with_encodings(out.c_str(), flags, custom, n, &ds), SLUICE_OK)
        << sluice_last_error();
    EXPECT_STREQ(sluice_dataset_column_encoding(ds, 1), "complex128");
    sluice_bytes got[2];
    ASSERT_EQ(sluice_dataset_get(ds, 0, got, 2), SLUICE_OK) << sluice_last_error();
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(got[0].data), got[0].size), "xy");
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(got[1].data), got[1].size), "abc");
    sluice_dataset_close(ds);
  }

  const int64_t bad_sizes[] = {-2, 2};
  opts.custom_encoding_sizes = bad_sizes;
  EXPECT_EQ(sluice_writer_open((out + "/b").c_str(), names, encs, 2, &opts, &w), SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: sluice_writer_open: custom encoding 0 has "
                                    "size -2 (a size >= 0, or -1 for variable)");
  opts.custom_encoding_sizes = sizes;
  opts.format = "json";
  const char* text_encs[] = {"str", "int"};
  EXPECT_EQ(sluice_writer_open((out + "/c").c_str(), names, text_encs, 2, &opts, &w),
            SLUICE_EINVAL);
  EXPECT_STREQ(sluice_last_error(), "invalid argument: sluice_writer_open: format 'json' takes "
                                    "no custom encodings (MDS only)");
}

TEST(CApiTextWriterTest, RejectsBadTextFieldsAndFormats) {
  sluice::testing::TempDir out_dir("sluice_c_api_test");
  const std::string out = out_dir.path();
  const char* names[] = {"id", "name"};
  const char* encs[] = {"int", "str"};
  sluice_writer_options opts{};
  opts.format = "csv";
  sluice_writer* w = nullptr;
  ASSERT_EQ(sluice_writer_open(out.c_str(), names, encs, 2, &opts, &w), SLUICE_OK)
      << sluice_last_error();
  const std::string bad_int = "12x", comma = "a,b", ok_int = "7", ok_str = "x";
  auto b = [](const std::string& s) {
    return sluice_bytes{reinterpret_cast<const uint8_t*>(s.data()), s.size()};
  };
  sluice_bytes f1[2] = {b(bad_int), b(ok_str)};
  EXPECT_EQ(sluice_writer_write(w, f1, 2), SLUICE_EINVAL);
  EXPECT_EQ(std::string(sluice_last_error()),
            "invalid argument: sluice_writer_write: column 'id' (int): '12x' is not an int (at "
            "most 4300 digits)");
  sluice_bytes f2[2] = {b(ok_int), b(comma)};
  EXPECT_EQ(sluice_writer_write(w, f2, 2), SLUICE_EINVAL);
  EXPECT_NE(std::string(sluice_last_error()).find("name"), std::string::npos) << sluice_last_error();
  sluice_bytes f3[2] = {b(ok_int), b(ok_str)};
  EXPECT_EQ(sluice_writer_write(w, f3, 2), SLUICE_OK) << sluice_last_error();
  // Ints of any size, as Mosaic's str(int); written in canonical form.
  const std::string big = " -0_1180591620717411303424";
  sluice_bytes f4[2] = {b(big), b(ok_str)};
  EXPECT_EQ(sluice_writer_write(w, f4, 2), SLUICE_OK) << sluice_last_error();
  EXPECT_EQ(sluice_writer_finish(w), SLUICE_OK) << sluice_last_error();
  sluice_writer_close(w);
  EXPECT_EQ(Slurp(out + "/shard.00000.csv"), "id,name\n7,x\n-1180591620717411303424,x\n");

  const char* bad_enc[] = {"int", "bytes"};
  w = nullptr;
  EXPECT_EQ(sluice_writer_open((out + "/b").c_str(), names, bad_enc, 2, &opts, &w),
            SLUICE_EUNIMPLEMENTED);
  EXPECT_EQ(w, nullptr);
  opts.format = "parquet";
  EXPECT_EQ(sluice_writer_open((out + "/c").c_str(), names, encs, 2, &opts, &w),
            SLUICE_EUNIMPLEMENTED);
  EXPECT_NE(std::string(sluice_last_error()).find("'parquet'"), std::string::npos);
}

}  // namespace
