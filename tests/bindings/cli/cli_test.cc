// The sluice CLI, run as a user runs it: exit status, stdout, stderr.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/json/py_json.h"
#include "formats/text/xsv_writer.h"
#include "tests/bindings/cli/cli_runner.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

const std::string kData = SLUICE_TEST_DATA_DIR;
const std::string kMds = kData + "/mosaic/mds/";
using testing::CliRun;
using testing::Slurp;
using testing::Sluice;

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

const JsonValue* Member(const JsonValue& obj, const std::string& key) {
  for (const auto& [k, v] : std::get<JsonValue::Object>(obj.v)) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string Canonical(const JsonValue* v) { return v ? *DumpPyJson(*v, true) : "(absent)"; }

TEST(CliTest, PlanReproducesEveryMosaicConfig) {
  std::string dir = kData + "/mosaic/order/configs";
  DIR* d = ::opendir(dir.c_str());
  ASSERT_NE(d, nullptr);
  int count = 0;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    ++count;
    auto want = ParsePyJson(Slurp(dir + "/" + name));
    ASSERT_TRUE(want.ok()) << name;
    CliRun r = Sluice("plan " + dir + "/" + name);
    auto got = ParsePyJson(r.out);
    ASSERT_TRUE(got.ok()) << name << ": " << r.out.substr(0, 300);
    if (const JsonValue* err = Member(*want, "error")) {
      EXPECT_EQ(r.exit_code, 1) << name;
      EXPECT_EQ(Canonical(Member(*Member(*got, "error"), "type")), Canonical(Member(*err, "type")))
          << name;
      continue;
    }
    EXPECT_EQ(r.exit_code, 0) << name;
    EXPECT_EQ(Canonical(Member(*got, "work_shape")), Canonical(Member(*want, "work_shape"))) << name;
    EXPECT_EQ(Canonical(Member(*got, "work")), Canonical(Member(*want, "work"))) << name;
  }
  ::closedir(d);
  EXPECT_EQ(count, 55);
}

// `sluice plan DATASET --world ...` prints one worker's samples: the same
// ids as that worker's slice of the whole epoch (`sluice plan CONFIG`), with
// each id's shard and index from the dataset's shard sizes.
TEST(CliTest, PlanOneWorkerOfADataset) {
  const std::vector<int64_t> sizes{26, 11, 26, 26, 12, 5};  // the "merged" dataset
  testing::TempDir tmp("sluice_cli_plan");
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config) << R"({"streams": [{"shard_sizes": [26, 11, 26, 26, 12, 5]}], "batch_size": 3,
    "shuffle": true, "shuffle_block_size": 20, "world": {"num_nodes": 2, "ranks_per_node": 2,
    "workers_per_rank": 2}, "epoch": 1, "sample_in_epoch": 7})";
  CliRun whole = Sluice("plan " + config);
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  auto json = ParsePyJson(whole.out);
  ASSERT_TRUE(json.ok()) << whole.out;
  const auto& work = std::get<JsonValue::Array>(Member(*json, "work")->v);
  for (int64_t rank = 0; rank < 4; ++rank)
    for (int64_t worker = 0; worker < 2; ++worker) {
      std::vector<int64_t> expect;
      const auto& node = std::get<JsonValue::Array>(work[size_t(rank / 2)].v);
      const auto& mine = std::get<JsonValue::Array>(std::get<JsonValue::Array>(node[size_t(rank % 2)].v)[size_t(worker)].v);
      for (const JsonValue& batch : mine)
        for (const JsonValue& id : std::get<JsonValue::Array>(batch.v))
          if (std::get<int64_t>(id.v) >= 0) expect.push_back(std::get<int64_t>(id.v));
      CliRun r = Sluice("plan " + kMds + "merged --world 2:2:2 --rank " + std::to_string(rank) + " --worker " +
                        std::to_string(worker) + " --batch-size 3 --shuffle --shuffle-block-size 20 --epoch 1 "
                        "--sample-in-epoch 7");
      ASSERT_EQ(r.exit_code, 0) << r.out;
      std::string want = "stream\tshard\tindex\tsample\n";
      for (int64_t id : expect) {
        int64_t shard = 0, first = 0;
        while (id >= first + sizes[size_t(shard)]) first += sizes[size_t(shard++)];
        want += "0\t" + std::to_string(shard) + "\t" + std::to_string(id - first) + "\t" + std::to_string(id) + "\n";
      }
      EXPECT_EQ(r.out, want) << "rank " << rank << " worker " << worker;
      EXPECT_GT(expect.size(), 10u);
    }
  CliRun bad = Sluice("plan " + kMds + "merged --world 2:2 --rank 0 --worker 0 --batch-size 3");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("--world wants NODES:RANKS:WORKERS, got '2:2'"), std::string::npos) << bad.out;
  bad = Sluice("plan " + kMds + "merged --world 2:2:2 --rank 4 --worker 0 --batch-size 3");
  EXPECT_NE(bad.out.find("--rank 4 is outside the world's 4 ranks"), std::string::npos) << bad.out;
  bad = Sluice("plan " + kMds + "merged --world 2:2:2 --rank 0 --worker 0");
  EXPECT_NE(bad.out.find("--batch-size is required"), std::string::npos) << bad.out;
}

// `sluice plan DATASET --world ... --steps A:B` prints the samples of global
// steps A..B-1: for each rank the batch its DataLoader takes at that step
// (worker step mod 2), the same ids as the whole epoch's work dealt as
// torch's DataLoader deals it, for every rank or the one asked for.
TEST(CliTest, PlanGlobalStepsOfADataset) {
  const std::vector<int64_t> sizes{26, 11, 26, 26, 12, 5};  // the "merged" dataset
  testing::TempDir tmp("sluice_cli_plan_steps");
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config) << R"({"streams": [{"shard_sizes": [26, 11, 26, 26, 12, 5]}], "batch_size": 3,
    "shuffle": true, "shuffle_block_size": 20, "world": {"num_nodes": 2, "ranks_per_node": 2,
    "workers_per_rank": 2}, "epoch": 1})";
  CliRun whole = Sluice("plan " + config);
  ASSERT_EQ(whole.exit_code, 0) << whole.out;
  auto json = ParsePyJson(whole.out);
  ASSERT_TRUE(json.ok()) << whole.out;
  const auto& work = std::get<JsonValue::Array>(Member(*json, "work")->v);
  // Each rank's batches as the DataLoader hands them: worker 0's first,
  // worker 1's first, worker 0's second, ...
  std::vector<std::vector<std::vector<int64_t>>> steps(4);
  for (int64_t rank = 0; rank < 4; ++rank) {
    const auto& node = std::get<JsonValue::Array>(work[size_t(rank / 2)].v);
    const auto& workers = std::get<JsonValue::Array>(node[size_t(rank % 2)].v);
    std::vector<std::vector<std::vector<int64_t>>> per_worker;
    for (const JsonValue& worker : workers) {
      std::vector<std::vector<int64_t>> batches;
      for (const JsonValue& batch : std::get<JsonValue::Array>(worker.v)) {
        std::vector<int64_t> ids;
        for (const JsonValue& id : std::get<JsonValue::Array>(batch.v))
          if (std::get<int64_t>(id.v) >= 0) ids.push_back(std::get<int64_t>(id.v));
        if (!ids.empty()) batches.push_back(ids);
      }
      per_worker.push_back(batches);
    }
    for (size_t b = 0; b < per_worker[0].size() || b < per_worker[1].size(); ++b)
      for (const auto& w : per_worker)
        if (b < w.size()) steps[size_t(rank)].push_back(w[b]);
  }
  ASSERT_GE(steps[0].size(), 8u);
  auto line = [&](int64_t step, int64_t rank, int64_t id) {
    int64_t shard = 0, first = 0;
    while (id >= first + sizes[size_t(shard)]) first += sizes[size_t(shard++)];
    return std::to_string(step) + "\t" + std::to_string(rank) + "\t0\t" + std::to_string(shard) + "\t" +
           std::to_string(id - first) + "\t" + std::to_string(id) + "\n";
  };
  const std::string common = " --world 2:2:2 --batch-size 3 --shuffle --shuffle-block-size 20 --epoch 1";
  std::string want = "step\trank\tstream\tshard\tindex\tsample\n";
  for (int64_t step = 2; step < 7; ++step)
    for (int64_t rank = 0; rank < 4; ++rank)
      for (int64_t id : steps[size_t(rank)][size_t(step)]) want += line(step, rank, id);
  CliRun r = Sluice("plan " + kMds + "merged --steps 2:7" + common);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, want);
  want = "step\trank\tstream\tshard\tindex\tsample\n";
  for (int64_t id : steps[3][5]) want += line(5, 3, id);
  r = Sluice("plan " + kMds + "merged --steps 5 --rank 3" + common);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out, want);
  // Past the end: the last steps, then nothing.
  const int64_t last = int64_t(steps[0].size()) - 1;
  r = Sluice("plan " + kMds + "merged --rank 0 --steps " + std::to_string(last) + ":100000" + common);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  want = "step\trank\tstream\tshard\tindex\tsample\n";
  for (int64_t id : steps[0][size_t(last)]) want += line(last, 0, id);
  EXPECT_EQ(r.out, want);
  r = Sluice("plan " + kMds + "merged --rank 0 --steps " + std::to_string(last + 1) + common);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.out, "sluice plan: invalid argument: steps start at step " + std::to_string(last + 1) +
                       ", past the last: the rank takes " + std::to_string(last + 1) + " steps in epoch 1\n");
  r = Sluice("plan " + kMds + "merged --steps 4:2" + common);
  EXPECT_EQ(r.out, "sluice plan: invalid argument: --steps wants A:B (steps A to B - 1) or N, got '4:2'\n");
  r = Sluice("plan " + kMds + "merged --steps 4 --worker 1" + common);
  EXPECT_EQ(r.out, "sluice plan: invalid argument: --steps gives each rank's batches whichever worker made them "
                   "(step s comes from worker s mod WORKERS); leave out --worker\n");
}

TEST(CliTest, CatPrintsTheCompatLine) {
  // CSV holds nothing Sluice leaves undecoded, so the line is identical.
  std::vector<std::string> expected = Lines(kMds + "csv_plain/expected.jsonl");
  for (size_t i : {0, 1, 58, 59}) {
    CliRun r = Sluice("cat " + kMds + "csv_plain " + std::to_string(i));
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_EQ(r.out, expected[i] + "\n");
  }
  std::vector<std::string> merged = Lines(kMds + "merged/expected.jsonl");
  CliRun r = Sluice("cat " + kMds + "merged 40");
  EXPECT_EQ(r.out, merged[40] + "\n");
  r = Sluice("cat " + kMds + "merged 106");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("sample 106 is past the end (the dataset has 106 samples)"), std::string::npos);
  r = Sluice("cat " + kMds + "merged x1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("INDEX must be a non-negative integer, got 'x1'"), std::string::npos);
}

TEST(CliTest, VerifyPassesAndCatchesCorruption) {
  CliRun ok = Sluice("verify " + kMds + "hashed_all_algos");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("ok: 32 samples in"), std::string::npos) << ok.out;

  testing::TempDir tmp_dir("sluice_cli_test");

  const std::string tmp = tmp_dir.path();
  ASSERT_EQ(std::system(("cp -r " + kMds + "hashed_all_algos " + tmp + "/ds").c_str()), 0);
  std::string shard = tmp + "/ds/shard.00001.mds";
  std::string bytes = Slurp(shard);
  bytes[bytes.size() - 3] ^= 0x40;  // inside a sample, same size
  std::ofstream(shard, std::ios::binary) << bytes;
  CliRun bad = Sluice("verify " + tmp + "/ds");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("FAIL shard 1 (shard.00001.mds): hash mismatch"), std::string::npos)
      << bad.out;
  EXPECT_NE(bad.out.find("FAILED: 1 of"), std::string::npos) << bad.out;
}

// Mosaic's CSVWriter writes Python ints of any size as str(int), and its
// reader takes them back with int(): verify passes and cat shows the exact
// value (a JSON integer beyond int64).
TEST(CliTest, VerifyAndCatCsvIntsBeyondInt64) {
  testing::TempDir tmp_dir("sluice_cli_test");
  const std::string tmp = tmp_dir.path();
  XsvWriterOptions o;
  o.columns = {{"big", TextEncoding::kInt}, {"s", TextEncoding::kStr}};
  auto w = XsvWriter::Create(tmp + "/ds", o);
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  const std::string huge = "-" + std::string(4300, '9');
  std::vector<TextValue> s0 = {TextBigInt{"18446744073709551616"}, std::string_view("a")};
  std::vector<TextValue> s1 = {TextBigInt{huge}, std::string_view("b")};
  ASSERT_TRUE((*w)->Write(s0).ok());
  ASSERT_TRUE((*w)->Write(s1).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_EQ(Slurp(tmp + "/ds/shard.00000.csv"),
            "big,s\n18446744073709551616,a\n" + huge + ",b\n");
  CliRun ok = Sluice("verify " + tmp + "/ds");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("ok: 2 samples in"), std::string::npos) << ok.out;
  CliRun cat = Sluice("cat " + tmp + "/ds 0");
  ASSERT_EQ(cat.exit_code, 0) << cat.out;
  EXPECT_EQ(cat.out,
            "{\"fields\": {\"big\": {\"encoding\": \"int\", \"value\": 18446744073709551616}, "
            "\"s\": {\"encoding\": \"str\", \"value\": \"a\"}}, \"index_in_shard\": 0, "
            "\"line_hex\": \"31383434363734343037333730393535313631362c610a\", \"sample\": 0, "
            "\"shard\": 0}\n");
  cat = Sluice("cat " + tmp + "/ds 1");
  ASSERT_EQ(cat.exit_code, 0) << cat.out;
  EXPECT_NE(cat.out.find("\"value\": " + huge + "}"), std::string::npos) << cat.out.substr(0, 200);
}

// An encoding that is neither built in nor registered (a typo, a damaged
// index.json): cat, verify and inspect refuse the dataset instead of
// printing its stored bytes as if they were data.
TEST(CliTest, UnknownEncodingIsRefused) {
  testing::TempDir tmp_dir("sluice_cli_test");
  const std::string ds = tmp_dir.path() + "/ds";
  ASSERT_EQ(std::system(("cp -r " + kMds + "single_shard_no_limit " + ds).c_str()), 0);
  std::string index = Slurp(ds + "/index.json");
  const std::string encodings = "[\"int\", \"str\"]";
  size_t at = index.find(encodings);
  ASSERT_NE(at, std::string::npos) << index;
  index.replace(at, encodings.size(), "[\"int\", \"jpge\"]");
  std::ofstream(ds + "/index.json") << index;
  const std::string why = "unimplemented: " + ds +
                          "/index.json: shard 0: column 'y' has encoding 'jpge', which is "
                          "neither built in nor registered\n";
  for (std::string command : {"cat", "verify", "inspect"}) {
    CliRun r = Sluice(command + " " + ds + (command == "cat" ? " 0" : ""));
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_EQ(r.out, "sluice " + command + ": " + why);
  }
}

TEST(CliTest, InspectSummarizes) {
  CliRun r = Sluice("inspect --shards " + kMds + "merged");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("samples:     106"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("part2/shard.00000.mds.zstd"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("payload"), std::string::npos);
  r = Sluice("inspect /nonexistent/sluice");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("/nonexistent/sluice/index.json"), std::string::npos);
}

TEST(CliTest, ConvertCsvAndRecompressMds) {
  testing::TempDir tmp_dir("sluice_cli_test");
  const std::string tmp = tmp_dir.path();
  CliRun r = Sluice("convert " + kMds + "csv_plain " + tmp + "/from_csv --columns id:int32");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  CliRun cat = Sluice("cat " + tmp + "/from_csv 1");
  auto got = ParsePyJson(cat.out);
  ASSERT_TRUE(got.ok()) << cat.out;
  const JsonValue* fields = Member(*got, "fields");
  EXPECT_EQ(Canonical(fields),
            "{\"id\": {\"encoding\": \"int32\", \"raw_hex\": \"01000000\", \"value\": 1}, "
            "\"name\": {\"encoding\": \"str\", \"raw_hex\": \"68c3a96c6c6f31\", \"value\": "
            "\"h\\u00e9llo1\"}, \"score\": {\"encoding\": \"float64\", \"raw_hex\": "
            "\"b66ddbb66ddb06c0\", \"value_repr\": \"-2.8571428571428568\"}}");

  r = Sluice("convert " + kMds + "all_encodings " + tmp + "/zstd --compression zstd:7 "
             "--size-limit 16kb --hashes xxh64");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(Sluice("verify " + tmp + "/zstd").exit_code, 0);
  for (int i : {0, 17, 239}) {
    auto a = ParsePyJson(Sluice("cat " + kMds + "all_encodings " + std::to_string(i)).out);
    auto b = ParsePyJson(Sluice("cat " + tmp + "/zstd " + std::to_string(i)).out);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(Canonical(Member(*a, "fields")), Canonical(Member(*b, "fields"))) << i;
  }
  r = Sluice("convert " + kMds + "all_encodings " + tmp + "/bad --columns a_int:str");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("MDS to MDS keeps each column's encoding ('a_int' is int)"), std::string::npos)
      << r.out;

  std::ofstream(tmp + "/plain.jsonl") << "{\"a\": 1, \"b\": \"x\"}\n{\"a\": 2, \"b\": \"y\"}\n";
  r = Sluice("convert " + tmp + "/plain.jsonl " + tmp + "/from_jsonl --columns a:uint16,b:str");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(Sluice("cat " + tmp + "/from_jsonl 1").out.find("\"a\": {\"encoding\": \"uint16\", \"raw_hex\": \"0200\", \"value\": 2}"),
            std::string::npos);
  r = Sluice("convert " + tmp + "/plain.jsonl " + tmp + "/x --columns a:uint16,c:str");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("plain.jsonl line 1: has no member 'c'"), std::string::npos) << r.out;
}

TEST(CliTest, DemoStreamsRawFilesThroughCachesAndResumes) {
  CliRun r = Sluice("demo --files");
  // The demo leaves its data for the user to look at; the test removes it.
  const std::string done = "demo finished: data and caches in ";
  size_t at = r.out.find(done);
  if (at != std::string::npos) {
    std::string folder = r.out.substr(at + done.size());
    folder = folder.substr(0, folder.find('\n'));
    ASSERT_EQ(folder.rfind("/tmp/sluice-demo-", 0), 0u) << folder;
    std::filesystem::remove_all(folder);
  }
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("6000 files in the dataset"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("epoch: 6000 planned samples (epoch size 6000), 6000 distinct; every "
                       "process read its planned order exactly, across the interruption"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("of a 24 MiB limit"), std::string::npos) << r.out;
  EXPECT_EQ(Sluice("demo --files a b").exit_code, 2);
}

TEST(CliTest, UsageErrors) {
  EXPECT_EQ(Sluice("").exit_code, 2);
  CliRun r = Sluice("frobnicate");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("unknown command 'frobnicate'"), std::string::npos);
  EXPECT_EQ(Sluice("inspect --bogus x").exit_code, 2);
}

}  // namespace
}  // namespace sluice
