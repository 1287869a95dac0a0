#include <gtest/gtest.h>

#include <set>

#include "engine/dataset/byte_size.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/resume_state.h"
#include "engine/planner/size_check.h"

namespace sluice {
namespace {

TEST(ByteSize, MatchesMosaicBytesToInt) {
  // Values as Mosaic's bytes_to_int computes them (1024-based suffixes).
  EXPECT_EQ(*ParseByteSize("100gb"), uint64_t{107374182400});
  EXPECT_EQ(*ParseByteSize("1.5kb"), 1536u);
  EXPECT_EQ(*ParseByteSize("  2MB "), 2097152u);
  EXPECT_EQ(*ParseByteSize("1e3kb"), 1024000u);
  EXPECT_EQ(*ParseByteSize("123b"), 123u);
  EXPECT_EQ(*ParseByteSize("123"), 123u);
  EXPECT_EQ(*ParseByteSize("1tb"), uint64_t{1} << 40);
  EXPECT_EQ(*ParseByteSize("0.001kb"), 1u);  // 1.024 truncated
}

TEST(ByteSize, RejectsWhatMosaicRejects) {
  for (const char* bad : {"", "kb", "1kib", "1.5b", "abc", "1 k", "-1kb", "1e30gb", "inf gb"}) {
    auto r = ParseByteSize(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("Unsupported value/suffix"), std::string::npos) << bad;
  }
}

TEST(DatasetConfig, DefaultsAreMosaics) {
  auto o = ParseDatasetOptions(R"({"local": "/tmp/x"})");
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_EQ(o->streams.size(), 1u);
  const StreamOptions& s = o->streams[0];
  EXPECT_EQ(s.local, "/tmp/x");
  EXPECT_EQ(s.remote, "");
  EXPECT_EQ(s.download_retry, 2);
  EXPECT_EQ(s.download_timeout_s, 60.0);
  EXPECT_FALSE(s.validate_hash.has_value());
  EXPECT_FALSE(s.keep_zip);
  EXPECT_FALSE(s.single_pass);
  EXPECT_EQ(s.single_pass_part_size, uint64_t{8} << 20);
  EXPECT_EQ(o->batch_size(), 1);
  EXPECT_EQ(o->predownload_samples(), 8);
  EXPECT_FALSE(o->cache_limit.has_value());
  EXPECT_FALSE(o->plan.shuffle);
  EXPECT_EQ(o->plan.shuffle_seed, 9176u);
  EXPECT_EQ(o->plan.shuffle_algo, planner::ShuffleAlgo::kPy1e);
  EXPECT_EQ(o->plan.partition_algo, planner::PartitionAlgo::kRelaxed);
}

TEST(DatasetConfig, StreamsAndGlobals) {
  auto o = ParseDatasetOptions(R"({
    "streams": [{"remote": "/r/a", "local": "/l/a", "split": "train", "proportion": 0.25},
                {"local": "/l/b", "choose": 7, "validate_hash": "sha1", "keep_zip": true,
                 "single_pass": false, "single_pass_part_size": 0}],
    "download_retry": 5, "single_pass": true, "single_pass_part_size": 1048576,
    "epoch_size": "1.5k", "predownload": 32, "cache_limit": "1.5kb", "batch_size": 4,
    "shuffle": true, "shuffle_algo": "py1s", "shuffle_seed": 7, "num_canonical_nodes": 3,
    "partition_algo": "orig", "batching_method": "per_stream", "sampling_method": "fixed",
    "sampling_granularity": 2, "replication": null, "wait_timeout": 1.5,
    "peek_first_sample": false, "guess_first_shard": false,
    "world": {"rank": 3, "world_size": 4, "local_rank": 1, "local_world_size": 2}})");
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_EQ(o->streams.size(), 2u);
  EXPECT_EQ(o->streams[0].remote, "/r/a");
  EXPECT_EQ(o->streams[0].split, "train");
  EXPECT_EQ(*o->streams[0].weight.proportion, 0.25);
  EXPECT_EQ(o->streams[0].download_retry, 5);  // dataset-level default
  EXPECT_EQ(*o->streams[1].weight.choose, 7);
  EXPECT_EQ(*o->streams[1].validate_hash, "sha1");
  EXPECT_TRUE(o->streams[1].keep_zip);
  EXPECT_TRUE(o->streams[0].single_pass);  // dataset-level default
  EXPECT_FALSE(o->streams[1].single_pass);  // its own
  EXPECT_EQ(o->streams[0].single_pass_part_size, 1048576u);  // dataset-level default
  EXPECT_EQ(o->streams[1].single_pass_part_size, 0u);        // its own
  EXPECT_EQ(ParseDatasetOptions(R"({"local": "/l", "single_pass_part_size": -1})")
                .status()
                .message(),
            "dataset config: 'single_pass_part_size' must be a number of bytes, 0 or more");
  // single_pass_memory: bytes or a size string; by default a quarter of
  // the process's memory, at most 16 GiB.
  EXPECT_FALSE(o->single_pass_memory.has_value());
  EXPECT_GT(o->single_pass_memory_bytes(), 0u);
  EXPECT_LE(o->single_pass_memory_bytes(), DatasetOptions::kSinglePassMemoryCap);
  EXPECT_EQ(*ParseDatasetOptions(R"({"local": "/l", "single_pass_memory": "4gb"})")
                 ->single_pass_memory,
            uint64_t{4} << 30);
  EXPECT_EQ(ParseDatasetOptions(R"({"local": "/l", "single_pass_memory": 0})")
                ->single_pass_memory_bytes(),
            0u);
  EXPECT_EQ(ParseDatasetOptions(R"({"local": "/l", "single_pass_memory": -1})")
                .status()
                .message(),
            "dataset config: 'single_pass_memory' must be a number of bytes, 0 or more");
  const Status lots =
      ParseDatasetOptions(R"({"local": "/l", "single_pass_memory": "lots"})").status();
  EXPECT_EQ(lots.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(lots.message().rfind("dataset config: 'single_pass_memory' must be a number of bytes, "
                                 "0 or more, or a size such as \"4gb\" (",
                                 0),
            0u)
      << lots.message();
  EXPECT_EQ(
      ParseDatasetOptions(R"({"local": "/l", "single_pass_memory": true})").status().message(),
      "dataset config: 'single_pass_memory' must be an integer");
  // The default is a quarter of the memory shared by the node's reader
  // processes (ranks times workers), each holding its own; a value given
  // is each reader's as it is.
  planner::SetProcessMemoryLimitForTesting(uint64_t{64} << 30);
  EXPECT_EQ(o->single_pass_memory_bytes(), uint64_t{16} << 30);
  EXPECT_EQ(o->single_pass_memory_bytes(8 * 4), uint64_t{512} << 20);
  EXPECT_EQ(o->single_pass_memory_bytes(0), uint64_t{16} << 30);
  planner::SetProcessMemoryLimitForTesting(uint64_t{256} << 30);
  EXPECT_EQ(o->single_pass_memory_bytes(2), DatasetOptions::kSinglePassMemoryCap);
  EXPECT_EQ(ParseDatasetOptions(R"({"local": "/l", "single_pass_memory": "4gb"})")
                ->single_pass_memory_bytes(64),
            uint64_t{4} << 30);
  planner::SetProcessMemoryLimitForTesting(0);
  EXPECT_EQ(*o->plan.epoch_size, 1500);
  EXPECT_EQ(o->predownload_samples(), 32);
  EXPECT_EQ(*o->cache_limit, 1536u);
  EXPECT_EQ(o->batch_size(), 4);
  EXPECT_EQ(o->plan.shuffle_algo, planner::ShuffleAlgo::kPy1s);
  EXPECT_EQ(*o->plan.num_canonical_nodes, 3);
  EXPECT_EQ(o->plan.batching_method, planner::BatchingMethod::kPerStream);
  EXPECT_EQ(o->plan.sampling_method, planner::SamplingMethod::kFixed);
  EXPECT_EQ(o->wait_timeout.count(), 1500);
  EXPECT_FALSE(o->peek_first_sample);
  EXPECT_TRUE(DatasetOptions().peek_first_sample);
  EXPECT_FALSE(o->guess_first_shard);
  EXPECT_TRUE(DatasetOptions().guess_first_shard);
  auto w = ResolveWorld(o->world);
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->num_nodes, 2);
  EXPECT_EQ(w->ranks_per_node, 2);
  EXPECT_EQ(w->node, 1);
  EXPECT_EQ(w->rank_in_node, 1);
}

// Sluice's own keys: raw-file streams, read_timeout, fetch_concurrency,
// skip_missing_files, with their defaults and errors.
TEST(DatasetConfig, MixtureKeys) {
  auto o = ParseDatasetOptions(
      R"({"local": "/tmp/x", "epoch_size": 100, "mixture": [[0, [0.7, 2, 0]], [40, [1, 1, 1.5]]],)"
      R"( "mixture_interpolation": "linear"})");
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_TRUE(o->plan.mixture);
  const planner::MixtureSchedule& m = *o->plan.mixture;
  EXPECT_EQ(m.interpolation, planner::MixtureInterpolation::kLinear);
  ASSERT_EQ(m.points.size(), 2u);
  EXPECT_EQ(m.points[0].at, 0);
  EXPECT_EQ(m.points[0].weights, (std::vector<double>{0.7, 2, 0}));
  EXPECT_EQ(m.points[1].at, 40);
  EXPECT_EQ(m.points[1].weights, (std::vector<double>{1, 1, 1.5}));
  auto step = ParseDatasetOptions(R"({"local": "/tmp/x", "mixture": [[0, [1]]]})");
  ASSERT_TRUE(step.ok());
  EXPECT_EQ(step->plan.mixture->interpolation, planner::MixtureInterpolation::kStep);
  auto message = [](const char* json) {
    auto r = ParseDatasetOptions(json);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  EXPECT_EQ(message(R"({"local": "/tmp/x", "mixture": {"0": [1]}})"),
            "dataset config: 'mixture' must be a list of [samples seen, [weights]] points");
  EXPECT_EQ(message(R"({"local": "/tmp/x", "mixture": [[0, [1]], [5]]})"),
            "dataset config: 'mixture[1]' must be a pair [samples seen, [weights]]");
  EXPECT_EQ(message(R"({"local": "/tmp/x", "mixture": [[0.5, [1]]]})"),
            "dataset config: 'mixture[0][0]' must be an integer");
  EXPECT_EQ(message(R"({"local": "/tmp/x", "mixture": [[0, [1, "a"]]]})"),
            "dataset config: 'mixture[0][1][1]' must be a number");
  EXPECT_EQ(message(R"({"local": "/tmp/x", "mixture_interpolation": "linear"})"),
            "dataset config: 'mixture_interpolation' is set without a 'mixture'");
  EXPECT_EQ(message(R"({"local": "/tmp/x", "mixture": [[0, [1]]], "mixture_interpolation": "spline"})"),
            "ValueError: mixture_interpolation must be 'step' or 'linear', got 'spline'");
}

TEST(DatasetConfig, ParquetStreamKey) {
  auto o = ParseDatasetOptions(R"({"streams": [
      {"local": "/l/a", "parquet": true},
      {"local": "/l/b", "parquet": {"glob": "part-*.parquet", "manifest": "m.txt"}},
      {"local": "/l/c"}]})");
  ASSERT_TRUE(o.ok()) << o.status().message();
  ASSERT_TRUE(o->streams[0].parquet.has_value());
  EXPECT_TRUE(o->streams[0].parquet->selection.globs.empty());
  EXPECT_EQ(o->streams[1].parquet->selection.globs, std::vector<std::string>{"part-*.parquet"});
  EXPECT_EQ(o->streams[1].parquet->manifest, "m.txt");
  EXPECT_FALSE(o->streams[2].parquet.has_value());
  EXPECT_FALSE(o->streams[0].files.has_value());
  auto error = [](const char* json) { return ParseDatasetOptions(json).status().message(); };
  EXPECT_EQ(error(R"({"local": "/l", "parquet": true, "files": true})"),
            "dataset config: 'streams[0].parquet' cannot be set beside \"files\" (a stream is raw "
            "files or Parquet files)");
  EXPECT_EQ(error(R"({"local": "/l", "parquet": {"glob": [""]}})"),
            "dataset config: 'parquet.glob' must not hold an empty pattern");
  EXPECT_EQ(error(R"({"local": "/l", "parquet": {"columns": 1}})"),
            "dataset config: 'parquet.columns' must be a non-empty list of names");
  EXPECT_EQ(error(R"({"local": "/l", "parquet": {"columns": []}})"),
            "dataset config: 'parquet.columns' must be a non-empty list of names");
  EXPECT_EQ(error(R"({"local": "/l", "parquet": {"columns": ["a", "b", "a"]}})"),
            "dataset config: 'parquet.columns' names \"a\" twice");
  EXPECT_EQ(error(R"({"local": "/l", "parquet": {"column": ["a"]}})"),
            "dataset config: 'parquet.column' is not a known key (glob, manifest, columns)");
  EXPECT_EQ(error(R"({"local": "/l", "files": {"columns": ["a"]}})"),
            "dataset config: 'files.columns' is not a known key (glob, manifest)");
  EXPECT_EQ(error(R"({"local": "/l", "parquet": 3})"),
            "dataset config: 'parquet' must be true, null or an object {glob, manifest, columns}");
  auto c = ParseDatasetOptions(R"({"local": "/l", "parquet": {"columns": ["text", "id"]}})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->streams[0].parquet->columns, (std::vector<std::string>{"text", "id"}));
}

TEST(DatasetConfig, SluiceExtensions) {
  auto d = ParseDatasetOptions(R"({"local": "/tmp/x"})");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->streams[0].read_timeout_s, 30.0);
  EXPECT_FALSE(d->streams[0].files.has_value());
  EXPECT_FALSE(d->fetch_concurrency.has_value());
  EXPECT_FALSE(d->skip_missing_files);

  auto o = ParseDatasetOptions(R"({"streams": [
      {"local": "/l/a", "files": true, "read_timeout": 2.5},
      {"local": "/l/b", "files": {"glob": ["*.jpg", "train/*.png"], "manifest": "m.txt"}},
      {"local": "/l/c", "files": {"glob": "*.wav"}},
      {"local": "/l/d", "files": false}],
    "fetch_concurrency": 64, "skip_missing_files": true})");
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->streams[0].read_timeout_s, 2.5);
  ASSERT_TRUE(o->streams[0].files.has_value());
  EXPECT_TRUE(o->streams[0].files->selection.globs.empty());
  EXPECT_EQ(o->streams[0].files->manifest, "");
  EXPECT_EQ(o->streams[1].files->selection.globs,
            (std::vector<std::string>{"*.jpg", "train/*.png"}));
  EXPECT_EQ(o->streams[1].files->manifest, "m.txt");
  EXPECT_EQ(o->streams[2].files->selection.globs, std::vector<std::string>{"*.wav"});
  EXPECT_FALSE(o->streams[3].files.has_value());
  EXPECT_EQ(o->fetch_concurrency, std::optional<int64_t>(64));
  EXPECT_TRUE(o->skip_missing_files);

  auto error = [](const char* json) { return ParseDatasetOptions(json).status().message(); };
  EXPECT_EQ(error(R"({"local": "/l", "read_timeout": 0})"),
            "dataset config: 'read_timeout' must be positive");
  EXPECT_EQ(error(R"({"local": "/l", "fetch_concurrency": 0})"),
            "dataset config: 'fetch_concurrency' must be in [1, 256]");
  EXPECT_EQ(error(R"({"local": "/l", "fetch_concurrency": 257})"),
            "dataset config: 'fetch_concurrency' must be in [1, 256]");
  EXPECT_FALSE(d->metrics_retention_s.has_value());
  auto kept = ParseDatasetOptions(R"({"local": "/l", "metrics_retention_s": 0})");
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_EQ(kept->metrics_retention_s, std::optional<int64_t>(0));
  EXPECT_EQ(error(R"({"local": "/l", "metrics_retention_s": -1})"),
            "dataset config: 'metrics_retention_s' must be a number of seconds, 0 or more");
  EXPECT_EQ(error(R"({"local": "/l", "metrics_retention_s": 1.5})"),
            "dataset config: 'metrics_retention_s' must be an integer");
  EXPECT_EQ(error(R"({"local": "/l", "metrics_retention_s": "1d"})"),
            "dataset config: 'metrics_retention_s' must be an integer");
  EXPECT_EQ(error(R"({"local": "/l", "files": {"manifest": ""}})"),
            "dataset config: 'files.manifest' must not be empty");
  EXPECT_EQ(error(R"({"local": "/l", "files": {"glob": [1]}})"),
            "dataset config: 'files.glob' must be a string");
  EXPECT_EQ(error(R"({"local": "/l", "skip_missing_files": 1})"),
            "dataset config: 'skip_missing_files' must be true or false");

  EXPECT_TRUE(d->custom_encodings.names.empty());
  EXPECT_FALSE(d->custom_encodings.any);
  auto custom = ParseDatasetOptions(R"({"local": "/l", "custom_encodings": ["complex128", "pair"],)"
                                    R"( "any_custom_encoding": true})");
  ASSERT_TRUE(custom.ok()) << custom.status().message();
  EXPECT_EQ(custom->custom_encodings.names,
            (std::set<std::string, std::less<>>{"complex128", "pair"}));
  EXPECT_TRUE(custom->custom_encodings.any);
  EXPECT_EQ(error(R"({"local": "/l", "custom_encodings": "complex128"})"),
            "dataset config: 'custom_encodings' must be a list of strings");
  EXPECT_EQ(error(R"({"local": "/l", "custom_encodings": [1]})"),
            "dataset config: 'custom_encodings[0]' must be a string");
  EXPECT_EQ(error(R"({"local": "/l", "any_custom_encoding": 1})"),
            "dataset config: 'any_custom_encoding' must be true or false");
}

TEST(DatasetConfig, Errors) {
  struct Case {
    const char* json;
    const char* needle;
  } cases[] = {
      {"[]", "must be a JSON object"},
      {"{}", "needs 'streams'"},
      {R"({"remote": "/r"})", "'streams[0].local' must be set"},
      {R"({"local": "/l", "bogus": 1})", "'bogus' is not a known key"},
      {R"({"streams": [{"local": "/l", "batch_size": 1}]})", "'streams[0].batch_size' is not a known key"},
      {R"({"local": "/l", "batch_size": "4"})", "'batch_size' must be an integer"},
      {R"({"local": "/l", "cache_limit": "12qb"})", "Unsupported value/suffix 12qb"},
      {R"({"local": "/l", "shuffle_algo": "nope"})", "nope"},
      {R"({"local": "/l", "world": {"ranks": 1}})", "'world.ranks' is not a known key"},
      {R"({"local": "/l", "keep_zip": 1})", "'keep_zip' must be true or false"},
      {R"({"local": "/l", "single_pass": "yes"})", "'single_pass' must be true or false"},
  };
  for (const Case& c : cases) {
    auto o = ParseDatasetOptions(c.json);
    ASSERT_FALSE(o.ok()) << c.json;
    EXPECT_NE(o.status().message().find(c.needle), std::string::npos)
        << c.json << " -> " << o.status().message();
  }
}

TEST(ResumeState, RoundTripAndErrors) {
  ResumeState s{3, 1234, 8, 17, 2, std::nullopt};
  std::string json = ResumeStateToJson(s);
  EXPECT_EQ(json,
            R"({"epoch": 3, "sample_in_epoch": 1234, "num_canonical_nodes": 8, "shuffle_seed": 17, "initial_physical_nodes": 2})");
  auto back = ResumeStateFromJson(json);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->epoch, 3);
  EXPECT_EQ(back->sample_in_epoch, 1234);
  EXPECT_EQ(back->num_canonical_nodes, 8);
  EXPECT_EQ(back->shuffle_seed, 17u);
  EXPECT_EQ(back->initial_physical_nodes, 2);
  auto old = ResumeStateFromJson(
      R"({"epoch": 1, "sample_in_epoch": 0, "num_canonical_nodes": 2, "shuffle_seed": 5, "initial_physical_nodes": null})");
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(old->initial_physical_nodes, 0);
  auto missing = ResumeStateFromJson(R"({"epoch": 1, "num_canonical_nodes": 2, "shuffle_seed": 5})");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "resume state: field 'sample_in_epoch' is missing");
}

}  // namespace
}  // namespace sluice
