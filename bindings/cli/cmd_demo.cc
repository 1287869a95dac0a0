// sluice demo [DIR]: the main job on an embedded default. Writes a synthetic
// dataset (or uses DIR when it already holds one), then inspects, verifies,
// reads every sample back and plans a shuffled epoch over a simulated world,
// checking that the plan covers the epoch.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "base/file.h"
#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/progress.h"
#include "engine/planner/plan.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/sample_json.h"
#include "formats/mds/mds_writer.h"

namespace sluice::cli {
namespace {

constexpr uint64_t kSamples = 100000;
constexpr size_t kEmbedding = 32;

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

Status WriteSynthetic(const std::string& dir) {
  ShardedWriterOptions options;
  options.compression = "zstd";
  options.hashes = {"xxh64"};
  options.size_limit = uint64_t{1} << 20;
  SLUICE_ASSIGN_OR_RETURN(
      auto writer, MdsWriter::Create(dir, {{"id", "int"}, {"text", "str"}, {"label", "uint8"},
                                           {"embedding", "ndarray:float32:32"}},
                                     options));
  // Columns sorted by name: embedding, id, label, text.
  std::vector<float> emb(kEmbedding);
  std::vector<MdsValue> values(4);
  Progress progress("writing", kSamples);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t i = 0; i < kSamples; ++i) {
    for (float& e : emb) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      e = static_cast<float>(x % 2001) / 1000.0f - 1.0f;
    }
    std::string text = "sample " + std::to_string(i) + " says hello";
    values[0] = MdsNdArray{NdDtype::kFloat32, {kEmbedding},
                           std::string_view(reinterpret_cast<const char*>(emb.data()),
                                            emb.size() * sizeof(float))};
    values[1] = static_cast<int64_t>(i);
    values[2] = static_cast<uint64_t>(i % 10);
    values[3] = MdsText{text};
    SLUICE_RETURN_IF_ERROR(writer->Write(values));
    progress.Add(1);
  }
  return writer->Finish();
}

Status Demo(const std::string& dir) {
  if (!FileExists(JoinPath(dir, "index.json"))) {
    std::printf("== writing a synthetic dataset of %llu samples to %s\n",
                static_cast<unsigned long long>(kSamples), dir.c_str());
    auto t = std::chrono::steady_clock::now();
    SLUICE_RETURN_IF_ERROR(WriteSynthetic(dir));
    std::printf("   written in %.2f s\n", Seconds(t));
  }
  std::printf("\n== sluice inspect %s\n", dir.c_str());
  std::fflush(stdout);
  if (RunInspect({dir}) != 0) return InternalError("inspect failed");
  std::printf("\n== sluice verify %s\n", dir.c_str());
  std::fflush(stdout);
  if (RunVerify({dir}) != 0) return CorruptError("verification failed");
  std::printf("\n== sluice cat %s 0\n", dir.c_str());
  std::fflush(stdout);
  if (RunCat({dir, "0"}) != 0) return InternalError("cat failed");

  SLUICE_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(dir));
  DatasetReader& r = *reader;
  // A shuffled epoch for 2 nodes x 2 ranks x 2 workers, as Mosaic plans it.
  planner::PlanRequest req;
  req.config.batch_size = 16;
  req.config.shuffle = true;
  req.config.num_canonical_nodes = 2;
  req.world = {2, 2, 2, {}, {}, {}};
  planner::StreamSpec stream;
  for (const ShardEntry& e : r.index().shards) stream.shard_sizes.push_back(static_cast<int64_t>(e.samples));
  req.streams.push_back(stream);
  std::printf("\n== planning a shuffled epoch (py1e, seed 9176) for 2 nodes x 2 ranks x 2 workers\n");
  auto t = std::chrono::steady_clock::now();
  SLUICE_ASSIGN_OR_RETURN(planner::WorkArray work, planner::PlanEpoch(req));
  std::printf("   planned in %.3f s: work shape [%lld, %lld, %lld, %lld, %lld]\n", Seconds(t),
              (long long)work.shape[0], (long long)work.shape[1], (long long)work.shape[2],
              (long long)work.shape[3], (long long)work.shape[4]);

  // Read every worker's samples in plan order, touching every byte.
  std::vector<uint32_t> seen(r.num_samples(), 0);
  SampleFields f;
  uint64_t bytes = 0, samples = 0, checksum = 0;
  t = std::chrono::steady_clock::now();
  {
    Progress progress("reading", r.num_samples());
    for (int64_t id : work.ids) {
      if (id < 0) continue;
      SLUICE_RETURN_IF_ERROR(r.Read(static_cast<uint64_t>(id), &f));
      for (char c : f.raw) checksum += static_cast<unsigned char>(c);
      bytes += f.raw.size();
      ++samples;
      ++seen[static_cast<size_t>(id)];
      progress.Add(1);
    }
  }
  double secs = Seconds(t);
  uint64_t missing = 0;
  for (uint32_t s : seen) missing += s == 0;
  std::printf("   read %llu samples (%.1f MB) in plan order in %.2f s: %.0f samples/s, %.0f MB/s "
              "(checksum %llu)\n",
              (unsigned long long)samples, bytes / 1e6, secs, samples / secs, bytes / 1e6 / secs,
              (unsigned long long)checksum);
  if (missing != 0) {
    return InternalError("the plan left " + std::to_string(missing) + " samples out of the epoch");
  }
  std::printf("   every one of the %llu samples was planned and read at least once\n",
              (unsigned long long)r.num_samples());
  return Status::Ok();
}

}  // namespace

int RunDemo(const Args& args) {
  auto flags = ParseFlags(args, {}, {});
  if (!flags.ok()) return Error("demo", flags.status(), 2);
  if (flags->positional.size() > 1) {
    std::fputs("usage: sluice demo [DIR]\n", stderr);
    return 2;
  }
  std::string dir;
  if (flags->positional.empty()) {
    char tmpl[] = "/tmp/sluice-demo-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return Error("demo", IoError("cannot create a temp folder"));
    dir = tmpl;
  } else {
    dir = flags->positional[0];
  }
  Status st = Demo(dir);
  if (!st.ok()) return Error("demo", st);
  std::printf("\ndemo finished: dataset in %s\n", dir.c_str());
  return 0;
}

}  // namespace sluice::cli
