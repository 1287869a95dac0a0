#include "engine/dataset/file_listing_index.h"

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/file.h"
#include "base/uninitialized_buffer.h"
#include "engine/cache/cache_layout.h"
#include "engine/dataset/node_file.h"
#include "engine/dataset/stream_index.h"
#include "formats/raw/file_listing.h"

namespace sluice {
namespace {

constexpr uint64_t kMaxListingBytes = uint64_t{1} << 30;

// What is listed: the document's `source`, and the errors' subject.
std::string SourceOf(const StreamOptions& stream, const FileDatasetOptions& files,
                     const RemoteSource* remote) {
  std::string source = remote ? remote->Describe() : StreamRoot(stream);
  if (remote && !stream.split.empty()) source += " split " + stream.split;
  if (!files.manifest.empty()) source += " manifest " + files.manifest;
  return source;
}

// Keys under the remote root carry the split; a local folder's are relative
// to the stream's root already.
std::string KeyPrefix(const StreamOptions& stream, const RemoteSource* remote) {
  return remote && !stream.split.empty() ? stream.split + "/" : std::string();
}

Result<std::string> ReadManifest(const StreamOptions& stream, const std::string& manifest,
                                 RemoteSource* remote, Env* env) {
  if (!remote) return ReadFile(JoinPath(StreamRoot(stream), manifest), kMaxListingBytes, env);
  std::string state_dir = JoinPath(StreamRoot(stream), cache_layout::kStateDir);
  SLUICE_RETURN_IF_ERROR(MakeDirs(state_dir, env));
  std::string tmp = TempPathFor(JoinPath(state_dir, "manifest"));
  std::string key = RemoteKey(stream, manifest);
  auto fetched = remote->Fetch(key, tmp, std::nullopt);
  Result<std::string> text = fetched.ok() ? ReadFile(tmp, kMaxListingBytes, env)
                                          : Result<std::string>(fetched.status());
  (void)env->Remove(tmp);
  if (!text.ok()) return text.status().WithContext("manifest " + remote->Describe() + "/" + key);
  return text;
}

}  // namespace

Result<std::vector<ListedFile>> ListStreamFiles(const StreamOptions& stream, RemoteSource* remote,
                                                RemoteSource& from, Env* env) {
  return ListStreamFiles(stream, *stream.files, remote, from, env);
}

Result<std::vector<ListedFile>> ListStreamFiles(const StreamOptions& stream,
                                                const FileDatasetOptions& options,
                                                RemoteSource* remote, RemoteSource& from,
                                                Env* env, bool names_only) {
  const std::string source = SourceOf(stream, options, remote);
  const std::string prefix = KeyPrefix(stream, remote);
  std::vector<ListedFile> files;
  if (options.manifest.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<ObjectInfo> objects,
                            names_only ? from.ListNames(prefix) : from.List(prefix));
    files.reserve(objects.size());
    for (ObjectInfo& o : objects) {
      if (o.key.compare(0, prefix.size(), prefix) != 0) continue;
      // The key itself, its prefix cut in place: a copy a file was an
      // allocation and 32 bytes held beside the listing at a million.
      o.key.erase(0, prefix.size());
      const bool unstated = names_only && o.etag.empty();
      files.push_back(ListedFile{std::move(o.key), unstated ? std::nullopt : std::optional(o.size),
                                 std::move(o.etag)});
    }
    return files;
  }
  SLUICE_ASSIGN_OR_RETURN(std::string text, ReadManifest(stream, options.manifest, remote, env));
  SLUICE_ASSIGN_OR_RETURN(files, ParseFileManifest(text, source));
  std::vector<std::string> keys;
  std::vector<size_t> unsized;
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].size) continue;
    // Only selected files need a size; an unsafe path fails in SelectFiles.
    if (!IsSafeBasename(files[i].path) || !IsSelected(files[i].path, options.selection)) {
      continue;
    }
    unsized.push_back(i);
    keys.push_back(prefix + files[i].path);
  }
  if (!keys.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::vector<uint64_t> sizes, from.Sizes(keys));
    for (size_t k = 0; k < unsized.size(); ++k) files[unsized[k]].size = sizes[k];
  }
  return files;
}

namespace {

// Markers are small JSON lists; a larger one is not a marker.
constexpr uint64_t kMaxMarkerBytes = uint64_t{64} << 20;

// The listing with the DBIO commit rule applied (KeepCommitted): each
// marker read from `from` (keys `prefix` + path).
Result<CommittedFiles> ApplyCommitMarkers(std::vector<ListedFile> files, RemoteSource& from,
                                          const std::string& prefix) {
  std::vector<std::pair<std::string, CommitMarker>> markers;
  for (const ListedFile& f : files) {
    if (!IsCommitMarker(f.path) || !IsSafeBasename(f.path)) continue;
    const std::string where = from.Describe() + "/" + prefix + f.path;
    const uint64_t size = f.size.value_or(kMaxMarkerBytes);
    if (size > kMaxMarkerBytes) {
      return CorruptError(where + ": a commit marker of " + std::to_string(size) + " bytes");
    }
    auto text = from.GetRangeOnly(prefix + f.path, 0, size);
    if (!text.ok()) return text.status().WithContext("reading commit marker " + where);
    SLUICE_ASSIGN_OR_RETURN(CommitMarker marker, ParseCommitMarker(*text, where));
    markers.emplace_back(f.path, std::move(marker));
  }
  if (markers.empty()) return CommittedFiles{std::move(files), {}};
  return KeepCommitted(std::move(files), markers);
}

// The size and etag of each of `files` listed by name alone that the
// completer did not read (a marker, a file the selection leaves out: the
// listing keeps them all), each from one open and fstat (RemoteSource::
// GetTailInRoom of no byte). One that vanished since it was listed is left
// out, as a stat'ed walk leaves it out.
Status StateUnstated(std::vector<ListedFile>* files, RemoteSource& from,
                     const std::string& prefix) {
  UninitializedBuffer room;
  bool vanished = false;
  for (ListedFile& f : *files) {
    if (f.size) continue;
    ObjectStated stated;
    auto got = from.GetTailInRoom(prefix + f.path, 0, &stated, &room);
    if (!got.ok() && got.status().os_error() == ENOENT) {
      vanished = true;
      f.path.clear();
      continue;
    }
    if (!got.ok()) return got.status().WithContext("listing " + from.Describe() + "/" + prefix + f.path);
    f.size = stated.size.value_or(0);
    f.etag = std::move(stated.etag);
  }
  if (vanished) std::erase_if(*files, [](const ListedFile& f) { return f.path.empty(); });
  return Status::Ok();
}

Result<std::vector<ListedFile>> CachedListing(const StreamOptions& stream,
                                              const FileDatasetOptions& options,
                                              RemoteSource* remote, const std::string& source,
                                              std::chrono::milliseconds wait_timeout,
                                              std::vector<std::string>* uncommitted, Env* env,
                                              std::string* fingerprint,
                                              const ListingCompleter* complete) {
  const std::string state_dir = JoinPath(StreamRoot(stream), cache_layout::kStateDir);
  const std::string path = StreamListingPath(state_dir);
  // The maker hands its listing on as made when the document reads back as
  // exactly it (ListingDocumentRoundTrips): at a million files, reading
  // back and parsing the 64 MB just written cost seconds.
  std::optional<CommittedFiles> made;
  std::string made_fingerprint, found_fingerprint;
  auto make = [&]() -> Status {
    // A folder on the local disk is listed by name alone when a completer
    // reads its files anyway: each name is then looked up once, by the
    // open of its read, not by a stat here and again by that open (at a
    // million files, ~1 s of system CPU). The listing's version of a file
    // is then the fstat of the descriptor its read opened: a file
    // replaced between this readdir and that open is simply read, and
    // kept, as it is then (no earlier version was ever stated, so none
    // was promised); one changed between that fstat and a later read of
    // it is still ObjectVersionChangedError, as every listed version is.
    const bool names_only = complete != nullptr && *complete && options.manifest.empty() &&
                            remote->OnLocalDisk();
    SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files,
                            ListStreamFiles(stream, options, remote, *remote, env, names_only));
    SLUICE_ASSIGN_OR_RETURN(CommittedFiles committed,
                            ApplyCommitMarkers(std::move(files), *remote, KeyPrefix(stream, remote)));
    if (names_only) {
      SLUICE_RETURN_IF_ERROR((*complete)(&committed.kept));
      SLUICE_RETURN_IF_ERROR(StateUnstated(&committed.kept, *remote, KeyPrefix(stream, remote)));
    }
    SLUICE_RETURN_IF_ERROR(WriteFileAtomic(
        path,
        SerializeListingDocument(source, committed.kept, committed.dropped, &made_fingerprint),
        env));
    if (ListingDocumentRoundTrips(committed.kept, committed.dropped)) made = std::move(committed);
    return Status::Ok();
  };
  // A listing is listed anew when it is of another source (the cache folder
  // was reused for another remote or manifest), or was written before
  // listings kept etags (its files' etags unknown: listed again, so that a
  // file replaced at the same size since is told from the one listed).
  // An open that finds the listing made reads and parses it once: what
  // `current` found when it said so (the files, or why the document cannot
  // be read or is corrupt) is the answer.
  std::optional<Result<std::vector<ListedFile>>> found;
  std::vector<std::string> found_uncommitted;
  auto current = [&] {
    found.reset();
    auto text = ReadFile(path, kMaxListingBytes, env);
    if (!text.ok()) {
      found = text.status();  // the open fails saying why
      return true;
    }
    bool kept_etags = false;
    std::vector<std::string> dropped;
    auto files =
        ParseListingDocument(*text, source, path, &dropped, &kept_etags, &found_fingerprint);
    if (files.status().code() == StatusCode::kNotFound || (files.ok() && !kept_etags)) {
      return false;
    }
    found = std::move(files);
    found_uncommitted = std::move(dropped);
    return true;
  };
  SLUICE_RETURN_IF_ERROR(
      MakeOncePerNode(path, state_dir, "listing.lock", wait_timeout, make, current, env));
  if (made) {
    if (uncommitted) *uncommitted = std::move(made->dropped);
    if (fingerprint) *fingerprint = std::move(made_fingerprint);
    return std::move(made->kept);
  }
  if (found) {
    if (found->ok() && uncommitted) *uncommitted = std::move(found_uncommitted);
    if (found->ok() && fingerprint) *fingerprint = std::move(found_fingerprint);
    return std::move(*found);
  }
  SLUICE_ASSIGN_OR_RETURN(std::string text, ReadFile(path, kMaxListingBytes, env));
  return ParseListingDocument(text, source, path, uncommitted, nullptr, fingerprint);
}

}  // namespace

std::string StreamListingPath(const std::string& state_dir) {
  return JoinPath(state_dir, "listing.json");
}

Result<std::vector<ListedFile>> LoadStreamListing(const StreamOptions& stream,
                                                  const FileDatasetOptions& options,
                                                  RemoteSource* remote,
                                                  std::chrono::milliseconds wait_timeout,
                                                  std::string* source_out,
                                                  std::vector<std::string>* uncommitted,
                                                  Env* env, std::string* fingerprint,
                                                  const ListingCompleter* complete) {
  const std::string source = SourceOf(stream, options, remote);
  if (source_out) *source_out = source;
  if (fingerprint) fingerprint->clear();
  std::vector<std::string> dropped;
  if (remote) {
    auto files =
        CachedListing(stream, options, remote, source, wait_timeout, &dropped, env, fingerprint,
                      complete);
    if (uncommitted) *uncommitted = std::move(dropped);
    return files;
  }
  StoreOptions in_place;
  in_place.env = env;
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RemoteSource> folder,
                          OpenRemoteSource(StreamRoot(stream), in_place));
  SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files,
                          ListStreamFiles(stream, options, nullptr, *folder, env));
  SLUICE_ASSIGN_OR_RETURN(CommittedFiles committed, ApplyCommitMarkers(std::move(files), *folder, ""));
  if (uncommitted) *uncommitted = std::move(committed.dropped);
  return std::move(committed.kept);
}

Result<Index> LoadFileListingIndex(const StreamOptions& stream, RemoteSource* remote,
                                   std::chrono::milliseconds wait_timeout, Env* env) {
  std::string source;
  std::vector<std::string> uncommitted;
  SLUICE_ASSIGN_OR_RETURN(std::vector<ListedFile> files,
                          LoadStreamListing(stream, *stream.files, remote, wait_timeout, &source,
                                            &uncommitted, env));
  SLUICE_ASSIGN_OR_RETURN(files, SelectFiles(std::move(files), stream.files->selection, source,
                                             uncommitted));
  return IndexOfFiles(files);
}

}  // namespace sluice
