// A single pass served from its shard's parts as they arrive
// (serve_in_flight over single_pass): while a server holds back the tail
// of the shard, the consumer gets the samples whose parts are in, exactly
// and in plan order; a held part that then fails reaches the consumer as
// an error naming the shard's URL and the part's byte range, with no
// sample of that range served; the strict mode (serve_in_flight false)
// serves nothing before the tail; a shuffled pass's order and bytes are
// the cached mode's. Bytes count as they come off the socket, not only
// when their part completes: a one-part shard whose tail is held serves
// the samples of its head, and a part cut short after some of its own
// bytes were served gives the error naming the URL and the part's range.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/one_mds_shard.h"
#include "tests/engine/dataset/tail_holding_server.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::TailHoldingServer;

using OneShard = testing::OneMdsShard;

// Longer than 1 MiB: several parts of 256 KiB.
void MakeOneShard(OneShard* s) {
  ASSERT_NO_FATAL_FAILURE(testing::MakeOneMdsShard(s));
  ASSERT_GT(s->bytes.size(), uint64_t{1} << 20);
}

// A single pass over `url`, in order, in parts of 256 KiB (2 to 8 of
// them, as the client's connections allow): the last part holds the tail.
// No peek (it would serve the first sample whatever the shard does), no
// second download of a failed shard.
DatasetOptions SinglePass(const OneShard& s, const std::string& url, bool serve_in_flight) {
  DatasetOptions o = testing::OneStreamOptions(s.remote.path(), s.cache.path());
  o.streams[0].remote = url;
  o.streams[0].single_pass = true;
  o.streams[0].single_pass_part_size = uint64_t{256} << 10;
  o.streams[0].download_retry = 0;
  o.plan.shuffle = false;
  o.peek_first_sample = false;
  o.serve_in_flight = serve_in_flight;
  return o;
}

// How many of the shard's first samples end within its first `within`
// bytes.
size_t CountOfSamplesWithin(const OneShard& s, uint64_t within) {
  size_t n = 0;
  while (n < 12000 && s.End(n) <= within) ++n;
  return n;
}

// Reads up to `count` samples (or to the first error, into *failed), each
// checked against the reader's bytes; appends their ids to *ids and, per
// batch, whether the server had released the tail when it came.
void Read(OneShard& s, StreamingDataset& ds, size_t count, std::vector<int64_t>* ids,
          std::vector<bool>* released, TailHoldingServer& server, Status* failed = nullptr) {
  std::vector<int64_t> batch(16);
  std::vector<SampleFields> fields;
  size_t got = 0;
  while (got < count) {
    Result<size_t> n = ds.NextBatch(std::min<size_t>(16, count - got), batch.data(), &fields);
    released->push_back(server.released());
    if (!n.ok() && failed != nullptr) {
      *failed = n.status();
      return;
    }
    ASSERT_TRUE(n.ok()) << "after " << got << " samples: " << n.status().ToString();
    ASSERT_GE(*n, 1u);
    for (size_t k = 0; k < *n; ++k) {
      SampleFields reference;
      ASSERT_TRUE(s.reader->Read(static_cast<uint64_t>(batch[k]), &reference).ok());
      ASSERT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(reference)) << batch[k];
      ids->push_back(batch[k]);
    }
    got += *n;
  }
}

std::vector<int64_t> Iota(size_t n) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// Opens `o` and begins its epoch 0 as the one worker, into *ds.
void Begin(const DatasetOptions& o, std::unique_ptr<StreamingDataset>* ds) {
  auto opened = StreamingDataset::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  *ds = std::move(*opened);
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
}

// The epoch is over: the next batch is empty, not an error.
void ExpectEnded(StreamingDataset& ds) {
  std::vector<SampleFields> fields;
  std::vector<int64_t> batch(16);
  auto end = ds.NextBatch(16, batch.data(), &fields);
  ASSERT_TRUE(end.ok()) << end.status().ToString();
  EXPECT_EQ(*end, 0u);
}

// `failed` names the shard's URL and the held part's byte range, and the
// error stays: the next call fails again, serving nothing.
void ExpectFailedAt(StreamingDataset& ds, const Status& failed, const std::string& url,
                    const std::pair<uint64_t, uint64_t>& held) {
  ASSERT_FALSE(failed.ok()) << "the epoch ended without the failed part";
  const std::string range =
      "bytes " + std::to_string(held.first) + ".." + std::to_string(held.second + 1);
  EXPECT_NE(failed.message().find(url), std::string::npos) << failed.ToString();
  EXPECT_NE(failed.message().find(range), std::string::npos) << failed.ToString();
  std::vector<SampleFields> fields;
  std::vector<int64_t> batch(16);
  EXPECT_FALSE(ds.NextBatch(16, batch.data(), &fields).ok());
}

TEST(SinglePassInFlight, SamplesComeBeforeTheTailOfTheirShardArrives) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  TailHoldingServer server(s.remote.path(), s.name, s.bytes.size() - 1, std::chrono::seconds(20));
  std::unique_ptr<StreamingDataset> ds;
  ASSERT_NO_FATAL_FAILURE(Begin(SinglePass(s, server.url(), true), &ds));
  // The first 100 samples (within the shard's first 30 KB, far inside its
  // first part) come while the server holds the tail.
  std::vector<int64_t> ids;
  std::vector<bool> released;
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 100, &ids, &released, server));
  EXPECT_EQ(ids, Iota(100));
  EXPECT_EQ(std::count(released.begin(), released.end(), true), 0)
      << "a sample came only once the tail was released";
  ASSERT_LT(s.End(99), s.bytes.size() / 8);
  // The tail was asked for as a part of its own, and held (its request
  // may reach the server after those samples: waited for).
  server.WaitHeld(1);
  EXPECT_FALSE(server.released());
  EXPECT_EQ(server.HeldRanges().size(), 1u);
  // Then the tail: the rest of the epoch, exactly and in order.
  server.Release();
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 12000 - 100, &ids, &released, server));
  EXPECT_EQ(ids, Iota(12000));
  ExpectEnded(*ds);
}

TEST(SinglePassInFlight, APartThatFailsAfterSamplesWereServedIsTheConsumersErrorWithUrlAndRange) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  TailHoldingServer server(s.remote.path(), s.name, s.bytes.size() - 1, std::chrono::seconds(20));
  std::unique_ptr<StreamingDataset> ds;
  ASSERT_NO_FATAL_FAILURE(Begin(SinglePass(s, server.url(), true), &ds));
  std::vector<int64_t> ids;
  std::vector<bool> released;
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 100, &ids, &released, server));
  ASSERT_EQ(ids, Iota(100));
  ASSERT_EQ(std::count(released.begin(), released.end(), true), 0);
  // The held part fails (404: the object went while it was read).
  server.WaitHeld(1);
  const std::vector<std::pair<uint64_t, uint64_t>> held = server.HeldRanges();
  ASSERT_EQ(held.size(), 1u);
  server.Fail();
  Status failed = Status::Ok();
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 12000, &ids, &released, server, &failed));
  ExpectFailedAt(*ds, failed, server.url() + "/" + s.name, held[0]);
  // Whatever was served came in order and from the parts that arrived:
  // nothing of the failed range.
  EXPECT_EQ(ids, Iota(ids.size()));
  ASSERT_FALSE(ids.empty());
  EXPECT_LE(s.End(static_cast<size_t>(ids.back())), held[0].first);
}

// One part (the part size is larger than the shard): the server sends its
// head and first half, then holds the rest. The samples of the first half
// come before the rest is sent (without bytes told as they come off the
// socket, none would until the part's end: the safety release after 20 s).
TEST(SinglePassInFlight, AOnePartShardServesItsHeadWhileItsTailIsHeld) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  const uint64_t half = s.bytes.size() / 2;
  TailHoldingServer server(s.remote.path(), s.name, half, std::chrono::seconds(20),
                           /*send_before_hold=*/true);
  DatasetOptions o = SinglePass(s, server.url(), true);
  o.streams[0].single_pass_part_size = uint64_t{64} << 20;
  std::unique_ptr<StreamingDataset> ds;
  ASSERT_NO_FATAL_FAILURE(Begin(o, &ds));
  // Within the first 256 KiB: told (every 64 KiB) well before the half.
  const size_t head = CountOfSamplesWithin(s, uint64_t{256} << 10);
  ASSERT_GT(head, 1000u);
  std::vector<int64_t> ids;
  std::vector<bool> released;
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, head, &ids, &released, server));
  EXPECT_EQ(ids, Iota(head));
  EXPECT_EQ(std::count(released.begin(), released.end(), true), 0)
      << "a sample came only once the tail was released";
  // One request, the whole shard (and a byte past it: a longer object is
  // told by its answer), held at its half.
  server.WaitHeld(1);
  EXPECT_FALSE(server.released());
  const std::vector<std::pair<uint64_t, uint64_t>> held = server.HeldRanges();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0], std::make_pair(uint64_t{0}, uint64_t{s.bytes.size()}));
  server.Release();
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 12000 - head, &ids, &released, server));
  EXPECT_EQ(ids, Iota(12000));
  ExpectEnded(*ds);
}

// The last part is sent up to 100,000 bytes before the shard's end and
// held; samples from that part's own first bytes are served (the part has
// not completed), then the server cuts the part short: the consumer gets
// the error naming the URL and the part's range, and no sample of bytes
// that never came.
TEST(SinglePassInFlight, APartCutShortAfterItsBytesWereServedIsTheErrorWithUrlAndRange) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  const uint64_t hold_from = s.bytes.size() - 100000;
  TailHoldingServer server(s.remote.path(), s.name, hold_from, std::chrono::seconds(20),
                           /*send_before_hold=*/true);
  std::unique_ptr<StreamingDataset> ds;
  ASSERT_NO_FATAL_FAILURE(Begin(SinglePass(s, server.url(), true), &ds));
  // The first samples (of the first part) start the pass's parts.
  std::vector<int64_t> ids;
  std::vector<bool> released;
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 16, &ids, &released, server));
  server.WaitHeld(1);
  const std::vector<std::pair<uint64_t, uint64_t>> held = server.HeldRanges();
  ASSERT_EQ(held.size(), 1u);
  // The held part's first 16 KiB (it sent at least 143,000 bytes before
  // the hold: parts of 256 KiB, 8 at most, of a shard under 2.1 MB).
  ASSERT_GT(hold_from - held[0].first, uint64_t{140000});
  const size_t first_of_part = CountOfSamplesWithin(s, held[0].first);
  const size_t upto = CountOfSamplesWithin(s, held[0].first + (uint64_t{16} << 10));
  ASSERT_GT(upto, first_of_part + 50);
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, upto - 16, &ids, &released, server));
  ASSERT_EQ(ids, Iota(upto));
  EXPECT_EQ(std::count(released.begin(), released.end(), true), 0)
      << "a sample came only once the tail was released";
  server.Fail();
  Status failed = Status::Ok();
  ASSERT_NO_FATAL_FAILURE(Read(s, *ds, 12000, &ids, &released, server, &failed));
  ExpectFailedAt(*ds, failed, server.url() + "/" + s.name, held[0]);
  // In order, and none past the bytes the server sent.
  EXPECT_EQ(ids, Iota(ids.size()));
  EXPECT_LE(s.End(static_cast<size_t>(ids.back())), hold_from);
}

TEST(SinglePassInFlight, TheStrictModeWaitsForTheTail) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  TailHoldingServer server(s.remote.path(), s.name, s.bytes.size() - 1, std::chrono::seconds(20));
  std::unique_ptr<StreamingDataset> ds;
  ASSERT_NO_FATAL_FAILURE(Begin(SinglePass(s, server.url(), false), &ds));
  std::vector<int64_t> ids;
  std::vector<bool> released;
  std::atomic<size_t> served{0};
  std::thread consumer([&] {
    std::vector<int64_t> batch(16);
    std::vector<SampleFields> fields;
    Result<size_t> n = ds->NextBatch(16, batch.data(), &fields);
    released.push_back(server.released());
    if (n.ok()) {
      for (size_t k = 0; k < *n; ++k) ids.push_back(batch[k]);
      served.store(*n);
    }
  });
  // The tail is asked for and held: nothing has been served, nor is until
  // the tail is released.
  server.WaitHeld(1);
  EXPECT_EQ(served.load(), 0u);
  server.Release();
  consumer.join();
  ASSERT_EQ(released, std::vector<bool>{true});
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids, Iota(ids.size()));
}

// A shuffled epoch over several shards in parts served as they arrive:
// the ids and bytes of the cached mode, and of the strict single pass.
TEST(SinglePassInFlight, AShuffledPassHasTheCachedModesOrderAndBytes) {
  ScratchDir remote;
  testing::WriteSyntheticMds(remote.path(), 3000, uint64_t{64} << 10);
  TailHoldingServer server(remote.path(), "none", 0);
  std::vector<std::vector<int64_t>> ids;
  std::vector<std::vector<std::string>> bytes;
  for (int mode = 0; mode < 3; ++mode) {
    ScratchDir cache;
    DatasetOptions o = testing::OneStreamOptions(remote.path(), cache.path());
    o.streams[0].remote = server.url();
    o.streams[0].single_pass = mode != 0;
    o.streams[0].single_pass_part_size = uint64_t{16} << 10;
    o.serve_in_flight = mode != 2;
    o.plan.shuffle = true;
    o.plan.shuffle_seed = 17;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    ASSERT_GT((*ds)->num_shards(), 4u);
    bytes.emplace_back();
    ids.push_back(testing::ReadEpoch(**ds, 0, 0, 0, 1, 7, &bytes.back()));
  }
  ASSERT_EQ(ids[0].size(), 3000u);
  EXPECT_NE(ids[0], Iota(3000));  // shuffled
  EXPECT_EQ(ids[1], ids[0]);
  EXPECT_EQ(bytes[1], bytes[0]);
  EXPECT_EQ(ids[2], ids[0]);
  EXPECT_EQ(bytes[2], bytes[0]);
}

}  // namespace
}  // namespace sluice
