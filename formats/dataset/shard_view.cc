#include "formats/dataset/shard_view.h"

#include <algorithm>
#include <cstring>

#include "formats/dataset/format_descriptor.h"
#include "formats/dataset/json_object_spans.h"

namespace sluice {

Result<ShardView> ShardView::Open(const ShardEntry& e, std::string_view data,
                                  std::string_view meta, bool consumer_waits) {
  ShardView v;
  v.name_ = e.raw_data.basename;
  SLUICE_ASSIGN_OR_RETURN(const ShardFormatDescriptor* format, ShardFormatOf(e));
  SLUICE_ASSIGN_OR_RETURN(v.reader_, format->open_reader(e, data, meta, consumer_waits));
  return v;
}

size_t ColumnOfField(const SampleFields& f, std::string_view field) {
  size_t c = 0;
  while (c < f.fields.size() && f.fields[c].data() != field.data()) ++c;
  return c;
}

const parquet::PiecedField* PiecedOf(const SampleFields& f, std::string_view field) {
  for (const parquet::PiecedField& p : f.pieced) {
    if (p.field.data() == field.data()) return &p;
  }
  return nullptr;
}

void CopyPiecedValue(const parquet::PiecedField& p, char* out) {
  // The pieces add up to the value (PiecedField); never write past it.
  size_t left = p.field.size();
  for (std::string_view piece : p.pieces) {
    const size_t take = std::min(piece.size(), left);
    std::memcpy(out, piece.data(), take);
    out += take;
    left -= take;
  }
}

Status ShardView::Read(uint32_t i, const std::vector<std::string>& column_names,
                       SampleFields* out) const {
  // Every format's read ends the last sample's masks and pieces.
  out->masked.clear();
  out->pieced.clear();
  if (const MdsShardReader* mds = this->mds()) {
    SLUICE_ASSIGN_OR_RETURN(out->raw, mds->SampleBytes(i));
    return mds->ReadSample(i, &out->fields);
  }
  if (const parquet::ParquetShardReader* pq = this->parquet()) {
    out->raw = std::string_view();
    return pq->ReadRow(i, &out->fields, out->wants_masks ? &out->masked : nullptr,
                       out->until_next_read ? &out->scratch : nullptr,
                       out->wants_pieces ? &out->pieced : nullptr);
  }
  if (const RawFileReader* raw = this->raw()) {
    SLUICE_ASSIGN_OR_RETURN(out->raw, raw->Sample(i));
    out->fields.assign(1, out->raw);
    return Status::Ok();
  }
  std::string what = name_ + " sample " + std::to_string(i);
  out->fields.resize(column_names.size());
  if (const JsonlShardReader* jsonl = this->jsonl()) {
    SLUICE_ASSIGN_OR_RETURN(out->raw, jsonl->Line(i));
    SLUICE_ASSIGN_OR_RETURN(auto members, JsonObjectMemberSpans(out->raw, what));
    if (members.size() != column_names.size()) {
      return CorruptError(what + ": has " + std::to_string(members.size()) +
                          " members, expected one per column (" +
                          std::to_string(column_names.size()) + ")");
    }
    for (size_t c = 0; c < column_names.size(); ++c) {
      auto it = std::find_if(members.begin(), members.end(),
                             [&](const auto& m) { return m.first == column_names[c]; });
      if (it == members.end()) {
        return CorruptError(what + ": has no member for column '" + column_names[c] + "'");
      }
      out->fields[c] = it->second;
    }
    return Status::Ok();
  }
  const XsvShardReader* xsv = this->xsv();
  if (xsv == nullptr) return InternalError(name_ + ": shard view was not opened");
  SLUICE_ASSIGN_OR_RETURN(out->raw, xsv->Line(i));
  const std::string& nl = xsv->newline();
  std::string_view body = out->raw;
  if (body.size() < nl.size() || body.substr(body.size() - nl.size()) != nl) {
    return CorruptError(what + ": line does not end with the newline");
  }
  body.remove_suffix(nl.size());
  const std::string& sep = xsv->separator();
  size_t count = 0, start = 0;
  while (true) {
    size_t at = sep.empty() ? std::string_view::npos : body.find(sep, start);
    if (count < out->fields.size()) {
      out->fields[count] = body.substr(start, at == std::string_view::npos ? at : at - start);
    }
    ++count;
    if (at == std::string_view::npos) break;
    start = at + sep.size();
  }
  if (count != column_names.size()) {
    return CorruptError(what + ": has " + std::to_string(count) + " fields, expected " +
                        std::to_string(column_names.size()) + " separated by '" + sep + "'");
  }
  return Status::Ok();
}

}  // namespace sluice
