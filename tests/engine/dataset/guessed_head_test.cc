// The guessed head of a cold stream's first shard (GuessedHead) used as its
// bytes arrive: over a server that sends the head's first part and holds
// the rest, the first sample is peeked from the bytes in, with no read of
// its own, while the tail is still held (a head taken whole would wait for
// it); a head cut short keeps the bytes that came, and the rest is its
// error naming the URL and the range; a head cut before the sample's bytes
// came leaves the peek to read the sample itself (the bounds it has are
// used); a cold pass in order serves its first sample while the head's
// and the shard's tails are held, and then the exact epoch.
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/sample_peek.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/one_mds_shard.h"
#include "tests/engine/dataset/tail_holding_server.h"

namespace sluice {
namespace {

using testing::TailHoldingServer;

using OneShard = testing::OneMdsShard;

// The shard is the one the guess names, and longer than the guessed head.
void MakeOneShard(OneShard* s) {
  ASSERT_NO_FATAL_FAILURE(testing::MakeOneMdsShard(s));
  ASSERT_EQ(s->name, GuessedFirstShard());
  ASSERT_GT(s->bytes.size(), GuessedHeadBytes());
}

// A failed request is not asked again (the server answers a held range
// 404 once failed, whatever the retry).
StoreOptions NoRetries() {
  StoreOptions o;
  o.download_retry = 0;
  return o;
}

// The guess's range as the server logs it: [0, GuessedHeadBytes() - 1].
std::pair<uint64_t, uint64_t> GuessRange() { return {0, GuessedHeadBytes() - 1}; }

// The server sends the head's first 256 KiB (sample 0's offsets entry and
// bytes, and far more) and holds the rest: the peek of sample 0 comes from
// the bytes in, exact, while the tail is held, and the head's request is
// the only one of the shard (no read of the peek's own). Taken whole, the
// head would keep the peek until the tail's release (here: the safety
// release, which released() reports).
TEST(GuessedHeadArriving, ThePeekServesSampleZeroWhileTheHeadsTailIsHeld) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  ASSERT_LT(s.End(0), uint64_t{256} << 10);
  TailHoldingServer server(s.remote.path(), s.name, uint64_t{256} << 10,
                           std::chrono::seconds(20), /*send_before_hold=*/true);
  auto remote = OpenRemoteSource(server.url());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  GuessedHead head(**remote, s.name);
  Result<PeekedSample> peeked = PeekSampleFromRemote(**remote, s.name, s.entry, 0, {}, &head);
  EXPECT_FALSE(server.released()) << "the sample came only once the head's tail was released";
  ASSERT_TRUE(peeked.ok()) << peeked.status().ToString();
  EXPECT_EQ(peeked->raw, s.Sample(0));
  // The server notes the held range once it has sent the bytes before it:
  // waited for.
  server.WaitHeld(1);
  EXPECT_EQ(server.HeldRanges(), (std::vector<std::pair<uint64_t, uint64_t>>{GuessRange()}));
  server.Release();
}

// The head cut short after sample 0's bytes came (the server fails the
// held rest: the client's resumed read of it is answered 404): the bytes
// that came stay readable, exact; a range past the cut is the read's
// error naming the object's URL and the range.
TEST(GuessedHeadArriving, AHeadCutShortKeepsItsBytesAndTheRestIsItsErrorWithUrlAndRange) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  const uint64_t cut = uint64_t{256} << 10;
  TailHoldingServer server(s.remote.path(), s.name, cut, std::chrono::seconds(20),
                           /*send_before_hold=*/true);
  auto remote = OpenRemoteSource(server.url(), NoRetries());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  GuessedHead head(**remote, s.name);
  std::optional<GuessedHead::Read> read = head.Take();
  ASSERT_TRUE(read.has_value());
  EXPECT_EQ(read->stated.size, s.bytes.size());
  EXPECT_TRUE(GuessAgrees(s.entry, read->stated));
  auto sample = read->bytes->Await(s.Begin(0), s.End(0) - s.Begin(0), /*wait=*/true);
  ASSERT_TRUE(sample.ok()) << sample.status().ToString();
  ASSERT_TRUE(sample->has_value());
  EXPECT_EQ(std::string(**sample), s.Sample(0));
  EXPECT_FALSE(server.released());
  server.Fail();
  auto past = read->bytes->Await(cut, 100, /*wait=*/true);
  ASSERT_FALSE(past.ok()) << "bytes past the cut were served";
  const std::string message = past.status().ToString();
  EXPECT_NE(message.find(server.url() + "/" + s.name), std::string::npos) << message;
  EXPECT_NE(message.find("bytes " + std::to_string(cut) + ".." + std::to_string(cut + 100) +
                         " did not arrive"),
            std::string::npos)
      << message;
  // What came before the cut is still there, the same bytes.
  auto again = read->bytes->Await(s.Begin(0), s.End(0) - s.Begin(0), /*wait=*/false);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ(std::string(**again), s.Sample(0));
}

// The head cut between sample 0's offsets entry and its end: the peek
// takes the bounds from the head, then reads the sample's bytes itself,
// exactly their range (not the first read the guess stood for); the
// server fails that read too (404), which is the peek's error, naming the
// object's URL.
TEST(GuessedHeadArriving, AHeadCutBeforeTheSamplesBytesLeavesThePeekToReadThemItself) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  const uint64_t cut = s.Begin(0) + (s.End(0) - s.Begin(0)) / 2;
  TailHoldingServer server(s.remote.path(), s.name, cut, std::chrono::seconds(20),
                           /*send_before_hold=*/true);
  auto remote = OpenRemoteSource(server.url(), NoRetries());
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  GuessedHead head(**remote, s.name);
  std::thread failer([&] {
    server.WaitHeld(1);
    server.Fail();
  });
  Result<PeekedSample> peeked = PeekSampleFromRemote(**remote, s.name, s.entry, 0, {}, &head);
  failer.join();
  ASSERT_FALSE(peeked.ok()) << "a sample served from a cut head";
  EXPECT_NE(peeked.status().ToString().find(server.url() + "/" + s.name), std::string::npos)
      << peeked.status().ToString();
  const std::vector<std::pair<uint64_t, uint64_t>> held = server.HeldRanges();
  ASSERT_GE(held.size(), 2u) << ::testing::PrintToString(held);
  EXPECT_EQ(held.front(), GuessRange());
  EXPECT_EQ(held.back(), std::make_pair(s.Begin(0), s.End(0) - 1))
      << ::testing::PrintToString(held);
}

// A cold pass in order over a server holding the tail of the only shard
// from 256 KiB (the guessed head's and the download's alike), in the
// strict mode (nothing served from the download in flight): the first
// sample comes, exact, while both tails are held, from the guessed head's
// bytes; after the release, the whole epoch in order, exact.
TEST(GuessedHeadArriving, AColdPassInOrderServesItsFirstSampleWhileTheHeadsTailIsHeld) {
  OneShard s;
  ASSERT_NO_FATAL_FAILURE(MakeOneShard(&s));
  TailHoldingServer server(s.remote.path(), s.name, uint64_t{256} << 10,
                           std::chrono::seconds(20), /*send_before_hold=*/true);
  DatasetOptions o = testing::OneStreamOptions(s.remote.path(), s.cache.path());
  o.streams[0].remote = server.url();
  o.streams[0].download_retry = 0;
  o.plan.shuffle = false;
  o.serve_in_flight = false;
  ASSERT_TRUE(o.peek_first_sample);
  ASSERT_TRUE(o.guess_first_shard);
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(16);
  std::vector<SampleFields> fields;
  Result<size_t> first = (*ds)->NextBatch(1, ids.data(), &fields);
  EXPECT_FALSE(server.released()) << "the first sample came only once the tail was released";
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(*first, 1u);
  EXPECT_EQ(ids[0], 0);
  SampleFields reference;
  ASSERT_TRUE(s.reader->Read(0, &reference).ok());
  EXPECT_EQ(testing::FieldBytes(fields[0]), testing::FieldBytes(reference));
  server.Release();
  int64_t next = 1;
  for (;;) {
    Result<size_t> n = (*ds)->NextBatch(16, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    for (size_t k = 0; k < *n; ++k) {
      ASSERT_EQ(ids[k], next);
      ASSERT_TRUE(s.reader->Read(static_cast<uint64_t>(next), &reference).ok());
      ASSERT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(reference)) << next;
      ++next;
    }
  }
  EXPECT_EQ(next, 12000);
}

}  // namespace
}  // namespace sluice
