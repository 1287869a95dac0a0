#include "engine/packing/pack_spec.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(PackSpecParse, ReadsEveryKey) {
  auto s = ParsePackSpec(R"({"column": "ids", "seq_len": 8, "eos_id": 2, "method": "bin",
      "pad_id": null, "bin_window": 16, "bytes_dtype": "uint16", "drop_last": false})");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->column, "ids");
  EXPECT_EQ(s->seq_len, 8u);
  EXPECT_EQ(s->eos_id, 2);
  EXPECT_EQ(s->method, PackMethod::kBin);
  EXPECT_EQ(s->padding(), 2);  // pad_id null: eos_id
  EXPECT_EQ(s->bin_window, 16u);
  EXPECT_EQ(s->bytes_dtype, "uint16");
  EXPECT_FALSE(s->drop_last);
}

TEST(PackSpecParse, RefusesWithTheKey) {
  const std::pair<const char*, const char*> cases[] = {
      {R"({"seq_len": 8})", "pack spec: 'column' is required"},
      {R"({"column": "t"})", "pack spec: 'seq_len' is required"},
      {R"({"column": "t", "seq_len": 0})", "pack spec: 'seq_len' must be in 1..16777216, got 0"},
      {R"({"column": "t", "seq_len": 4, "method": "greedy"})",
       "pack spec: 'method' must be 'concat' or 'bin'"},
      {R"({"column": "t", "seq_len": 4, "eos_id": -3})",
       "pack spec: 'eos_id' must not be negative, got -3"},
      {R"({"column": "t", "seq_len": 4, "max_len": 3})",
       "pack spec: 'max_len' is not a pack spec key (column, seq_len, eos_id, pad_id, method, "
       "bin_window, bytes_dtype, drop_last)"},
  };
  for (const auto& [json, text] : cases) {
    auto s = ParsePackSpec(json);
    ASSERT_FALSE(s.ok()) << json;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.status().message(), text);
  }
}

}  // namespace
}  // namespace sluice
