// The footers of a remote stream's Parquet files, read once per node and
// kept in <local>/<split>/.sluice/parquet_footers, so that the node's other
// processes and every later run read no footer again.
//
// Each file's tail (its FileMetaData, length and magic: the bytes a row
// group's piece ends with, ShardEntry::piece) is read with ranged reads:
// the last 64 KiB first (FooterTailRange), a second read only when the
// footer is longer; kConcurrentFooterReads files at once (a local folder
// too: its reads wait on the disk when its pages are not cached; 4 readers
// on 2 cores opened 50k cold files in 2.07-2.10 s against 16's 1.25-1.36).
// The maker writes the store as the tails come, in path order, holding
// the records and text but only a window of tails, never all of them.
//
// The store is one binary file, mapped by every process that reads it
// (its pages shared through the page cache), so that a shard fetch takes
// its file's tail without reading the rest: a header (magic and version,
// checked by base/binary_file.h's CheckBinaryTag; counts, the source and fingerprint, a checksum of them), one fixed-size
// record per file sorted by path (its path, size, etag and tail's place,
// and a checksum of all of them and the tail's bytes), the text of the
// paths and etags, then the tails back to back (ParquetFooterStore::Find:
// a binary search, then the record found is checked). The fingerprint is
// ListingFingerprint of the files it was made over (paths, sizes and
// etags), so a store made over another listing is made anew: the tails
// of files listed again with the same path, size and (known) etag are
// taken from the old store, every other file's (a file replaced at the
// same size has a new etag; one of unknown etag is never trusted) is read
// again. A store of another layout (the JSON-line store of earlier
// versions) is not one: it is made again.
//
// The store file, its lock and its reads go through the Env given (the
// dataset's: DatasetOptions::env); the tails' ranged reads through the
// remote.
//
// Thread-safe (no shared state beyond the files); a ParquetFooterStore is
// immutable once opened, and the views it hands out live as long as it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/mapped_file.h"
#include "base/uninitialized_buffer.h"
#include "base/status.h"
#include "engine/dataset/remote_source.h"
#include "formats/raw/file_listing.h"

namespace sluice {

inline constexpr int kConcurrentFooterReads = 16;

// One file of a store, by view into it.
struct FooterStoreFile {
  std::string_view path;  // relative to the stream's root
  uint64_t size = 0;      // when the store was made
  std::string_view etag;  // "" unknown
  std::string_view tail;
};

class ParquetFooterStore {
 public:
  // Maps the store at `path` and checks its header (kCorrupt naming
  // `path` for a file that is not a store of this layout).
  static Result<ParquetFooterStore> Open(const std::string& path, Env* env = Env::Default());
  // Open, for the process that has just written the store at `path`
  // (LoadOrMakeParquetFooterStore's maker): the header is checked, but Find
  // checks no record against its checksum again, as this process computed
  // them from the bytes it wrote (at a million files, ~1.6k instructions a
  // file). Find still bounds every record by the store's sections. Any
  // other reader uses Open.
  static Result<ParquetFooterStore> OpenJustMade(const std::string& path,
                                                 Env* env = Env::Default());
  // The same over `bytes` (owned), named `name` in errors.
  static Result<ParquetFooterStore> FromBytes(std::string bytes, std::string_view name);

  std::string_view source() const { return source_; }
  std::string_view fingerprint() const { return fingerprint_; }
  size_t size() const { return count_; }
  // The file at `path`: kNotFound when the store holds none, kCorrupt (naming
  // the store) when its record or tail does not match its checksum.
  Result<FooterStoreFile> Find(std::string_view path) const;
  // Find's answer, looking first at the `hint`-th record (records are in
  // path order, so a listing sorted by path that the store was made from
  // names each file's record by its position): one record read where the
  // search reads about log2(size()), each a cache miss in a store of a
  // million files. (A damaged record the search would have passed through
  // is not read: the file's own record is still checked.)
  Result<FooterStoreFile> Find(std::string_view path, size_t hint) const;
  // Every record and tail checked against its checksum (OpenJustMade's
  // too), and the records' order (a store's builder: a damaged store is
  // made again, not used).
  Status CheckAll() const;

 private:
  ParquetFooterStore() = default;
  static Result<ParquetFooterStore> Check(ParquetFooterStore store);
  // The i-th record's path (kCorrupt when it points outside the text).
  Result<std::string_view> PathAt(size_t i) const;
  // The i-th record's file, bounded by the sections and, with `check_sum`,
  // checked against its checksum (kCorrupt naming the store).
  Result<FooterStoreFile> FileAt(size_t i, bool check_sum) const;

  std::shared_ptr<const MappedFile> map_;  // or
  std::shared_ptr<const std::string> owned_;
  std::string name_;
  std::string_view bytes_, records_, text_, tails_, source_, fingerprint_;
  size_t count_ = 0;
  bool records_checked_ = false;  // OpenJustMade's: FileAt checks no checksum
};


// <state_dir>/parquet_footers.
std::string ParquetFooterStorePath(const std::string& state_dir);

// The error of a read of a tail's bytes [offset, offset + length) of `url`
// answered with fewer (`answered`): kCorrupt, naming `what` (the file, or
// its row group), the URL, the range and the file's `listed_size`. The one
// text of a short tail, whichever path read it.
Status ParquetTailShortAnswerError(std::string_view what, std::string_view url, uint64_t offset,
                                   uint64_t length, uint64_t answered, uint64_t listed_size);

// The tail of `key` (a file of `size` bytes, named `file` in errors) by at
// most two ranged reads of `remote`, each of the version listed: `size`
// and `etag` (ListedFile::etag; "" = any) as GetRangeOnlyOfVersion checks
// them, so a file rewritten since the listing is ObjectSizeChangedError or
// ObjectVersionChangedError where the store can tell, never a tail of the
// new bytes taken for the listed file's. Errors name the file, the store
// URL and the range; a shorter answer than asked is kCorrupt (the file
// changed since it was listed).
Result<std::string> ReadParquetTail(RemoteSource& remote, const std::string& key,
                                    const std::string& file, uint64_t size,
                                    const std::string& etag);

// The same without a copy: the first read (at most
// FooterOptions::first_read_bytes) made into `room`, which a reading thread
// keeps from file to file (RemoteSource::GetRangeOnlyOfVersionInRoom), and
// the tail lent where it was read, in `room` (or, for a footer longer than
// the first read, in `longer`), valid until either is used again. Its
// length is bounded by `size` (ParseFooterLength).
Result<std::string_view> ReadParquetTailInRoom(RemoteSource& remote, const std::string& key,
                                               const std::string& file, uint64_t size,
                                               const std::string& etag, UninitializedBuffer* room,
                                               std::string* longer);

// What the process that makes a store does with each tail while it is in
// memory, beside storing it: the index's build decodes it there rather
// than reading the store back (at a million files, 1.3 GB).
class ParquetTailConsumer {
 public:
  // One tail's answer, made on a reading thread.
  struct Answer {
    virtual ~Answer() = default;
  };
  // A reading thread's own (its decode state, kept from file to file).
  class Reader {
   public:
    virtual ~Reader() = default;
    // File `file` (its index in the maker's `files`) and its tail (a view
    // valid during the call). Called on several threads at once, each on
    // its own Reader, in no order; an error is the answer's, not the
    // store's (the store is still made).
    virtual Result<std::unique_ptr<Answer>> Read(size_t file, std::string_view tail) = 0;
  };
  virtual ~ParquetTailConsumer() = default;
  // Called on each reading thread, once, before its first Read.
  virtual std::unique_ptr<Reader> NewReader() = 0;
  // The answers, in `files`' order, on the maker's writing thread (one at
  // a time), each once its tail is in the store's pages.
  virtual void Take(size_t file, Result<std::unique_ptr<Answer>> answer) = 0;
};

// The store of `files` (sized, in canonical order; keys are `key_prefix` +
// path) at `path`: mapped if it was made for `source` over these files, else
// made once per node (node_file.h, lock in `state_dir`) by reading every
// tail from `remote`. With a `consumer`, `*consumed` (required then) says
// whether the consumer took every file's answer: only when this process
// read every tail (it made the store, from no older one) and `files` are
// in path order; otherwise it was given none, and the caller reads the
// store. `fingerprint`: ListingFingerprint(files) when the caller has it
// (the kept listing's, LoadStreamListing), "" to compute it here (at a
// million files, a pass over every path).
Result<ParquetFooterStore> LoadOrMakeParquetFooterStore(
    const std::string& path, const std::string& state_dir, const std::string& source,
    const std::vector<ListedFile>& files, const std::string& key_prefix, RemoteSource& remote,
    std::chrono::milliseconds wait_timeout, Env* env = Env::Default(),
    ParquetTailConsumer* consumer = nullptr, bool* consumed = nullptr,
    std::string_view fingerprint = {});

// Whether a node keeps a footer store of `remote`'s Parquet files: the
// one rule, asked by the index's build, its binary index's key and the
// fetch (parquet_footer_source.h). Not for files on a local disk
// (RemoteSource::OnLocalDisk): there a fetch reads its file's footer
// again (a page-cache read), where the store cost the node's first open
// 1.3 GB of writes at a million files; the binary index is then keyed by
// the listing alone.
bool KeepsParquetFooterStore(const RemoteSource& remote);

// Every tail of `files` (keys `key_prefix` + path) read from `remote` as
// the store's maker reads them (the same threads, versions and errors),
// each handed to `consumer` on its reading thread and its answer taken in
// `files`' order; nothing written. The first read error stops the reads
// and is returned (the consumer's own errors are its answers').
Status ReadEveryParquetTail(const std::vector<ListedFile>& files, const std::string& key_prefix,
                            RemoteSource& remote, ParquetTailConsumer& consumer);
// The same, where a file of `*files` without a size (listed by name alone:
// RemoteSource::ListNames) is read from its end (RemoteSource::
// GetTailInRoom), its size and etag set to what that read found before the
// consumer's Read of it: its version is the one its reader opened, and a
// longer footer's second read asks for it. Each file is set by the thread
// that reads it; `*files` is read and written by nothing else meanwhile.
Status ReadEveryParquetTail(std::vector<ListedFile>* files, const std::string& key_prefix,
                            RemoteSource& remote, ParquetTailConsumer& consumer);

// The store's bytes: `tails[i]` is the tail of `files[i]`.
std::string SerializeParquetFooterStore(std::string_view source, std::string_view fingerprint,
                                        const std::vector<ListedFile>& files,
                                        const std::vector<std::string>& tails);

}  // namespace sluice
