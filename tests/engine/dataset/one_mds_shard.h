#ifndef SLUICE_TESTS_ENGINE_DATASET_ONE_MDS_SHARD_H_
#define SLUICE_TESTS_ENGINE_DATASET_ONE_MDS_SHARD_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "base/file.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice::testing {

// One MDS shard of about 2 MB (12,000 samples of 40..240 bytes, its
// offsets table 48 KB) in `remote`, with its entry, basename, bytes and
// sample bounds (MDS: the count, then count + 1 u32 offsets); `cache` for
// the dataset that reads it.
struct OneMdsShard {
  ScratchDir remote, cache;
  std::unique_ptr<DatasetReader> reader;
  ShardEntry entry;
  std::string name;
  std::string bytes;
  uint64_t Begin(size_t i) const {
    uint32_t v = 0;
    std::memcpy(&v, bytes.data() + 4 + 4 * i, 4);
    return v;
  }
  uint64_t End(size_t i) const { return Begin(i + 1); }
  std::string Sample(size_t i) const { return bytes.substr(Begin(i), End(i) - Begin(i)); }
};

// Writes and reads back `s`'s shard (call under ASSERT_NO_FATAL_FAILURE).
inline void MakeOneMdsShard(OneMdsShard* s) {
  WriteSyntheticMds(s->remote.path(), 12000, uint64_t{64} << 20);
  auto reader = DatasetReader::Open(s->remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  s->reader = std::move(*reader);
  ASSERT_EQ(s->reader->index().shards.size(), 1u);
  s->entry = s->reader->index().shards[0];
  s->name = s->entry.raw_data.basename;
  auto bytes = ReadFile(JoinPath(s->remote.path(), s->name));
  ASSERT_TRUE(bytes.ok());
  s->bytes = std::move(*bytes);
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTS_ENGINE_DATASET_ONE_MDS_SHARD_H_
