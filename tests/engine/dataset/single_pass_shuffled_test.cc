// A shuffled single pass (py1e, Mosaic's default) over a loopback server
// that logs every GET it answers: with the default single_pass_memory
// every shard is received exactly once, whole, and the samples and their
// order are the cached mode's; with a budget of one shard, the shards let
// go before their last use are read by one ranged GET per later sample,
// each exactly that sample's bytes, and still in the cached mode's order.
// Without holding shards for their later uses, a pass with a window of 8
// samples received each shard again at most of its uses (issue 41).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/dataset/dataset_reader.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/tail_holding_server.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::TailHoldingServer;

// 3,000 samples of 40..240 bytes in shards of about 32 KiB (a dozen or
// more), with each shard's name, bytes and sample bounds (MDS: offsets[i]
// at byte 4 + 4i).
struct Shards {
  ScratchDir remote;
  std::map<std::string, std::string> bytes;  // by "/" + basename
  uint64_t largest = 0;
};

void MakeShards(Shards* s) {
  testing::WriteSyntheticMds(s->remote.path(), 3000, uint64_t{32} << 10);
  auto reader = DatasetReader::Open(s->remote.path());
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  for (const ShardEntry& e : (*reader)->index().shards) {
    auto bytes = ReadFile(JoinPath(s->remote.path(), e.raw_data.basename));
    ASSERT_TRUE(bytes.ok());
    s->largest = std::max<uint64_t>(s->largest, bytes->size());
    s->bytes["/" + e.raw_data.basename] = std::move(*bytes);
  }
  ASSERT_GE(s->bytes.size(), 10u);
}

uint32_t Offset(const std::string& shard, size_t i) {
  uint32_t v = 0;
  std::memcpy(&v, shard.data() + 4 + 4 * i, 4);
  return v;
}

// A shuffled pass (py1e; batches of one: an 8-sample window) over `url`,
// one request a shard, no peek (one more read of the first sample).
DatasetOptions Shuffled(const Shards& s, const ScratchDir& cache, const std::string& url,
                        bool single_pass) {
  DatasetOptions o = testing::OneStreamOptions(s.remote.path(), cache.path());
  o.streams[0].remote = url;
  o.streams[0].single_pass = single_pass;
  o.streams[0].single_pass_part_size = 0;
  o.streams[0].download_retry = 0;
  o.plan.shuffle = true;
  o.peek_first_sample = false;
  return o;
}

struct Epoch {
  std::vector<int64_t> ids;
  std::vector<std::string> bytes;
};

void ReadAll(const DatasetOptions& o, Epoch* out) {
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  out->ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 16, &out->bytes);
  ASSERT_EQ(out->ids.size(), 3000u);
}

// The cached mode's epoch: the order and bytes a single pass must give.
void CachedEpoch(const Shards& s, Epoch* out) {
  TailHoldingServer server(s.remote.path(), "none", 0);
  ScratchDir cache;
  ASSERT_NO_FATAL_FAILURE(ReadAll(Shuffled(s, cache, server.url(), false), out));
}

// The GETs of shard files, by shard.
std::map<std::string, std::vector<TailHoldingServer::Answered>> ShardGets(
    const Shards& s, const TailHoldingServer& server) {
  std::map<std::string, std::vector<TailHoldingServer::Answered>> by_shard;
  for (TailHoldingServer::Answered& a : server.AnsweredGets()) {
    if (s.bytes.count(a.target)) by_shard[a.target].push_back(std::move(a));
  }
  return by_shard;
}

TEST(SinglePassShuffled, EveryShardIsReceivedOnceInTheCachedModesOrder) {
  Shards s;
  ASSERT_NO_FATAL_FAILURE(MakeShards(&s));
  Epoch cached;
  ASSERT_NO_FATAL_FAILURE(CachedEpoch(s, &cached));
  TailHoldingServer server(s.remote.path(), "none", 0);
  ScratchDir cache;
  Epoch single;
  ASSERT_NO_FATAL_FAILURE(ReadAll(Shuffled(s, cache, server.url(), true), &single));
  EXPECT_EQ(single.ids, cached.ids);
  EXPECT_TRUE(single.bytes == cached.bytes);
  const auto gets = ShardGets(s, server);
  EXPECT_EQ(gets.size(), s.bytes.size());
  for (const auto& [name, shard] : s.bytes) {
    auto it = gets.find(name);
    ASSERT_NE(it, gets.end()) << name;
    ASSERT_EQ(it->second.size(), 1u) << name << " was received " << it->second.size() << " times";
    EXPECT_EQ(it->second[0].first, 0u);
    EXPECT_EQ(it->second[0].bytes, shard.size()) << name;
  }
}

// Samples [first, end) of `shard` whose bytes a ranged GET from byte
// `from` of `bytes` bytes read: whole samples, consecutive; {0, 0} when
// it read anything else.
std::pair<size_t, size_t> SamplesOfGet(const std::string& shard, uint64_t from, uint64_t bytes) {
  uint32_t n = 0;  // the sample count, at byte 0
  std::memcpy(&n, shard.data(), 4);
  size_t first = 0;
  while (first < n && Offset(shard, first) < from) ++first;
  if (first == n || Offset(shard, first) != from) return {0, 0};
  size_t end = first;
  while (end < n && Offset(shard, end + 1) <= from + bytes) ++end;
  if (end == first || Offset(shard, end) != from + bytes) return {0, 0};
  return {first, end};
}

TEST(SinglePassShuffled, ABudgetOfOneShardReadsTheRestBySampleRangedReads) {
  Shards s;
  ASSERT_NO_FATAL_FAILURE(MakeShards(&s));
  Epoch cached;
  ASSERT_NO_FATAL_FAILURE(CachedEpoch(s, &cached));
  TailHoldingServer server(s.remote.path(), "none", 0);
  ScratchDir cache;
  DatasetOptions o = Shuffled(s, cache, server.url(), true);
  o.single_pass_memory = s.largest;
  Epoch single;
  ASSERT_NO_FATAL_FAILURE(ReadAll(o, &single));
  EXPECT_EQ(single.ids, cached.ids);
  EXPECT_TRUE(single.bytes == cached.bytes);
  // Per shard: one whole receive (its first), then each GET is the bytes
  // of a run of whole samples (near samples read ahead together,
  // OpenedShard::FillAhead).
  size_t ranged = 0;
  for (const auto& [name, gets] : ShardGets(s, server)) {
    const std::string& shard = s.bytes.at(name);
    ASSERT_FALSE(gets.empty());
    EXPECT_EQ(gets[0].first, 0u) << name;
    EXPECT_EQ(gets[0].bytes, shard.size()) << name;
    for (size_t k = 1; k < gets.size(); ++k) {
      const auto [first, end] = SamplesOfGet(shard, gets[k].first, gets[k].bytes);
      ASSERT_LT(first, end) << name << ": a GET of bytes " << gets[k].first << "+"
                            << gets[k].bytes << " reads no run of whole samples";
      ranged += end - first;
    }
  }
  EXPECT_EQ(ShardGets(s, server).size(), s.bytes.size());
  EXPECT_GT(ranged, 100u) << "the budget of one shard let none go";
}

// Two streams of very different shard sizes (about 32 KiB and 4 KiB) in
// one shuffled single pass, with room for one large shard or eight small
// ones: the order and bytes are the cached mode's, every shard is
// received whole once (its first GET) and never again, and every later
// GET reads a run of whole samples of it. The shards differed in size
// nowhere else: the synthetic writer makes them all about one size.
TEST(SinglePassShuffled, ShardsOfVeryDifferentSizesInOnePass) {
  ScratchDir remote;
  std::map<std::string, std::string> bytes;  // by "/" + stream + "/" + basename
  uint64_t largest = 0;
  for (const auto& [stream, samples, limit] :
       {std::tuple<std::string, int, uint64_t>{"large", 2000, uint64_t{32} << 10},
        std::tuple<std::string, int, uint64_t>{"small", 1000, uint64_t{4} << 10}}) {
    const std::string dir = JoinPath(remote.path(), stream);
    testing::WriteSyntheticMds(dir, samples, limit);
    auto reader = DatasetReader::Open(dir);
    ASSERT_TRUE(reader.ok()) << reader.status().ToString();
    for (const ShardEntry& e : (*reader)->index().shards) {
      auto b = ReadFile(JoinPath(dir, e.raw_data.basename));
      ASSERT_TRUE(b.ok());
      largest = std::max<uint64_t>(largest, b->size());
      bytes["/" + stream + "/" + e.raw_data.basename] = std::move(*b);
    }
  }
  TailHoldingServer server(remote.path(), "none", 0);
  auto options = [&](const ScratchDir& cache, bool single_pass) {
    DatasetOptions o;
    for (const std::string stream : {"large", "small"}) {
      StreamOptions st;
      st.remote = server.url() + "/" + stream;
      st.local = JoinPath(cache.path(), stream);
      st.single_pass = single_pass;
      st.single_pass_part_size = 0;
      st.download_retry = 0;
      o.streams.push_back(st);
    }
    o.world.world_size = 1;
    o.world.local_world_size = 1;
    o.prefetch_next_epoch = false;
    o.wait_timeout = std::chrono::seconds(10);
    o.plan.shuffle = true;
    o.peek_first_sample = false;
    o.single_pass_memory = largest + largest / 8;
    return o;
  };
  auto read_all = [](const DatasetOptions& o, Epoch* out) {
    auto ds = StreamingDataset::Open(o);
    ASSERT_TRUE(ds.ok()) << ds.status().ToString();
    out->ids = testing::ReadEpoch(**ds, 0, 0, 0, 1, 16, &out->bytes);
    ASSERT_EQ(out->ids.size(), 3000u);
  };
  Epoch cached, single;
  {
    ScratchDir cache;
    ASSERT_NO_FATAL_FAILURE(read_all(options(cache, false), &cached));
  }
  const size_t cached_gets = server.AnsweredGets().size();
  ScratchDir cache;
  ASSERT_NO_FATAL_FAILURE(read_all(options(cache, true), &single));
  EXPECT_EQ(single.ids, cached.ids);
  EXPECT_TRUE(single.bytes == cached.bytes);
  std::map<std::string, std::vector<TailHoldingServer::Answered>> gets;
  std::vector<TailHoldingServer::Answered> answered = server.AnsweredGets();
  for (size_t k = cached_gets; k < answered.size(); ++k) {
    if (bytes.count(answered[k].target)) gets[answered[k].target].push_back(answered[k]);
  }
  EXPECT_EQ(gets.size(), bytes.size());
  size_t ranged = 0;
  for (const auto& [name, shard_gets] : gets) {
    const std::string& shard = bytes.at(name);
    ASSERT_FALSE(shard_gets.empty());
    EXPECT_EQ(shard_gets[0].first, 0u) << name;
    EXPECT_EQ(shard_gets[0].bytes, shard.size()) << name;
    for (size_t k = 1; k < shard_gets.size(); ++k) {
      const auto [first, end] = SamplesOfGet(shard, shard_gets[k].first, shard_gets[k].bytes);
      ASSERT_LT(first, end) << name << ": a GET of bytes " << shard_gets[k].first << "+"
                            << shard_gets[k].bytes << " reads no run of whole samples";
      ranged += end - first;
    }
  }
  EXPECT_GT(ranged, 0u) << "the budget let no shard go";
}

// A shard rewritten one byte longer right after its whole receive (seen
// between two samples): its later samples' ranged reads name the index's
// size, which the server's answer contradicts, so the pass fails naming
// the shard and its sample, and no byte of the rewritten file is served.
// Before the reads named the size, the pass went on reading the new file.
TEST(SinglePassShuffled, ARangedSampleReadOfAShardRewrittenSinceItsReceiveFails) {
  Shards s;
  ASSERT_NO_FATAL_FAILURE(MakeShards(&s));
  TailHoldingServer server(s.remote.path(), "none", 0);
  ScratchDir cache;
  DatasetOptions o = Shuffled(s, cache, server.url(), true);
  o.single_pass_memory = s.largest;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::set<std::string> rewritten;
  int64_t id = 0;
  std::vector<SampleFields> fields;
  Result<size_t> n = size_t{0};
  for (size_t served = 0;; served += *n) {
    for (const TailHoldingServer::Answered& a : server.AnsweredGets()) {
      if (!s.bytes.count(a.target) || a.first != 0 || a.bytes != s.bytes.at(a.target).size() ||
          !rewritten.insert(a.target).second) {
        continue;
      }
      ASSERT_TRUE(WriteFileAtomic(s.remote.path() + a.target, s.bytes.at(a.target) + "x").ok());
    }
    n = (*ds)->NextBatch(1, &id, &fields);
    if (!n.ok() || *n == 0) break;
    ASSERT_LT(served, 3000u);
  }
  ASSERT_FALSE(n.ok()) << "the pass read every sample of the rewritten shards";
  EXPECT_EQ(n.status().code(), StatusCode::kCorrupt) << n.status().ToString();
  const std::string& text = n.status().message();
  EXPECT_NE(text.find("': reading shard "), std::string::npos) << text;
  EXPECT_NE(text.find(" bytes, index.json says "), std::string::npos) << text;
}

// The same over a server that states ETags (as nginx does), each shard
// rewritten at the same size (every byte of its samples changed) right
// after its whole receive: the size checks nothing, so the later samples'
// ranged reads name the ETag the receive saw, and the first of them fails
// with the store's changed-object error naming the shard's URL, the
// answer's ETag and the received one; every sample served before it is
// the cached mode's. Before, they named the size alone and the pass
// served the rewritten file's bytes; samples read ahead together
// (OpenedShard::FillAhead) check each answer's ETag as well.
TEST(SinglePassShuffled, ARangedSampleReadOfAShardRewrittenAtTheSameSizeFailsOnItsETag) {
  Shards s;
  ASSERT_NO_FATAL_FAILURE(MakeShards(&s));
  TailHoldingServer server(s.remote.path(), "none", 0);
  server.StateEtags();
  Epoch cached;
  ASSERT_NO_FATAL_FAILURE(CachedEpoch(s, &cached));
  ScratchDir cache;
  DatasetOptions o = Shuffled(s, cache, server.url(), true);
  o.single_pass_memory = s.largest;
  auto ds = StreamingDataset::Open(o);
  ASSERT_TRUE(ds.ok()) << ds.status().ToString();
  ASSERT_TRUE((*ds)->IterBegin(0, 0, 0, 1).ok());
  std::map<std::string, std::string> rewritten;  // by "/" + basename: the new bytes
  int64_t id = 0;
  std::vector<SampleFields> fields;
  Result<size_t> n = size_t{0};
  for (size_t served = 0;; served += *n) {
    for (const TailHoldingServer::Answered& a : server.AnsweredGets()) {
      if (!s.bytes.count(a.target) || a.first != 0 || a.bytes != s.bytes.at(a.target).size() ||
          rewritten.count(a.target)) {
        continue;
      }
      std::string changed = s.bytes.at(a.target);
      for (size_t k = Offset(changed, 0); k < changed.size(); ++k) {
        changed[k] = static_cast<char>(changed[k] ^ 0xff);
      }
      ASSERT_TRUE(WriteFileAtomic(s.remote.path() + a.target, changed).ok());
      rewritten[a.target] = std::move(changed);
    }
    n = (*ds)->NextBatch(1, &id, &fields);
    if (!n.ok() || *n == 0) break;
    ASSERT_LT(served, 3000u);
    ASSERT_EQ(id, cached.ids[served]);
    ASSERT_EQ(testing::FieldBytes(fields[0]), cached.bytes[served]) << "sample " << id;
  }
  ASSERT_FALSE(n.ok()) << "the pass read every sample of the rewritten shards";
  EXPECT_EQ(n.status().code(), StatusCode::kCorrupt) << n.status().ToString();
  const std::string& text = n.status().message();
  // The shard and sample it names, then the exact text for them.
  const size_t named = text.find("' sample ");
  ASSERT_NE(named, std::string::npos) << text;
  const size_t quote = text.rfind('\'', named - 1);
  const std::string target = "/" + text.substr(quote + 1, named - quote - 1);
  ASSERT_TRUE(rewritten.count(target)) << text;
  const uint32_t i = static_cast<uint32_t>(std::stoul(text.substr(named + 9)));
  const std::string& shard = s.bytes.at(target);
  const uint64_t first = Offset(shard, i), end = Offset(shard, i + 1);
  const std::string url = server.url() + target;
  const size_t at = text.find("single pass '");
  ASSERT_NE(at, std::string::npos) << text;
  const size_t shard_number = std::stoul(text.substr(text.find("reading shard ", at) + 14));
  EXPECT_EQ(text.substr(at),
            "single pass '" + cache.path() + "': reading shard " +
                std::to_string(shard_number) + " '" + target.substr(1) + "' sample " +
                std::to_string(i) + " from " + url + " (bytes " + std::to_string(first) + "-" +
                std::to_string(end - 1) + "): " + url + ": changed since it was listed (ETag " +
                TailHoldingServer::EtagOf(rewritten.at(target)) + ", listed " +
                TailHoldingServer::EtagOf(shard) + "); bytes " + std::to_string(first) + ".." +
                std::to_string(end) + " not read")
      << text;
}

}  // namespace
}  // namespace sluice
