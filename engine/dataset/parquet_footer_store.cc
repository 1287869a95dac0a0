#include "engine/dataset/parquet_footer_store.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>

#include "base/file.h"
#include "engine/dataset/node_file.h"
#include "formats/json/py_json.h"
#include "formats/parquet/footer.h"

namespace sluice {
namespace {

// Footers are capped at 64 MiB each (FooterOptions); a store past this is
// not one Sluice wrote.
constexpr uint64_t kMaxStoreBytes = uint64_t{1} << 36;

std::string Quote(std::string_view s) {
  std::string out;
  if (!AppendPyJsonString(out, s).ok()) return "\"?\"";
  return out;
}

// `source`/`fingerprint` null: accept a store made over anything.
Result<ParquetFooterStore> ParseStore(std::string_view bytes, const std::string_view* source,
                                      const std::string_view* fingerprint, std::string_view name) {
  const std::string where(name);
  const size_t newline = bytes.find('\n');
  if (newline == std::string_view::npos) return CorruptError(where + ": no header line");
  auto parsed = ParsePyJson(bytes.substr(0, newline));
  if (!parsed.ok()) return parsed.status().WithContext(where);
  const JsonValue* src = JsonMember(*parsed, "source");
  const JsonValue* fp = JsonMember(*parsed, "fingerprint");
  const JsonValue* list = JsonMember(*parsed, "files");
  const auto* src_text = src ? std::get_if<std::string>(&src->v) : nullptr;
  const auto* fp_text = fp ? std::get_if<std::string>(&fp->v) : nullptr;
  const auto* items = list ? std::get_if<JsonValue::Array>(&list->v) : nullptr;
  if (src_text == nullptr || fp_text == nullptr || items == nullptr) {
    return CorruptError(where + ": not a footer store (expected source, fingerprint, files)");
  }
  if ((source && *src_text != *source) || (fingerprint && *fp_text != *fingerprint)) {
    return NotFoundError(where + ": made for " + Quote(*src_text) + " over listing " + *fp_text +
                         ", not this one");
  }
  ParquetFooterStore store;
  uint64_t at = newline + 1;
  for (size_t i = 0; i < items->size(); ++i) {
    const auto* row = std::get_if<JsonValue::Array>(&(*items)[i].v);
    const bool shaped = row && (row->size() == 3 || row->size() == 4);
    const std::string* path = shaped ? std::get_if<std::string>(&(*row)[0].v) : nullptr;
    const int64_t* size = path ? std::get_if<int64_t>(&(*row)[1].v) : nullptr;
    const int64_t* tail = size ? std::get_if<int64_t>(&(*row)[2].v) : nullptr;
    const std::string* etag =
        tail && row->size() == 4 ? std::get_if<std::string>(&(*row)[3].v) : nullptr;
    if (tail == nullptr || *tail < 8 || *size < 0 || (row->size() == 4 && etag == nullptr)) {
      return CorruptError(where + ": file " + std::to_string(i) +
                          " is not [path, size, tail bytes] or [path, size, tail bytes, etag]");
    }
    const auto n = static_cast<uint64_t>(*tail);
    if (n > bytes.size() - at) {
      return CorruptError(where + ": the tail of " + Quote(*path) + " (" + std::to_string(n) +
                          " bytes) runs past the end of the store");
    }
    store.tails.emplace(*path, std::string(bytes.substr(at, n)));
    store.listed.emplace(*path, std::make_pair(static_cast<uint64_t>(*size),
                                               etag ? *etag : std::string()));
    at += n;
  }
  if (at != bytes.size()) {
    return CorruptError(where + ": " + std::to_string(bytes.size() - at) +
                        " bytes after the last tail");
  }
  return store;
}

}  // namespace

std::string ParquetFooterStorePath(const std::string& state_dir) {
  return JoinPath(state_dir, "parquet_footers");
}

Result<std::string> ReadParquetTail(RemoteSource& remote, const std::string& key,
                                    const std::string& file, uint64_t size) {
  const std::string url = remote.Describe() + "/" + key;
  auto get = [&](uint64_t offset, uint64_t length) -> Result<std::string> {
    auto got = remote.GetRangeOnly(key, offset, length);
    const std::string range =
        "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + length) + ")";
    if (!got.ok()) return got.status().WithContext(file + ": footer: reading " + range + " of " + url);
    if (got->size() != length) {
      return CorruptError(file + ": footer: " + url + " answered " + std::to_string(got->size()) +
                          " bytes for " + range + " (listed with " + std::to_string(size) +
                          " bytes: the file changed since it was listed?)");
    }
    return got;
  };
  const parquet::ByteRange first = parquet::FooterTailRange(size);
  SLUICE_ASSIGN_OR_RETURN(std::string tail, get(first.offset, first.size));
  SLUICE_ASSIGN_OR_RETURN(uint32_t length, parquet::ParseFooterLength(tail, size, file));
  const uint64_t need = uint64_t{length} + 8;
  if (need <= tail.size()) return tail.substr(tail.size() - need);
  SLUICE_ASSIGN_OR_RETURN(std::string more, get(size - need, need - tail.size()));
  return more + tail;
}

std::string SerializeParquetFooterStore(std::string_view source, std::string_view fingerprint,
                                        const std::vector<ListedFile>& files,
                                        const std::vector<std::string>& tails) {
  std::string out = "{\"source\": " + Quote(source) + ", \"fingerprint\": " + Quote(fingerprint) +
                    ", \"files\": [";
  for (size_t i = 0; i < files.size(); ++i) {
    out += (i ? ", [" : "[") + Quote(files[i].path) + ", " +
           std::to_string(files[i].size.value_or(0)) + ", " + std::to_string(tails[i].size());
    if (!files[i].etag.empty()) out += ", " + Quote(files[i].etag);
    out += "]";
  }
  out += "]}\n";
  for (const std::string& t : tails) out += t;
  return out;
}

Result<ParquetFooterStore> ParseParquetFooterStore(std::string_view bytes,
                                                   std::string_view source,
                                                   std::string_view fingerprint,
                                                   std::string_view name) {
  return ParseStore(bytes, &source, &fingerprint, name);
}

Result<ParquetFooterStore> ReadParquetFooterStore(const std::string& path, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, kMaxStoreBytes, env));
  return ParseStore(bytes, nullptr, nullptr, path);
}

Result<ParquetFooterStore> LoadOrMakeParquetFooterStore(
    const std::string& path, const std::string& state_dir, const std::string& source,
    const std::vector<ListedFile>& files, const std::string& key_prefix, RemoteSource& remote,
    std::chrono::milliseconds wait_timeout, Env* env) {
  const std::string fingerprint = ListingFingerprint(files);
  auto make = [&]() -> Status {
    std::vector<std::string> tails(files.size());
    std::vector<Status> errors(files.size());
    // The tails an older store holds of files unchanged since (same path,
    // size and known etag); the others are read.
    std::vector<size_t> to_read;
    auto old = ReadFile(path, kMaxStoreBytes, env);
    const std::string_view same_source = source;
    auto previous = old.ok() ? ParseStore(*old, &same_source, nullptr, path)
                             : Result<ParquetFooterStore>(old.status());
    for (size_t i = 0; i < files.size(); ++i) {
      if (previous.ok() && !files[i].etag.empty()) {
        auto was = previous->listed.find(files[i].path);
        if (was != previous->listed.end() && was->second.first == files[i].size.value_or(0) &&
            was->second.second == files[i].etag) {
          tails[i] = previous->tails.find(files[i].path)->second;
          continue;
        }
      }
      to_read.push_back(i);
    }
    std::atomic<size_t> next{0};
    auto work = [&] {
      for (size_t k; (k = next.fetch_add(1)) < to_read.size();) {
        const size_t i = to_read[k];
        auto tail = ReadParquetTail(remote, key_prefix + files[i].path, files[i].path,
                                    files[i].size.value_or(0));
        if (tail.ok()) {
          tails[i] = std::move(*tail);
        } else {
          errors[i] = tail.status();
          next.store(to_read.size());  // stop the others early
        }
      }
    };
    const size_t n = std::min<size_t>(to_read.size(), kConcurrentFooterReads);
    std::vector<std::thread> threads;
    for (size_t t = 1; t < n; ++t) threads.emplace_back(work);
    work();
    for (std::thread& t : threads) t.join();
    for (const Status& s : errors) SLUICE_RETURN_IF_ERROR(s);
    return WriteFileAtomic(path, SerializeParquetFooterStore(source, fingerprint, files, tails),
                           env);
  };
  // A store made over another listing (the listing was made anew, or the
  // cache folder served another remote) is made again, from the old one.
  auto current = [&] {
    auto bytes = ReadFile(path, kMaxStoreBytes, env);
    return bytes.ok() && ParseParquetFooterStore(*bytes, source, fingerprint, path).ok();
  };
  SLUICE_RETURN_IF_ERROR(MakeOncePerNode(path, state_dir, "parquet_footers.lock", wait_timeout,
                                         make, current, env));
  SLUICE_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path, kMaxStoreBytes, env));
  return ParseParquetFooterStore(bytes, source, fingerprint, path);
}

}  // namespace sluice
