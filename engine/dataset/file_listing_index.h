// The index of a raw-file stream (StreamOptions::files): its files, listed
// from the store (or named by a manifest), selected and ordered as
// formats/raw/file_listing.h decides, one "raw" shard per file.
//
// With a remote, the first process of the node lists (node_file.h) and
// keeps the whole listing in <local>/<split>/.sluice/listing.json with its
// source and fingerprint; every other process, and every later run on the
// node, reads that file instead of listing again (delete it to list anew;
// a listing.json written before listings kept etags, ListedFile::etag, is
// listed anew once). A file that changed size or vanished since is then
// named when it is fetched.
// Without a remote the folder is walked in place each time (its listing is
// not kept in a dataset read in place).
//
// A manifest without sizes is completed by looking the sizes up
// (RemoteSource::Sizes: many HEAD requests at once).
//
// The listing file, its lock, a fetched manifest's temporary and a local
// folder's walk go through `env` (the dataset's: DatasetOptions::env); the
// remote's own downloads through the Env it was opened with.
// Thread-safe (no shared state beyond the files).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/env.h"
#include "base/status.h"
#include "engine/dataset/dataset_config.h"
#include "engine/dataset/remote_source.h"
#include "formats/index/index.h"
#include "formats/raw/file_listing.h"

namespace sluice {

// <state_dir>/listing.json: where a remote stream's listing is kept.
std::string StreamListingPath(const std::string& state_dir);

// The stream's files as the store lists them (or the manifest names them,
// sizes looked up), every one, unselected and unsorted, keys relative to the
// stream's root; nothing is cached. `from` is where they are listed: the
// remote, or for a local-only stream (`remote` null) its folder.
Result<std::vector<ListedFile>> ListStreamFiles(const StreamOptions& stream, RemoteSource* remote,
                                                RemoteSource& from, Env* env = Env::Default());

// As above, listing as `options` says (a stream's "files" or "parquet" key).
// `names_only` (no manifest): listed by RemoteSource::ListNames, a file it
// leaves unstated without a size and with etag "".
Result<std::vector<ListedFile>> ListStreamFiles(const StreamOptions& stream,
                                                const FileDatasetOptions& options,
                                                RemoteSource* remote, RemoteSource& from,
                                                Env* env = Env::Default(),
                                                bool names_only = false);

// What a stream's first listing on a node may take its files' sizes and
// etags from, where its source lists names alone (RemoteSource::ListNames,
// a folder on the local disk): reads made anyway, a Parquet index's footer
// reads. Given the listing (the commit rule applied; a file listed by name
// alone has no size and etag ""), it sets the size and etag of every file
// it reads (ReadEveryParquetTail's), before the listing is kept; the
// files it does not read are then stat'ed.
using ListingCompleter = std::function<Status(std::vector<ListedFile>* files)>;

// The stream's files as `options` lists them, unselected, but with the
// commit rule applied (formats/raw/file_listing.h KeepCommitted: where
// `_committed_<id>` markers are, each read once, only the files they add):
// with a remote, listed once per node and kept in .sluice/listing.json
// (see above, with the uncommitted paths); else the local folder walked.
// *source (when given) is set to what was listed, and *uncommitted to the
// paths the markers left out: SelectFiles' `source` and `uncommitted`;
// *fingerprint to ListingFingerprint of the files answered where the
// listing is kept (with a remote), else "".
// `complete` (may be null): the process that makes the node's listing of a
// folder on the local disk (no manifest) lists names alone and has
// `complete` size them (see ListingCompleter); the listing kept, its
// fingerprint and the answer are then of the sizes and etags its reads
// found.
Result<std::vector<ListedFile>> LoadStreamListing(const StreamOptions& stream,
                                                  const FileDatasetOptions& options,
                                                  RemoteSource* remote,
                                                  std::chrono::milliseconds wait_timeout,
                                                  std::string* source = nullptr,
                                                  std::vector<std::string>* uncommitted = nullptr,
                                                  Env* env = Env::Default(),
                                                  std::string* fingerprint = nullptr,
                                                  const ListingCompleter* complete = nullptr);

// `stream.files` must be set; `remote` null for a local-only stream.
// Errors name the stream's root or remote and, for a manifest, the line.
Result<Index> LoadFileListingIndex(const StreamOptions& stream, RemoteSource* remote,
                                   std::chrono::milliseconds wait_timeout,
                                   Env* env = Env::Default());

}  // namespace sluice
