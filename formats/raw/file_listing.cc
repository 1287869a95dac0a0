#include "formats/raw/file_listing.h"

#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "base/parallel_claims.h"
#include "base/utf8.h"
#include "formats/codec/hashes.h"
#include "formats/json/py_json.h"
#include "formats/raw/raw_file_reader.h"

namespace sluice {
namespace {

// `s` as a JSON string appended to `out`, or the words for a path that
// cannot be one.
void AppendQuoted(std::string& out, std::string_view s) {
  if (!AppendPyJsonString(out, s).ok()) out += "(a path that is not UTF-8)";
}

std::string Quote(std::string_view s) {
  std::string out;
  AppendQuoted(out, s);
  return out;
}

std::string JoinGlobs(const FileSelection& selection) {
  std::string out;
  for (const std::string& g : selection.globs) out += (out.empty() ? "" : ", ") + Quote(g);
  return out;
}

}  // namespace

bool IsBesideTheData(std::string_view path) {
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (end > start && (path[start] == '_' || path[start] == '.')) return true;
    start = end + 1;
  }
  return false;
}

namespace {

// fnmatch(glob, name, FNM_PATHNAME) without it, for a glob that is '*'
// then a literal (the Parquet default "*.parquet"): a name ends with the
// literal. fnmatch copies and converts each name (~1k instructions; a
// million-file listing is selected once). nullopt: another glob.
std::optional<bool> StarThenLiteral(std::string_view glob, std::string_view name) {
  if (glob.size() < 1 || glob[0] != '*') return std::nullopt;
  const std::string_view literal = glob.substr(1);
  // Wildcards, an escape or a '/' (which '*' does not cross) are fnmatch's.
  for (const char c : literal) {
    if (c == '*' || c == '?' || c == '[' || c == '\\' || c == '/') return std::nullopt;
  }
  // fnmatch reads a name (IsSelected's: no '/') to its first NUL.
  if (name.find('\0') != std::string_view::npos) return std::nullopt;
  return name.size() >= literal.size() && name.substr(name.size() - literal.size()) == literal;
}

}  // namespace

bool IsSelected(std::string_view path, const FileSelection& selection) {
  if (IsBesideTheData(path)) return false;
  if (selection.globs.empty()) return true;
  const size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  std::string full, base;  // made for fnmatch only
  for (const std::string& glob : selection.globs) {
    const bool whole = glob.find('/') != std::string::npos;
    if (!whole) {
      if (const std::optional<bool> quick = StarThenLiteral(glob, name)) {
        if (*quick) return true;
        continue;
      }
    }
    if (whole && full.empty()) full = path;
    if (!whole && base.empty()) base = name;
    if (::fnmatch(glob.c_str(), whole ? full.c_str() : base.c_str(), FNM_PATHNAME) == 0) {
      return true;
    }
  }
  return false;
}

namespace {

bool HasWildcard(std::string_view glob) { return glob.find_first_of("*?[") != std::string_view::npos; }

// The folder part of a relative path ("" at the root), with its '/'.
std::string_view FolderOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view() : path.substr(0, slash + 1);
}

}  // namespace

Result<std::vector<ListedFile>> SelectFiles(std::vector<ListedFile> files,
                                            const FileSelection& selection,
                                            std::string_view source,
                                            const std::vector<std::string>& uncommitted,
                                            bool* unchanged) {
  if (unchanged) *unchanged = false;
  std::vector<std::string> dropped;
  for (const std::string& path : uncommitted) {
    if (!IsSelected(path, selection)) continue;
    dropped.push_back(path);
    const std::string name(path.substr(FolderOf(path).size()));
    for (const std::string& glob : selection.globs) {
      if (HasWildcard(glob) || (glob != path && glob != name)) continue;
      return NotFoundError(std::string(source) + ": file " + Quote(path) + ", which glob " +
                           Quote(glob) + " names, is not committed: no _committed_ marker of " +
                           "its folder adds it (a task's output that Spark did not commit)");
    }
  }
  const size_t listed = files.size();
  std::vector<ListedFile> kept;
  kept.reserve(files.size());
  for (ListedFile& f : files) {
    // Selected first: a glob can leave out a key no cache could hold.
    if (!IsSelected(f.path, selection)) continue;
    if (!IsSafeBasename(f.path)) {
      return CorruptError(std::string(source) + ": unsafe file path " + Quote(f.path) +
                          " (must be relative, without '..', '\\' or NUL)");
    }
    if (!f.size) {
      return CorruptError(std::string(source) + ": file " + Quote(f.path) + " has no size");
    }
    kept.push_back(std::move(f));
  }
  const auto by_path = [](const ListedFile& a, const ListedFile& b) { return a.path < b.path; };
  // A store's listing comes in path order: paths already in strict order
  // are the sort's one answer (and none is twice), so they are not sorted
  // again (moving a million files' strings about).
  const bool in_order =
      std::adjacent_find(kept.begin(), kept.end(), [&](const ListedFile& a, const ListedFile& b) {
        return !by_path(a, b);
      }) == kept.end();
  if (!in_order) std::sort(kept.begin(), kept.end(), by_path);
  // Paths in strict order hold none twice.
  for (size_t i = 1; i < kept.size() && !in_order; ++i) {
    if (kept[i].path == kept[i - 1].path) {
      return CorruptError(std::string(source) + ": file " + Quote(kept[i].path) +
                          " is listed twice");
    }
  }
  if (kept.empty()) {
    return NotFoundError(std::string(source) + ": no data file among the " +
                        std::to_string(listed) + " listed" +
                        (selection.globs.empty() ? std::string()
                                                 : " that matches " + JoinGlobs(selection)) +
                        " (names starting with '_' or '.' are left out" +
                        (dropped.empty() ? std::string() : ", and " + std::to_string(dropped.size()) +
                                                               " uncommitted, first " + Quote(dropped[0])) +
                        ")");
  }
  if (unchanged) *unchanged = in_order && kept.size() == listed;
  return kept;
}

bool IsCommitMarker(std::string_view path) {
  return path.substr(FolderOf(path).size()).rfind("_committed_", 0) == 0;
}

Result<CommitMarker> ParseCommitMarker(std::string_view text, std::string_view name) {
  auto parsed = ParsePyJson(text);
  if (!parsed.ok()) return parsed.status().WithContext(std::string(name));
  if (!std::holds_alternative<JsonValue::Object>(parsed->v)) {
    return CorruptError(std::string(name) + ": a commit marker must be a JSON object");
  }
  CommitMarker marker;
  for (auto [key, out] : {std::pair<const char*, std::vector<std::string>*>{"added", &marker.added},
                          {"removed", &marker.removed}}) {
    const JsonValue* list = JsonMember(*parsed, key);
    if (list == nullptr && std::string_view(key) == "removed") continue;
    const auto* items = list ? std::get_if<JsonValue::Array>(&list->v) : nullptr;
    if (items == nullptr) {
      return CorruptError(std::string(name) + ": \"" + key + "\" must be a list of file names");
    }
    for (const JsonValue& item : *items) {
      const std::string* file = std::get_if<std::string>(&item.v);
      if (file == nullptr) {
        return CorruptError(std::string(name) + ": \"" + key + "\" holds a value that is not a name");
      }
      out->push_back(*file);
    }
  }
  return marker;
}

CommittedFiles KeepCommitted(std::vector<ListedFile> files,
                             const std::vector<std::pair<std::string, CommitMarker>>& markers) {
  // Per folder with markers: its added and removed names.
  std::map<std::string, std::pair<std::set<std::string>, std::set<std::string>>, std::less<>> folders;
  for (const auto& [path, marker] : markers) {
    auto& [added, removed] = folders[std::string(FolderOf(path))];
    added.insert(marker.added.begin(), marker.added.end());
    removed.insert(marker.removed.begin(), marker.removed.end());
  }
  CommittedFiles out;
  for (ListedFile& f : files) {
    const std::string_view folder = FolderOf(f.path);
    auto it = folders.find(folder);
    if (it == folders.end() || IsBesideTheData(f.path)) {
      out.kept.push_back(std::move(f));
      continue;
    }
    const std::string name(f.path.substr(folder.size()));
    if (it->second.first.count(name) && !it->second.second.count(name)) {
      out.kept.push_back(std::move(f));
    } else {
      out.dropped.push_back(std::move(f.path));
    }
  }
  return out;
}

Index IndexOfFiles(const std::vector<ListedFile>& files) {
  Index index;
  index.shards.reserve(files.size());
  for (const ListedFile& f : files) {
    ShardEntry e;
    e.format = std::string(kRawFormat);
    e.samples = 1;
    e.raw_data.basename = f.path;
    e.raw_data.bytes = f.size.value_or(0);
    index.shards.push_back(std::move(e));
  }
  return index;
}

Result<std::vector<ListedFile>> ParseFileManifest(std::string_view text, std::string_view name) {
  std::vector<ListedFile> files;
  size_t line_no = 0, start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::string where = std::string(name) + " line " + std::to_string(line_no);
    size_t first = line.find_first_not_of(" \t");
    if (first == std::string_view::npos || line[first] == '#') continue;
    if (line[first] != '{') {
      size_t last = line.find_last_not_of(" \t");
      files.push_back(ListedFile{std::string(line.substr(first, last + 1 - first)), std::nullopt});
      continue;
    }
    auto parsed = ParsePyJson(line);
    if (!parsed.ok()) return parsed.status().WithContext(where);
    const auto* object = std::get_if<JsonValue::Object>(&parsed->v);
    if (object == nullptr) return CorruptError(where + ": expected a JSON object");
    for (const auto& [key, value] : *object) {
      if (key != "path" && key != "size") {
        return CorruptError(where + ": unknown key " + Quote(key) + " (expected path, size)");
      }
    }
    const JsonValue* path = JsonMember(*parsed, "path");
    const std::string* path_text = path ? std::get_if<std::string>(&path->v) : nullptr;
    if (path_text == nullptr) return CorruptError(where + ": \"path\" must be a string");
    ListedFile f{*path_text, std::nullopt};
    if (const JsonValue* size = JsonMember(*parsed, "size");
        size != nullptr && !std::holds_alternative<std::nullptr_t>(size->v)) {
      const int64_t* n = std::get_if<int64_t>(&size->v);
      if (n == nullptr || *n < 0) {
        return CorruptError(where + ": \"size\" must be a byte count (a non-negative integer)");
      }
      f.size = static_cast<uint64_t>(*n);
    }
    files.push_back(std::move(f));
  }
  return files;
}

namespace {
constexpr size_t kFingerprintBlock = size_t{64} << 10;
}  // namespace

void ListingFingerprintBuilder::Add(std::string_view path, std::optional<uint64_t> size,
                                    std::string_view etag) {
  if (pending_.capacity() < kFingerprintBlock) pending_.reserve(kFingerprintBlock);
  char digits[24] = {'-'};
  const size_t digit_bytes =
      size ? static_cast<size_t>(std::to_chars(digits, digits + sizeof digits, *size).ptr - digits)
           : 1;
  // Each path and its size, NUL-separated: a path holds no NUL
  // (IsSafeBasename); with an etag, a NUL where the next path would start
  // (a path is never empty), then the etag and its NUL. Written in one
  // grown piece, its NULs the resize's.
  const size_t at = pending_.size();
  pending_.resize(at + path.size() + digit_bytes + 2 + (etag.empty() ? 0 : etag.size() + 2));
  char* out = pending_.data() + at;
  std::memcpy(out, path.data(), path.size());
  out += path.size() + 1;
  std::memcpy(out, digits, digit_bytes);
  out += digit_bytes + 1;
  if (!etag.empty()) std::memcpy(out + 1, etag.data(), etag.size());
  if (pending_.size() >= kFingerprintBlock) {
    hash_.Update(pending_);
    pending_.clear();
  }
}

std::string ListingFingerprintBuilder::Finish() {
  hash_.Update(pending_);
  pending_.clear();
  return hash_.Hex();
}

std::string ListingFingerprint(const std::vector<ListedFile>& files) {
  ListingFingerprintBuilder b;
  for (const ListedFile& f : files) b.Add(f.path, f.size, f.etag);
  return b.Finish();
}

namespace {

// Files a part of the listing document, serialized on its own thread.
constexpr size_t kDocumentPart = size_t{1} << 16;

// files[begin, end)'s entries of the document, appended to `out`.
void AppendListingEntries(std::string& out, const std::vector<ListedFile>& files, size_t begin,
                          size_t end) {
  // Appended in place, reserved about whole: at a million files the
  // document is ~64 MB, which doubling copied and each file's temporaries
  // (its line, quoted path and etag, size text) allocated five times.
  size_t about = 0;
  for (size_t i = begin; i < end; ++i) about += files[i].path.size() + files[i].etag.size() + 36;
  out.reserve(out.size() + about);
  for (size_t i = begin; i < end; ++i) {
    out += i ? ",\n[" : "\n[";
    AppendQuoted(out, files[i].path);
    out += ", ";
    if (files[i].size) {
      char digits[24];
      out.append(digits, std::to_chars(digits, digits + sizeof digits, *files[i].size).ptr);
    } else {
      out += "null";
    }
    if (!files[i].etag.empty()) {
      out += ", ";
      AppendQuoted(out, files[i].etag);
    }
    out += "]";
  }
}

}  // namespace

std::string SerializeListingDocument(std::string_view source,
                                     const std::vector<ListedFile>& files,
                                     const std::vector<std::string>& uncommitted,
                                     std::string* fingerprint_out) {
  // The fingerprint and the entries' parts at once, on the machine's
  // cores: at a million files the node's first open did them on one core
  // (~1.9k instructions a file) before it could read any footer.
  const size_t parts = (files.size() + kDocumentPart - 1) / kDocumentPart;
  std::string fingerprint;
  std::vector<std::string> entries(parts);
  ParallelClaims(parts + 1, 1, 8, [&](size_t first, size_t last) {
    for (size_t k = first; k < last; ++k) {
      if (k == 0) {
        fingerprint = ListingFingerprint(files);
      } else {
        const size_t begin = (k - 1) * kDocumentPart;
        AppendListingEntries(entries[k - 1], files, begin,
                             std::min(files.size(), begin + kDocumentPart));
      }
    }
  });
  std::string out = "{\"source\": " + Quote(source) + ", \"etags\": true" +
                    ", \"fingerprint\": \"" + fingerprint + "\", \"files\": [";
  size_t bytes = out.size() + 64;
  for (const std::string& part : entries) bytes += part.size();
  out.reserve(bytes);
  for (std::string& part : entries) {
    out += part;
    std::string().swap(part);  // not held beside the document
  }
  out += "]";
  if (!uncommitted.empty()) {
    out += ", \"uncommitted\": [";
    for (size_t i = 0; i < uncommitted.size(); ++i) out += (i ? ", " : "") + Quote(uncommitted[i]);
    out += "]";
  }
  out += "}\n";
  if (fingerprint_out) *fingerprint_out = std::move(fingerprint);
  return out;
}

bool ListingDocumentRoundTrips(const std::vector<ListedFile>& files,
                               const std::vector<std::string>& uncommitted) {
  constexpr uint64_t kMaxInt64 = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  auto utf8 = [](std::string_view s) { return FindInvalidUtf8(s) == std::string_view::npos; };
  for (const ListedFile& f : files) {
    if (!utf8(f.path) || !utf8(f.etag) || (f.size && *f.size > kMaxInt64)) return false;
  }
  for (const std::string& path : uncommitted) {
    if (!utf8(path)) return false;
  }
  return true;
}

Result<std::vector<ListedFile>> ParseListingDocument(std::string_view text,
                                                     std::string_view source,
                                                     std::string_view name,
                                                     std::vector<std::string>* uncommitted,
                                                     bool* kept_etags,
                                                     std::string* fingerprint_out) {
  auto parsed = ParsePyJson(text);
  if (!parsed.ok()) return parsed.status().WithContext(std::string(name));
  const JsonValue& doc = *parsed;
  const JsonValue* src = JsonMember(doc, "source");
  const JsonValue* fingerprint = JsonMember(doc, "fingerprint");
  const JsonValue* list = JsonMember(doc, "files");
  const auto* src_text = src ? std::get_if<std::string>(&src->v) : nullptr;
  const auto* fp_text = fingerprint ? std::get_if<std::string>(&fingerprint->v) : nullptr;
  const auto* items = list ? std::get_if<JsonValue::Array>(&list->v) : nullptr;
  if (src_text == nullptr || fp_text == nullptr || items == nullptr) {
    return CorruptError(std::string(name) + ": not a listing (expected source, fingerprint, files)");
  }
  if (*src_text != source) {
    return NotFoundError(std::string(name) + ": lists " + Quote(*src_text) + ", not " +
                         Quote(source));
  }
  if (kept_etags) {
    const JsonValue* etags = JsonMember(doc, "etags");
    const bool* flag = etags ? std::get_if<bool>(&etags->v) : nullptr;
    *kept_etags = flag != nullptr && *flag;
  }
  std::vector<ListedFile> files;
  files.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    const auto* pair = std::get_if<JsonValue::Array>(&(*items)[i].v);
    const bool shaped = pair && (pair->size() == 2 || pair->size() == 3);
    const std::string* path = shaped ? std::get_if<std::string>(&(*pair)[0].v) : nullptr;
    const std::string* etag =
        path && pair->size() == 3 ? std::get_if<std::string>(&(*pair)[2].v) : nullptr;
    if (path == nullptr || (pair->size() == 3 && (etag == nullptr || etag->empty()))) {
      return CorruptError(std::string(name) + ": file " + std::to_string(i) +
                          " is not [path, size] or [path, size, etag]");
    }
    ListedFile f{*path, std::nullopt, etag ? *etag : std::string()};
    if (const int64_t* n = std::get_if<int64_t>(&(*pair)[1].v); n != nullptr && *n >= 0) {
      f.size = static_cast<uint64_t>(*n);
    } else if (!std::holds_alternative<std::nullptr_t>((*pair)[1].v)) {
      return CorruptError(std::string(name) + ": file " + std::to_string(i) +
                          " has a size that is not a byte count");
    }
    files.push_back(std::move(f));
  }
  if (ListingFingerprint(files) != *fp_text) {
    return CorruptError(std::string(name) + ": its fingerprint does not match its files");
  }
  if (fingerprint_out) *fingerprint_out = *fp_text;
  if (uncommitted) {
    uncommitted->clear();
    if (const JsonValue* u = JsonMember(doc, "uncommitted")) {
      const auto* paths = std::get_if<JsonValue::Array>(&u->v);
      if (paths == nullptr) return CorruptError(std::string(name) + ": \"uncommitted\" is not a list");
      for (const JsonValue& p : *paths) {
        const std::string* path = std::get_if<std::string>(&p.v);
        if (path == nullptr) return CorruptError(std::string(name) + ": \"uncommitted\" holds a non-path");
        uncommitted->push_back(*path);
      }
    }
  }
  return files;
}

}  // namespace sluice
