// The planner's result: a dense 5-D array of sample ids, shape
// (nodes, ranks_per_node, workers_per_rank, batches_per_worker, batch_size),
// row-major, with -1 for padding (never yielded), as Mosaic's generate_work.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sluice::planner {

struct WorkArray {
  std::array<int64_t, 5> shape{0, 0, 0, 0, 0};  // P, R, W, batches, B
  std::vector<int64_t> ids;                      // product(shape) values

  int64_t nodes() const { return shape[0]; }
  int64_t ranks() const { return shape[1]; }
  int64_t workers() const { return shape[2]; }
  int64_t batches() const { return shape[3]; }
  int64_t batch_size() const { return shape[4]; }

  // Flat offset of element [p][r][w][b][s].
  int64_t Offset(int64_t p, int64_t r, int64_t w, int64_t b, int64_t s) const {
    return (((p * shape[1] + r) * shape[2] + w) * shape[3] + b) * shape[4] + s;
  }
  int64_t& At(int64_t p, int64_t r, int64_t w, int64_t b, int64_t s) {
    return ids[static_cast<size_t>(Offset(p, r, w, b, s))];
  }
  int64_t At(int64_t p, int64_t r, int64_t w, int64_t b, int64_t s) const {
    return ids[static_cast<size_t>(Offset(p, r, w, b, s))];
  }
};

// The values in "traversal order": axes (batch, worker, node, rank, slot) from
// outer to inner (numpy transpose(3, 2, 0, 1, 4)), i.e. global batch by global
// batch. Allocates one vector of the array's size.
std::vector<int64_t> TraversalOrder(const WorkArray& work);

// n copies of `value`. Big arrays are asked to be backed by huge pages
// (madvise; a no-op where unsupported): faulting in 4 KiB pages costs more
// than writing the plan.
std::vector<int64_t> FilledIds(size_t n, int64_t value);

// Replaces every x != -1 by table[x]. Every x must be < table.size().
void MapThrough(std::vector<int64_t>& ids, const std::vector<int64_t>& table);

}  // namespace sluice::planner
