// sluice plan DATASET --world NODES:RANKS:WORKERS --rank R --worker W ...:
// the samples one DataLoader worker reads in an epoch, in order, from the
// dataset's index alone (the planner plans only that worker's share).
// With --steps A:B instead of --worker: the batches every rank (or rank R)
// takes at global steps A to B - 1, as torch's DataLoader deals its
// workers' batches (planner::PlanSteps).
#include <charconv>
#include <cstdio>
#include <optional>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "base/file.h"
#include "bindings/cli/commands.h"
#include "bindings/cli/dataset_source.h"
#include "bindings/cli/flags.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_steps.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/dataset/sample_locator.h"
#include "formats/index/shard_table.h"

namespace sluice::cli {
namespace {

constexpr char kPlanWorkerUsage[] =
    "usage: sluice plan DATASET --world NODES:RANKS:WORKERS --rank R --worker W --batch-size B\n"
    "                   [--epoch E] [--sample-in-epoch S] [--shuffle] [--shuffle-seed N]\n"
    "                   [--shuffle-algo ALGO] [--shuffle-block-size N] [--num-canonical-nodes N]\n"
    "       sluice plan DATASET --world NODES:RANKS:WORKERS --steps A:B [--rank R] --batch-size B ...\n"
    "  R is the global rank (node = R / RANKS); W the DataLoader worker of that rank.\n"
    "  Prints one line per sample: stream, shard, index in the shard, global sample id.\n"
    "  --steps A:B (or N): the samples of global steps A to B - 1 (the batch each rank takes\n"
    "  at that step, from its DataLoader worker step mod WORKERS), counted from the start of\n"
    "  the epoch, or from --sample-in-epoch; one line per sample: step, rank, then as above.\n";

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

// "A:B" (A < B) or "N" (N:N+1): a half-open range of steps.
Result<std::pair<int64_t, int64_t>> ParseSteps(const std::string& text) {
  const size_t colon = text.find(':');
  const std::string what = "--steps wants A:B (steps A to B - 1) or N, got '" + text + "'";
  auto a = ParseCount(text.substr(0, colon), "--steps");
  if (!a.ok() || *a > (uint64_t{1} << 40)) return InvalidArgumentError(what);
  if (colon == std::string::npos) return std::pair<int64_t, int64_t>(int64_t(*a), int64_t(*a) + 1);
  auto b = ParseCount(text.substr(colon + 1), "--steps");
  if (!b.ok() || *b <= *a || *b > (uint64_t{1} << 40)) return InvalidArgumentError(what);
  return std::pair<int64_t, int64_t>(int64_t(*a), int64_t(*b));
}

// "0\tSHARD\tINDEX\tID\n" (stream 0): to_chars into the line, a billion
// lines being the output of a one-process plan of a pretraining epoch.
void AppendSampleLine(std::string& out, size_t shard, uint32_t index, int64_t id) {
  auto put = [&out](auto value, char after) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    out.append(digits, end);
    out.push_back(after);
  };
  out.append("0\t");
  put(shard, '\t');
  put(index, '\t');
  put(id, '\n');
}

void Flush(std::string& out, bool last = false) {
  if (out.size() > (1u << 16) || last) {
    std::fwrite(out.data(), 1, out.size(), stdout);
    out.clear();
  }
}

// Steps [first, end) of global rank `rank` (< 0: every rank), as the
// planner deals them (planner::PlanSteps).
Status PrintSteps(const planner::PlanRequest& q, int64_t rank, int64_t first, int64_t end,
                  const SampleLocator& locator) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<planner::StepBatch> steps, planner::PlanSteps(q, rank, first, end));
  std::string out = "step\trank\tstream\tshard\tindex\tsample\n";
  for (const planner::StepBatch& batch : steps) {
    for (int64_t id : batch.ids) {
      const auto [shard, index] = locator.Locate(uint64_t(id));
      out += std::to_string(batch.step) + "\t" + std::to_string(batch.rank) + "\t";
      AppendSampleLine(out, shard, index, id);
      Flush(out);
    }
  }
  Flush(out, true);
  return Status::Ok();
}

Status Plan(const Flags& f) {
  SLUICE_ASSIGN_OR_RETURN(planner::World world, ParseWorld(*f.Get("world")));
  planner::PlanRequest q;
  std::optional<std::pair<int64_t, int64_t>> steps;
  if (auto text = f.Get("steps")) {
    SLUICE_ASSIGN_OR_RETURN(steps, ParseSteps(*text));
    if (f.Get("worker")) {
      return InvalidArgumentError("--steps gives each rank's batches whichever worker made them (step s comes "
                                  "from worker s mod WORKERS); leave out --worker");
    }
  }
  SLUICE_ASSIGN_OR_RETURN(const int64_t rank, Count(f, "rank", steps ? std::optional<int64_t>(-1) : std::nullopt));
  SLUICE_ASSIGN_OR_RETURN(const int64_t worker, Count(f, "worker", steps ? std::optional<int64_t>(0) : std::nullopt));
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
  planner::StreamSpec stream;
  std::vector<uint64_t> starts{0};  // each shard's first sample id, then the total
  if (FileExists(JoinPath(source->folder(), "index.json"))) {
    // Through the shard table, as `sluice inspect` opens it: a million
    // shards cost no ShardEntry each (2.9 GB and most of the time of a
    // plan of a 4B-sample, 1M-shard index went to those).
    auto opened = OpenDatasetTable(source->folder());
    if (!opened.ok()) return source->Explain(opened.status());
    for (size_t i = 0; i < opened->table.size(); ++i) {
      stream.shard_sizes.push_back(int64_t(opened->table.samples(i)));
      starts.push_back(starts.back() + opened->table.samples(i));
    }
  } else {
    auto reader = DatasetReader::Open(source->folder());
    if (!reader.ok()) return source->Explain(reader.status());
    for (const ShardEntry& e : (*reader)->index().shards) {
      stream.shard_sizes.push_back(int64_t(e.samples));
      starts.push_back(starts.back() + e.samples);
    }
  }
  q.streams.push_back(std::move(stream));
  const SampleLocator locator(std::move(starts));

  if (steps) {
    return PrintSteps(q, rank, steps->first, steps->second, locator);
  }
  // In windows: a one-process world's plan is the whole epoch, 8 bytes an
  // id held whole (32 GB at 4B samples); windowed it is the window's.
  std::fputs("stream\tshard\tindex\tsample\n", stdout);
  std::string out;
  Result<bool> done = planner::PlanWorkerWindows(
      q, rank / world.ranks_per_node, rank % world.ranks_per_node, worker, int64_t{1} << 20,
      [&](std::span<const int64_t> ids) -> Status {
        for (int64_t id : ids) {
          const auto [shard, index] = locator.Locate(uint64_t(id));
          AppendSampleLine(out, shard, index, id);
          Flush(out);
        }
        return Status::Ok();
      });
  Flush(out, true);
  return done.status();
}

}  // namespace

int RunPlanWorker(const Args& args) {
  auto flags = ParseFlags(args,
                          {"world", "rank", "worker", "steps", "batch-size", "epoch", "sample-in-epoch", "shuffle-seed",
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
