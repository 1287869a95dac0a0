// random batching with the py1e shuffle over a plain orig partition, written
// canonical node by canonical node: each node's shuffled ids go straight to
// the slots that read them. Same values as partition -> shuffle -> remap
// (BatchRandomGeneric), without the partition's array of positions, the
// whole permutation, or the passes between them.
#include <string>
#include <thread>

#include "base/exception_status.h"
#include "engine/planner/batching.h"
#include "engine/planner/partition_orig.h"
#include "engine/planner/rng.h"
#include "engine/planner/shuffle_algos.h"
#include "engine/planner/shuffle_py1e.h"

namespace sluice::planner {
namespace {

struct PartBuffers {
  std::vector<int64_t> ids;
  Py1eScratch scratch;
};

}  // namespace

bool Py1eDirectApplies(const BatchContext& ctx, const PartitionArgs& pa) {
  const PlanConfig& c = ctx.request.config;
  if (!c.shuffle || c.shuffle_algo != ShuffleAlgo::kPy1e) return false;
  if (c.partition_algo == PartitionAlgo::kRelaxed && !RelaxedIsOrig(pa)) return false;
  auto layout = OrigLayout::Make(pa);
  return layout.ok() && layout->plain();  // errors: the generic path reports them
}

Result<WorkArray> BatchRandomPy1e(const BatchContext& ctx, const Resampled& res, const PartitionArgs& pa) {
  const PlanConfig& c = ctx.request.config;
  SLUICE_ASSIGN_OR_RETURN(OrigLayout layout, OrigLayout::Make(pa));  // Mosaic partitions first
  const int64_t C = ctx.C();
  const int64_t block = ctx.derived.shuffle_block_size;
  SLUICE_ASSIGN_OR_RETURN(const int64_t total, CheckShuffleArgs(res.shuffle_units, C, block));
  if (total != pa.num_samples || !layout.plain()) return InternalError("py1e direct path on a layout it cannot write");

  WorkArray work;
  work.shape = layout.shape();
  work.ids = FilledIds(size_t(work.shape[0] * work.shape[1] * work.shape[2] * work.shape[3] * work.shape[4]), -1);
  const int64_t* table = res.identity ? nullptr : res.small_per_big.data();

  numpy::Generator ep = MakeRng(c.shuffle_seed, uint64_t(ctx.request.epoch));
  const DividedSpans parts = ShuffledParts(res.shuffle_units, C, c.shuffle_seed, ep);
  const BlockRange br = BlockBounds(block);
  // The draws of all canonical nodes come from one generator, in order, on
  // this thread; sorting node i and writing it out (independent of the
  // draws) runs on a second thread while node i+1 is drawn. Deterministic:
  // the threads share no generator and write disjoint slots.
  const bool pipeline = ctx.request.threads != 1 && total >= kThreadedPlanMin && C > 1;
  PartBuffers buffers[2];
  std::thread writer;
  std::exception_ptr writer_error;  // no exception may leave a thread
  Status status;
  for (int64_t i = 0; i < C && status.ok(); ++i) {
    std::span<const Span> list(parts.spans.data() + parts.part_begin[size_t(i)],
                               parts.part_begin[size_t(i) + 1] - parts.part_begin[size_t(i)]);
    PartBuffers& mine = buffers[pipeline ? i % 2 : 0];  // one set when nothing overlaps
    const int64_t size = (i + 1 < C ? layout.row_begin(i + 1) : total) - layout.row_begin(i);
    mine.ids.resize(size_t(size));
    status = Py1eDraw(list, br, ep, mine.ids.data(), mine.scratch, C);
    if (writer.joinable()) writer.join();
    if (writer_error) status = StatusFromException(writer_error, "sorting a node's samples");
    if (!status.ok()) break;
    auto finish = [&layout, &work, table, i, size, &mine] {
      Py1eSort(size, mine.ids.data(), mine.scratch);
      layout.ScatterRow(i, mine.ids.data(), size, table, work);
    };
    if (pipeline) {
      writer = std::thread([finish, &writer_error] { writer_error = CatchAll(finish); });
    } else {
      finish();
    }
  }
  if (writer.joinable()) writer.join();
  if (writer_error && status.ok()) {
    status = StatusFromException(writer_error, "sorting a node's samples");
  }
  if (!status.ok()) return status;
  layout.FillExtension(work);
  return work;
}

}  // namespace sluice::planner
