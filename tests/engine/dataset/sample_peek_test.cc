// The first sample of a cold pass from one or two ranged reads of its
// uncompressed MDS shard (engine/dataset/sample_peek.h), against a real nginx whose
// access log tells which byte ranges were asked for; and every case where
// the peek must not be used, or fails, ends with the exact epoch.
#include "engine/dataset/sample_peek.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stop_token>
#include <thread>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/file.h"
#include "engine/dataset/iteration_cursor.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/mds/mds_writer.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/stores/http/fault_proxy.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::NginxServer;
using testing::ScratchDir;

// Each request in nginx's access log, in the order they completed:
// {target, "<status> <range>"}.
std::vector<std::pair<std::string, std::string>> LoggedRequests(const NginxServer& nginx) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream log(nginx.AccessLog());
  std::string connection, method, target, status, range;
  for (std::string line; std::getline(log, line);) {
    std::istringstream fields(line);
    range.clear();
    fields >> connection >> method >> target >> status >> range;
    out.emplace_back(target, status + " " + range);
  }
  return out;
}

// "<status> <range>" of each request for `uri` in nginx's access log, in
// the order they completed (a request still being answered is not there).
// nginx logs a request after it has sent the answer, so a client can be
// ahead of the log: this waits up to a second for `at_least` of them.
std::vector<std::string> RequestsFor(const NginxServer& nginx, const std::string& uri,
                                     size_t at_least = 0) {
  std::vector<std::string> out;
  for (int tries = 0; tries < 200; ++tries) {
    out.clear();
    for (const auto& [target, answer] : LoggedRequests(nginx)) {
      if (target == uri) out.push_back(answer);
    }
    if (out.size() >= at_least) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return out;
}

// "bytes=<first>-<last>" of bytes [begin, end).
std::string Range(uint64_t begin, uint64_t end) {
  return "bytes=" + std::to_string(begin) + "-" + std::to_string(end - 1);
}

// Where sample `i` of the shard file at `path` lies: its offsets entry.
std::pair<uint64_t, uint64_t> SampleBounds(const std::string& path, uint32_t i) {
  auto bytes = ReadFile(path);
  EXPECT_TRUE(bytes.ok());
  if (!bytes.ok()) return {0, 0};
  return {LoadLE<uint32_t>(bytes->data() + 4 + 4 * uint64_t{i}),
          LoadLE<uint32_t>(bytes->data() + 8 + 4 * uint64_t{i})};
}

// The byte range of a peek's first read of sample `i` of the MDS shard
// `entry`, restated: from its offsets entry through the sample's likely
// end (the offsets table's end plus i + 1 average samples) and 64 KiB past
// it, at most to the file's end, when that is at most 1 MiB; else the
// offsets entry alone.
std::string FirstRead(const ShardEntry& entry, uint32_t i) {
  const uint64_t table_end = 4 + 4 * (uint64_t{entry.samples} + 1);
  const uint64_t average = (entry.raw_data.bytes - table_end) / entry.samples;
  const uint64_t begin = 4 + 4 * uint64_t{i};
  const uint64_t end =
      std::min<uint64_t>(entry.raw_data.bytes, table_end + (i + 1) * average + (64 << 10));
  return end - begin <= (1 << 20) ? Range(begin, end) : Range(begin, begin + 8);
}

// Reads sample `i` of the only shard under `dir` (served by `nginx` as
// /<uri_dir>/<file>) through a peek; checks its bytes and split against
// the shard's reader; returns nginx's log of the shard's requests.
std::vector<std::string> PeekAndCheck(const NginxServer& nginx, const std::string& dir,
                                      const std::string& uri_dir, size_t shard, uint32_t i,
                                      size_t requests) {
  auto reader = DatasetReader::Open(dir);
  EXPECT_TRUE(reader.ok()) << reader.status().ToString();
  if (!reader.ok()) return {};
  const ShardEntry& entry = (*reader)->index().shards[shard];
  auto remote = OpenRemoteSource("http://127.0.0.1:" + std::to_string(nginx.http_port()) + "/" +
                                 uri_dir);
  EXPECT_TRUE(remote.ok()) << remote.status().ToString();
  if (!remote.ok()) return {};
  Result<PeekedSample> peeked = PeekSampleFromRemote(**remote, entry.raw_data.basename, entry, i);
  EXPECT_TRUE(peeked.ok()) << peeked.status().ToString();
  if (!peeked.ok()) return {};
  auto opened = (*reader)->Shard(shard);
  EXPECT_TRUE(opened.ok()) << opened.status().ToString();
  if (!opened.ok()) return {};
  auto expected = (*opened)->mds()->SampleBytes(i);
  EXPECT_TRUE(expected.ok());
  if (expected.ok()) {
    EXPECT_EQ(*peeked->bytes, *expected);
  }
  std::vector<std::string_view> fields;
  EXPECT_TRUE((*opened)->mds()->ReadSample(i, &fields).ok());
  EXPECT_EQ(peeked->fields, fields);  // the same split, into the peeked bytes
  return RequestsFor(nginx, "/" + uri_dir + "/" + entry.raw_data.basename, requests);
}

// A sample near its shard's head (here the whole 8 KB shard is within
// reach) comes with its offsets entry in one ranged read, through the
// file's end.
TEST(PeekMdsSample, ReadsTheOffsetsEntryAndANearSampleWithOneRangedGet) {
  ScratchDir scratch;
  auto nginx = NginxServer::Start(JoinPath(scratch.path(), "nginx"));
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string data = JoinPath(nginx->www(), "ds");
  testing::WriteSyntheticMds(data, 300, 8000);
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_GE((*reader)->index().shards.size(), 2u);
  const ShardEntry& entry = (*reader)->index().shards[1];
  const uint32_t i = 7;
  ASSERT_LT(i, entry.samples);
  auto remote = OpenRemoteSource("http://127.0.0.1:" + std::to_string(nginx->http_port()) + "/ds");
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();

  Result<PeekedSample> peeked = PeekSampleFromRemote(**remote, entry.raw_data.basename, entry, i);
  ASSERT_TRUE(peeked.ok()) << peeked.status().ToString();

  auto shard = (*reader)->Shard(1);
  ASSERT_TRUE(shard.ok()) << shard.status().ToString();
  auto expected = (*shard)->mds()->SampleBytes(i);
  ASSERT_TRUE(expected.ok());
  EXPECT_EQ(*peeked->bytes, *expected);
  std::vector<std::string_view> fields;
  ASSERT_TRUE((*shard)->mds()->ReadSample(i, &fields).ok());
  EXPECT_EQ(peeked->fields, fields);  // the same split, into the peeked bytes
  ASSERT_EQ(peeked->fields.size(), 2u);
  EXPECT_EQ(peeked->fields[1], "sample-" + std::to_string((*reader)->index().shards[0].samples + i));

  ASSERT_LT(entry.raw_data.bytes, 64u << 10);
  EXPECT_EQ(FirstRead(entry, i), Range(4 + 4 * i, entry.raw_data.bytes));
  EXPECT_EQ(RequestsFor(*nginx, "/ds/" + entry.raw_data.basename, 1),
            (std::vector<std::string>{"206 " + FirstRead(entry, i)}));
}

// Writes `samples` as an MDS dataset of one bytes column, one shard, at
// <nginx's www>/<name>; returns its folder.
std::string WriteBytesMds(const NginxServer& nginx, const std::string& name,
                          const std::vector<std::string>& samples) {
  const std::string data = JoinPath(nginx.www(), name);
  ShardedWriterOptions options;
  options.size_limit = 64 << 20;
  auto writer = MdsWriter::Create(data, {{"data", "bytes"}}, options);
  EXPECT_TRUE(writer.ok()) << writer.status().ToString();
  if (!writer.ok()) return data;
  for (const std::string& sample : samples) EXPECT_TRUE((*writer)->WriteFields({sample}).ok());
  EXPECT_TRUE((*writer)->Finish().ok());
  return data;
}

// Where a peek guesses sample `i` of the MDS shard `entry` lies when it is
// far from its offsets entry, restated: i average samples past the
// offsets table, one average sample long, with 64 KiB on either side
// (from the offsets entry's end at the lowest, to the file's end at most).
std::string GuessRead(const ShardEntry& entry, uint32_t i) {
  const uint64_t table_end = 4 + 4 * (uint64_t{entry.samples} + 1);
  const uint64_t average = (entry.raw_data.bytes - table_end) / entry.samples;
  const uint64_t likely = table_end + uint64_t{i} * average;
  const uint64_t begin = std::max<uint64_t>(12 + 4 * uint64_t{i}, likely - (64 << 10));
  return Range(begin, std::min<uint64_t>(entry.raw_data.bytes, likely + average + (64 << 10)));
}

// The requests' strings sorted: requests made at once complete (and are
// logged) in either order.
std::vector<std::string> Sorted(std::vector<std::string> requests) {
  std::sort(requests.begin(), requests.end());
  return requests;
}

// The first sample of a shard of 20,000 samples (a ~80 KB offsets table,
// the samples ~180 B): one read from its offsets entry through the
// table's end, one average sample and 64 KiB. A sample past 1 MiB of it
// takes two reads made at once, its offsets entry and its guessed span
// (samples of nearly one size: the guess holds it), and no third.
TEST(PeekMdsSample, TheHeadOfALargeShardInOneReadAFarSampleInTwoAtOnce) {
  ScratchDir scratch;
  auto nginx = NginxServer::Start(JoinPath(scratch.path(), "nginx"));
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  const std::string data = JoinPath(nginx->www(), "big");
  testing::WriteSyntheticMds(data, 20000, 16 << 20);
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  ASSERT_EQ((*reader)->index().shards.size(), 1u);
  const ShardEntry entry = (*reader)->index().shards[0];
  const std::string file = entry.raw_data.basename;
  const uint64_t table_end = 4 + 4 * 20001;
  const uint64_t average = (entry.raw_data.bytes - table_end) / 20000;
  ASSERT_GT(entry.raw_data.bytes, uint64_t{3} << 20);

  EXPECT_EQ(PeekAndCheck(*nginx, data, "big", 0, 0, 1),
            (std::vector<std::string>{"206 " + Range(4, table_end + average + (64 << 10))}));

  const uint32_t far = 15000;
  auto [begin, end] = SampleBounds(JoinPath(data, file), far);
  ASSERT_GT(begin, uint64_t{2} << 20);
  const uint64_t likely = table_end + far * average;
  EXPECT_EQ(GuessRead(entry, far), Range(likely - (64 << 10), likely + average + (64 << 10)));
  EXPECT_EQ(Sorted(PeekAndCheck(*nginx, data, "big", 0, far, 3)),
            Sorted({"206 " + Range(4, table_end + average + (64 << 10)),
                    "206 " + Range(4 + 4 * far, 12 + 4 * far), "206 " + GuessRead(entry, far)}));
}

// A far sample the guess misses by more than its 64 KiB on either side
// (1,000 samples of 10 bytes, then 1,000 of 2,000: the average puts sample
// 1,500 ~0.5 MB past where it is): its offsets entry and the guess at
// once, then its bytes.
TEST(PeekMdsSample, AFarSampleTheGuessMissesTakesAThirdRead) {
  ScratchDir scratch;
  auto nginx = NginxServer::Start(JoinPath(scratch.path(), "nginx"));
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  std::vector<std::string> samples;
  for (int i = 0; i < 2000; ++i) {
    std::string bytes(i < 1000 ? 10 : 2000, '\0');
    for (size_t k = 0; k < bytes.size(); ++k) bytes[k] = static_cast<char>((i * 31 + k) & 0xff);
    samples.push_back(std::move(bytes));
  }
  const std::string data = WriteBytesMds(*nginx, "uneven", samples);
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const ShardEntry entry = (*reader)->index().shards[0];
  const uint32_t far = 1500;
  auto [begin, end] = SampleBounds(JoinPath(data, entry.raw_data.basename), far);
  ASSERT_EQ(end - begin, 2000u + 4);  // its size header, then the bytes
  ASSERT_EQ(FirstRead(entry, far), Range(4 + 4 * far, 12 + 4 * far));  // far from its bounds
  const std::string guess = GuessRead(entry, far);
  const uint64_t guess_begin = std::stoull(guess.substr(6));
  ASSERT_GT(guess_begin, end);  // the guess lies past the sample
  std::vector<std::string> requests = PeekAndCheck(*nginx, data, "uneven", 0, far, 3);
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(Sorted({requests[0], requests[1]}),
            Sorted({"206 " + Range(4 + 4 * far, 12 + 4 * far), "206 " + guess}));
  EXPECT_EQ(requests[2], "206 " + Range(begin, end));
}

// A peek of sample `i` of the one shard of WriteSyntheticMds(`samples`)
// through a proxy whose every connection stalls (read_timeout 20 s),
// stopped once `connections` are open (waiting 10 s at most) and `settle`
// after: its result, the connections it opened, and how long it took.
struct StalledPeek {
  Result<PeekedSample> peeked;
  int connections;
  std::chrono::steady_clock::duration took;
};
StalledPeek PeekThroughStall(int samples, uint32_t i, int connections,
                             std::chrono::milliseconds settle) {
  ScratchDir data;
  testing::WriteSyntheticMds(data.path(), samples, 16 << 20);
  auto reader = DatasetReader::Open(data.path());
  if (!reader.ok()) return {reader.status(), 0, {}};
  const ShardEntry entry = (*reader)->index().shards[0];
  testing::FaultProxy stall(/*upstream_port=*/1);  // never reached
  stall.Schedule(std::vector<testing::Fault>(3, testing::Fault::Stall()));
  StoreOptions options;
  options.download_retry = 0;
  options.read_timeout_s = 20;
  auto remote = OpenRemoteSource("http://127.0.0.1:" + std::to_string(stall.port()), options);
  if (!remote.ok()) return {remote.status(), 0, {}};
  std::stop_source stop;
  std::thread stopper([&] {
    for (int k = 0; k < 2000 && stall.connections() < connections; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    std::this_thread::sleep_for(settle);
    stop.request_stop();
  });
  const auto start = std::chrono::steady_clock::now();
  Result<PeekedSample> peeked =
      PeekSampleFromRemote(**remote, entry.raw_data.basename, entry, i, stop.get_token());
  const auto took = std::chrono::steady_clock::now() - start;
  stopper.join();
  return {std::move(peeked), stall.connections(), took};
}

// The guess is asked for while the offsets entry's answer is awaited, on a
// connection of its own: through a proxy that never answers, the peek of
// a far sample opens a second connection before any answer, and a stop
// ends both.
TEST(PeekMdsSample, TheGuessIsAskedForWhileTheOffsetsEntryIsAwaited) {
  StalledPeek got = PeekThroughStall(20000, 15000, 2, std::chrono::milliseconds(0));
  ASSERT_FALSE(got.peeked.ok());
  EXPECT_EQ(got.peeked.status().code(), StatusCode::kCancelled) << got.peeked.status().ToString();
  EXPECT_EQ(got.connections, 2);
}

// A first sample larger than the guess reaches (its shard's average, plus
// 64 KiB): the first read ends inside it, and a second read takes the
// sample whole.
TEST(PeekMdsSample, AFirstSampleLongerThanTheFirstReadTakesASecond) {
  ScratchDir scratch;
  auto nginx = NginxServer::Start(JoinPath(scratch.path(), "nginx"));
  ASSERT_NE(nginx, nullptr) << "nginx did not start";
  std::vector<std::string> samples(100, std::string(10, 'y'));
  samples[0].assign(200 << 10, 'x');
  for (size_t k = 0; k < samples[0].size(); ++k) samples[0][k] = static_cast<char>(k * 13 & 0xff);
  const std::string data = WriteBytesMds(*nginx, "long", samples);
  auto reader = DatasetReader::Open(data);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const ShardEntry entry = (*reader)->index().shards[0];
  auto [begin, end] = SampleBounds(JoinPath(data, entry.raw_data.basename), 0);
  ASSERT_EQ(end - begin, (200u << 10) + 4);  // its size header, then the bytes
  const uint64_t table_end = 4 + 4 * 101;
  const uint64_t first_end = table_end + (entry.raw_data.bytes - table_end) / 100 + (64 << 10);
  ASSERT_LT(first_end, end);
  EXPECT_EQ(PeekAndCheck(*nginx, data, "long", 0, 0, 2),
            (std::vector<std::string>{"206 " + Range(4, first_end), "206 " + Range(begin, end)}));
}

TEST(PeekMdsSample, OffsetsThatDoNotFitTheShardAreCorrupt) {
  ScratchDir data;
  testing::WriteSyntheticMds(data.path(), 50, 1 << 20);
  auto reader = DatasetReader::Open(data.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const ShardEntry entry = (*reader)->index().shards[0];
  const std::string path = JoinPath(data.path(), entry.raw_data.basename);
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  // Sample 3's end (offsets[4], little-endian) before its start.
  const uint32_t bad = 10;
  for (int b = 0; b < 4; ++b) (*bytes)[4 + 4 * 4 + b] = static_cast<char>((bad >> (8 * b)) & 0xff);
  ASSERT_TRUE(WriteFileAtomic(path, *bytes).ok());
  auto remote = OpenRemoteSource(data.path());
  ASSERT_TRUE(remote.ok());
  Result<PeekedSample> peeked = PeekSampleFromRemote(**remote, entry.raw_data.basename, entry, 3);
  ASSERT_FALSE(peeked.ok());
  EXPECT_EQ(peeked.status().code(), StatusCode::kCorrupt) << peeked.status().ToString();
  EXPECT_NE(peeked.status().message().find(entry.raw_data.basename + " sample 3: offsets "),
            std::string::npos)
      << peeked.status().ToString();
}

// Forwards to `inner`, records each GetRangeOnly as "offset+length", and
// requests a stop on *cancel_after_first once the first one is done (as if
// the cursor were destroyed just as the peek's first request ended).
class CancellingRemote : public RemoteSource {
 public:
  CancellingRemote(std::unique_ptr<RemoteSource> inner, std::stop_source* cancel_after_first)
      : inner_(std::move(inner)), cancel_(cancel_after_first) {}
  Result<uint64_t> Fetch(const std::string& key, const std::string& path,
                         std::optional<uint64_t> expected_size) override {
    return inner_->Fetch(key, path, expected_size);
  }
  Result<std::string> GetRangeOnly(const std::string& key, uint64_t offset, uint64_t length,
                                   std::stop_token stop) override {
    ranges.push_back(std::to_string(offset) + "+" + std::to_string(length));
    auto got = inner_->GetRangeOnly(key, offset, length, std::move(stop));
    cancel_->request_stop();
    return got;
  }
  Result<std::vector<ObjectInfo>> List(const std::string& prefix) override {
    return inner_->List(prefix);
  }
  Result<std::vector<uint64_t>> Sizes(const std::vector<std::string>& keys) override {
    return inner_->Sizes(keys);
  }
  std::string Describe() const override { return inner_->Describe(); }

  std::vector<std::string> ranges;

 private:
  std::unique_ptr<RemoteSource> inner_;
  std::stop_source* cancel_;
};

// Cancelled during its first request, a peek makes no second one (sample
// 15,000 of 20,000: further than the first read reaches).
TEST(PeekMdsSample, CancelledDuringItsFirstRequestItMakesNoSecond) {
  ScratchDir data;
  testing::WriteSyntheticMds(data.path(), 20000, 16 << 20);
  auto reader = DatasetReader::Open(data.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  const ShardEntry entry = (*reader)->index().shards[0];
  auto inner = OpenRemoteSource(data.path());
  ASSERT_TRUE(inner.ok());
  std::stop_source cancel;
  CancellingRemote remote(std::move(*inner), &cancel);
  Result<PeekedSample> peeked =
      PeekSampleFromRemote(remote, entry.raw_data.basename, entry, 15000, cancel.get_token());
  ASSERT_FALSE(peeked.ok());
  EXPECT_EQ(peeked.status().code(), StatusCode::kCancelled) << peeked.status().ToString();
  EXPECT_NE(peeked.status().message().find(entry.raw_data.basename +
                                           " sample 15000: peek cancelled before reading its bytes"),
            std::string::npos)
      << peeked.status().ToString();
  EXPECT_EQ(remote.ranges, std::vector<std::string>{std::to_string(4 + 4 * 15000) + "+8"});

  // Cancelled before it starts, it makes none.
  remote.ranges.clear();
  peeked = PeekSampleFromRemote(remote, entry.raw_data.basename, entry, 15000, cancel.get_token());
  ASSERT_FALSE(peeked.ok());
  EXPECT_EQ(peeked.status().code(), StatusCode::kCancelled);
  EXPECT_EQ(remote.ranges, std::vector<std::string>{});
}

// A stop ends a peek's request that its server never answers (within a
// read_timeout of 20 s): kCancelled at once.
TEST(PeekMdsSample, AStopEndsARequestItsServerNeverAnswers) {
  StalledPeek got = PeekThroughStall(50, 3, 1, std::chrono::milliseconds(50));
  ASSERT_FALSE(got.peeked.ok());
  EXPECT_EQ(got.peeked.status().code(), StatusCode::kCancelled) << got.peeked.status().ToString();
  EXPECT_EQ(got.connections, 1);
  EXPECT_LT(got.took, std::chrono::seconds(10));  // not the read timeout's 20 s
}

// Only an uncompressed shard of a format whose descriptor locates a sample
// in the data file is peeked; anything else is refused before any request.
TEST(PeekMdsSample, OnlyAShardWhoseFormatLocatesASampleIsPeeked) {
  ShardEntry mds;
  mds.format = "mds";
  mds.samples = 10;
  mds.raw_data = {"shard.00000.mds", 1000, {}};
  EXPECT_TRUE(SamplePeekable(mds));
  ShardEntry zstd = mds;
  zstd.compression = "zstd";
  EXPECT_FALSE(SamplePeekable(zstd));
  ShardEntry json = mds;
  json.format = "json";
  json.raw_data.basename = "shard.00000.json";
  EXPECT_FALSE(SamplePeekable(json));
  ShardEntry unknown = mds;
  unknown.format = "parquet";
  EXPECT_FALSE(SamplePeekable(unknown));

  ScratchDir data;
  std::stop_source never;
  auto folder = OpenRemoteSource(data.path());
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  CancellingRemote remote(std::move(*folder), &never);
  Result<PeekedSample> peeked = PeekSampleFromRemote(remote, "shard.00000.json", json, 3);
  EXPECT_EQ(peeked.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(peeked.status().message(),
            data.path() + "/shard.00000.json sample 3: cannot be peeked: only a sample of an "
            "uncompressed shard whose format locates it in the data file can (this is a json "
            "shard, 10 samples)");
  peeked = PeekSampleFromRemote(remote, "shard.00000.mds", zstd, 3);
  EXPECT_EQ(peeked.status().message(),
            data.path() + "/shard.00000.mds sample 3: cannot be peeked: only a sample of an "
            "uncompressed shard whose format locates it in the data file can (this is a mds "
            "shard, compressed with zstd, 10 samples)");
  peeked = PeekSampleFromRemote(remote, "shard.00000.mds", mds, 10);  // past the last sample
  EXPECT_EQ(peeked.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(remote.ranges, std::vector<std::string>{});
}

// A shuffled dataset served by nginx from <scratch>/nginx/www/ds, the
// reference bytes of every sample, and the plan of worker 0 of epoch 0.
class ColdPass : public ::testing::Test {
 protected:
  // `samples` in shards of `shard_bytes` (at most; the default: about 160
  // KB a shard).
  void Write(std::optional<std::string> compression = std::nullopt,
             std::vector<std::string> hashes = {}, bool shuffle = true, int samples = 3000,
             uint64_t shard_bytes = 160000) {
    data_ = JoinPath(JoinPath(JoinPath(scratch_.path(), "nginx"), "www"), "ds");
    testing::WriteSyntheticMds(data_, samples, shard_bytes, std::move(compression),
                               std::move(hashes));
    auto reader = DatasetReader::Open(data_);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    reader_ = std::move(*reader);
    ASSERT_GE(reader_->index().shards.size(), 3u);
    options_ = testing::OneStreamOptions(data_, cache_.path());
    options_.plan.shuffle = shuffle;
    options_.plan.shuffle_seed = 11;
    auto ds = StreamingDataset::Open(options_);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    auto ids = (*ds)->WorkerIds(0, 0, 0, 1);
    ASSERT_TRUE(ids.ok()) << ids.status().ToString();
    plan_ = *ids;
    ASSERT_EQ(plan_.size(), static_cast<size_t>(samples));
    for (int64_t id : plan_) {
      SampleFields f;
      ASSERT_TRUE(reader_->Read(static_cast<uint64_t>(id), &f).ok());
      expected_.push_back(testing::FieldBytes(f));
    }
    auto first = reader_->Locate(static_cast<uint64_t>(plan_[0]));
    ASSERT_TRUE(first.ok());
    first_index_ = first->index_in_shard;
    first_shard_ = first->shard;
    const ShardEntry& e = reader_->index().shards[first->shard];
    first_file_ = (e.zip_data ? *e.zip_data : e.raw_data).basename;
  }

  // nginx with `server_config`, the dataset read from it.
  void Serve(const std::string& server_config) {
    nginx_ = NginxServer::Start(JoinPath(scratch_.path(), "nginx"), nullptr, server_config);
    ASSERT_NE(nginx_, nullptr) << "nginx did not start";
    options_.streams[0].remote = "http://127.0.0.1:" + std::to_string(nginx_->http_port()) + "/ds";
  }

  // Reads the epoch: checks the first batch and the whole epoch against the
  // plan and the reference bytes; returns the first batch's size.
  size_t ReadAndCheckEpoch() {
    auto ds = StreamingDataset::Open(options_);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    if (!ds.ok()) return 0;
    EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
    std::vector<int64_t> ids(64), got;
    std::vector<SampleFields> fields;
    std::vector<std::string> bytes;
    size_t first = 0;
    while (true) {
      auto n = (*ds)->NextBatch(64, ids.data(), &fields);
      EXPECT_TRUE(n.ok()) << n.status().ToString();
      if (!n.ok() || *n == 0) break;
      if (got.empty()) {
        first = *n;
        first_batch_log_ = RequestsFor(*nginx_, "/ds/" + first_file_, first_batch_log_wanted_);
      }
      for (size_t k = 0; k < *n; ++k) {
        got.push_back(ids[k]);
        bytes.push_back(testing::FieldBytes(fields[k]));
      }
    }
    EXPECT_EQ(got, plan_);
    EXPECT_EQ(bytes, expected_);
    return first;
  }

  // The requests for the first sample's file that do not start at byte 0
  // (the whole download's first part does).
  // Waits up to a second for `at_least` of them, as RequestsFor does.
  std::vector<std::string> PeekRequests(size_t at_least = 0) const {
    std::vector<std::string> out;
    for (int tries = 0; tries < 200; ++tries) {
      out.clear();
      for (const std::string& r : RequestsFor(*nginx_, "/ds/" + first_file_)) {
        if (r.find(" bytes=0-") == std::string::npos) out.push_back(r);
      }
      if (out.size() >= at_least) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return out;
  }

  // Rewrites the remote's shard.00000.mds (the first sample's shard, read
  // in order: sample 0's last byte changed and the file 16 bytes longer,
  // its offsets table as before), serves the dataset and reads a pass in
  // order: it must end with the peek's error, the one "the remote changed"
  // error naming the shard's URL, the size nginx states and the index's.
  void ExpectAPassEndedByThePeeksChangedError() {
    const std::string path = JoinPath(data_, "shard.00000.mds");
    auto shard = ReadFile(path);
    ASSERT_TRUE(shard.ok()) << shard.status().ToString();
    std::string changed = *shard;
    uint32_t sample1_at = 0;  // offsets[1]: sample 0's end
    std::memcpy(&sample1_at, changed.data() + 8, 4);
    ASSERT_LT(sample1_at, changed.size());
    changed[sample1_at - 1] = static_cast<char>(changed[sample1_at - 1] ^ 0x5a);
    changed += std::string(16, 'x');
    ASSERT_TRUE(WriteFileAtomic(path, changed).ok());
    ASSERT_NO_FATAL_FAILURE(Serve(""));
    Status ended = ReadInOrderUntilItEnds();
    const std::string url = options_.streams[0].remote + "/shard.00000.mds";
    EXPECT_EQ(ended.message(), "peeking global shard 0 sample 0, the pass's first: " + url +
                                   ": GET " + url + ": the object is " +
                                   std::to_string(changed.size()) + " bytes, index.json says " +
                                   std::to_string(shard->size()) +
                                   " (the remote changed since it was indexed?)");
  }

  // Reads a pass in order (batches of 64) until it ends, checking that no
  // sample of shard 0 is handed out; returns its failure (kCorrupt
  // expected), checked to be the next call's too.
  Status ReadInOrderUntilItEnds() {
    auto ds = StreamingDataset::Open(options_);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    if (!ds.ok()) return ds.status();
    EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
    std::vector<int64_t> ids(64);
    std::vector<SampleFields> fields;
    size_t served = 0;
    for (;;) {
      auto n = (*ds)->NextBatch(64, ids.data(), &fields);
      if (!n.ok()) {
        EXPECT_EQ(n.status().code(), StatusCode::kCorrupt) << n.status().ToString();
        auto again = (*ds)->NextBatch(64, ids.data(), &fields);
        EXPECT_FALSE(again.ok());
        EXPECT_EQ(again.status().message(), n.status().message());
        EXPECT_EQ(served, 0u);
        return n.status();
      }
      if (*n == 0) break;
      for (size_t k = 0; k < *n; ++k, ++served) {
        // Shard 0's samples can only come from the rewritten file.
        EXPECT_NE(reader_->Locate(static_cast<uint64_t>(ids[k]))->shard, 0u)
            << "sample " << ids[k] << " of the changed shard was served";
      }
    }
    ADD_FAILURE() << "the pass ended without an error after " << served << " samples";
    return Status::Ok();
  }

  ScratchDir scratch_, cache_;
  std::string data_;
  std::unique_ptr<DatasetReader> reader_;
  DatasetOptions options_;
  std::vector<int64_t> plan_;
  std::vector<std::string> expected_;
  uint32_t first_index_ = 0;
  size_t first_shard_ = 0;
  const ShardEntry& FirstEntry() const { return reader_->index().shards[first_shard_]; }
  std::string first_file_;  // the stored file of the first sample's shard
  std::unique_ptr<NginxServer> nginx_;
  std::vector<std::string> first_batch_log_;  // its requests when the first batch came
  size_t first_batch_log_wanted_ = 0;          // how many of them to wait for
};

// The first sample's shard comes slowly (nginx sends it at 16 KB/s, the
// peek's range at 64 KB/s: the peek reads nearly the whole ~160 KB shard,
// so at one rate the two would race): the first batch is that one sample,
// from one ranged read of its offsets entry and the bytes after it (the
// shard's sample lies within its reach), before the shard is there; the
// epoch then reads the shard and is exact.
TEST_F(ColdPass, FirstSampleComesFromOneRangedReadBeforeItsShard) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/" + first_file_ +
                                " { limit_rate 64k; if ($http_range ~ \"^bytes=0-\") "
                                "{ limit_rate 16k; } }"));
  const std::vector<std::string> peeks{"206 " + FirstRead(FirstEntry(), first_index_)};

  first_batch_log_wanted_ = peeks.size();
  EXPECT_EQ(ReadAndCheckEpoch(), 1u);
  EXPECT_EQ(first_batch_log_, peeks);  // the shard's own download had not finished
  std::vector<std::string> all = RequestsFor(*nginx_, "/ds/" + first_file_, 2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], peeks[0]);
  EXPECT_EQ(all[1].rfind("206 bytes=0-", 0), 0u) << all[1];
}

TEST_F(ColdPass, CompressedShardsAreNotPeeked) {
  ASSERT_NO_FATAL_FAILURE(Write("zstd"));
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  ReadAndCheckEpoch();
  EXPECT_EQ(PeekRequests(), std::vector<std::string>{});
  EXPECT_EQ(RequestsFor(*nginx_, "/ds/" + first_file_, 1).size(), 1u);
}

// Peeked bytes could not be checked before the whole shard is there.
TEST_F(ColdPass, ShardsCheckedByHashAreNotPeeked) {
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {"sha1"}));
  options_.streams[0].validate_hash = "sha1";
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/" + first_file_ + " { limit_rate 100k; }"));
  ReadAndCheckEpoch();
  EXPECT_EQ(PeekRequests(), std::vector<std::string>{});
}

// Every ranged request past byte 0 fails (503, not retried): the peek gives
// up after its first request and the shard serves the first sample.
TEST_F(ColdPass, APeekThatFailsFallsBackToTheShard) {
  ASSERT_NO_FATAL_FAILURE(Write());
  options_.streams[0].download_retry = 0;
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/" + first_file_ +
                                " { limit_rate 100k; if ($http_range ~ \"^bytes=[1-9]\") "
                                "{ return 503; } }"));
  ReadAndCheckEpoch();
  EXPECT_EQ(PeekRequests(1),
            (std::vector<std::string>{"503 " + FirstRead(FirstEntry(), first_index_)}));
}

// A server that ignores Range answers the peek's first request with the
// whole shard (200): the peek reads none of it and gives up (no second
// request), and the shard's own download serves the exact epoch.
TEST_F(ColdPass, APeekGivesUpOnAServerIgnoringRange) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Serve("location /ds/ { max_ranges 0; }"));
  ReadAndCheckEpoch();
  std::vector<std::string> all = RequestsFor(*nginx_, "/ds/" + first_file_);
  for (const std::string& r : all) EXPECT_EQ(r.rfind("200 ", 0), 0u) << r;
  // The peek's offsets request (unless the shard was there before the peek
  // began) and the download's.
  EXPECT_LE(all.size(), 2u);
  EXPECT_LE(PeekRequests().size(), 1u);
}

// A resumed pass (IterBegin at sample 1500 of the epoch, as after
// load_state_dict) peeks its own first sample when that sample's shard is
// not in the cache: the first batch is that one sample, from one read of
// its offsets entry and the bytes after it, before its shard; the rest of
// the resumed pass is exact.
TEST_F(ColdPass, AResumedPassPeeksItsFirstSample) {
  ASSERT_NO_FATAL_FAILURE(Write());
  auto planner = StreamingDataset::Open(options_);
  ASSERT_TRUE(planner.ok()) << planner.status().ToString();
  auto resumed = (*planner)->WorkerIds(0, 1500, 0, 1);
  ASSERT_TRUE(resumed.ok()) << resumed.status().ToString();
  ASSERT_EQ(resumed->size(), 1500u);
  EXPECT_EQ(*resumed, std::vector<int64_t>(plan_.begin() + 1500, plan_.end()));
  auto first = reader_->Locate(static_cast<uint64_t>((*resumed)[0]));
  ASSERT_TRUE(first.ok());
  first_file_ = reader_->index().shards[first->shard].raw_data.basename;
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/" + first_file_ + " { limit_rate 64k; }"));

  auto ds = StreamingDataset::Open(options_);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 1500, 0, 1).ok());
  std::vector<int64_t> ids(64), got;
  std::vector<SampleFields> fields;
  std::vector<std::string> bytes;
  auto n = (*ds)->NextBatch(64, ids.data(), &fields);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 1u);
  EXPECT_EQ(PeekRequests(1),
            (std::vector<std::string>{"206 " + FirstRead(reader_->index().shards[first->shard],
                                                         first->index_in_shard)}));
  do {
    for (size_t k = 0; k < *n; ++k) {
      got.push_back(ids[k]);
      bytes.push_back(testing::FieldBytes(fields[k]));
    }
    n = (*ds)->NextBatch(64, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
  } while (*n > 0);
  EXPECT_EQ(got, *resumed);
  EXPECT_EQ(bytes, std::vector<std::string>(expected_.begin() + 1500, expected_.end()));
}

// A warm index, a changed shard: the node's cache holds index.json (a
// restart reads it as it is, as Mosaic does: no request for it) and the
// remote's shard.00000.mds was rewritten since: sample 0's last byte
// differs and the file is 16 bytes longer, its offsets table as before.
// The pass reads in order, so its first sample is the peek's. No sample
// of the rewritten file may be handed out: the index's size does not
// confirm it. The pass ends at once with the peek's error (the one "the
// remote changed" error, naming the shard's URL, the size nginx states
// and the index's), and every later call returns it too: the shard is
// not downloaded for it (one download, if the peek's head start ran out
// first, which fails the same way and is not retried). Before the peek's
// reads named the index's size (issue 41), sample 0 of the rewritten file
// was handed out; before the peek's error ended the pass, the shard was
// downloaded 1 + download_retry = 3 times, each failing alike.
TEST_F(ColdPass, AWarmIndexWhoseShardChangedServesNoSampleOfIt) {
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {}, /*shuffle=*/false));
  ASSERT_TRUE(FileExists(JoinPath(options_.streams[0].local, "index.json")));
  ASSERT_EQ(first_file_, "shard.00000.mds");
  ASSERT_EQ(first_index_, 0u);
  ASSERT_EQ(options_.streams[0].download_retry, 2);
  ASSERT_NO_FATAL_FAILURE(ExpectAPassEndedByThePeeksChangedError());
  // Only the peek's read, and at most one download.
  const std::string peek = "206 " + FirstRead(FirstEntry(), 0);
  std::vector<std::string> others;
  for (const std::string& r : RequestsFor(*nginx_, "/ds/" + first_file_)) {
    if (r != peek) others.push_back(r);
  }
  EXPECT_LE(others.size(), 1u) << ::testing::PrintToString(others);
}

// The peek's ranged requests go to a server that never answers (nginx
// passes them to a stalling proxy; read_timeout 20 s), the shard's own
// download does not: the shard serves the first batch and the peek, still
// waiting, is the loser. A new pass, then (with a cold cache again) the
// dataset's close, end its request instead of waiting for the server; the
// new pass reads the exact epoch.
TEST_F(ColdPass, ANewPassOrACloseDoesNotWaitForAStalledPeek) {
  ASSERT_NO_FATAL_FAILURE(Write());
  testing::FaultProxy stall(/*upstream_port=*/1);  // never reached: every connection stalls
  stall.Schedule(std::vector<testing::Fault>(4, testing::Fault::Stall()));
  // proxy_pass through a variable: nginx keeps no failure count for the
  // stall between requests (a stalled request it gave up on must not make
  // it refuse the next one without connecting).
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/" + first_file_ +
                                " { limit_rate 1m; set $stall http://127.0.0.1:" +
                                std::to_string(stall.port()) +
                                "; if ($http_range ~ \"^bytes=[1-9]\") { proxy_pass $stall; } }"));
  options_.streams[0].download_retry = 0;
  options_.streams[0].read_timeout_s = 20;

  // Opens the dataset (cache at `local`), reads the first batch (from the
  // shard) and waits until the peek's request has reached the stall.
  auto start_with_stalled_peek = [&](const std::string& local, int stalls)
      -> std::unique_ptr<StreamingDataset> {
    options_.streams[0].local = local;
    auto ds = StreamingDataset::Open(options_);
    EXPECT_TRUE(ds.ok()) << ds.status().ToString();
    if (!ds.ok()) return nullptr;
    EXPECT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
    std::vector<int64_t> ids(64);
    std::vector<SampleFields> fields;
    auto n = (*ds)->NextBatch(64, ids.data(), &fields);
    EXPECT_TRUE(n.ok()) << n.status().ToString();
    if (!n.ok() || *n == 0) return nullptr;
    EXPECT_EQ(ids[0], plan_[0]);
    EXPECT_EQ(testing::FieldBytes(fields[0]), expected_[0]);
    for (int i = 0; i < 2000 && stall.connections() < stalls; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    EXPECT_EQ(stall.connections(), stalls) << nginx_->AccessLog();
    return std::move(*ds);
  };

  auto ds = start_with_stalled_peek(cache_.path(), 1);
  ASSERT_NE(ds, nullptr);
  auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE(ds->IterBegin(0, 0, 0, 1).ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));  // not 20 s
  std::vector<int64_t> ids(64), got;
  std::vector<SampleFields> fields;
  std::vector<std::string> bytes;
  while (true) {
    auto n = ds->NextBatch(64, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    for (size_t k = 0; k < *n; ++k) {
      got.push_back(ids[k]);
      bytes.push_back(testing::FieldBytes(fields[k]));
    }
  }
  EXPECT_EQ(got, plan_);
  EXPECT_EQ(bytes, expected_);
  ds.reset();

  ScratchDir cold;
  ds = start_with_stalled_peek(cold.path(), 2);
  ASSERT_NE(ds, nullptr);
  start = std::chrono::steady_clock::now();
  ds.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));  // not 20 s
}

// With a second stream of other columns (x: int, y: str, read in place),
// the dataset's columns are (data, id, x, y): the peeked first sample is laid
// out by them as the shard's samples are, x and y absent.
TEST_F(ColdPass, APeekedSampleIsLaidOutByTheDatasetsColumns) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/shard.00000.mds { limit_rate 64k; }"));
  StreamOptions other;
  other.local = std::string(SLUICE_TEST_DATA_DIR) + "/mosaic/mds/single_shard_no_limit";
  options_.streams.push_back(other);
  options_.plan.shuffle = false;  // sample 0 first, from shard 0
  first_file_ = "shard.00000.mds";
  auto ds = StreamingDataset::Open(options_);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  EXPECT_EQ((*ds)->column_names(), (std::vector<std::string>{"data", "id", "x", "y"}));
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::vector<int64_t> ids(64);
  std::vector<SampleFields> fields;
  auto n = (*ds)->NextBatch(64, ids.data(), &fields);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 1u);  // the peeked sample, before its shard
  EXPECT_EQ(PeekRequests(1),
            (std::vector<std::string>{"206 " + FirstRead(reader_->index().shards[0], 0)}));
  SampleFields want;
  ASSERT_TRUE(reader_->Read(0, &want).ok());
  ASSERT_EQ(fields[0].fields.size(), 4u);
  EXPECT_EQ(fields[0].fields[0], want.fields[0]);
  EXPECT_EQ(fields[0].fields[1], "sample-0");
  EXPECT_EQ(fields[0].fields[2].data(), nullptr);
  EXPECT_EQ(fields[0].fields[3].data(), nullptr);
  // The rest of the epoch, in order, laid out alike.
  int64_t next = 1;
  while (true) {
    n = (*ds)->NextBatch(64, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    if (*n == 0) break;
    for (size_t k = 0; k < *n; ++k, ++next) {
      ASSERT_EQ(ids[k], next);
      ASSERT_EQ(fields[k].fields.size(), 4u);
      EXPECT_EQ(fields[k].fields[2].data() == nullptr, next < 3000) << next;
    }
  }
  EXPECT_EQ(next, 3010);
}

// Head first (IterationCursor): a cold pass plans its first sample's id,
// peeks it, and plans the rest meanwhile. Every pass (resumed, of another
// worker, py1e, py1s, in order, two epochs with the next one planned by the
// first's prefetcher, one abandoned after its first sample) reads exactly
// the ids of its whole plan, with their bytes.
TEST_F(ColdPass, HeadFirstPassesReadTheirWholePlansOrder) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  struct HeadFirstPass {
    bool shuffle;
    planner::ShuffleAlgo algo;
    int64_t epoch, sample_in_epoch, worker, num_workers;
  };
  const HeadFirstPass passes[] = {
      {true, planner::ShuffleAlgo::kPy1e, 0, 0, 0, 1},    {true, planner::ShuffleAlgo::kPy1e, 1, 1234, 1, 3},
      {true, planner::ShuffleAlgo::kPy1e, 2, 2990, 0, 2}, {true, planner::ShuffleAlgo::kPy1s, 0, 17, 2, 3},
      {false, planner::ShuffleAlgo::kPy1e, 0, 0, 0, 1},   {false, planner::ShuffleAlgo::kPy1e, 1, 500, 1, 2},
  };
  for (const HeadFirstPass& pass : passes) {
    ScratchDir cold;  // its first shard not in the cache: the first sample is peeked
    DatasetOptions o = options_;
    o.streams[0].local = cold.path();
    o.plan.shuffle = pass.shuffle;
    o.plan.shuffle_algo = pass.algo;
    o.prefetch_next_epoch = true;
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    const std::string where = "pass epoch " + std::to_string(pass.epoch) + " at " +
                              std::to_string(pass.sample_in_epoch) + " worker " + std::to_string(pass.worker) +
                              "/" + std::to_string(pass.num_workers) + (pass.shuffle ? " shuffled" : " in order");
    // Abandoned after its first sample (its rest may still be planning).
    ASSERT_TRUE((*ds)->IterBegin(pass.epoch, pass.sample_in_epoch, pass.worker, pass.num_workers).ok());
    std::vector<int64_t> ids(7);
    std::vector<SampleFields> fields;
    auto n = (*ds)->NextBatch(7, ids.data(), &fields);
    ASSERT_TRUE(n.ok()) << where << ": " << n.status().ToString();
    // Then read whole, and the next epoch after it.
    for (int64_t e : {pass.epoch, pass.epoch + 1}) {
      const int64_t start = e == pass.epoch ? pass.sample_in_epoch : 0;
      auto plan = (*ds)->WorkerIds(e, start, pass.worker, pass.num_workers);
      ASSERT_TRUE(plan.ok()) << plan.status().ToString();
      ASSERT_TRUE((*ds)->IterBegin(e, start, pass.worker, pass.num_workers).ok());
      std::vector<int64_t> got;
      while (true) {
        n = (*ds)->NextBatch(7, ids.data(), &fields);
        ASSERT_TRUE(n.ok()) << where << " epoch " << e << ": " << n.status().ToString();
        if (*n == 0) break;
        for (size_t k = 0; k < *n; ++k) {
          got.push_back(ids[k]);
          SampleFields f;
          ASSERT_TRUE(reader_->Read(static_cast<uint64_t>(ids[k]), &f).ok());
          ASSERT_EQ(testing::FieldBytes(fields[k]), testing::FieldBytes(f)) << where << " id " << ids[k];
        }
      }
      ASSERT_FALSE(got.empty()) << where;
      EXPECT_EQ(got, *plan) << where << " epoch " << e;
    }
  }
}


// Head first, the first sample's shard downloads while the rest of the
// epoch is planned: a hook holds the plan back until nginx has logged the
// shard's whole download (up to 10 s; without the early open nothing would
// download before the plan, and the hook would give up). The epoch is
// still exact, and the shard was downloaded once.
TEST_F(ColdPass, HeadFirstDownloadsTheFirstShardWhileTheRestIsPlanned) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  // The shard's downloads (not the peek's ranged reads, which do not start
  // at byte 0).
  auto downloads = [this] {
    size_t n = 0;
    for (const std::string& r : RequestsFor(*nginx_, "/ds/" + first_file_)) {
      if (r == "200 -" || r.find(" bytes=0-") != std::string::npos) ++n;
    }
    return n;
  };
  std::atomic<int> plans{0};
  std::atomic<bool> downloaded_before_plan{false};
  IterationCursor::SetRestPlanHookForTesting([&] {
    ++plans;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (downloads() == 0 && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    downloaded_before_plan = downloads() > 0;
  });
  struct ClearHeadFirstHook {
    ~ClearHeadFirstHook() { IterationCursor::SetRestPlanHookForTesting(nullptr); }
  } clear;
  ReadAndCheckEpoch();
  EXPECT_EQ(plans.load(), 1);
  EXPECT_TRUE(downloaded_before_plan.load());
  EXPECT_EQ(downloads(), 1u);
}

// The peek goes first, alone: with a head start longer than the test, only
// the peek's end starts the shard's download. nginx (one worker) logs a
// request once it has sent the answer, before it reads the next one, and
// the client asks for the shard only once it has the peek's answer: the
// shard's one download comes after the peek's one request in the log.
// Started together, as before, the 160 KB shard was asked for while the
// peek's request was. The epoch is exact.
TEST_F(ColdPass, ThePeekGoesFirstAndTheShardAndThePlanFollowIt) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  options_.peek_head_start = std::chrono::hours(1);
  const std::vector<std::string> peeks{"206 " + FirstRead(FirstEntry(), first_index_)};
  EXPECT_EQ(ReadAndCheckEpoch(), 1u);
  std::vector<std::string> all = RequestsFor(*nginx_, "/ds/" + first_file_, 2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0], peeks[0]);
  EXPECT_EQ(all[1].rfind("206 bytes=0-", 0), 0u) << all[1];
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// The guessed head of the first shard (GuessedHead): bytes 0 through the
// first sample's offsets entry and 1 MiB past its start.
const std::string kGuessRange = "bytes=0-1048579";

// nginx: index.json at 1 KB/s (seconds for its few KB: the guess beside
// it is answered, and logged, long before it), the first shard's download
// (its first part, from byte 0, not the guess) at 16 KB/s.
std::string SlowIndexConfig(const std::string& first_file) {
  return "location = /ds/index.json { limit_rate 1k; } location = /ds/" + first_file +
         " { if ($http_range !~ \"^" + kGuessRange + "$\") { set $slow 1; } "
         "if ($http_range !~ \"^bytes=0-\") { set $slow 0; } "
         "if ($slow = 1) { limit_rate 16k; } }";
}

// Write() planned the epoch from the folder, which left index.json in the
// cache: removed, so that the pass is cold (its index downloaded).
void Uncache(const DatasetOptions& options) {
  ASSERT_EQ(std::remove(JoinPath(options.streams[0].local, "index.json").c_str()), 0);
}

// The requests nginx logged, "<target> <status> <range>", in the order
// they completed.
std::vector<std::string> AllRequests(const NginxServer& nginx) {
  std::vector<std::string> out;
  for (const auto& [target, answer] : LoggedRequests(nginx)) out.push_back(target + " " + answer);
  return out;
}

// A cold pass in order: its first shard, shard.00000.mds, is read on a
// guess beside index.json, and the first sample comes from those bytes:
// one GET of index.json and one ranged GET of the shard's head (answered
// while index.json's answer was still coming: nginx logs it first), no
// peek read of its own; then the shard's download, and the epoch is exact.
TEST_F(ColdPass, InOrderTheFirstSampleComesFromTheFirstShardsHeadReadBesideTheIndex) {
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {}, /*shuffle=*/false));
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  options_.guess_first_shard = true;
  ASSERT_EQ(first_file_, "shard.00000.mds");
  ASSERT_EQ(first_index_, 0u);
  ASSERT_NO_FATAL_FAILURE(Serve(SlowIndexConfig(first_file_)));
  first_batch_log_wanted_ = 1;
  EXPECT_EQ(ReadAndCheckEpoch(), 1u);  // the peek's one sample, before its shard
  EXPECT_EQ(first_batch_log_, std::vector<std::string>{"206 " + kGuessRange});
  std::vector<std::string> all = AllRequests(*nginx_);
  ASSERT_GE(all.size(), 3u);
  EXPECT_EQ(all[0], "/ds/shard.00000.mds 206 " + kGuessRange);
  EXPECT_EQ(all[1], "/ds/index.json 206 bytes=0-8388607");
  std::vector<std::string> shard0 = RequestsFor(*nginx_, "/ds/shard.00000.mds", 2);
  ASSERT_EQ(shard0.size(), 2u);
  EXPECT_EQ(shard0[0], "206 " + kGuessRange);
  EXPECT_EQ(shard0[1].rfind("206 bytes=0-", 0), 0u) << shard0[1];  // the download
  EXPECT_NE(shard0[1], "206 " + kGuessRange);
}

// A DataLoader's parent opens the dataset (the guess read beside its
// index) and reads nothing; the worker it forks reads the first sample
// from the parent's guessed head (GuessedHead's outcome, shared with forked
// children), making no read of its own of shard.00000.mds's head: the
// file's requests are the parent's guess and the worker's one download,
// and the worker's epoch is exact. (A child that could not take the
// parent's bytes would peek: a third request.)
TEST_F(ColdPass, InOrderAForkedReaderTakesTheParentsGuessMultiProcess) {
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {}, /*shuffle=*/false));
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  ASSERT_TRUE(options_.guess_first_shard);  // the default
  ASSERT_EQ(first_file_, "shard.00000.mds");
  ASSERT_EQ(first_index_, 0u);
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  auto ds = StreamingDataset::Open(options_);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  pid_t worker = testing::Fork([&]() -> int {
    if (!(*ds)->IterBegin(0, 0, 0, 1).ok()) return 2;
    std::vector<int64_t> ids(64), got;
    std::vector<SampleFields> fields;
    std::vector<std::string> bytes;
    for (;;) {
      auto n = (*ds)->NextBatch(64, ids.data(), &fields);
      if (!n.ok()) return 3;
      if (*n == 0) break;
      for (size_t k = 0; k < *n; ++k) {
        got.push_back(ids[k]);
        bytes.push_back(testing::FieldBytes(fields[k]));
      }
    }
    return got == plan_ && bytes == expected_ ? 0 : 4;
  });
  ASSERT_GT(worker, 0);
  EXPECT_EQ(testing::WaitExit(worker), 0);
  std::vector<std::string> shard0 = RequestsFor(*nginx_, "/ds/shard.00000.mds", 3);
  std::sort(shard0.begin(), shard0.end(), [](const std::string& a, const std::string& b) {
    return (a == "206 " + kGuessRange) > (b == "206 " + kGuessRange);
  });
  ASSERT_EQ(shard0.size(), 2u) << ::testing::PrintToString(shard0);
  EXPECT_EQ(shard0[0], "206 " + kGuessRange);
  EXPECT_EQ(shard0[1].rfind("206 bytes=0-", 0), 0u) << shard0[1];  // the download
  EXPECT_NE(shard0[1], "206 " + kGuessRange);
}

// A 404 for the guess changes nothing else: the peek reads as without it.
TEST_F(ColdPass, InOrderAGuessAnswered404LeavesThePeekAsBefore) {
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {}, /*shuffle=*/false));
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  options_.guess_first_shard = true;
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/" + first_file_ +
                                " { if ($http_range = \"" + kGuessRange + "\") { return 404; } "
                                "limit_rate 64k; if ($http_range ~ \"^bytes=0-\") "
                                "{ limit_rate 16k; } }"));
  first_batch_log_wanted_ = 2;
  EXPECT_EQ(ReadAndCheckEpoch(), 1u);
  EXPECT_EQ(first_batch_log_, (std::vector<std::string>{
                                  "404 " + kGuessRange, "206 " + FirstRead(FirstEntry(), 0)}));
  std::vector<std::string> shard0 = RequestsFor(*nginx_, "/ds/shard.00000.mds", 3);
  ASSERT_EQ(shard0.size(), 3u);
  EXPECT_EQ(shard0[2].rfind("206 bytes=0-", 0), 0u) << shard0[2];
}

// A compressed first shard (shard.00000.mds.zstd): the guess's name is not
// there (404), and the pass reads exactly as before: no peek, one download.
TEST_F(ColdPass, InOrderACompressedFirstShardIgnoresTheGuess) {
  ASSERT_NO_FATAL_FAILURE(Write("zstd", {}, /*shuffle=*/false));
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  options_.guess_first_shard = true;
  ASSERT_EQ(first_file_, "shard.00000.mds.zstd");
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  ReadAndCheckEpoch();
  // The guess is dropped (its read stopped) once the index names another
  // file: answered or not by then.
  std::vector<std::string> guess = RequestsFor(*nginx_, "/ds/shard.00000.mds", 1);
  EXPECT_LE(guess.size(), 1u);
  for (const std::string& r : guess) EXPECT_EQ(r, "404 " + kGuessRange);
  EXPECT_EQ(PeekRequests(), std::vector<std::string>{});
  EXPECT_EQ(RequestsFor(*nginx_, "/ds/" + first_file_, 1).size(), 1u);
}

// A first shard named otherwise (first.mds; the guess's name holds other
// bytes, those of a file of another size): the guess is not used, the peek
// reads its own bytes of first.mds, and the epoch is exact.
TEST_F(ColdPass, InOrderAFirstShardNamedOtherwiseIgnoresTheGuess) {
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {}, /*shuffle=*/false));
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  options_.guess_first_shard = true;
  auto index = ReadFile(JoinPath(data_, "index.json"));
  ASSERT_TRUE(index.ok());
  std::string text = *index;
  const size_t at = text.find("\"shard.00000.mds\"");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 17, "\"first.mds\"");
  ASSERT_TRUE(WriteFileAtomic(JoinPath(data_, "index.json"), text).ok());
  ASSERT_EQ(std::rename(JoinPath(data_, "shard.00000.mds").c_str(),
                        JoinPath(data_, "first.mds").c_str()), 0);
  ASSERT_TRUE(WriteFileAtomic(JoinPath(data_, "shard.00000.mds"), std::string(1000, 'x')).ok());
  first_file_ = "first.mds";
  ASSERT_NO_FATAL_FAILURE(Serve("location = /ds/first.mds { limit_rate 64k; "
                                "if ($http_range ~ \"^bytes=0-\") { limit_rate 16k; } }"));
  first_batch_log_wanted_ = 1;
  EXPECT_EQ(ReadAndCheckEpoch(), 1u);
  EXPECT_EQ(first_batch_log_,
            std::vector<std::string>{"206 " + FirstRead(FirstEntry(), 0)});
  std::vector<std::string> guess = RequestsFor(*nginx_, "/ds/shard.00000.mds", 1);
  EXPECT_LE(guess.size(), 1u);
  for (const std::string& r : guess) EXPECT_NE(r.find(kGuessRange), std::string::npos) << r;
}

// A cold pass in order whose first shard was rewritten, 16 bytes longer,
// between the reads of index.json and of the guessed head (here: before
// both, which the pass cannot tell apart: the guess is read beside
// index.json, before the index gives the shard's size). The shard is
// longer than the guess, so the head's bytes alone look like the head of
// any file at least that long; nginx's answer to the guess states the
// rewritten size, which is not the index's: the guess is dropped, the peek
// reads with the index's size and fails, and the pass ends at once with
// that error, no sample of the rewritten file served. Before the guess was
// checked against the size its answer stated, sample 0 came from it.
TEST_F(ColdPass, InOrderAFirstShardRewrittenLongerThanTheGuessIsNotServedFromIt) {
  // About 2.5 MB in shards of at most 1.2 MB: the first is longer than the guess.
  ASSERT_NO_FATAL_FAILURE(Write(std::nullopt, {}, /*shuffle=*/false, 16000, 1200000));
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  options_.guess_first_shard = true;
  ASSERT_EQ(first_file_, "shard.00000.mds");
  ASSERT_EQ(first_index_, 0u);
  ASSERT_GT(FirstEntry().raw_data.bytes, GuessedHeadBytes());
  ASSERT_NO_FATAL_FAILURE(ExpectAPassEndedByThePeeksChangedError());
  // The guess, the peek's own read (its answer refused), and at most one
  // download (if the peek's head start ran out first), not retried.
  std::vector<std::string> shard0 = RequestsFor(*nginx_, "/ds/shard.00000.mds", 2);
  ASSERT_GE(shard0.size(), 2u) << ::testing::PrintToString(shard0);
  EXPECT_LE(shard0.size(), 3u) << ::testing::PrintToString(shard0);
  EXPECT_EQ(shard0[0], "206 " + kGuessRange);
  EXPECT_NE(std::find(shard0.begin(), shard0.end(), "206 " + FirstRead(FirstEntry(), 0)),
            shard0.end())
      << ::testing::PrintToString(shard0);
}

// Whether a guessed head may stand for the index's first shard: only when
// its read's answer stated the object's size and it is the index's (that
// its bytes are all that was asked is the read's own check).
TEST(PeekMdsSample, AGuessAgreesOnlyWithTheSizeItsAnswerStated) {
  ShardEntry mds;
  mds.format = "mds";
  mds.samples = 10;
  mds.raw_data = {"shard.00000.mds", uint64_t{3} << 20, {}};
  ObjectStated stated;
  EXPECT_FALSE(GuessAgrees(mds, stated));  // no size stated
  stated.size = (uint64_t{3} << 20) + 16;
  EXPECT_FALSE(GuessAgrees(mds, stated));  // rewritten to another size
  stated.size = uint64_t{3} << 20;
  EXPECT_TRUE(GuessAgrees(mds, stated));
  ShardEntry zstd = mds;
  zstd.compression = "zstd";
  EXPECT_FALSE(GuessAgrees(zstd, stated));
  ShardEntry small = mds;
  small.raw_data.bytes = 1000;
  ObjectStated whole{1000, ""};
  EXPECT_TRUE(GuessAgrees(small, whole));
  whole.size = 1016;
  EXPECT_FALSE(GuessAgrees(small, whole));
}

// Shuffled, the first sample lies anywhere: nothing is guessed.
TEST_F(ColdPass, ShuffledNothingIsGuessed) {
  ASSERT_NO_FATAL_FAILURE(Write());
  ASSERT_NO_FATAL_FAILURE(Uncache(options_));
  options_.guess_first_shard = true;
  ASSERT_NO_FATAL_FAILURE(Serve(""));
  ReadAndCheckEpoch();
  for (const std::string& r : AllRequests(*nginx_)) {
    EXPECT_EQ(r.find(kGuessRange), std::string::npos) << r;
  }
}

}  // namespace
}  // namespace sluice
