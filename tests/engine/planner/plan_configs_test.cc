// End to end: every order/configs/*.json reproduces Mosaic's derived values,
// its `work` array (rendered byte for byte as the file holds it) or its error,
// each worker's own plan, and the recorded DataLoader batches.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "base/file.h"
#include "engine/planner/checkpoints_file.h"
#include "engine/planner/mosaic_error.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_json.h"
#include "tests/engine/planner/json_test_util.h"

namespace sluice::planner {
namespace {

using testing::Ints;
using testing::Str;

std::vector<std::string> ConfigFiles() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(testing::MosaicOrderPath("configs")))
    if (e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t Bits(double d) {
  uint64_t u;
  std::memcpy(&u, &d, 8);
  return u;
}

class PlanConfigTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanConfigTest, MatchesMosaic) {
  auto text = ReadFile(GetParam());
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto request = ParsePlanRequest(*text);
  ASSERT_TRUE(request.ok()) << request.status().ToString();
  simdjson::dom::parser parser;
  simdjson::padded_string padded(*text);
  simdjson::dom::element doc = parser.parse(padded);

  auto work = PlanEpoch(*request);
  simdjson::dom::element err;
  if (doc["error"].get(err) == simdjson::SUCCESS) {
    ASSERT_FALSE(work.ok());
    EXPECT_EQ(work.status().code(), StatusCode::kInvalidArgument);
    const auto split = SplitMosaicError(work.status());
    EXPECT_EQ(split.type, Str(err["type"]));
    EXPECT_EQ(split.message, Str(err["message"]));
    EXPECT_EQ(RenderError(work.status()), "{\"error\":" + simdjson::minify(err) + "}");
    EXPECT_EQ(PlanToJson(*text), "{\"error\":" + simdjson::minify(err) + "}");
    return;
  }
  ASSERT_TRUE(work.ok()) << work.status().ToString();

  auto derived = DerivePlan(*request);
  ASSERT_TRUE(derived.ok());
  simdjson::dom::element d = doc["derived"];
  EXPECT_EQ(derived->num_canonical_nodes, int64_t(d["num_canonical_nodes"]));
  EXPECT_EQ(derived->shuffle_block_size, int64_t(d["shuffle_block_size"]));
  EXPECT_EQ(derived->weighting.epoch_size, int64_t(d["epoch_size"]));
  EXPECT_EQ(derived->num_samples, int64_t(d["num_samples"]));
  EXPECT_EQ(derived->epoch_seed_change, bool(d["epoch_seed_change"]));
  EXPECT_EQ(derived->parallel_world.num_nodes, int64_t(d["parallel_world"]["num_nodes"]));
  EXPECT_EQ(derived->parallel_world.ranks_per_node, int64_t(d["parallel_world"]["ranks_per_node"]));
  size_t i = 0;
  for (simdjson::dom::element s : d["streams"].get_array()) {
    const auto& got = derived->weighting.streams.at(i++);
    EXPECT_EQ(got.choose, int64_t(s["choose"]));
    EXPECT_EQ(Bits(got.proportion), Bits(std::strtod(Str(s["proportion"]["hex"]).c_str(), nullptr)));
    EXPECT_EQ(Bits(got.repeat), Bits(std::strtod(Str(s["repeat"]["hex"]).c_str(), nullptr)));
  }

  // Byte for byte as the file holds "work" and "work_shape".
  const std::string rendered = RenderWork(*work);
  EXPECT_EQ(rendered, "{\"work\":" + simdjson::minify(doc["work"]) + ",\"work_shape\":" +
                          simdjson::minify(doc["work_shape"]) + "}");
  EXPECT_NE(text->find(rendered.substr(1, rendered.size() - 2)), std::string::npos);
  // The config object alone, as `sluice plan FILE` receives it.
  EXPECT_EQ(PlanToJson(simdjson::minify(doc["config"])), rendered);

  // Every real worker's own plan is its planning rank's slice, -1 skipped,
  // also from the epoch's checkpoints as a node shares them (written to
  // bytes and read back: engine/dataset/node_checkpoints.h).
  std::optional<EpochCheckpoints> shared;
  if (CheckpointsApply(request->config)) {
    auto made = PlanCheckpoints(*request);
    ASSERT_TRUE(made.ok()) << made.status().ToString();
    auto key = CheckpointsKey(*request);
    ASSERT_TRUE(key.ok()) << key.status().ToString();
    auto read = CheckpointsFromBytes(SerializeCheckpoints(*made, *key), *key, "checkpoints");
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    shared = std::move(*read);
  }
  const World& w = request->world;
  const int64_t k = derived->replication;
  for (int64_t node = 0; node < w.num_nodes; ++node)
    for (int64_t rank = 0; rank < w.ranks_per_node; ++rank)
      for (int64_t worker = 0; worker < w.workers_per_rank; ++worker) {
        auto mine = PlanWorker(*request, node, rank, worker);
        ASSERT_TRUE(mine.ok()) << mine.status().ToString();
        const int64_t g = (node * w.ranks_per_node + rank) / k;
        const int64_t pr = derived->parallel_world.ranks_per_node;
        const int64_t* begin = work->ids.data() + work->Offset(g / pr, g % pr, worker, 0, 0);
        std::vector<int64_t> expect(begin, begin + work->batches() * work->batch_size());
        std::erase(expect, -1);
        EXPECT_EQ(*mine, expect) << "node " << node << " rank " << rank << " worker " << worker;
        // And in windows of 3 ids (several canonical nodes a worker: each
        // read through its own window).
        std::vector<int64_t> windows;
        auto windowed = PlanWorkerWindows(*request, node, rank, worker, 3, [&](std::span<const int64_t> ids) {
          windows.insert(windows.end(), ids.begin(), ids.end());
          return Status::Ok();
        });
        ASSERT_TRUE(windowed.ok()) << windowed.status().ToString();
        EXPECT_EQ(windows, expect) << "in windows: node " << node << " rank " << rank << " worker " << worker;
        if (!shared) continue;
        std::optional<std::string> warned, warned_shared;
        ASSERT_TRUE(PlanWorker(*request, node, rank, worker, &warned).ok());
        auto from = PlanWorker(*request, node, rank, worker, &warned_shared, &*shared);
        ASSERT_TRUE(from.ok()) << from.status().ToString();
        EXPECT_EQ(*from, expect) << "shared checkpoints: node " << node << " rank " << rank << " worker " << worker;
        EXPECT_EQ(warned_shared, warned);
        windows.clear();
        windowed = PlanWorkerWindows(
            *request, node, rank, worker, 3,
            [&](std::span<const int64_t> ids) {
              windows.insert(windows.end(), ids.begin(), ids.end());
              return Status::Ok();
            },
            &warned_shared, nullptr, &*shared);
        ASSERT_TRUE(windowed.ok()) << windowed.status().ToString();
        EXPECT_EQ(windows, expect) << "shared, in windows: node " << node << " rank " << rank << " worker " << worker;
        EXPECT_EQ(warned_shared, warned);
        auto head = PlanWorkerHead(*request, node, rank, worker, 2, &warned_shared, &*shared);
        ASSERT_TRUE(head.ok()) << head.status().ToString();
        EXPECT_EQ(head->ids, std::vector<int64_t>(expect.begin(), expect.begin() + std::min<size_t>(2, expect.size())));
      }

  simdjson::dom::element batches;
  if (doc["dataloader_batches"].get(batches) == simdjson::SUCCESS) {
    std::vector<std::vector<int64_t>> expect;
    for (simdjson::dom::element b : batches.get_array()) expect.push_back(Ints(b));
    EXPECT_EQ(DataLoaderBatches(*work, 0, 0), expect);
  }
}

INSTANTIATE_TEST_SUITE_P(Mosaic, PlanConfigTest, ::testing::ValuesIn(ConfigFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

TEST(PlanConfigCount, AllFiftyFive) { EXPECT_EQ(ConfigFiles().size(), 55u); }

}  // namespace
}  // namespace sluice::planner

namespace sluice::planner {
namespace {

TEST(PlanJsonTest, BadInputGivesErrorObjects) {
  EXPECT_EQ(PlanToJson("{"), PlanToJson("{"));  // deterministic
  EXPECT_NE(PlanToJson("{").find("\"type\":\"ValueError\""), std::string::npos);
  EXPECT_NE(PlanToJson("[]").find("\"error\""), std::string::npos);
  EXPECT_NE(PlanToJson(R"({"streams": [{"shard_sizes": [4]}]})").find("batch_size"), std::string::npos);
  EXPECT_EQ(PlanToJson(R"({"streams": [{"shard_sizes": [4]}], "batch_size": 2, "shuffle_algo": "py9"})"),
            R"({"error":{"message":"'py9'","type":"KeyError"}})");
  EXPECT_NE(PlanToJson(R"({"streams": [{"shard_sizes": ["x"]}], "batch_size": 2})").find("shard_sizes"),
            std::string::npos);
  EXPECT_EQ(PlanToJson(R"({"streams": [{"shard_sizes": [2, 1]}], "batch_size": 2, "epoch_size": "0.003k"})"),
            R"({"work":[[[[[0,1],[2,-1]]]]],"work_shape":[1,1,1,2,2]})");
  EXPECT_EQ(RenderError(InvalidArgumentError("ValueError: say \"hi\"\n")),
            R"({"error":{"message":"say \"hi\"\n","type":"ValueError"}})");
}

}  // namespace
}  // namespace sluice::planner
