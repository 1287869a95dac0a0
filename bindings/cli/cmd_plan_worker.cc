// sluice plan DATASET --world NODES:RANKS:WORKERS --rank R --worker W ...:
// the samples one DataLoader worker reads in an epoch, in order, from the
// dataset's index alone (the planner plans only that worker's share).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "bindings/cli/commands.h"
#include "bindings/cli/dataset_source.h"
#include "bindings/cli/flags.h"
#include "engine/planner/plan.h"
#include "formats/dataset/dataset_reader.h"

namespace sluice::cli {
namespace {

constexpr char kPlanWorkerUsage[] =
    "usage: sluice plan DATASET --world NODES:RANKS:WORKERS --rank R --worker W --batch-size B\n"
    "                   [--epoch E] [--sample-in-epoch S] [--shuffle] [--shuffle-seed N]\n"
    "                   [--shuffle-algo ALGO] [--shuffle-block-size N] [--num-canonical-nodes N]\n"
    "  R is the global rank (node = R / RANKS); W the DataLoader worker of that rank.\n"
    "  Prints one line per sample: stream, shard, index in the shard, global sample id.\n";

Result<planner::World> ParseWorld(const std::string& text) {
  const size_t a = text.find(':'), b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) return InvalidArgumentError("--world wants NODES:RANKS:WORKERS, got '" + text + "'");
  planner::World w;
  SLUICE_ASSIGN_OR_RETURN(uint64_t n, ParseCount(text.substr(0, a), "--world nodes"));
  SLUICE_ASSIGN_OR_RETURN(uint64_t r, ParseCount(text.substr(a + 1, b - a - 1), "--world ranks"));
  SLUICE_ASSIGN_OR_RETURN(uint64_t k, ParseCount(text.substr(b + 1), "--world workers"));
  if (n == 0 || r == 0 || k == 0 || n > (1u << 20) || r > (1u << 20) || k > (1u << 20)) {
    return InvalidArgumentError("--world counts must be between 1 and 2^20, got '" + text + "'");
  }
  w.num_nodes = int64_t(n);
  w.ranks_per_node = int64_t(r);
  w.workers_per_rank = int64_t(k);
  return w;
}

Result<int64_t> Count(const Flags& f, const std::string& name, std::optional<int64_t> fallback) {
  auto v = f.Get(name);
  if (!v) {
    if (fallback) return *fallback;
    return InvalidArgumentError("--" + name + " is required");
  }
  SLUICE_ASSIGN_OR_RETURN(uint64_t n, ParseCount(*v, "--" + name));
  if (n > (uint64_t{1} << 62)) return InvalidArgumentError("--" + name + " is too large");
  return int64_t(n);
}

Status Plan(const Flags& f) {
  SLUICE_ASSIGN_OR_RETURN(planner::World world, ParseWorld(*f.Get("world")));
  planner::PlanRequest q;
  SLUICE_ASSIGN_OR_RETURN(const int64_t rank, Count(f, "rank", std::nullopt));
  SLUICE_ASSIGN_OR_RETURN(const int64_t worker, Count(f, "worker", std::nullopt));
  SLUICE_ASSIGN_OR_RETURN(const int64_t batch, Count(f, "batch-size", std::nullopt));
  SLUICE_ASSIGN_OR_RETURN(q.epoch, Count(f, "epoch", 0));
  SLUICE_ASSIGN_OR_RETURN(q.sample_in_epoch, Count(f, "sample-in-epoch", 0));
  SLUICE_ASSIGN_OR_RETURN(const int64_t seed, Count(f, "shuffle-seed", int64_t{9176}));
  if (rank >= world.num_nodes * world.ranks_per_node) {
    return InvalidArgumentError("--rank " + std::to_string(rank) + " is outside the world's " +
                                std::to_string(world.num_nodes * world.ranks_per_node) + " ranks");
  }
  q.world = world;
  q.config.batch_size = batch;
  q.config.shuffle = f.Has("shuffle");
  q.config.shuffle_seed = uint64_t(seed);
  if (auto algo = f.Get("shuffle-algo")) {
    SLUICE_ASSIGN_OR_RETURN(q.config.shuffle_algo, planner::ParseShuffleAlgo(*algo));
  }
  if (f.Get("shuffle-block-size")) {
    SLUICE_ASSIGN_OR_RETURN(q.config.shuffle_block_size, Count(f, "shuffle-block-size", std::nullopt));
  }
  if (f.Get("num-canonical-nodes")) {
    SLUICE_ASSIGN_OR_RETURN(q.config.num_canonical_nodes, Count(f, "num-canonical-nodes", std::nullopt));
  }

  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<DatasetSource> source, DatasetSource::Open(f.positional[0]));
  auto reader = DatasetReader::Open(source->folder());
  if (!reader.ok()) return source->Explain(reader.status());
  planner::StreamSpec stream;
  std::vector<int64_t> first_id;  // per shard, then the total
  int64_t at = 0;
  for (const ShardEntry& e : (*reader)->index().shards) {
    first_id.push_back(at);
    stream.shard_sizes.push_back(int64_t(e.samples));
    at += int64_t(e.samples);
  }
  first_id.push_back(at);
  q.streams.push_back(std::move(stream));

  SLUICE_ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                          planner::PlanWorker(q, rank / world.ranks_per_node, rank % world.ranks_per_node, worker));
  std::string out = "stream\tshard\tindex\tsample\n";
  for (int64_t id : ids) {
    const size_t shard = size_t(std::upper_bound(first_id.begin(), first_id.end(), id) - first_id.begin()) - 1;
    out += "0\t" + std::to_string(shard) + "\t" + std::to_string(id - first_id[shard]) + "\t" + std::to_string(id) +
           "\n";
    if (out.size() > (1u << 16)) {
      std::fwrite(out.data(), 1, out.size(), stdout);
      out.clear();
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return Status::Ok();
}

}  // namespace

int RunPlanWorker(const Args& args) {
  auto flags = ParseFlags(args,
                          {"world", "rank", "worker", "batch-size", "epoch", "sample-in-epoch", "shuffle-seed",
                           "shuffle-algo", "shuffle-block-size", "num-canonical-nodes"},
                          {"shuffle"});
  if (!flags.ok()) return Error("plan", flags.status(), 2);
  if (flags->positional.size() != 1 || !flags->Get("world")) {
    std::fputs(kPlanWorkerUsage, stderr);
    return 2;
  }
  Status st = Plan(*flags);
  if (!st.ok()) return Error("plan", st);
  return 0;
}

}  // namespace sluice::cli
