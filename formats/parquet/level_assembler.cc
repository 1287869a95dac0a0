#include "formats/parquet/level_assembler.h"

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
    if (def != nullptr) {
      for (size_t i = 0; i < n; ++i) {
        if (def[i] > max_def_) {
          return fail(i, "definition level " + std::to_string(def[i]) + " above the maximum " +
                             std::to_string(max_def_));
        }
        validity[base + i] = def[i] >= present;
      }
    }
    if (rep != nullptr) {
      for (size_t i = 0; i < n; ++i) {
        if (rep[i] != 0) return fail(i, "repetition level " + std::to_string(rep[i]) + " above the maximum 0");
      }
    }
    out_->num_rows += n;
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

// The common shape (list<primitive>) without the general loop over slots:
// the same rules and errors.
Status LevelAssembler::AppendList(const uint32_t* def, const uint32_t* rep, size_t n) {
  const uint32_t list_present = static_cast<uint32_t>(field_.slots[0].present_from);
  const uint32_t entries = static_cast<uint32_t>(field_.slots[0].entries_from);
  const uint32_t value_present = static_cast<uint32_t>(field_.slots[1].present_from);
  ListSlots& list = out_->lists[0];
  std::vector<uint8_t>& validity = out_->validity;
  for (size_t i = 0; i < n; ++i) {
    const uint32_t d = def[i];
    const uint32_t r = rep[i];
    if (d > max_def_ || r > 1) {
      const std::string what = d > max_def_
          ? "definition level " + std::to_string(d) + " above the maximum " + std::to_string(max_def_)
          : "repetition level " + std::to_string(r) + " above the maximum " + std::to_string(max_rep_);
      return CorruptError("level " + std::to_string(seen_ + i) + ": " + what);
    }
    if (r == 0) {
      ++out_->num_rows;
      list.validity.push_back(d >= list_present);
      list.offsets.push_back(list.offsets.back());
      if (d < entries) {
        open_ = 0;
        continue;
      }
    } else if (seen_ + i == 0 || open_ == 0) {
      return CorruptError("level " + std::to_string(seen_ + i) +
                          ": repetition level 1 continues a list that is not open");
    } else if (d < entries) {
      return CorruptError("level " + std::to_string(seen_ + i) + ": definition level " +
                          std::to_string(d) +
                          " leaves empty a list that repetition level 1 continues");
    }
    ++list.offsets.back();
    validity.push_back(d >= value_present);
    open_ = 1;
  }
  seen_ += n;
  return Status::Ok();
}

}  // namespace sluice::parquet
