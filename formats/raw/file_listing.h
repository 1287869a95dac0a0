// The index of a raw-file dataset, built from what the store lists (or a
// manifest names): the one canonical order DESIGN.md decides for datasets
// without an index.json, which Parquet datasets will share.
//
//  - Paths are relative to the dataset's root ("a/b.jpg").
//  - Left out: anything Spark or Databricks writes beside the data, that is
//    every path with a component starting with '_' or '.' (_SUCCESS,
//    _started_*, _committed_*, .crc files, hidden folders).
//  - Kept: paths matching any of the selection's globs (fnmatch(3), '*'
//    not crossing '/'): a glob with a '/' is matched against the whole
//    relative path ("train/*.jpg"), one without against the file's name at
//    any depth ("*.jpg", as .gitignore reads it); no globs = every file.
//  - Sorted bytewise by full path; one shard per file (format "raw", one
//    sample, raw_data = the file and its size).
//  - Where Databricks' DBIO commit protocol left `_committed_<id>` markers
//    in a folder (JSON {"added": [names], "removed": [names]}, names
//    relative to that folder), only the folder's files some marker adds and
//    none removes are data (KeepCommitted); the others are a task's
//    uncommitted output. A glob naming such a file exactly (no wildcard)
//    is an error that names it, and an empty selection's error names them.
//
// The listing itself is cached on the node (ListingDocument) so a restart
// does not list again; its fingerprint (xxh64 over paths and sizes) names
// exactly which files a plan was made over.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"
#include "formats/codec/hashes.h"
#include "formats/index/index.h"

namespace sluice {

struct ListedFile {
  std::string path;             // relative to the dataset's root
  std::optional<uint64_t> size; // unset: not known yet (a manifest without sizes)
  // The store's etag of the file when it was listed (ObjectInfo::etag); ""
  // unknown (a manifest, a store whose listing has none, a listing.json
  // written before etags were kept): then path and size alone name it.
  std::string etag = {};
};

struct FileSelection {
  std::vector<std::string> globs;  // empty: every file
};

// True when the canonical order leaves `relative_path` out (see above).
bool IsBesideTheData(std::string_view relative_path);

// True when `relative_path` is kept by `selection` (and not beside the data).
bool IsSelected(std::string_view relative_path, const FileSelection& selection);

// The files `selection` keeps, in canonical order. Every kept file must
// have a safe path and a size. Errors (kCorrupt, naming `source`): a kept
// unsafe path (absolute, "..", NUL, backslash; a glob can leave it out), a
// path listed twice, a file without a size; kNotFound: no file kept (saying
// how many were listed and the globs, and naming the first `uncommitted`
// files the selection would have kept). `uncommitted`: KeepCommitted's
// dropped paths; one that a glob without wildcards names is kNotFound
// naming it.
// `unchanged`, when given, says whether the answer is `files` as given
// (every file kept, in the order given): then ListingFingerprint of the
// answer is the given listing's.
Result<std::vector<ListedFile>> SelectFiles(std::vector<ListedFile> files,
                                            const FileSelection& selection,
                                            std::string_view source,
                                            const std::vector<std::string>& uncommitted = {},
                                            bool* unchanged = nullptr);

// True for a DBIO commit marker: a last path component starting with
// "_committed_".
bool IsCommitMarker(std::string_view relative_path);

// A marker's lists, names relative to the marker's folder.
struct CommitMarker {
  std::vector<std::string> added, removed;
};
// kCorrupt naming `name` for text that is not {"added": [str...],
// "removed": [str...]} ("removed" may be absent; other keys ignored).
Result<CommitMarker> ParseCommitMarker(std::string_view text, std::string_view name);

struct CommittedFiles {
  std::vector<ListedFile> kept;      // in the order given
  std::vector<std::string> dropped;  // paths, in the order given
};
// `markers`: every marker of the listing by its path. A file (not beside
// the data) in a folder holding markers is kept when some marker of that
// folder adds its name and none removes it; files of other folders are
// kept.
CommittedFiles KeepCommitted(std::vector<ListedFile> files,
                             const std::vector<std::pair<std::string, CommitMarker>>& markers);

// One "raw" ShardEntry per file, in the given order (SelectFiles' output).
Index IndexOfFiles(const std::vector<ListedFile>& files);

// Parses a manifest naming the dataset's files, one per line: either a
// relative path, or a JSON object {"path": "a/b.jpg", "size": 1234} (size
// optional). Blank lines and lines starting with '#' are skipped. Errors
// (kCorrupt) name `name` and the line number.
Result<std::vector<ListedFile>> ParseFileManifest(std::string_view text, std::string_view name);

// xxh64 hex over every (path, size, etag) in order: equal listings, equal
// fingerprints. A file without an etag adds what it added before etags
// were kept, so a listing of files without etags keeps its fingerprint.
std::string ListingFingerprint(const std::vector<ListedFile>& files);

// ListingFingerprint built one file at a time (so a million shards need no
// million ListedFile values). One thread.
class ListingFingerprintBuilder {
 public:
  void Add(std::string_view path, std::optional<uint64_t> size, std::string_view etag = {});
  // The fingerprint of the files added; Add no more after it.
  std::string Finish();

 private:
  // The files' bytes are hashed a block at a time: an update a part of
  // each file (path, size, etag and their NULs) cost more than the hash
  // of the bytes (~1k instructions a file; a million-file listing is
  // fingerprinted twice).
  std::string pending_;
  Xxh64Hasher hash_;
};

// The node's cached listing: {"source": ..., "fingerprint": ..., "files":
// [[path, size], ...]}, a file with an etag as [path, size, etag] (a
// document without etags, as written before they were kept, reads as
// files of unknown etags). Documents written now say "etags": true (the
// lister kept the etags the store gave, if any), which tells them from
// those written before. `source` says what was listed (a redacted URL and
// the manifest), so a cache made for another source is not reused.
// With `uncommitted` (KeepCommitted's dropped paths) as "uncommitted".
// `fingerprint`, when given, gets the document's (ListingFingerprint of
// `files`), so that a caller that needs it does not compute it again.
std::string SerializeListingDocument(std::string_view source, const std::vector<ListedFile>& files,
                                     const std::vector<std::string>& uncommitted = {},
                                     std::string* fingerprint = nullptr);
// Whether ParseListingDocument of SerializeListingDocument(source, files,
// uncommitted) gives back exactly `files` and `uncommitted`: every path,
// etag and uncommitted path strict UTF-8 (FindInvalidUtf8), every size at
// most INT64_MAX. A maker may then hand its listing on without reading
// back the document it wrote.
bool ListingDocumentRoundTrips(const std::vector<ListedFile>& files,
                               const std::vector<std::string>& uncommitted);
// kCorrupt (naming `name`) when the text is not such a document or its
// fingerprint does not match its files; kNotFound when it was made for
// another source than `source`.
// `uncommitted`, when given, gets the document's "uncommitted" paths;
// `kept_etags`, whether it says "etags": true; `fingerprint`, its
// fingerprint (checked: ListingFingerprint of the files answered).
Result<std::vector<ListedFile>> ParseListingDocument(std::string_view text, std::string_view source,
                                                     std::string_view name,
                                                     std::vector<std::string>* uncommitted = nullptr,
                                                     bool* kept_etags = nullptr,
                                                     std::string* fingerprint = nullptr);

}  // namespace sluice
