#include "engine/dataset/opened_shard.h"

#include <algorithm>

#include "formats/dataset/json_object_spans.h"

namespace sluice {

Result<std::unique_ptr<OpenedShard>> OpenedShard::Open(const ShardEntry* entry, size_t num_columns,
                                                       ShardPin data_pin, MappedFile data,
                                                       ShardPin meta_pin, MappedFile meta) {
  std::unique_ptr<OpenedShard> s(new OpenedShard());
  s->entry_ = entry;
  s->data_pin_ = std::move(data_pin);
  s->meta_pin_ = std::move(meta_pin);
  s->data_ = std::move(data);
  s->meta_ = std::move(meta);
  const ShardEntry& e = *entry;
  const std::string& name = e.raw_data.basename;
  if (e.format == "mds") {
    SLUICE_ASSIGN_OR_RETURN(std::vector<ColumnEncoding> cols, MdsColumnsFromEntry(e, name));
    SLUICE_ASSIGN_OR_RETURN(MdsShardReader reader,
                            MdsShardReader::Open(s->data_.data(), name, std::move(cols)));
    if (reader.num_samples() != e.samples) {
      return CorruptError(name + ": holds " + std::to_string(reader.num_samples()) +
                          " samples, index.json says " + std::to_string(e.samples));
    }
    s->reader_ = std::move(reader);
  } else if (e.format == "json") {
    SLUICE_ASSIGN_OR_RETURN(s->reader_, JsonlShardReader::Open(e, s->data_.data(), s->meta_.data()));
  } else {
    SLUICE_ASSIGN_OR_RETURN(s->reader_, XsvShardReader::Open(e, s->data_.data(), s->meta_.data()));
  }
  (void)num_columns;
  return s;
}

Status OpenedShard::Read(uint32_t i, const std::vector<std::string>& column_names,
                         SampleFields* out) const {
  const std::string& name = entry_->raw_data.basename;
  if (const MdsShardReader* mds = std::get_if<MdsShardReader>(&reader_)) {
    SLUICE_ASSIGN_OR_RETURN(out->raw, mds->SampleBytes(i));
    return mds->ReadSample(i, &out->fields);
  }
  out->fields.resize(column_names.size());
  if (const JsonlShardReader* jsonl = std::get_if<JsonlShardReader>(&reader_)) {
    SLUICE_ASSIGN_OR_RETURN(out->raw, jsonl->Line(i));
    std::string what = name + " sample " + std::to_string(i);
    SLUICE_ASSIGN_OR_RETURN(auto members, JsonObjectMemberSpans(out->raw, what));
    if (members.size() != column_names.size()) {
      return CorruptError(what + ": has " + std::to_string(members.size()) + " members, expected " +
                          std::to_string(column_names.size()));
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
  const XsvShardReader* xsv = std::get_if<XsvShardReader>(&reader_);
  if (!xsv) return InternalError(name + ": shard has no reader");
  SLUICE_ASSIGN_OR_RETURN(out->raw, xsv->Line(i));
  const std::string& nl = xsv->newline();
  std::string_view body = out->raw;
  if (body.size() < nl.size() || body.substr(body.size() - nl.size()) != nl) {
    return CorruptError(name + " sample " + std::to_string(i) + ": line does not end with the newline");
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
    return CorruptError(name + " sample " + std::to_string(i) + ": has " + std::to_string(count) +
                        " fields, expected " + std::to_string(column_names.size()));
  }
  return Status::Ok();
}

}  // namespace sluice
