// A single pass's ranged shard reads the samples of its next uses ahead
// (OpenedShard::FillAhead): one call of its spans reader, samples whose
// bytes lie within kNearBytes of each other in one span, each span
// exactly those samples' bytes and what lies between them; Read then
// serves them without a read of its own. A span whose read failed leaves
// its samples to Read, which reads each alone and reports its own error.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/opened_shard.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

// One MDS shard of 3,000 samples (40..240 bytes: about 420 KB, so the
// first and last samples lie further apart than kNearBytes), its entry
// and bytes.
struct FillAheadShard {
  ScratchDir dir;
  ShardEntry entry;
  std::string bytes;
};

void MakeFillAheadShard(FillAheadShard* s) {
  testing::WriteSyntheticMds(s->dir.path(), 3000, uint64_t{1} << 20);
  auto reader = DatasetReader::Open(s->dir.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->index().shards.size(), 1u);
  s->entry = (*reader)->index().shards[0];
  auto bytes = ReadFile(JoinPath(s->dir.path(), s->entry.raw_data.basename));
  ASSERT_TRUE(bytes.ok());
  s->bytes = std::move(*bytes);
}

// MDS: sample i's bytes are [offsets[i], offsets[i + 1]), offsets at 4 + 4i.
uint64_t FillAheadOffset(const std::string& shard, size_t i) {
  uint32_t v = 0;
  std::memcpy(&v, shard.data() + 4 + 4 * i, 4);
  return v;
}

// The shard opened for ranged reads over its own bytes, counting each
// reader's calls and spans; spans at `failing` offsets fail.
struct RangedReads {
  std::vector<DataSpan> single;               // read_span's, in order
  std::vector<std::vector<DataSpan>> batches;  // read_spans' calls
  std::vector<uint64_t> failing;
};

Result<std::unique_ptr<OpenedShard>> OpenCounted(const FillAheadShard& s, RangedReads* reads) {
  const std::string head = s.bytes.substr(0, FillAheadOffset(s.bytes, 0));
  auto single = [&s, reads](uint32_t i, const DataSpan& span) -> Result<std::string> {
    reads->single.push_back(span);
    return CorruptError("sample " + std::to_string(i) + " read alone");
  };
  auto batch = [&s, reads](const std::vector<DataSpan>& spans) {
    reads->batches.push_back(spans);
    std::vector<Result<std::string>> out;
    for (const DataSpan& span : spans) {
      if (std::count(reads->failing.begin(), reads->failing.end(), span.offset)) {
        out.push_back(CorruptError("span failed"));
      } else {
        out.push_back(s.bytes.substr(span.offset, span.length));
      }
    }
    return out;
  };
  return OpenedShard::OpenRanged(s.entry, head, single, batch);
}

std::string SampleRead(const OpenedShard& shard, uint32_t i, Status* st) {
  SampleFields fields;
  *st = shard.Read(i, {"data", "id"}, &fields);
  return st->ok() ? testing::FieldBytes(fields) : std::string();
}

TEST(RangedFillAhead, NearSamplesShareOneSpanAndReadServesThemWithoutAReadOfItsOwn) {
  FillAheadShard s;
  ASSERT_NO_FATAL_FAILURE(MakeFillAheadShard(&s));
  ASSERT_GT(FillAheadOffset(s.bytes, 2900) - FillAheadOffset(s.bytes, 6),
            OpenedShard::kNearBytes);
  RangedReads reads;
  auto shard = OpenCounted(s, &reads);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  // 3 and 5 are near (4 between them is read with them); 2900 is far.
  EXPECT_EQ((*shard)->FillAhead({5, 2900, 3}), 2u);
  ASSERT_EQ(reads.batches.size(), 1u);
  const uint64_t o3 = FillAheadOffset(s.bytes, 3), o6 = FillAheadOffset(s.bytes, 6);
  const uint64_t o2900 = FillAheadOffset(s.bytes, 2900), o2901 = FillAheadOffset(s.bytes, 2901);
  EXPECT_EQ(reads.batches[0],
            (std::vector<DataSpan>{{o3, o6 - o3}, {o2900, o2901 - o2900}}));
  // Filled samples are not read again, ahead or by Read.
  EXPECT_EQ((*shard)->FillAhead({3, 5, 2900}), 0u);
  EXPECT_EQ(reads.batches.size(), 1u);
  // The same bytes as the shard read whole.
  auto whole = OpenedShard::OpenInMemory(s.entry, ShardBytes::Of(s.bytes), {});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  for (const uint32_t i : {3u, 5u, 2900u}) {
    Status st, whole_st;
    const std::string got = SampleRead(**shard, i, &st);
    ASSERT_TRUE(st.ok()) << "sample " << i << ": " << st.ToString();
    EXPECT_EQ(got, SampleRead(**whole, i, &whole_st)) << "sample " << i;
  }
  EXPECT_TRUE(reads.single.empty());
  // Sample 4's bytes were read with 3's and 5's but it was not asked for:
  // Read reads it alone (here failing, as the reader says).
  Status st;
  SampleRead(**shard, 4, &st);
  EXPECT_EQ(st.message(), "sample 4 read alone");
  ASSERT_EQ(reads.single.size(), 1u);
  EXPECT_EQ(reads.single[0], (DataSpan{FillAheadOffset(s.bytes, 4), FillAheadOffset(s.bytes, 5) -
                                                                     FillAheadOffset(s.bytes, 4)}));
}

TEST(RangedFillAhead, ASpanThatFailedLeavesItsSamplesToReadAndItsError) {
  FillAheadShard s;
  ASSERT_NO_FATAL_FAILURE(MakeFillAheadShard(&s));
  RangedReads reads;
  reads.failing = {FillAheadOffset(s.bytes, 2900)};
  auto shard = OpenCounted(s, &reads);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  EXPECT_EQ((*shard)->FillAhead({10, 2900, 2901}), 2u);
  Status st;
  SampleRead(**shard, 10, &st);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(reads.single.empty());
  SampleRead(**shard, 2901, &st);
  EXPECT_EQ(st.message(), "sample 2901 read alone");
  EXPECT_EQ(reads.single.size(), 1u);
}

}  // namespace
}  // namespace sluice
