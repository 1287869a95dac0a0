#include "formats/parquet/metadata_decoder.h"

#include <algorithm>
#include <initializer_list>
#include <utility>

namespace sluice::parquet {
namespace {

using T = ThriftType;

// The decoder with a budget for the memory the decoded values take: an
// element of a list can be one byte on the wire (an empty struct) and
// hundreds in memory (a ColumnChunk is over 500), so each element is
// charged before it is added, and the whole may take at most
// kMemoryPerByte times the footer's size (plus kMemorySlack). The fixtures'
// footers, from every writer, take at most 8.3 times their size.
constexpr uint64_t kMemoryPerByte = 24;
constexpr uint64_t kMemorySlack = 1 << 20;

class D : public ThriftCompactDecoder {
 public:
  D(std::string_view bytes, ThriftLimits limits, MetadataFields fields = MetadataFields::kAll)
      : ThriftCompactDecoder(bytes, limits),
        budget_(kMemoryPerByte * bytes.size() + kMemorySlack),
        left_(budget_),
        lean_(fields == MetadataFields::kForIndex) {}

  // kForIndex: the fields an index does not read are skipped, not decoded.
  bool lean() const { return lean_; }

  // Takes `bytes` from the budget, or is the error when they do not fit.
  Status Charge(uint64_t bytes, std::string_view what = {}) {
    if (bytes > left_) {
      return Error(std::string(what) + "the decoded metadata would take more than " +
                   std::to_string(budget_) + " bytes of memory (" +
                   std::to_string(kMemoryPerByte) + " per byte of footer, and 1 MiB)");
    }
    left_ -= bytes;
    return Status::Ok();
  }
  bool Fits(uint64_t bytes) const { return bytes <= left_; }

  template <typename V>
  Status Charge() {
    return Charge(sizeof(V));
  }

  // A list's on_count: its `count` elements charged at its header and
  // their room reserved in `v` (one allocation rather than a vector's
  // doublings). So a footer whose list claims more elements than the
  // budget holds (a count is at most the bytes left, and an element can
  // take hundreds of bytes) is that error before anything is allocated.
  // Its elements are then added with AddCharged.
  template <typename V>
  auto ChargeList(std::vector<V>* v) {
    return [this, v](uint32_t count) -> Status {
      const uint64_t bytes = uint64_t{count} * sizeof(V);
      // The error's words made only for the error: most lists fit.
      if (!Fits(bytes)) return Charge(bytes, "a list of " + std::to_string(count) + " elements: ");
      left_ -= bytes;
      v->reserve(v->size() + count);
      return Status::Ok();
    };
  }

  // Appends a default value to `v`, charged.
  template <typename V>
  Status Add(std::vector<V>* v) {
    SLUICE_RETURN_IF_ERROR(Charge<V>());
    v->emplace_back();
    return Status::Ok();
  }

  // Appends a default value to `v`, whose list's ChargeList charged it.
  template <typename V>
  static Status AddCharged(std::vector<V>* v) {
    v->emplace_back();
    return Status::Ok();
  }

  // ChargeList's twin for the quick walk: the same charge and room, a bool.
  template <typename V>
  auto ChargeListQuick(std::vector<V>* v) {
    return [this, v](uint32_t count) -> bool {
      const uint64_t bytes = uint64_t{count} * sizeof(V);
      if (!Fits(bytes)) return false;
      left_ -= bytes;
      v->reserve(v->size() + count);
      return true;
    };
  }
  // ChargeListQuick for a vector whose first `*used` elements are the
  // value's and the rest kept from an earlier value, to be used again.
  template <typename V>
  auto ChargeListQuickAt(std::vector<V>* v, const size_t* used) {
    return [this, v, used](uint32_t count) -> bool {
      const uint64_t bytes = uint64_t{count} * sizeof(V);
      if (!Fits(bytes)) return false;
      left_ -= bytes;
      v->reserve(*used + count);
      return true;
    };
  }
  bool ChargeQuick(uint64_t bytes) {
    if (!Fits(bytes)) return false;
    left_ -= bytes;
    return true;
  }

  // The quick walk's skipped values (SkippedFields).
  SkippedFields& skipped() { return *skipped_; }
  void set_skipped(SkippedFields* s) { skipped_ = s; }

 private:
  uint64_t budget_;
  uint64_t left_;
  bool lean_;
  SkippedFields* skipped_ = nullptr;
};

// Which fields of one struct were seen, to report a missing required one.
class Seen {
 public:
  void Add(int16_t id) {
    if (id > 0 && id < 64) bits_ |= uint64_t{1} << id;
  }
  bool Has(int id) const { return (bits_ >> id) & 1; }
  Status Require(const D& d, std::string_view name,
                 std::initializer_list<std::pair<int, const char*>> fields) const {
    for (const auto& [id, field] : fields) {
      if (!Has(id)) {
        return d.Error(std::string(name) + ": required field " + std::to_string(id) + " (" +
                       field + ") missing");
      }
    }
    return Status::Ok();
  }

 private:
  uint64_t bits_ = 0;
};

template <typename E>
Status ReadEnum(D& d, T type, E* out) {
  int32_t v = 0;
  SLUICE_RETURN_IF_ERROR(d.ReadI32(type, &v));
  *out = static_cast<E>(v);
  return Status::Ok();
}

template <typename E>
Status ReadOptionalEnum(D& d, T type, std::optional<E>* out) {
  E v{};
  SLUICE_RETURN_IF_ERROR(ReadEnum(d, type, &v));
  *out = v;
  return Status::Ok();
}

template <typename V>
Status NonNegative(const D& d, V v) {
  if (v < 0) return d.Error("negative value " + std::to_string(v));
  return Status::Ok();
}

Status ReadCount32(D& d, T type, int32_t* out) {
  SLUICE_RETURN_IF_ERROR(d.ReadI32(type, out));
  return NonNegative(d, *out);
}

Status ReadCount64(D& d, T type, int64_t* out) {
  SLUICE_RETURN_IF_ERROR(d.ReadI64(type, out));
  return NonNegative(d, *out);
}

template <typename V, typename F>
Status ReadOptional(std::optional<V>* out, F&& read) {
  V v{};
  SLUICE_RETURN_IF_ERROR(read(&v));
  *out = std::move(v);
  return Status::Ok();
}

Status ReadStringList(D& d, T type, std::vector<std::string>* out) {
  return d.ReadList(type, T::kBinary, d.ChargeList(out), [&](T e) {
    SLUICE_RETURN_IF_ERROR(d.AddCharged(out));
    return d.ReadString(e, &out->back());
  });
}

template <typename E>
Status ReadEnumList(D& d, T type, std::vector<E>* out) {
  return d.ReadList(type, T::kI32, [&](T e) {
    E v{};
    SLUICE_RETURN_IF_ERROR(ReadEnum(d, e, &v));
    SLUICE_RETURN_IF_ERROR(d.Charge<E>());
    out->push_back(v);
    return Status::Ok();
  });
}

// A struct member of a union, or an empty struct: its fields are skipped.
Status SkipStruct(D& d, T type) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  return d.Skip(type);
}

// The index's decode (MetadataFields::kForIndex) of a field it does not
// read: its wire type checked as a full decode checks it, then walked. A
// struct (or a list's struct elements) keeps its name in errors, so a
// malformed one reads as the full decode's error.
Status SkipStructNamed(D& d, T type, const char* name) { return d.SkipStruct(type, name); }

Status SkipField(D& d, T type, T wanted) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, wanted));
  return d.Skip(type);
}

Status SkipList(D& d, T type, T element, const char* struct_name = "") {
  return d.SkipList(type, element, struct_name);
}

Status ReadKeyValue(D& d, T type, KeyValue* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("KeyValue", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return d.ReadString(t, &out->key);
      case 2: return ReadOptional(&out->value, [&](std::string* v) { return d.ReadString(t, v); });
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "KeyValue", {{1, "key"}});
}

Status ReadKeyValueList(D& d, T type, std::vector<KeyValue>* out) {
  return d.ReadList(type, T::kStruct, [&](T e) {
    SLUICE_RETURN_IF_ERROR(d.Add(out));
    return ReadKeyValue(d, e, &out->back());
  });
}

Status ReadStatistics(D& d, T type, Statistics* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  const auto str = [&](T t, std::optional<std::string>* v) {
    return ReadOptional(v, [&](std::string* s) { return d.ReadString(t, s); });
  };
  const auto count = [&](T t, std::optional<int64_t>* v) {
    return ReadOptional(v, [&](int64_t* n) { return ReadCount64(d, t, n); });
  };
  const auto flag = [&](T t, std::optional<bool>* v) {
    return ReadOptional(v, [&](bool* b) { return d.ReadBool(t, b); });
  };
  return d.ReadStruct("Statistics", [&](int16_t id, T t) -> Status {
    switch (id) {
      case 1: return str(t, &out->max);
      case 2: return str(t, &out->min);
      case 3: return count(t, &out->null_count);
      case 4: return count(t, &out->distinct_count);
      case 5: return str(t, &out->max_value);
      case 6: return str(t, &out->min_value);
      case 7: return flag(t, &out->is_max_value_exact);
      case 8: return flag(t, &out->is_min_value_exact);
      case 9: return count(t, &out->nan_count);
      default: return d.Skip(t);
    }
  });
}

Status ReadTimeUnit(D& d, T type, TimeUnit* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  int members = 0;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("TimeUnit", [&](int16_t id, T t) -> Status {
    if (id < 1 || id > 3) return d.Error("unknown time unit " + std::to_string(id));
    if (++members > 1) return d.Error("a TimeUnit union with more than one member");
    *out = id == 1 ? TimeUnit::kMillis : id == 2 ? TimeUnit::kMicros : TimeUnit::kNanos;
    return SkipStruct(d, t);
  }));
  if (members == 0) return d.Error("an empty TimeUnit union");
  return Status::Ok();
}

// TimeType and TimestampType have the same fields.
Status ReadTimeLike(D& d, T type, const char* name, LogicalType* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct(name, [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return d.ReadBool(t, &out->adjusted_to_utc);
      case 2: return ReadTimeUnit(d, t, &out->unit);
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, name, {{1, "isAdjustedToUTC"}, {2, "unit"}});
}

Status ReadDecimalType(D& d, T type, LogicalType* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("DecimalType", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadCount32(d, t, &out->scale);
      case 2: return ReadCount32(d, t, &out->precision);
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "DecimalType", {{1, "scale"}, {2, "precision"}});
}

Status ReadIntType(D& d, T type, LogicalType* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("IntType", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: {
        SLUICE_RETURN_IF_ERROR(d.ReadI8(t, &out->bit_width));
        const int w = out->bit_width;
        if (w != 8 && w != 16 && w != 32 && w != 64) {
          return d.Error("bitWidth " + std::to_string(w) + " is not 8, 16, 32 or 64");
        }
        return Status::Ok();
      }
      case 2: return d.ReadBool(t, &out->is_signed);
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "IntType", {{1, "bitWidth"}, {2, "isSigned"}});
}

Status ReadLogicalType(D& d, T type, LogicalType* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  using K = LogicalType::Kind;
  int members = 0;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("LogicalType", [&](int16_t id, T t) -> Status {
    if (++members > 1) return d.Error("a LogicalType union with more than one member");
    static constexpr K kEmpty[] = {
        K::kNone, K::kString, K::kMap, K::kList, K::kEnum, K::kNone, K::kDate,
        K::kNone, K::kNone, K::kNone, K::kNone, K::kUnknown, K::kJson, K::kBson,
        K::kUuid, K::kFloat16, K::kVariant, K::kGeometry, K::kGeography};
    switch (id) {
      case 5: out->kind = K::kDecimal; return ReadDecimalType(d, t, out);
      case 7: out->kind = K::kTime; return ReadTimeLike(d, t, "TimeType", out);
      case 8: out->kind = K::kTimestamp; return ReadTimeLike(d, t, "TimestampType", out);
      case 10: out->kind = K::kInteger; return ReadIntType(d, t, out);
      default: break;
    }
    // Members whose fields this reader does not need (VARIANT's version,
    // GEOMETRY's CRS) are read as empty structs.
    if (id > 0 && id < static_cast<int>(std::size(kEmpty)) && kEmpty[id] != K::kNone) {
      out->kind = kEmpty[id];
    } else {
      out->kind = K::kUnrecognized;
      out->other_id = id;
    }
    return SkipStruct(d, t);
  }));
  if (members == 0) return d.Error("an empty LogicalType union");
  return Status::Ok();
}

Status ReadSchemaElement(D& d, T type, SchemaElement* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  const auto i32 = [&](T t, std::optional<int32_t>* v) {
    return ReadOptional(v, [&](int32_t* n) { return d.ReadI32(t, n); });
  };
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("SchemaElement", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadOptionalEnum(d, t, &out->type);
      case 2: return i32(t, &out->type_length);
      case 3: return ReadOptionalEnum(d, t, &out->repetition);
      case 4: return d.ReadString(t, &out->name);
      case 5:
        return ReadOptional(&out->num_children,
                            [&](int32_t* n) { return ReadCount32(d, t, n); });
      case 6: return ReadOptionalEnum(d, t, &out->converted_type);
      case 7: return i32(t, &out->scale);
      case 8: return i32(t, &out->precision);
      case 9: return i32(t, &out->field_id);
      case 10: return ReadLogicalType(d, t, &out->logical_type);
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "SchemaElement", {{4, "name"}});
}

Status ReadPageEncodingStats(D& d, T type, PageEncodingStats* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("PageEncodingStats", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadEnum(d, t, &out->page_type);
      case 2: return ReadEnum(d, t, &out->encoding);
      case 3: return ReadCount32(d, t, &out->count);
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "PageEncodingStats", {{1, "page_type"}, {2, "encoding"}, {3, "count"}});
}

Status ReadColumnMetaData(D& d, T type, ColumnMetaData* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  const auto offset = [&](T t, std::optional<int64_t>* v) {
    return ReadOptional(v, [&](int64_t* n) { return ReadCount64(d, t, n); });
  };
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("ColumnMetaData", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    // The index reads the type, path, sizes and page offsets: the lists and
    // statistics (most of a chunk's bytes and allocations) are only walked.
    if (d.lean()) {
      switch (id) {
        case 2: return SkipList(d, t, T::kI32);
        case 8: return SkipList(d, t, T::kStruct, "KeyValue");
        case 10: return SkipField(d, t, T::kI64);
        case 12: return SkipStructNamed(d, t, "Statistics");
        case 13: return SkipList(d, t, T::kStruct, "PageEncodingStats");
        case 14: return SkipField(d, t, T::kI64);
        case 15: return SkipField(d, t, T::kI32);
        default: break;
      }
    }
    switch (id) {
      case 1: return ReadEnum(d, t, &out->type);
      case 2: return ReadEnumList(d, t, &out->encodings);
      case 3: return ReadStringList(d, t, &out->path_in_schema);
      case 4: return ReadEnum(d, t, &out->codec);
      case 5: return ReadCount64(d, t, &out->num_values);
      case 6: return ReadCount64(d, t, &out->total_uncompressed_size);
      case 7: return ReadCount64(d, t, &out->total_compressed_size);
      case 8: return ReadKeyValueList(d, t, &out->key_value_metadata);
      case 9: return ReadCount64(d, t, &out->data_page_offset);
      case 10: return offset(t, &out->index_page_offset);
      case 11: return offset(t, &out->dictionary_page_offset);
      case 12:
        return ReadOptional(&out->statistics,
                            [&](Statistics* s) { return ReadStatistics(d, t, s); });
      case 13:
        return d.ReadList(t, T::kStruct, [&](T e) {
          SLUICE_RETURN_IF_ERROR(d.Add(&out->encoding_stats));
          return ReadPageEncodingStats(d, e, &out->encoding_stats.back());
        });
      case 14: return offset(t, &out->bloom_filter_offset);
      case 15:
        return ReadOptional(&out->bloom_filter_length,
                            [&](int32_t* n) { return ReadCount32(d, t, n); });
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "ColumnMetaData",
                      {{1, "type"}, {2, "encodings"}, {3, "path_in_schema"}, {4, "codec"},
                       {5, "num_values"}, {6, "total_uncompressed_size"},
                       {7, "total_compressed_size"}, {9, "data_page_offset"}});
}

Status ReadColumnChunk(D& d, T type, ColumnChunk* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  const auto i64 = [&](T t, std::optional<int64_t>* v) {
    return ReadOptional(v, [&](int64_t* n) { return ReadCount64(d, t, n); });
  };
  const auto i32 = [&](T t, std::optional<int32_t>* v) {
    return ReadOptional(v, [&](int32_t* n) { return ReadCount32(d, t, n); });
  };
  // file_offset (2) is required by the specification with a default of 0,
  // and not every writer stores it: it is not required here. meta_data (3)
  // is optional in the specification but every writer must store it; only
  // an encrypted column has its metadata elsewhere.
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("ColumnChunk", [&](int16_t id, T t) -> Status {
    if (d.lean() && id >= 4 && id <= 7) {  // page index offsets and lengths
      return SkipField(d, t, id % 2 == 0 ? T::kI64 : T::kI32);
    }
    switch (id) {
      case 1:
        return ReadOptional(&out->file_path, [&](std::string* s) { return d.ReadString(t, s); });
      case 2: return d.ReadI64(t, &out->file_offset);
      case 3:
        return ReadOptional(&out->meta_data,
                            [&](ColumnMetaData* m) { return ReadColumnMetaData(d, t, m); });
      case 4: return i64(t, &out->offset_index_offset);
      case 5: return i32(t, &out->offset_index_length);
      case 6: return i64(t, &out->column_index_offset);
      case 7: return i32(t, &out->column_index_length);
      case 8:
      case 9:
        out->encrypted = true;
        return d.Skip(t);
      default: return d.Skip(t);
    }
  }));
  if (!out->meta_data && !out->encrypted) {
    return d.Error("ColumnChunk: required field 3 (meta_data) missing");
  }
  return Status::Ok();
}

Status ReadRowGroup(D& d, T type, RowGroup* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("RowGroup", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1:
        return d.ReadList(t, T::kStruct, d.ChargeList(&out->columns), [&](T e) {
          SLUICE_RETURN_IF_ERROR(d.AddCharged(&out->columns));
          return ReadColumnChunk(d, e, &out->columns.back());
        });
      case 2: return ReadCount64(d, t, &out->total_byte_size);
      case 3: return ReadCount64(d, t, &out->num_rows);
      case 4: return d.Skip(t);  // sorting_columns
      case 5:
        return ReadOptional(&out->file_offset, [&](int64_t* n) { return ReadCount64(d, t, n); });
      case 6:
        return ReadOptional(&out->total_compressed_size,
                            [&](int64_t* n) { return ReadCount64(d, t, n); });
      case 7:
        return ReadOptional(&out->ordinal, [&](int16_t* n) { return d.ReadI16(t, n); });
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "RowGroup", {{1, "columns"}, {2, "total_byte_size"}, {3, "num_rows"}});
}

Status ReadDataPageHeader(D& d, T type, DataPageHeader* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("DataPageHeader", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadCount32(d, t, &out->num_values);
      case 2: return ReadEnum(d, t, &out->encoding);
      case 3: return ReadEnum(d, t, &out->definition_level_encoding);
      case 4: return ReadEnum(d, t, &out->repetition_level_encoding);
      case 5:
        return ReadOptional(&out->statistics,
                            [&](Statistics* s) { return ReadStatistics(d, t, s); });
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "DataPageHeader",
                      {{1, "num_values"}, {2, "encoding"}, {3, "definition_level_encoding"},
                       {4, "repetition_level_encoding"}});
}

Status ReadDataPageHeaderV2(D& d, T type, DataPageHeaderV2* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("DataPageHeaderV2", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadCount32(d, t, &out->num_values);
      case 2: return ReadCount32(d, t, &out->num_nulls);
      case 3: return ReadCount32(d, t, &out->num_rows);
      case 4: return ReadEnum(d, t, &out->encoding);
      case 5: return ReadCount32(d, t, &out->definition_levels_byte_length);
      case 6: return ReadCount32(d, t, &out->repetition_levels_byte_length);
      case 7: return d.ReadBool(t, &out->is_compressed);
      case 8:
        return ReadOptional(&out->statistics,
                            [&](Statistics* s) { return ReadStatistics(d, t, s); });
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "DataPageHeaderV2",
                      {{1, "num_values"}, {2, "num_nulls"}, {3, "num_rows"}, {4, "encoding"},
                       {5, "definition_levels_byte_length"},
                       {6, "repetition_levels_byte_length"}});
}

Status ReadDictionaryPageHeader(D& d, T type, DictionaryPageHeader* out) {
  SLUICE_RETURN_IF_ERROR(d.ExpectType(type, T::kStruct));
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("DictionaryPageHeader", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadCount32(d, t, &out->num_values);
      case 2: return ReadEnum(d, t, &out->encoding);
      case 3: return ReadOptional(&out->is_sorted, [&](bool* b) { return d.ReadBool(t, b); });
      default: return d.Skip(t);
    }
  }));
  return seen.Require(d, "DictionaryPageHeader", {{1, "num_values"}, {2, "encoding"}});
}

// The index's decode (kForIndex) walked quick: the fields it reads, each
// with every check of its checked read above (wire types, limits, the
// memory budget, non-negative counts, required fields) but answering only
// a bool, so no Status is made a field. Each accepts exactly what its
// checked twin accepts and sets the same values; on false the whole
// footer is decoded again, checked, for its error (DecodeFileMetaDataInto).
// A change to a checked read above needs its twin here: the test
// MetadataDecoder.TheIndexsQuickWalkAnswersAsTheCheckedOnEveryDamagedByte
// compares them.
bool Count64Quick(D& d, T type, int64_t* out) { return d.ReadI64Quick(type, out) && *out >= 0; }

template <typename E>
bool EnumQuick(D& d, T type, E* out) {
  int32_t v = 0;
  if (!d.ReadI32Quick(type, &v)) return false;
  *out = static_cast<E>(v);
  return true;
}

bool StringQuick(D& d, T type, std::string* out) {
  std::string_view v;
  if (!d.ReadBinaryQuick(type, &v)) return false;
  out->assign(v);
  return true;
}

bool ColumnMetaDataQuick(D& d, T type, ColumnMetaData* out) {
  if (type != T::kStruct) return false;
  Seen seen;
  const bool walked = d.ReadStructQuick([&](int16_t id, T t) -> bool {
    seen.Add(id);
    switch (id) {
      case 1: return EnumQuick(d, t, &out->type);
      case 2:
        return d.SkipQuickAsBefore(t, &d.skipped().encodings,
                                   [&] { return d.SkipListQuick(t, T::kI32); });
      case 3:
        return d.ReadListQuick(t, T::kBinary, d.ChargeListQuick(&out->path_in_schema), [&](T e) {
          // Made from the view, not assigned into an empty string.
          std::string_view v;
          if (!d.ReadBinaryQuick(e, &v)) return false;
          out->path_in_schema.emplace_back(v);
          return true;
        });
      case 4: return EnumQuick(d, t, &out->codec);
      case 5: return Count64Quick(d, t, &out->num_values);
      case 6: return Count64Quick(d, t, &out->total_uncompressed_size);
      case 7: return Count64Quick(d, t, &out->total_compressed_size);
      case 8:
        return d.SkipQuickAsBefore(t, &d.skipped().chunk_key_value_metadata,
                                   [&] { return d.SkipListQuick(t, T::kStruct); });
      case 9: return Count64Quick(d, t, &out->data_page_offset);
      case 10:
      case 14: return t == T::kI64 && d.SkipQuick(t);
      case 11: {
        int64_t v = 0;
        if (!Count64Quick(d, t, &v)) return false;
        out->dictionary_page_offset = v;
        return true;
      }
      case 12: return d.SkipStructQuick(t);
      case 13:
        return d.SkipQuickAsBefore(t, &d.skipped().encoding_stats,
                                   [&] { return d.SkipListQuick(t, T::kStruct); });
      case 15: return t == T::kI32 && d.SkipQuick(t);
      default: return d.SkipQuick(t);
    }
  });
  if (!walked) return false;
  for (int id : {1, 2, 3, 4, 5, 6, 7, 9}) {
    if (!seen.Has(id)) return false;
  }
  return true;
}

// The Quick decode fills a footer's row groups, their column chunks and
// the chunks' paths where the last file's were, each value reset first
// (every field as a fresh one's): a file of the same shape allocates
// nothing for them, where each was made and freed again a file (~6
// allocations a file of 5 columns).
bool ColumnChunkQuick(D& d, T type, ColumnChunk* out) {
  if (type != T::kStruct) return false;
  std::vector<std::string> path;  // the last chunk's path's room
  if (out->meta_data) {
    path = std::move(out->meta_data->path_in_schema);
    path.clear();
  }
  *out = ColumnChunk{};
  const bool walked = d.ReadStructQuick([&](int16_t id, T t) -> bool {
    switch (id) {
      case 1: {
        std::string path;
        if (!StringQuick(d, t, &path)) return false;
        out->file_path = std::move(path);
        return true;
      }
      case 2: return d.ReadI64Quick(t, &out->file_offset);
      case 3: {
        ColumnMetaData& meta = out->meta_data.emplace();
        meta.path_in_schema = std::move(path);
        return ColumnMetaDataQuick(d, t, &meta);
      }
      case 4:
      case 6: return t == T::kI64 && d.SkipQuick(t);  // page index offsets and lengths
      case 5:
      case 7: return t == T::kI32 && d.SkipQuick(t);
      case 8:
      case 9: out->encrypted = true; return d.SkipQuick(t);
      default: return d.SkipQuick(t);
    }
  });
  return walked && (out->meta_data || out->encrypted);
}

bool RowGroupQuick(D& d, T type, RowGroup* out) {
  if (type != T::kStruct) return false;
  std::vector<ColumnChunk> columns = std::move(out->columns);  // the last group's, reused
  *out = RowGroup{};
  out->columns = std::move(columns);
  size_t used = 0;  // out->columns' first `used` are this group's
  Seen seen;
  const bool walked = d.ReadStructQuick([&](int16_t id, T t) -> bool {
    seen.Add(id);
    int64_t v = 0;
    switch (id) {
      case 1:
        return d.ReadListQuick(t, T::kStruct, d.ChargeListQuickAt(&out->columns, &used), [&](T e) {
          if (used == out->columns.size()) out->columns.emplace_back();
          return ColumnChunkQuick(d, e, &out->columns[used++]);
        });
      case 2: return Count64Quick(d, t, &out->total_byte_size);
      case 3: return Count64Quick(d, t, &out->num_rows);
      case 5:
        if (!Count64Quick(d, t, &v)) return false;
        out->file_offset = v;
        return true;
      case 6:
        if (!Count64Quick(d, t, &v)) return false;
        out->total_compressed_size = v;
        return true;
      case 7: {
        int16_t n = 0;
        if (!d.ReadI16Quick(t, &n)) return false;
        out->ordinal = n;
        return true;
      }
      default: return d.SkipQuick(t);  // 4 sorting_columns
    }
  });
  out->columns.resize(used);
  return walked && seen.Has(1) && seen.Has(2) && seen.Has(3);
}

// Every field of a value decoded afresh, the vectors' room kept.
void ResetForDecode(FileMetaData* out, SchemaReuse* reuse) {
  FileMetaData fresh;
  fresh.schema = std::move(out->schema);
  fresh.row_groups = std::move(out->row_groups);
  fresh.row_groups.clear();
  *out = std::move(fresh);
  if (reuse) reuse->kept = false;
}

}  // namespace

bool DecodeFileMetaDataForIndexQuick(std::string_view bytes, ThriftLimits limits,
                                     FileMetaData* out, SchemaReuse* reuse) {
  D d(bytes, limits, MetadataFields::kForIndex);
  SkippedFields own_skipped;  // without `reuse`, this footer's alone
  d.set_skipped(reuse ? &reuse->skipped : &own_skipped);
  std::vector<RowGroup> groups = std::move(out->row_groups);  // the last file's, reused
  ResetForDecode(out, reuse);
  out->row_groups = std::move(groups);
  size_t used = 0;  // out->row_groups' first `used` are this file's
  bool schema_seen = false;
  Seen seen;
  const bool walked = d.ReadStructQuick([&](int16_t id, T t) -> bool {
    seen.Add(id);
    switch (id) {
      case 1: return d.ReadI32Quick(t, &out->version);
      case 2: {
        // As the checked decode's field 2, the schema list itself read
        // checked: a schema is decoded only when its bytes change.
        const auto read = [&] {
          return d
              .ReadList(t, T::kStruct, d.ChargeList(&out->schema),
                        [&](T e) {
                          SLUICE_RETURN_IF_ERROR(d.AddCharged(&out->schema));
                          return ReadSchemaElement(d, e, &out->schema.back());
                        })
              .ok();
        };
        if (schema_seen || !reuse) {
          if (reuse) {
            reuse->bytes.clear();
            reuse->kept = false;
          }
          return read();
        }
        schema_seen = true;
        const uint64_t charge = uint64_t{out->schema.size()} * sizeof(SchemaElement);
        if ((t == T::kList || t == T::kSet) && !reuse->bytes.empty() &&
            reuse->limits == limits && d.Fits(charge) && d.SkipIfNext(reuse->bytes)) {
          reuse->kept = true;
          return d.ChargeQuick(charge);
        }
        out->schema.clear();
        reuse->bytes.clear();
        const size_t start = d.offset();
        if (!read()) return false;
        reuse->bytes.assign(bytes.substr(start, d.offset() - start));
        reuse->limits = limits;
        return true;
      }
      case 3: return Count64Quick(d, t, &out->num_rows);
      case 4:
        return d.ReadListQuick(t, T::kStruct, d.ChargeListQuickAt(&out->row_groups, &used),
                               [&](T e) {
                                 if (used == out->row_groups.size()) out->row_groups.emplace_back();
                                 return RowGroupQuick(d, e, &out->row_groups[used++]);
                               });
      case 5:
        return d.SkipQuickAsBefore(t, &d.skipped().key_value_metadata,
                                   [&] { return d.SkipListQuick(t, T::kStruct); });
      case 6: return t == T::kBinary && d.SkipQuick(t);  // created_by
      case 7:
        return d.SkipQuickAsBefore(t, &d.skipped().column_orders, [&] { return d.SkipQuick(t); });
      case 8: out->encrypted = true; return d.SkipQuick(t);
      default: return d.SkipQuick(t);
    }
  });
  out->row_groups.resize(used);
  const bool decoded = walked && seen.Has(1) && seen.Has(2) && seen.Has(3) && seen.Has(4) &&
                       (d.remaining() == 0 || out->encrypted);
  // A schema decoded here whose footer then failed the walk was never
  // built into the footer's Schema: its bytes must not say the checked
  // decode after it may keep the Schema built from an earlier file's.
  if (!decoded && reuse && !reuse->kept) reuse->bytes.clear();
  return decoded;
}

Status DecodeFileMetaDataCheckedInto(std::string_view bytes, ThriftLimits limits,
                                     MetadataFields fields, FileMetaData* out,
                                     SchemaReuse* reuse) {
  D d(bytes, limits, fields);
  ResetForDecode(out, reuse);
  bool schema_seen = false;
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("FileMetaData", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    if (d.lean() && id == 5) return SkipList(d, t, T::kStruct, "KeyValue");
    if (d.lean() && id == 6) return SkipField(d, t, T::kBinary);  // created_by
    switch (id) {
      case 1: return d.ReadI32(t, &out->version);
      case 2: {
        const auto read = [&] {
          return d.ReadList(t, T::kStruct, d.ChargeList(&out->schema), [&](T e) {
            SLUICE_RETURN_IF_ERROR(d.AddCharged(&out->schema));
            return ReadSchemaElement(d, e, &out->schema.back());
          });
        };
        if (schema_seen || !reuse) {  // a second list is appended, as a full decode does
          if (reuse) {
            reuse->bytes.clear();
            reuse->kept = false;
          }
          return read();
        }
        schema_seen = true;
        // The same bytes as the list last decoded into out->schema, read
        // under the same limits, would decode to the same elements and
        // charge the same: kept (when the budget has room; else decoded,
        // to give the decode's error).
        const uint64_t charge = uint64_t{out->schema.size()} * sizeof(SchemaElement);
        if ((t == T::kList || t == T::kSet) && !reuse->bytes.empty() &&
            reuse->limits == limits && d.Fits(charge) && d.SkipIfNext(reuse->bytes)) {
          reuse->kept = true;
          return d.Charge(charge);
        }
        out->schema.clear();
        reuse->bytes.clear();
        const size_t start = d.offset();
        SLUICE_RETURN_IF_ERROR(read());
        reuse->bytes.assign(bytes.substr(start, d.offset() - start));
        reuse->limits = limits;
        return Status::Ok();
      }
      case 3: return ReadCount64(d, t, &out->num_rows);
      case 4:
        return d.ReadList(t, T::kStruct, d.ChargeList(&out->row_groups), [&](T e) {
          SLUICE_RETURN_IF_ERROR(d.AddCharged(&out->row_groups));
          return ReadRowGroup(d, e, &out->row_groups.back());
        });
      case 5: return ReadKeyValueList(d, t, &out->key_value_metadata);
      case 6:
        return ReadOptional(&out->created_by, [&](std::string* s) { return d.ReadString(t, s); });
      case 8:
        out->encrypted = true;
        return d.Skip(t);
      default: return d.Skip(t);  // 7 column_orders, 9 signing key metadata
    }
  }));
  SLUICE_RETURN_IF_ERROR(seen.Require(
      d, "FileMetaData", {{1, "version"}, {2, "schema"}, {3, "num_rows"}, {4, "row_groups"}}));
  if (d.remaining() != 0 && !out->encrypted) {
    return d.Error(std::to_string(d.remaining()) + " bytes after the FileMetaData");
  }
  return Status::Ok();
}

Status DecodeFileMetaDataInto(std::string_view bytes, ThriftLimits limits, MetadataFields fields,
                              FileMetaData* out, SchemaReuse* reuse) {
  // Without `reuse` a decode appends to the schema it is given, so the
  // quick walk, which may leave elements there, runs only from an empty one.
  if (fields == MetadataFields::kForIndex && (reuse != nullptr || out->schema.empty())) {
    if (DecodeFileMetaDataForIndexQuick(bytes, limits, out, reuse)) return Status::Ok();
    if (reuse == nullptr) out->schema.clear();
  }
  return DecodeFileMetaDataCheckedInto(bytes, limits, fields, out, reuse);
}

Result<FileMetaData> DecodeFileMetaData(std::string_view bytes, ThriftLimits limits,
                                        MetadataFields fields) {
  FileMetaData out;
  SLUICE_RETURN_IF_ERROR(DecodeFileMetaDataInto(bytes, limits, fields, &out, nullptr));
  return out;
}

Result<PageHeader> DecodePageHeader(std::string_view bytes, size_t* header_size,
                                    ThriftLimits limits) {
  D d(bytes, limits);
  PageHeader out;
  Seen seen;
  SLUICE_RETURN_IF_ERROR(d.ReadStruct("PageHeader", [&](int16_t id, T t) -> Status {
    seen.Add(id);
    switch (id) {
      case 1: return ReadEnum(d, t, &out.type);
      case 2: return ReadCount32(d, t, &out.uncompressed_page_size);
      case 3: return ReadCount32(d, t, &out.compressed_page_size);
      case 4: {
        int32_t crc = 0;
        SLUICE_RETURN_IF_ERROR(d.ReadI32(t, &crc));
        out.crc = static_cast<uint32_t>(crc);
        return Status::Ok();
      }
      case 5:
        return ReadOptional(&out.data_page_header,
                            [&](DataPageHeader* h) { return ReadDataPageHeader(d, t, h); });
      case 7:
        return ReadOptional(&out.dictionary_page_header, [&](DictionaryPageHeader* h) {
          return ReadDictionaryPageHeader(d, t, h);
        });
      case 8:
        return ReadOptional(&out.data_page_header_v2,
                            [&](DataPageHeaderV2* h) { return ReadDataPageHeaderV2(d, t, h); });
      default: return d.Skip(t);  // 6 index_page_header
    }
  }));
  SLUICE_RETURN_IF_ERROR(seen.Require(d, "PageHeader",
                                      {{1, "type"}, {2, "uncompressed_page_size"},
                                       {3, "compressed_page_size"}}));
  const bool has_member =
      (out.type == PageType::kDataPage && out.data_page_header) ||
      (out.type == PageType::kDictionaryPage && out.dictionary_page_header) ||
      (out.type == PageType::kDataPageV2 && out.data_page_header_v2) ||
      out.type == PageType::kIndexPage;
  if (!has_member) {
    return d.Error("PageHeader: a " + PageTypeName(out.type) + " page without its header");
  }
  *header_size = d.offset();
  return out;
}

}  // namespace sluice::parquet
