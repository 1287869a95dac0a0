// sluice_writer_* and sluice_encode_*: writing Mosaic-compatible datasets.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bindings/c/c_api_internal.h"
#include "engine/upload/shard_uploader.h"
#include "formats/dataset/format_descriptor.h"
#include "formats/mds/column_encoder.h"
#include "formats/mds/column_encoding.h"
#include "formats/mds/mds_writer.h"

// A writer of the format given at open, fed one field per column.
struct sluice_writer {
  std::unique_ptr<sluice::FieldWriter> writer;
  // given_to_stored[i]: where column i as given at open sits in stored order.
  std::vector<size_t> given_to_stored;
  // With a remote: uploads each shard once written; shards_queued counts
  // the core's shard entries already handed to it.
  std::unique_ptr<sluice::ShardUploader> uploader;
  size_t shards_queued = 0;
};

namespace {

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

using sluice::capi::View;

sluice::Result<sluice::ShardedWriterOptions> Options(const sluice_writer_options* o) {
  sluice::ShardedWriterOptions out;
  if (o == nullptr) return out;
  if (o->compression != nullptr) out.compression = std::string(o->compression);
  if (o->num_hashes > 0 && o->hashes == nullptr) {
    return sluice::InvalidArgumentError("options.hashes is NULL but num_hashes is " +
                                        std::to_string(o->num_hashes));
  }
  for (uint32_t i = 0; i < o->num_hashes; ++i) {
    if (o->hashes[i] == nullptr) {
      return sluice::InvalidArgumentError("options.hashes[" + std::to_string(i) + "] is NULL");
    }
    out.hashes.emplace_back(o->hashes[i]);
  }
  if (o->no_size_limit) {
    out.size_limit.reset();
  } else if (o->size_limit != 0) {
    out.size_limit = o->size_limit;
  }
  return out;
}

// Copies an encoded scalar into the caller's buffer.
sluice_status Emit(const sluice::Result<std::string>& bytes, uint8_t* buf, uint64_t cap,
                   uint64_t* len) {
  if (!bytes.ok()) return Fail(bytes.status());
  *len = bytes->size();
  if (bytes->size() > cap) {
    return Fail(sluice::OutOfRangeError("encoded value needs " + std::to_string(bytes->size()) +
                                        " bytes, the buffer has " + std::to_string(cap)));
  }
  if (!bytes->empty()) std::memcpy(buf, bytes->data(), bytes->size());
  return SLUICE_OK;
}

template <typename T>
sluice_status EncodeScalar(const char* fn, const char* encoding, T value, uint8_t* buf,
                           uint64_t cap, uint64_t* len) {
  if (encoding == nullptr) return NullArgument(fn, "encoding");
  if (len == nullptr) return NullArgument(fn, "len");
  if (buf == nullptr && cap > 0) return NullArgument(fn, "buf");
  auto enc = sluice::ParseColumnEncoding(encoding, "(value)");
  if (!enc.ok()) return Fail(enc.status());
  return Emit(sluice::EncodeMdsValue(*enc, sluice::MdsValue(value)), buf, cap, len);
}

// "'mds', 'json', 'csv', 'tsv', 'xsv'": the formats the C ABI writes.
std::string WritableFormats() {
  std::string out;
  for (const sluice::ShardFormatDescriptor& f : sluice::ShardFormats()) {
    if (f.open_writer == nullptr) continue;
    out += (out.empty() ? "'" : ", '") + std::string(f.name) + "'";
  }
  return out;
}

// Hands the shards written since the last call to the uploader: the stored
// (compressed if any) data file, then the meta file, as Mosaic uploads them.
sluice::Status QueueNewShards(sluice_writer* w) {
  if (!w->uploader) return sluice::Status();
  const auto& shards = w->writer->core().shards();
  for (; w->shards_queued < shards.size(); ++w->shards_queued) {
    const sluice::ShardEntry& e = shards[w->shards_queued];
    SLUICE_RETURN_IF_ERROR(
        w->uploader->Enqueue(e.zip_data ? e.zip_data->basename : e.raw_data.basename));
    if (e.raw_meta) {
      SLUICE_RETURN_IF_ERROR(
          w->uploader->Enqueue(e.zip_meta ? e.zip_meta->basename : e.raw_meta->basename));
    }
  }
  return sluice::Status();
}

// Opens the uploader of `o->remote` for local folder `out_dir`.
sluice::Status OpenUploader(sluice_writer* w, const std::string& out_dir,
                            const sluice_writer_options* o) {
  if (o == nullptr || o->remote == nullptr) return sluice::Status();
  sluice::ShardUploaderOptions up;
  up.local_dir = out_dir;
  up.remote = o->remote;
  up.keep_local = o->keep_local != 0;
  up.max_workers = o->max_workers;
  up.store.download_retry = o->upload_attempts == 0 ? 1 : static_cast<int>(o->upload_attempts) - 1;
  SLUICE_ASSIGN_OR_RETURN(w->uploader, sluice::ShardUploader::Open(std::move(up)));
  return sluice::Status();
}

// Writes the last shard and index.json, then uploads what remains: shards
// first, index.json once they are all up (a reader never sees an index
// whose shards are missing).
sluice::Status FinishWriter(sluice_writer* w) {
  SLUICE_RETURN_IF_ERROR(w->writer->Finish());
  if (!w->uploader) return sluice::Status();
  SLUICE_RETURN_IF_ERROR(QueueNewShards(w));
  SLUICE_RETURN_IF_ERROR(w->uploader->Wait());
  SLUICE_RETURN_IF_ERROR(w->uploader->Enqueue("index.json"));
  return w->uploader->Wait();
}

}  // namespace

extern "C" {

sluice_status sluice_writer_open(const char* out_dir, const char* const* column_names,
                                 const char* const* column_encodings, uint32_t num_columns,
                                 const sluice_writer_options* options, sluice_writer** out) {
  return Guard("sluice_writer_open", [&] {
    if (out_dir == nullptr) return NullArgument("sluice_writer_open", "out_dir");
    if (out == nullptr) return NullArgument("sluice_writer_open", "out");
    if (num_columns > 0 && (column_names == nullptr || column_encodings == nullptr)) {
      return NullArgument("sluice_writer_open", "column_names/column_encodings");
    }
    *out = nullptr;
    std::string format = options && options->format ? options->format : "mds";
    const sluice::ShardFormatDescriptor* descriptor = sluice::FindShardFormat(format);
    if (descriptor == nullptr || descriptor->open_writer == nullptr) {
      return Fail(sluice::UnimplementedError("sluice_writer_open: format '" + format +
                                             "' is not available through the C ABI (only " +
                                             WritableFormats() + ")"));
    }
    std::vector<std::pair<std::string, std::string>> columns;
    for (uint32_t i = 0; i < num_columns; ++i) {
      if (column_names[i] == nullptr || column_encodings[i] == nullptr) {
        return Fail(sluice::InvalidArgumentError("sluice_writer_open: column " +
                                                 std::to_string(i) + " has a NULL name or encoding"));
      }
      columns.emplace_back(column_names[i], column_encodings[i]);
    }
    sluice::FieldWriterOptions opts;
    auto sharded = Options(options);
    if (!sharded.ok()) return Fail(sharded.status().WithContext("sluice_writer_open"));
    opts.sharded = std::move(*sharded);
    if (options && options->newline) opts.newline = options->newline;
    if (options && options->separator) opts.separator = options->separator;
    if (options && options->num_custom_encodings > 0) {
      if (options->custom_encodings == nullptr || options->custom_encoding_sizes == nullptr) {
        return NullArgument("sluice_writer_open", "custom_encodings/custom_encoding_sizes");
      }
      for (uint32_t i = 0; i < options->num_custom_encodings; ++i) {
        const char* name = options->custom_encodings[i];
        const int64_t size = options->custom_encoding_sizes[i];
        if (name == nullptr || size < -1) {
          return Fail(sluice::InvalidArgumentError(
              "sluice_writer_open: custom encoding " + std::to_string(i) +
              (name == nullptr ? " has a NULL name" : " has size " + std::to_string(size) +
                                                          " (a size >= 0, or -1 for variable)")));
        }
        opts.custom_encodings[name] =
            size < 0 ? std::nullopt : std::optional<uint64_t>(static_cast<uint64_t>(size));
      }
    }
    auto w = std::make_unique<sluice_writer>();
    auto opened = descriptor->open_writer(out_dir, columns, opts);
    if (!opened.ok()) return Fail(opened.status().WithContext("sluice_writer_open"));
    w->writer = std::move(*opened);
    const std::vector<std::string>& stored = w->writer->column_names();
    for (const auto& [name, enc] : columns) {
      for (size_t s = 0; s < stored.size(); ++s) {
        if (stored[s] == name) w->given_to_stored.push_back(s);
      }
    }
    auto up = OpenUploader(w.get(), out_dir, options);
    if (!up.ok()) return Fail(up.WithContext("sluice_writer_open"));
    *out = w.release();
    return SLUICE_OK;
  });
}

sluice_status sluice_writer_write(sluice_writer* w, const sluice_bytes* fields, uint32_t num_fields) {
  return Guard("sluice_writer_write", [&] {
    if (w == nullptr) return NullArgument("sluice_writer_write", "w");
    if (fields == nullptr && num_fields > 0) return NullArgument("sluice_writer_write", "fields");
    if (num_fields != w->given_to_stored.size()) {
      return Fail(sluice::InvalidArgumentError(
          "sluice_writer_write: got " + std::to_string(num_fields) + " fields, the writer has " +
          std::to_string(w->given_to_stored.size()) + " columns"));
    }
    for (uint32_t i = 0; i < num_fields; ++i) {
      if (fields[i].data == nullptr && fields[i].size > 0) {
        return NullArgument("sluice_writer_write", "fields[i].data");
      }
    }
    for (uint32_t i = 0; i < num_fields; ++i) {
      auto st = w->writer->Set(w->given_to_stored[i], View(fields[i]));
      if (!st.ok()) return Fail(st.WithContext("sluice_writer_write"));
    }
    auto st = w->writer->Write();
    if (st.ok()) st = QueueNewShards(w);
    return sluice::capi::Check(st);
  });
}

sluice_status sluice_writer_finish(sluice_writer* w) {
  return Guard("sluice_writer_finish", [&] {
    if (w == nullptr) return NullArgument("sluice_writer_finish", "w");
    return sluice::capi::Check(FinishWriter(w));
  });
}

void sluice_writer_close(sluice_writer* w) { delete w; }

sluice_status sluice_writer_uploaded(const sluice_writer* w, uint64_t* files, uint64_t* bytes) {
  return Guard("sluice_writer_uploaded", [&] {
    if (w == nullptr) return NullArgument("sluice_writer_uploaded", "w");
    if (files) *files = w->uploader ? w->uploader->files_uploaded() : 0;
    if (bytes) *bytes = w->uploader ? w->uploader->bytes_uploaded() : 0;
    return SLUICE_OK;
  });
}

sluice_status sluice_encode_int64(const char* encoding, int64_t value, uint8_t* buf, uint64_t cap,
                                  uint64_t* len) {
  return Guard("sluice_encode_int64", [&] {
    return EncodeScalar("sluice_encode_int64", encoding, value, buf, cap, len);
  });
}

sluice_status sluice_encode_uint64(const char* encoding, uint64_t value, uint8_t* buf,
                                   uint64_t cap, uint64_t* len) {
  return Guard("sluice_encode_uint64", [&] {
    return EncodeScalar("sluice_encode_uint64", encoding, value, buf, cap, len);
  });
}

sluice_status sluice_encode_double(const char* encoding, double value, uint8_t* buf, uint64_t cap,
                                   uint64_t* len) {
  return Guard("sluice_encode_double", [&] {
    return EncodeScalar("sluice_encode_double", encoding, value, buf, cap, len);
  });
}

}  // extern "C"
