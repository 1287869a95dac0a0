#include "formats/parquet/level_assembler.h"

#include <algorithm>
#include <cstring>
#include <string>

namespace sluice::parquet {

LevelAssembler::LevelAssembler(const Field& field, const LeafColumn& leaf, ColumnBuffer* out)
    : field_(field),
      out_(out),
      max_def_(static_cast<uint32_t>(leaf.max_definition_level)),
      max_rep_(static_cast<uint32_t>(leaf.max_repetition_level)) {
  out_->list_depth = field.list_depth;
  out_->lists.resize(field.list_depth);
}

Status LevelAssembler::Append(const uint32_t* def, const uint32_t* rep, size_t n) {
  const size_t depth = field_.list_depth;
  const auto fail = [&](size_t i, const std::string& what) {
    return CorruptError("level " + std::to_string(seen_ + i) + ": " + what);
  };
  if (depth == 0) {  // a primitive: one row and one leaf slot per level
    const uint32_t present = static_cast<uint32_t>(field_.slots[0].present_from);
    auto& validity = out_->validity;
    const size_t base = validity.size();
    validity.resize(base + n, 1);
    size_t valid = n;
    if (def != nullptr) {
      valid = 0;
      for (size_t i = 0; i < n; ++i) {
        if (def[i] > max_def_) {
          return fail(i, "definition level " + std::to_string(def[i]) + " above the maximum " +
                             std::to_string(max_def_));
        }
        validity[base + i] = def[i] >= present;
        valid += def[i] >= present;
      }
    }
    if (rep != nullptr) {
      for (size_t i = 0; i < n; ++i) {
        if (rep[i] != 0) return fail(i, "repetition level " + std::to_string(rep[i]) + " above the maximum 0");
      }
    }
    out_->num_rows += n;
    present_ += valid;
    seen_ += n;
    return Status::Ok();
  }
  if (depth == 1 && def != nullptr && rep != nullptr) {
    return AppendList(def, rep, n);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint32_t d = def ? def[i] : 0;
    const uint32_t r = rep ? rep[i] : 0;
    if (d > max_def_) {
      return fail(i, "definition level " + std::to_string(d) + " above the maximum " +
                         std::to_string(max_def_));
    }
    if (r > max_rep_) {
      return fail(i, "repetition level " + std::to_string(r) + " above the maximum " +
                         std::to_string(max_rep_));
    }
    size_t s = r;
    if (r == 0) {
      ++out_->num_rows;
    } else if (seen_ + i == 0 || r > open_) {
      return fail(i, "repetition level " + std::to_string(r) + " continues a list that is not open");
    } else if (d < static_cast<uint32_t>(field_.slots[r - 1].entries_from)) {
      return fail(i, "definition level " + std::to_string(d) + " leaves empty a list that repetition level " +
                         std::to_string(r) + " continues");
    }
    for (;; ++s) {
      if (s > 0) ++out_->lists[s - 1].offsets.back();  // a child of the open list
      if (s == depth) {
        out_->validity.push_back(d >= static_cast<uint32_t>(field_.slots[s].present_from));
        present_ += out_->validity.back();
        open_ = depth;
        break;
      }
      ListSlots& list = out_->lists[s];
      const bool present = d >= static_cast<uint32_t>(field_.slots[s].present_from);
      list.validity.push_back(present);
      list.offsets.push_back(list.offsets.back());
      if (!present || d < static_cast<uint32_t>(field_.slots[s].entries_from)) {
        open_ = s;
        break;
      }
    }
  }
  seen_ += n;
  return Status::Ok();
}

namespace {

// Four lanes of levels (GCC's and Clang's vector extension: SSE2 on x86-64,
// NEON on arm64, plain code elsewhere).
typedef uint32_t Levels4 __attribute__((vector_size(16)));

inline Levels4 LoadLevels4(const uint32_t* p) {
  Levels4 v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// How many of the n level pairs from the start, in whole blocks of 8, are
// present elements continuing an open list (repetition level 1, definition
// level in [lo, lo + span]): the token ids' shape, runs of dozens to
// thousands between row starts. Their leaf validity (all 1) into out[0, k).
// Two vectors a block, where the per-entry loop below spends ~15
// instructions a level pair (BENCHMARKS.md, "The row group decode's level
// pairs").
size_t PresentElements(const uint32_t* def, const uint32_t* rep, size_t n, uint32_t lo,
                       uint32_t span, uint8_t* out) {
  const Levels4 one = {1, 1, 1, 1};
  const Levels4 los = {lo, lo, lo, lo};
  const Levels4 spans = {span, span, span, span};
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    const Levels4 bad = (LoadLevels4(rep + k) ^ one) | (LoadLevels4(rep + k + 4) ^ one) |
                        (Levels4)(LoadLevels4(def + k) - los > spans) |
                        (Levels4)(LoadLevels4(def + k + 4) - los > spans);
    uint64_t half[2];
    std::memcpy(half, &bad, sizeof(half));
    if ((half[0] | half[1]) != 0) break;
    constexpr uint64_t kOnes = 0x0101010101010101;
    std::memcpy(out + k, &kOnes, sizeof(kOnes));
  }
  return k;
}

// How many of the n level pairs from the start continue an open list with
// an element (repetition level 1, definition level in [entries, max_def]);
// their leaf validity into out[0, k), the present ones counted in *valid.
size_t ContinueList(const uint32_t* def, const uint32_t* rep, size_t n, uint32_t entries,
                    uint32_t max_def, uint32_t value_present, uint8_t* out, size_t* valid) {
  // Present elements first, a block at a time; the loops below take the
  // rest from the first block holding anything else.
  const uint32_t lo = std::max(entries, value_present);
  size_t k = lo <= max_def ? PresentElements(def, rep, n, lo, max_def - lo, out) : 0;
  size_t present = k;
  const uint32_t span = max_def - entries;
  // Blocks of 8 checked together (unrolled, vectorized where the compiler
  // can), then one at a time up to the first level that is not an element.
  for (; k + 8 <= n; k += 8) {
    uint32_t bad = 0;
    for (size_t j = 0; j < 8; ++j) {
      bad |= (rep[k + j] ^ 1u) | static_cast<uint32_t>(def[k + j] - entries > span);
    }
    if (bad != 0) break;
    for (size_t j = 0; j < 8; ++j) {
      const uint8_t p = def[k + j] >= value_present;
      out[k + j] = p;
      present += p;
    }
  }
  for (; k < n; ++k) {
    const uint32_t d = def[k];
    if (rep[k] != 1 || d - entries > span) break;  // unsigned: d in range
    const uint8_t p = d >= value_present;
    out[k] = p;
    present += p;
  }
  *valid += present;
  return k;
}

}  // namespace

// The common shape (list<primitive>) without the general loop over slots:
// the same rules and errors. The leaf validity gets room for the most a page
// can add (a slot per level pair), is written through a pointer and then
// trimmed; the list's end offset is kept in a local: no push_back per
// element, only per row.
Status LevelAssembler::AppendList(const uint32_t* def, const uint32_t* rep, size_t n) {
  const uint32_t list_present = static_cast<uint32_t>(field_.slots[0].present_from);
  const uint32_t entries = static_cast<uint32_t>(field_.slots[0].entries_from);
  const uint32_t value_present = static_cast<uint32_t>(field_.slots[1].present_from);
  ListSlots& list = out_->lists[0];
  auto& validity = out_->validity;
  const size_t leaf0 = validity.size();
  size_t valid = 0;
  validity.resize(leaf0 + n);
  uint8_t* leaf_valid = validity.data() + leaf0;
  int64_t end = list.offsets.back();  // of the open list, stored when a row starts
  // Locals: the byte stores below may alias members, which would be
  // reloaded on every level otherwise.
  size_t open = open_;
  const uint32_t max_def = max_def_;
  const uint64_t seen = seen_;
  size_t rows = 0;
  Status error;
  for (size_t i = 0; i < n; ++i) {
    if (open != 0 && entries <= max_def) {  // elements continuing the open list, in a tight loop
      const size_t k = ContinueList(def + i, rep + i, n - i, entries, max_def, value_present,
                                    leaf_valid, &valid);
      leaf_valid += k;
      end += static_cast<int64_t>(k);
      i += k;
      if (i == n) break;
    }
    const uint32_t d = def[i];
    const uint32_t r = rep[i];
    if (d > max_def || r > 1) {
      const std::string what = d > max_def
          ? "definition level " + std::to_string(d) + " above the maximum " + std::to_string(max_def)
          : "repetition level " + std::to_string(r) + " above the maximum " + std::to_string(max_rep_);
      error = CorruptError("level " + std::to_string(seen + i) + ": " + what);
      break;
    }
    if (r == 0) {
      list.offsets.back() = end;
      list.offsets.push_back(end);
      list.validity.push_back(d >= list_present);
      ++rows;
      if (d < entries) {
        open = 0;
        continue;
      }
    } else if (open == 0) {  // also before the chunk's first row
      error = CorruptError("level " + std::to_string(seen + i) +
                           ": repetition level 1 continues a list that is not open");
      break;
    } else if (d < entries) {
      error = CorruptError("level " + std::to_string(seen + i) + ": definition level " +
                           std::to_string(d) +
                           " leaves empty a list that repetition level 1 continues");
      break;
    }
    ++end;
    *leaf_valid++ = d >= value_present;
    valid += d >= value_present;
    open = 1;
  }
  list.offsets.back() = end;
  validity.resize(static_cast<size_t>(leaf_valid - validity.data()));
  out_->num_rows += rows;
  present_ += valid;
  open_ = open;
  if (!error.ok()) return error;
  seen_ += n;
  return Status::Ok();
}

}  // namespace sluice::parquet
