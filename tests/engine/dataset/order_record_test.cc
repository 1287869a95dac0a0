// The order record a state carries ("sluice_order"): its JSON, its digest,
// and CompareOrder's refusals, each message exactly.
#include <gtest/gtest.h>

#include "engine/dataset/order_record.h"
#include "engine/dataset/resume_state.h"
#include "formats/codec/hashes.h"
#include "formats/raw/file_listing.h"

namespace sluice {
namespace {

ShardTable OrderRecordTable(const Index& index) { return ShardTable::FromIndex(index).value(); }

OrderRecord TwoStreams() {
  Index a, b;
  for (int i = 0; i < 3; ++i) {
    ShardEntry e;
    e.format = "mds";
    e.samples = 10 + static_cast<uint64_t>(i);
    e.raw_data.basename = "shard." + std::to_string(i) + ".mds";
    e.raw_data.bytes = 1000 + static_cast<uint64_t>(i);
    a.shards.push_back(e);
  }
  b.shards.push_back(a.shards[0]);
  StreamOptions sa, sb;
  sa.remote = "s3://bucket/a?X-Amz-Signature=secret";
  sa.split = "train";
  sa.weight.proportion = 0.75;
  sb.local = "/data/b";
  sb.weight.choose = 7;
  DatasetOptions o;
  o.plan.batch_size = 4;
  o.plan.shuffle = true;
  OrderRecord r;
  r.streams.push_back(StreamOrderPart(sa, OrderRecordTable(a), IndexFingerprint(OrderRecordTable(a))));
  r.streams.push_back(StreamOrderPart(sb, OrderRecordTable(b), IndexFingerprint(OrderRecordTable(b))));
  r.sampling = SamplingOrderPart(o, 9176, 2);
  r.worlds = {WorldShape{2, 8}, WorldShape{1, 8}};
  r.skips = {SkipRange{0, 64, 128}};
  return r;
}

std::string Text(const OrderRecord& r) { return *DumpPyJson(OrderRecordJson(r), false); }

TEST(OrderRecord, FingerprintIsTheListingFingerprintOfTheShardFiles) {
  Index index;
  ShardEntry e;
  e.raw_data.basename = "x.mds";
  e.raw_data.bytes = 5;
  index.shards.push_back(e);
  e.format = "parquet";
  e.raw_data.basename = "p.parquet";
  e.raw_data.bytes = 9;
  e.row_group = 3;
  index.shards.push_back(e);
  EXPECT_EQ(IndexFingerprint(OrderRecordTable(index)),
            ListingFingerprint({ListedFile{"x.mds", 5}, ListedFile{"p.parquet@3", 9}}));
  Index other = index;
  other.shards[1].raw_data.bytes = 10;
  EXPECT_NE(IndexFingerprint(OrderRecordTable(other)), IndexFingerprint(OrderRecordTable(index)));
}

TEST(OrderRecord, JsonHasItsPartsAndDigestAndReadsBack) {
  OrderRecord r = TwoStreams();
  const std::string index_a = std::get<std::string>(JsonMember(r.streams[0], "index")->v);
  const std::string index_b = std::get<std::string>(JsonMember(r.streams[1], "index")->v);
  EXPECT_EQ(index_a, ListingFingerprint({ListedFile{"shard.0.mds", 1000},
                                         ListedFile{"shard.1.mds", 1001},
                                         ListedFile{"shard.2.mds", 1002}}));
  EXPECT_EQ(index_b, ListingFingerprint({ListedFile{"shard.0.mds", 1000}}));
  const std::string parts =
      "{\"streams\": [{\"remote\": \"s3://bucket/a?X-Amz-Signature=REDACTED\", \"split\": "
      "\"train\", \"proportion\": 0.75, \"repeat\": null, \"choose\": null, \"shards\": 3, "
      "\"samples\": 33, \"index\": \"" + index_a +
      "\"}, {\"remote\": null, \"split\": null, \"proportion\": null, \"repeat\": null, "
      "\"choose\": 7, \"shards\": 1, \"samples\": 10, \"index\": \"" + index_b +
      "\"}], \"sampling\": {\"epoch_size\": null, \"sampling_method\": \"balanced\", "
      "\"sampling_granularity\": 1, \"partition_algo\": \"relaxed\", \"shuffle\": true, "
      "\"shuffle_algo\": \"py1e\", \"shuffle_seed\": 9176, \"shuffle_block_size\": null, "
      "\"batch_size\": 4, \"batching_method\": \"random\", \"num_canonical_nodes\": 2, "
      "\"replication\": null}, \"worlds\": [{\"nodes\": 2, \"ranks_per_node\": 8}, {\"nodes\": 1, "
      "\"ranks_per_node\": 8}], \"skips\": [[0, 64, 128]]}";
  auto sorted = DumpPyJson(*ParsePyJson(parts), true);
  const std::string digest = *HashHex("xxh64", *sorted);
  EXPECT_EQ(Text(r), "{\"version\": 1, \"digest\": \"" + digest + "\", \"parts\": " + parts + "}");

  auto back = ParseOrderRecord(*ParsePyJson(Text(r)));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(Text(*back), Text(r));
  EXPECT_EQ(back->worlds, r.worlds);
  EXPECT_EQ(back->skips, r.skips);
}

TEST(OrderRecord, EditedPartsOrAnotherVersionAreRefused) {
  std::string text = Text(TwoStreams());
  std::string edited = text;
  edited.replace(edited.find("\"batch_size\": 4"), 15, "\"batch_size\": 8");
  auto digest = *DumpPyJson(*JsonMember(*ParsePyJson(text), "digest"), false);
  auto r = ParseOrderRecord(*ParsePyJson(edited));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  const std::string edited_digest =
      *HashHex("xxh64", *DumpPyJson(*JsonMember(*ParsePyJson(edited), "parts"), true));
  EXPECT_EQ(r.status().message(), "resume state: sluice_order: its digest " + digest +
                                      " does not match its parts (\"" + edited_digest +
                                      "\"): the state was edited or corrupted");

  std::string v2 = text;
  v2.replace(v2.find("\"version\": 1"), 12, "\"version\": 2");
  EXPECT_EQ(ParseOrderRecord(*ParsePyJson(v2)).status().message(),
            "resume state: sluice_order: version 2 is not one this Sluice reads (1)");
  EXPECT_EQ(ParseOrderRecord(*ParsePyJson("{\"version\": 1, \"digest\": \"x\", \"parts\": {}}"))
                .status()
                .message(),
            "resume state: sluice_order: 'parts.streams' must be a list");
}

TEST(OrderRecord, ResumeStateKeepsMosaicKeysFirstThenTheRecord) {
  ResumeState s;
  s.epoch = 1;
  s.sample_in_epoch = 64;
  s.num_canonical_nodes = 2;
  s.shuffle_seed = 9176;
  s.initial_physical_nodes = 2;
  s.order = TwoStreams();
  const std::string json = ResumeStateToJson(s);
  EXPECT_EQ(json, "{\"epoch\": 1, \"sample_in_epoch\": 64, \"num_canonical_nodes\": 2, "
                  "\"shuffle_seed\": 9176, \"initial_physical_nodes\": 2, \"sluice_order\": " +
                      Text(*s.order) + "}");
  auto back = ResumeStateFromJson(json);
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_TRUE(back->order.has_value());
  EXPECT_EQ(Text(*back->order), Text(*s.order));
  // Mosaic's five keys alone (or a null record): no record.
  auto mosaic = ResumeStateFromJson(
      "{\"epoch\": 1, \"sample_in_epoch\": 64, \"num_canonical_nodes\": 2, \"shuffle_seed\": "
      "9176, \"initial_physical_nodes\": 2, \"sluice_order\": null}");
  ASSERT_TRUE(mosaic.ok());
  EXPECT_FALSE(mosaic->order.has_value());
  s.order.reset();
  EXPECT_EQ(ResumeStateToJson(s),
            "{\"epoch\": 1, \"sample_in_epoch\": 64, \"num_canonical_nodes\": 2, "
            "\"shuffle_seed\": 9176, \"initial_physical_nodes\": 2}");
}

TEST(OrderRecord, CompareNamesEachDifferenceSavedThenNow) {
  const OrderRecord saved = TwoStreams();
  const std::vector<std::string> names{"/cache/a/train", "/data/b"};
  OrderRecord now = saved;
  now.worlds = {saved.worlds.back()};
  EXPECT_TRUE(CompareOrder(saved, now, {}, names).ok());

  OrderRecord other = now;
  std::get<JsonValue::Object>(other.streams[1].v)[7].second = JsonValue{std::string("abc")};
  std::get<JsonValue::Object>(other.streams[0].v)[2].second = JsonValue{0.5};
  other.sampling[8].second = JsonValue{int64_t{8}};
  other.worlds = {WorldShape{4, 8}};
  const std::string index_b = std::get<std::string>(JsonMember(saved.streams[1], "index")->v);
  Status st = CompareOrder(saved, other, {}, names);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(),
            "resume state does not match this dataset: stream 0 (/cache/a/train) proportion "
            "changed: saved 0.75, now 0.5; stream 1 (/data/b) index changed: saved \"" +
                index_b +
                "\", now \"abc\"; sampling batch_size changed: saved 4, now 8; world changed: "
                "saved 1 nodes x 8 ranks per node, now 4 nodes x 8 ranks per node (to resume "
                "anyway, adapt \"world\", \"streams\", \"sampling\")");
  EXPECT_EQ(CompareOrder(saved, other, {.world = true, .streams = true}, names).message(),
            "resume state does not match this dataset: sampling batch_size changed: saved 4, now "
            "8 (to resume anyway, adapt \"sampling\")");
  EXPECT_TRUE(CompareOrder(saved, other, {true, true, true}, names).ok());

  OrderRecord fewer = now;
  fewer.streams.pop_back();
  EXPECT_EQ(CompareOrder(saved, fewer, {}, names).message(),
            "resume state does not match this dataset: streams changed: saved 2 streams, now 1 "
            "(to resume anyway, adapt \"streams\")");
}

TEST(OrderRecord, AdaptNamesAreChecked) {
  auto ok = ParseAdaptParts({"world", "sampling"});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->world);
  EXPECT_FALSE(ok->streams);
  EXPECT_TRUE(ok->sampling);
  EXPECT_EQ(ParseAdaptParts({"seed"}).status().message(),
            "adapt: unknown part 'seed' (the parts are 'world', 'streams', 'sampling', 'schedule')");
}

TEST(ResumeOptions, ParseFromJson) {
  auto o = ResumeOptionsFromJson(
      "{\"adapt\": [\"world\"], \"skip_steps\": [[3, 5], [9, 10]], \"skip_samples\": null}");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->adapt, std::vector<std::string>{"world"});
  EXPECT_EQ(o->skip_steps, (StepRanges{{3, 5}, {9, 10}}));
  EXPECT_TRUE(o->skip_samples.empty());
  EXPECT_TRUE(o->skip_sample_ids.empty());
  EXPECT_EQ(ResumeOptionsFromJson("{\"skip\": []}").status().message(),
            "resume options: unknown key 'skip' (the keys are adapt, skip_steps, skip_samples, "
            "skip_sample_ids, steps_of)");
  EXPECT_EQ(ResumeOptionsFromJson("{\"skip_steps\": [[1, 2, 3]]}").status().message(),
            "resume options: 'skip_steps' must be a list of [first, last] integer pairs");
  auto ids = ResumeOptionsFromJson("{\"skip_sample_ids\": [7, 0, 123456789012]}");
  ASSERT_TRUE(ids.ok()) << ids.status().message();
  EXPECT_EQ(ids->skip_sample_ids, (std::vector<int64_t>{7, 0, 123456789012}));
  for (const char* bad : {"{\"skip_sample_ids\": [1, -2]}", "{\"skip_sample_ids\": [[1, 2]]}",
                          "{\"skip_sample_ids\": 3}"}) {
    EXPECT_EQ(ResumeOptionsFromJson(bad).status().message(),
              "resume options: 'skip_sample_ids' must be a list of sample ids (integers >= 0)")
        << bad;
  }
  auto of = ResumeOptionsFromJson("{\"steps_of\": {\"batch_size\": 2, \"ranks\": 3}}");
  ASSERT_TRUE(of.ok()) << of.status().message();
  EXPECT_EQ(of->steps_of, std::make_pair(int64_t{2}, int64_t{3}));
  EXPECT_FALSE(o->steps_of);
  for (const char* bad : {"{\"steps_of\": {\"batch_size\": 2}}", "{\"steps_of\": [2, 3]}",
                          "{\"steps_of\": {\"batch_size\": 0, \"ranks\": 3}}"}) {
    EXPECT_EQ(ResumeOptionsFromJson(bad).status().message(),
              "resume options: 'steps_of' must be {\"batch_size\": 1..2^30, \"ranks\": 1..2^20}")
        << bad;
  }
  EXPECT_EQ(ResumeOptionsFromJson("{\"skip_steps\": [[1, 2]], \"steps_of\": {\"batch_size\": 2, "
                                  "\"ranks\": 3}}")
                .status()
                .message(),
            "resume options: no steps can be skipped with 'steps_of' (the state's skips are "
            "another world's steps; new ones would be this world's)");
}

}  // namespace
}  // namespace sluice
