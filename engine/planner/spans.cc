#include "engine/planner/spans.h"

namespace sluice::planner {

std::vector<Span> UnitSpans(std::span<const int64_t> units) {
  std::vector<Span> out;
  out.reserve(units.size());
  int64_t at = 0;
  for (int64_t n : units) {
    out.push_back({at, at + n});
    at += n;
  }
  return out;
}

DividedSpans DivideSpans(std::span<const Span> spans, int64_t parts) {
  int64_t total = 0;
  for (const Span& s : spans) total += s.size();
  DividedSpans out;
  out.spans.reserve(spans.size() + static_cast<size_t>(parts));
  out.part_begin.reserve(static_cast<size_t>(parts) + 1);
  size_t next = 0;
  Span cur{};
  bool have = false;
  int64_t t = 0;
  for (int64_t i = 0; i < parts; ++i) {
    out.part_begin.push_back(out.spans.size());
    const int64_t e = static_cast<int64_t>(static_cast<__int128>(total) * (i + 1) / parts);
    while (have || next < spans.size()) {
      if (!have) {
        cur = spans[next++];
        have = true;
      }
      if (t + cur.size() <= e) {
        out.spans.push_back(cur);
        t += cur.size();
        have = false;
        continue;
      }
      if (t < e) {
        const int64_t take = e - t;
        out.spans.push_back({cur.begin, cur.begin + take});
        cur.begin += take;
        t = e;
      }
      break;
    }
  }
  out.part_begin.push_back(out.spans.size());
  return out;
}

}  // namespace sluice::planner
