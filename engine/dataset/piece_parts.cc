#include "engine/dataset/piece_parts.h"

#include <algorithm>

namespace sluice {

uint64_t PiecePartSize(uint64_t remote_part, PieceUse use) {
  const uint64_t part = std::max<uint64_t>(1, remote_part);
  return use == PieceUse::kWaitedOn ? (part + 1) / 2 : part;
}

std::vector<DataSpan> PieceParts(const std::vector<parquet::ByteRange>& reads, uint64_t part,
                                 std::vector<size_t>* first_part) {
  part = std::max<uint64_t>(1, part);
  std::vector<DataSpan> spans;
  if (first_part != nullptr) first_part->clear();
  for (const parquet::ByteRange& r : reads) {
    if (first_part != nullptr) first_part->push_back(spans.size());
    uint64_t at = 0;
    do {
      spans.push_back(DataSpan{r.offset + at, std::min(part, r.size - at)});
      at += part;
    } while (at < r.size);
  }
  if (first_part != nullptr) first_part->push_back(spans.size());
  return spans;
}

}  // namespace sluice
