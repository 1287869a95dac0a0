#include "engine/dataset/parquet_footer_store.h"

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <atomic>
#include <mutex>
#include <condition_variable>
#include <optional>
#include <thread>

#include "base/binary_file.h"
#include "base/file.h"
#include "engine/dataset/node_file.h"
#include "formats/json/py_json.h"
#include "formats/parquet/footer.h"

namespace sluice {
namespace {

// The layout (parquet_footer_store.h), little-endian like the machines
// that write and read it (the node's own).
struct StoreHeader {
  BinaryFileTag tag;  // base/binary_file.h's magic and version
  uint32_t source_bytes;
  uint64_t count;        // files
  uint64_t text_bytes;   // source, fingerprint, then every path and etag
  uint64_t tails_bytes;
  uint32_t fingerprint_bytes;
  uint32_t reserved;
  uint64_t total_bytes;  // the file's
  uint64_t checksum;     // of the fields above and the source and fingerprint
};
static_assert(sizeof(StoreHeader) == 64);

// Magic "SLUICEPF", layout 2. Not a keyed file: its checksums cover the
// header and each record apart, so a fetch checks only what it reads.
constexpr BinaryFileKind kStoreKind{"SLUICEPF", 2, sizeof(StoreHeader), "a footer store"};

struct StoreRecord {
  uint64_t path_at;  // in the text
  uint32_t path_bytes;
  uint32_t etag_bytes;
  uint64_t etag_at;  // in the text
  uint64_t size;     // the file's, when listed
  uint64_t tail_at;  // in the tails
  uint32_t tail_bytes;
  uint32_t reserved;
  uint64_t checksum;  // of the fields above, the path, the etag and the tail
};
static_assert(sizeof(StoreRecord) == 48 + 8);

std::string Quote(std::string_view s) {
  std::string out;
  if (!AppendPyJsonString(out, s).ok()) return "\"?\"";
  return out;
}

constexpr uint64_t Padded8(uint64_t n) { return (n + 7) / 8 * 8; }

uint64_t HeaderChecksum(const StoreHeader& h, std::string_view source_and_fingerprint) {
  const uint64_t seed = XXH3_64bits(&h, offsetof(StoreHeader, checksum));
  return XXH3_64bits_withSeed(source_and_fingerprint.data(), source_and_fingerprint.size(), seed);
}

uint64_t RecordChecksum(const StoreRecord& r, std::string_view path, std::string_view etag,
                        std::string_view tail) {
  uint64_t h = XXH3_64bits(&r, offsetof(StoreRecord, checksum));
  for (std::string_view part : {path, etag, tail}) {
    h = XXH3_64bits_withSeed(part.data(), part.size(), h);
  }
  return h;
}

template <typename T>
T LoadAt(std::string_view bytes, size_t at) {
  T v;
  std::memcpy(&v, bytes.data() + at, sizeof(T));
  return v;
}

// A section [at, at + n) of `size` bytes, without overflow.
bool Within(uint64_t at, uint64_t n, uint64_t size) { return at <= size && n <= size - at; }

}  // namespace

Result<ParquetFooterStore> ParquetFooterStore::Open(const std::string& path, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(MappedFile map, MappedFile::Open(path, env));
  // A fetch reads a record and a tail: the pages around them are not
  // wanted (nor a huge folio).
  map.AdviseRandom();
  ParquetFooterStore store;
  store.map_ = std::make_shared<const MappedFile>(std::move(map));
  store.bytes_ = store.map_->data();
  store.name_ = path;
  return Check(std::move(store));
}

Result<ParquetFooterStore> ParquetFooterStore::OpenJustMade(const std::string& path, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(ParquetFooterStore store, Open(path, env));
  store.records_checked_ = true;
  return store;
}

Result<ParquetFooterStore> ParquetFooterStore::FromBytes(std::string bytes,
                                                         std::string_view name) {
  ParquetFooterStore store;
  store.owned_ = std::make_shared<const std::string>(std::move(bytes));
  store.bytes_ = *store.owned_;
  store.name_ = std::string(name);
  return Check(std::move(store));
}

Result<ParquetFooterStore> ParquetFooterStore::Check(ParquetFooterStore store) {
  const std::string_view b = store.bytes_;
  const std::string& where = store.name_;
  SLUICE_RETURN_IF_ERROR(CheckBinaryTag(b, kStoreKind, where));
  const auto h = LoadAt<StoreHeader>(b, 0);
  if (h.total_bytes != b.size()) {
    return CorruptError(where + ": " + std::to_string(b.size()) + " bytes, the header says " +
                        std::to_string(h.total_bytes) + " (truncated?)");
  }
  const uint64_t records_at = sizeof(StoreHeader);
  const bool fits = h.count <= (b.size() - records_at) / sizeof(StoreRecord) &&
                    Within(records_at + h.count * sizeof(StoreRecord), h.text_bytes, b.size()) &&
                    uint64_t{h.source_bytes} + h.fingerprint_bytes <= h.text_bytes;
  const uint64_t text_at = records_at + h.count * sizeof(StoreRecord);
  const uint64_t tails_at = fits ? Padded8(text_at + h.text_bytes) : 0;
  if (!fits || !Within(tails_at, h.tails_bytes, b.size()) ||
      tails_at + h.tails_bytes != b.size()) {
    return CorruptError(where + ": the header's sections do not fit the file");
  }
  const std::string_view text = b.substr(text_at, h.text_bytes);
  if (HeaderChecksum(h, text.substr(0, h.source_bytes + h.fingerprint_bytes)) != h.checksum) {
    return CorruptError(where + ": the header does not match its checksum");
  }
  store.count_ = h.count;
  store.records_ = b.substr(records_at, h.count * sizeof(StoreRecord));
  store.text_ = text;
  store.tails_ = b.substr(tails_at, h.tails_bytes);
  store.source_ = text.substr(0, h.source_bytes);
  store.fingerprint_ = text.substr(h.source_bytes, h.fingerprint_bytes);
  return store;
}

Result<std::string_view> ParquetFooterStore::PathAt(size_t i) const {
  const auto r = LoadAt<StoreRecord>(records_, i * sizeof(StoreRecord));
  if (!Within(r.path_at, r.path_bytes, text_.size())) {
    return CorruptError(name_ + ": file " + std::to_string(i) + "'s path is outside the store");
  }
  return text_.substr(r.path_at, r.path_bytes);
}

Result<FooterStoreFile> ParquetFooterStore::Find(std::string_view path) const {
  // Records are sorted by path: the first not below `path`.
  size_t lo = 0, hi = count_;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    SLUICE_ASSIGN_OR_RETURN(std::string_view at, PathAt(mid));
    if (at < path) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == count_) return NotFoundError(name_ + ": holds no footer of " + std::string(path));
  SLUICE_ASSIGN_OR_RETURN(std::string_view found, PathAt(lo));
  if (found != path) return NotFoundError(name_ + ": holds no footer of " + std::string(path));
  return FileAt(lo, !records_checked_);
}

Result<FooterStoreFile> ParquetFooterStore::Find(std::string_view path, size_t hint) const {
  if (hint < count_) {
    auto at = PathAt(hint);
    if (at.ok() && *at == path) return FileAt(hint, !records_checked_);
  }
  return Find(path);
}

Result<FooterStoreFile> ParquetFooterStore::FileAt(size_t i, bool check_sum) const {
  SLUICE_ASSIGN_OR_RETURN(std::string_view path, PathAt(i));
  const auto r = LoadAt<StoreRecord>(records_, i * sizeof(StoreRecord));
  if (!Within(r.etag_at, r.etag_bytes, text_.size()) ||
      !Within(r.tail_at, r.tail_bytes, tails_.size())) {
    return CorruptError(name_ + ": the record of " + std::string(path) +
                        " points outside the store");
  }
  FooterStoreFile f{path, r.size, text_.substr(r.etag_at, r.etag_bytes),
                    tails_.substr(r.tail_at, r.tail_bytes)};
  if (check_sum && RecordChecksum(r, f.path, f.etag, f.tail) != r.checksum) {
    return CorruptError(name_ + ": the footer of " + std::string(path) +
                        " does not match its checksum");
  }
  return f;
}

Status ParquetFooterStore::CheckAll() const {
  std::string_view last;
  for (size_t i = 0; i < count_; ++i) {
    SLUICE_ASSIGN_OR_RETURN(FooterStoreFile f, FileAt(i, /*check_sum=*/true));
    if (i > 0 && !(last < f.path)) {
      return CorruptError(name_ + ": file " + std::to_string(i) + " is out of order");
    }
    last = f.path;
  }
  return Status::Ok();
}

std::string ParquetFooterStorePath(const std::string& state_dir) {
  return JoinPath(state_dir, "parquet_footers");
}

Status ParquetTailShortAnswerError(std::string_view what, std::string_view url, uint64_t offset,
                                   uint64_t length, uint64_t answered, uint64_t listed_size) {
  return CorruptError(std::string(what) + ": footer: " + std::string(url) + " answered " +
                      std::to_string(answered) + " bytes for bytes [" + std::to_string(offset) +
                      ", " + std::to_string(offset + length) + ") (listed with " +
                      std::to_string(listed_size) + " bytes: the file changed since it was listed?)");
}

namespace {

// ReadParquetTailInRoom's reads. `stated` null: of the version listed
// (`size`, `etag`); else of a file listed by name alone (size and etag
// unknown): its first read is of its last bytes, unchecked, and the size
// and etag that read found (told `*stated`) are the version the second
// read asks for, and the size the footer is parsed against.
Result<std::string_view> ReadTailInRoom(RemoteSource& remote, const std::string& key,
                                        const std::string& file, uint64_t size,
                                        const std::string& etag, ObjectStated* stated,
                                        UninitializedBuffer* room, std::string* longer) {
  // The error's words, made only for an error (a million reads pass).
  auto failed = [&](uint64_t offset, uint64_t length, const Result<uint64_t>& got) -> Status {
    const std::string url = remote.Describe() + "/" + key;
    const std::string range =
        "bytes [" + std::to_string(offset) + ", " + std::to_string(offset + length) + ")";
    if (!got.ok()) return got.status().WithContext(file + ": footer: reading " + range + " of " + url);
    return ParquetTailShortAnswerError(file, url, offset, length, *got, size);
  };
  // The first read (at most FooterOptions::first_read_bytes) into the
  // thread's room, the tail handed out where it lies.
  parquet::ByteRange first;
  Result<uint64_t> got = uint64_t{0};
  if (stated == nullptr) {
    first = parquet::FooterTailRange(size);
    got = remote.GetRangeOnlyOfVersionInRoom(key, first.offset, first.size,
                                             ObjectVersion(etag, size), room);
  } else {
    const uint64_t most = parquet::FooterTailRange(UINT64_MAX).size;
    got = remote.GetTailInRoom(key, most, stated, room);
    if (!got.ok()) {
      return got.status().WithContext(file + ": footer: reading the last " +
                                      std::to_string(most) + " bytes of " + remote.Describe() +
                                      "/" + key);
    }
    size = stated->size.value_or(0);
    first = parquet::FooterTailRange(size);
  }
  if (!got.ok() || *got != first.size) return failed(first.offset, first.size, got);
  const std::string_view tail(room->data(), first.size);
  SLUICE_ASSIGN_OR_RETURN(uint32_t length, parquet::ParseFooterLength(tail, size, file));
  const uint64_t need = uint64_t{length} + 8;
  if (need <= tail.size()) return tail.substr(tail.size() - need);
  // A footer longer than the first read: the rest before it, read apart.
  const uint64_t at = size - need, rest = need - tail.size();
  auto more = remote.GetRangeOnlyOfVersion(
      key, at, rest, stated ? ObjectVersion(stated->etag, size) : ObjectVersion(etag, size));
  if (!more.ok()) return failed(at, rest, more.status());
  if (more->size() != rest) return failed(at, rest, uint64_t{more->size()});
  more->append(tail);
  *longer = std::move(*more);
  return std::string_view(*longer);
}

}  // namespace

Result<std::string_view> ReadParquetTailInRoom(RemoteSource& remote, const std::string& key,
                                               const std::string& file, uint64_t size,
                                               const std::string& etag, UninitializedBuffer* room,
                                               std::string* longer) {
  return ReadTailInRoom(remote, key, file, size, etag, nullptr, room, longer);
}

Result<std::string> ReadParquetTail(RemoteSource& remote, const std::string& key,
                                    const std::string& file, uint64_t size,
                                    const std::string& etag) {
  UninitializedBuffer room;
  std::string longer;
  SLUICE_ASSIGN_OR_RETURN(std::string_view tail,
                          ReadParquetTailInRoom(remote, key, file, size, etag, &room, &longer));
  if (tail.data() == longer.data()) return longer;
  return std::string(tail);
}

namespace {

// The store's sections before its tails (header, records, text, padding)
// for `files` in path order: laid out before any tail is known, each
// record completed as its tail comes, in order; so that a builder holds
// the records and text but never every tail at once.
class StoreFront {
 public:
  StoreFront(std::string_view source, std::string_view fingerprint,
             const std::vector<ListedFile>& files)
      : order_(files.size()), records_(files.size()) {
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    const auto by_path = [&](size_t a, size_t b) { return files[a].path < files[b].path; };
    // A listing comes sorted by path (the stores' List): its order is the
    // sort's, as paths in strict order have only that one.
    bool sorted = true;
    for (size_t i = 1; i < files.size() && sorted; ++i) sorted = by_path(i - 1, i);
    if (!sorted) std::sort(order_.begin(), order_.end(), by_path);
    // Reserved whole: grown by doubling, up to half of it was spare.
    size_t text_bytes = source.size() + fingerprint.size();
    for (const ListedFile& f : files) text_bytes += f.path.size() + f.etag.size();
    text_.reserve(text_bytes);
    text_.append(source);
    text_.append(fingerprint);
    for (size_t k = 0; k < order_.size(); ++k) {
      const ListedFile& f = files[order_[k]];
      StoreRecord& r = records_[k];
      r.path_at = text_.size();
      r.path_bytes = static_cast<uint32_t>(f.path.size());
      text_ += f.path;
      r.etag_at = text_.size();
      r.etag_bytes = static_cast<uint32_t>(f.etag.size());
      text_ += f.etag;
      r.size = f.size.value_or(0);
    }
    header_.tag = TagOf(kStoreKind);
    header_.source_bytes = static_cast<uint32_t>(source.size());
    header_.fingerprint_bytes = static_cast<uint32_t>(fingerprint.size());
    header_.count = files.size();
    header_.text_bytes = text_.size();
  }

  // order()[k]: the index in `files` of the k-th record (by path).
  const std::vector<size_t>& order() const { return order_; }
  // Where the tails start in the file.
  uint64_t tails_at() const {
    return Padded8(sizeof(StoreHeader) + records_.size() * sizeof(StoreRecord) + text_.size());
  }
  // The k-th record's tail: called for k = 0, 1, ... in turn.
  void Add(size_t k, std::string_view tail) {
    StoreRecord& r = records_[k];
    r.tail_at = header_.tails_bytes;
    r.tail_bytes = static_cast<uint32_t>(tail.size());
    header_.tails_bytes += tail.size();
    r.checksum = RecordChecksum(r, std::string_view(text_).substr(r.path_at, r.path_bytes),
                                std::string_view(text_).substr(r.etag_at, r.etag_bytes), tail);
  }
  // The bytes before the tails, once every tail is added: the header,
  // records, text and padding, by view, to be written one after the other
  // from the file's start. (Not joined: at a million files they are about
  // 100 MB, which a copy held beside the records and text.)
  std::array<std::string_view, 4> Sections() {
    header_.total_bytes = tails_at() + header_.tails_bytes;
    header_.checksum = HeaderChecksum(
        header_,
        std::string_view(text_).substr(0, header_.source_bytes + header_.fingerprint_bytes));
    static constexpr char kZeros[8] = {};
    const size_t unpadded =
        sizeof(header_) + records_.size() * sizeof(StoreRecord) + text_.size();
    return {std::string_view(reinterpret_cast<const char*>(&header_), sizeof(header_)),
            std::string_view(reinterpret_cast<const char*>(records_.data()),
                             records_.size() * sizeof(StoreRecord)),
            text_, std::string_view(kZeros, tails_at() - unpadded)};
  }

 private:
  std::vector<size_t> order_;
  std::vector<StoreRecord> records_;
  std::string text_;
  StoreHeader header_{};
};

// A tail read by one of the builder's threads (when a store is written:
// ReadEveryParquetTail keeps none), and its consumer's answer when there
// is a consumer.
struct ReadTail {
  std::string tail;
  std::optional<Result<std::unique_ptr<ParquetTailConsumer::Answer>>> answer;
};

// The tails read by the builder's threads, handed to its writer in path
// order; at most kTailWindow read ahead of the writer, so that memory is
// bounded by the window, not the files.
constexpr size_t kTailWindow = 1024;
// The writer's tails are written kTailWrite bytes at a time.
constexpr size_t kTailWrite = size_t{1} << 20;

// A writer that waits sleeps until the tail it waits for and the
// kWakeBatch-th after it are read (or the reads stop), and readers that
// wait for room until kWakeBatch slots are free, not a wake a tail: a
// futex wake and sleep a file, on one side or the other, doubled the
// context switches once the readers decode (ParquetTailConsumer).
constexpr size_t kWakeBatch = 32;
// A reader claims up to kClaimBatch files in order at once (one lock and,
// when it waits for room, one wake for them all), and no more than its
// even share of the reads left: as many reads are in flight as readers.
// Without the share, one reader claimed a folder of 8 files and read them
// in series (8 round trips before a shuffled first row; issue 35).
constexpr size_t kClaimBatch = 8;

class TailQueue {
 public:
  TailQueue(size_t count, size_t readers)
      : count_(count), readers_(std::max<size_t>(readers, 1)),
        slots_(std::min(count, kTailWindow)) {}

  // The next reads to do, [first, first + n) in order (n at most
  // kClaimBatch and the reads left over the readers, at least 1), or none
  // once all are claimed, the writer stopped or a read failed. Waits while
  // the window is full.
  struct Claimed {
    size_t first = 0, n = 0;
  };
  std::optional<Claimed> Claim() {
    std::unique_lock lock(mu_);
    ++claiming_;
    claim_cv_.wait(lock,
                   [&] { return stop_ || claimed_ == count_ || claimed_ < taken_ + slots_.size(); });
    --claiming_;
    if (stop_ || claimed_ == count_) return std::nullopt;
    const size_t share = std::max<size_t>(1, (count_ - claimed_) / readers_);
    const Claimed c{claimed_, std::min({kClaimBatch, share, taken_ + slots_.size() - claimed_})};
    claimed_ += c.n;
    // The last claim: no Take need wake the other claimers one by one.
    if (claimed_ == count_ && claiming_ > 0) claim_cv_.notify_all();
    return c;
  }
  // The j-th read's tail or error; false once the reads are stopped (the
  // claimer's other claimed reads are not wanted).
  bool Put(size_t j, Result<ReadTail> tail) {
    std::lock_guard lock(mu_);
    if (!tail.ok()) {
      if (first_error_.ok()) first_error_ = tail.status();
      stop_ = true;
    }
    slots_[j % slots_.size()].emplace(std::move(tail));
    if (stop_) {
      claim_cv_.notify_all();
      take_cv_.notify_one();
    } else if (waiting_ != kNone && Ready()) {
      take_cv_.notify_one();
    }
    return !stop_;
  }
  // The j-th read, claimed but not made once the reads are stopped: its
  // Take answers the error that stopped them.
  void Skip(size_t j) {
    std::lock_guard lock(mu_);
    slots_[j % slots_.size()].emplace(first_error_.ok() ? InternalError("footer reads stopped")
                                                        : first_error_);
    take_cv_.notify_one();
  }
  // The j-th read (j = 0, 1, ... in turn), or the error that stopped the
  // reads before it was claimed.
  Result<ReadTail> Take(size_t j) {
    std::unique_lock lock(mu_);
    auto& slot = slots_[j % slots_.size()];
    if (!slot.has_value()) {
      waiting_ = j;
      wake_at_ = std::min(j + kWakeBatch, count_ - 1);
      take_cv_.wait(lock, [&] { return Ready() || (stop_ && (slot.has_value() || j >= claimed_)); });
      waiting_ = kNone;
    }
    if (!slot.has_value()) return first_error_;
    Result<ReadTail> tail = std::move(*slot);
    slot.reset();
    ++taken_;
    // Claimers wait for room: woken once kWakeBatch slots are free, not
    // one by one (a wake a tail while the writer is the slower), and only
    // as many as claim them: all 16 woken for 32 slots put most back to
    // sleep, a futex wake and sleep each.
    const size_t free = taken_ + slots_.size() - claimed_;
    if (claiming_ > 0 && free >= std::min(kWakeBatch, slots_.size())) {
      for (size_t w = std::min(claiming_, (free + kClaimBatch - 1) / kClaimBatch); w > 0; --w) {
        claim_cv_.notify_one();
      }
    }
    return tail;
  }
  // No more reads (the writer failed, or a read did: `error`).
  void Stop(Status error) {
    std::lock_guard lock(mu_);
    if (first_error_.ok()) first_error_ = std::move(error);
    stop_ = true;
    claim_cv_.notify_all();
    take_cv_.notify_one();
  }

 private:
  static constexpr size_t kNone = SIZE_MAX;
  // The waiting writer's tail is read, and so is the wake_at_-th.
  bool Ready() const {
    return slots_[waiting_ % slots_.size()].has_value() &&
           slots_[wake_at_ % slots_.size()].has_value();
  }

  std::mutex mu_;
  std::condition_variable claim_cv_, take_cv_;
  const size_t count_, readers_;
  size_t claimed_ = 0, taken_ = 0, claiming_ = 0;  // claiming_: threads waiting in Claim
  size_t waiting_ = kNone, wake_at_ = 0;           // the writer's wait (Take)
  bool stop_ = false;
  Status first_error_ = Status::Ok();
  std::vector<std::optional<Result<ReadTail>>> slots_;
};

// The tails of files[order[to_read[j]]] for j = 0, 1, ..., read on up to
// kConcurrentFooterReads threads (from the remote, with the version each
// was listed with), each handed to `answers` (when given) on the thread
// that read it; taken in j's order. Every thread turns an exception into
// its read's error. With `keep_tails` false (no store written) a tail is
// only lent to `answers`, where it was read: no copy a file (a 1.2 KB
// string each was ~0.65k instructions a file, and ~9% of the tail path's
// samples at 100k: glibc's large-request malloc and its consolidation).
class TailReaders {
 public:
  TailReaders(const std::vector<ListedFile>& files, const std::vector<size_t>& order,
              const std::vector<size_t>& to_read, const std::string& key_prefix,
              RemoteSource& remote, ParquetTailConsumer* answers, bool keep_tails,
              std::vector<ListedFile>* unstated = nullptr)
      : files_(files), order_(order), to_read_(to_read), key_prefix_(key_prefix),
        remote_(remote), answers_(answers), keep_tails_(keep_tails), unstated_(unstated),
        queue_(to_read.size(), std::min<size_t>(to_read.size(), kConcurrentFooterReads)) {
    const size_t readers = std::min<size_t>(to_read.size(), kConcurrentFooterReads);
    for (size_t t = 0; t < readers; ++t) threads_.emplace_back([this] { Work(); });
  }
  TailReaders(const TailReaders&) = delete;
  TailReaders& operator=(const TailReaders&) = delete;
  ~TailReaders() { Finish(Status::Ok()); }

  // The j-th read (j = 0, 1, ... in turn), or the error that stopped them.
  Result<ReadTail> Take(size_t j) { return queue_.Take(j); }
  // No more reads (`error`: why, when the taker failed); the threads joined.
  void Finish(Status error) {
    queue_.Stop(std::move(error));
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void Work() {
    UninitializedBuffer room;  // the thread's, read into tail after tail
    std::string longer;        // a footer longer than the first read
    std::unique_ptr<ParquetTailConsumer::Reader> reader;
    Status no_reader = Status::Ok();
    if (answers_) {
      try {
        reader = answers_->NewReader();
      } catch (const std::exception& e) {
        no_reader = InternalError(std::string("a footer reader: ") + e.what());
      }
    }
    auto read_one = [&](size_t j) {
      const size_t i = order_[to_read_[j]];
      const ListedFile& f = files_[i];
      try {
        // A file listed by name alone (ReadEveryParquetTail's `files`):
        // its size and etag are what its read found, set here, before its
        // answer is made and handed on (this thread's alone until Put).
        ObjectStated stated;
        const bool unstated = !f.size && unstated_ != nullptr;
        Result<std::string_view> tail =
            ReadTailInRoom(remote_, key_prefix_ + f.path, f.path, f.size.value_or(0), f.etag,
                           unstated ? &stated : nullptr, &room, &longer);
        if (!tail.ok()) return queue_.Put(j, tail.status());
        if (unstated) {
          (*unstated_)[i].size = stated.size.value_or(0);
          (*unstated_)[i].etag = std::move(stated.etag);
        }
        ReadTail read;
        if (keep_tails_) read.tail = std::string(*tail);
        if (answers_) {
          try {
            read.answer = reader ? reader->Read(i, *tail) : no_reader;
          } catch (const std::exception& e) {
            read.answer = InternalError(f.path + ": footer: " + e.what());
          }
        }
        return queue_.Put(j, std::move(read));
      } catch (const std::exception& e) {
        return queue_.Put(j, InternalError(f.path + ": footer: " + e.what()));
      }
    };
    while (std::optional<TailQueue::Claimed> c = queue_.Claim()) {
      size_t j = c->first;
      while (j < c->first + c->n && read_one(j)) ++j;
      // Stopped: the rest of the claim is not read.
      while (++j < c->first + c->n) queue_.Skip(j);
    }
  }

  const std::vector<ListedFile>& files_;
  const std::vector<size_t>& order_;
  const std::vector<size_t>& to_read_;
  const std::string& key_prefix_;
  RemoteSource& remote_;
  ParquetTailConsumer* const answers_;
  const bool keep_tails_;
  std::vector<ListedFile>* const unstated_;  // files_ itself, when it holds unsized files
  TailQueue queue_;
  std::vector<std::thread> threads_;
};

}  // namespace

bool KeepsParquetFooterStore(const RemoteSource& remote) { return !remote.OnLocalDisk(); }

namespace {

Status ReadEveryTail(const std::vector<ListedFile>& files, const std::string& key_prefix,
                     RemoteSource& remote, ParquetTailConsumer& consumer,
                     std::vector<ListedFile>* unstated) {
  std::vector<size_t> order(files.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  TailReaders reads(files, order, order, key_prefix, remote, &consumer, /*keep_tails=*/false,
                    unstated);
  for (size_t j = 0; j < files.size(); ++j) {
    Result<ReadTail> read = reads.Take(j);
    if (!read.ok()) {
      reads.Finish(read.status());
      return read.status();
    }
    consumer.Take(j, std::move(*read->answer));
  }
  return Status::Ok();
}

}  // namespace

Status ReadEveryParquetTail(const std::vector<ListedFile>& files, const std::string& key_prefix,
                            RemoteSource& remote, ParquetTailConsumer& consumer) {
  return ReadEveryTail(files, key_prefix, remote, consumer, nullptr);
}

Status ReadEveryParquetTail(std::vector<ListedFile>* files, const std::string& key_prefix,
                            RemoteSource& remote, ParquetTailConsumer& consumer) {
  return ReadEveryTail(*files, key_prefix, remote, consumer, files);
}

std::string SerializeParquetFooterStore(std::string_view source, std::string_view fingerprint,
                                        const std::vector<ListedFile>& files,
                                        const std::vector<std::string>& tails) {
  StoreFront front(source, fingerprint, files);
  for (size_t k = 0; k < files.size(); ++k) front.Add(k, tails[front.order()[k]]);
  std::string out;
  for (std::string_view section : front.Sections()) out += section;
  for (size_t i : front.order()) out += tails[i];
  return out;
}

Result<ParquetFooterStore> LoadOrMakeParquetFooterStore(
    const std::string& path, const std::string& state_dir, const std::string& source,
    const std::vector<ListedFile>& files, const std::string& key_prefix, RemoteSource& remote,
    std::chrono::milliseconds wait_timeout, Env* env, ParquetTailConsumer* consumer,
    bool* consumed, std::string_view known_fingerprint) {
  if (consumed) *consumed = false;
  const std::string fingerprint =
      known_fingerprint.empty() ? ListingFingerprint(files) : std::string(known_fingerprint);
  // The store is written as its tails come, in path order: the records and
  // text are held, the tails only within TailQueue's window.
  bool made_here = false, answered = false;
  auto make = [&]() -> Status {
    StoreFront front(source, fingerprint, files);
    const std::vector<size_t>& order = front.order();
    // The tails an older store holds of files unchanged since (same path,
    // size and known etag; views into its mapping); the others are read.
    std::vector<std::string_view> kept(files.size());
    std::vector<size_t> to_read;  // positions in `order`
    auto previous = ParquetFooterStore::Open(path, env);
    const bool same_source = previous.ok() && previous->source() == source;
    for (size_t k = 0; k < order.size(); ++k) {
      const ListedFile& f = files[order[k]];
      if (same_source && !f.etag.empty()) {
        auto was = previous->Find(f.path);
        if (was.ok() && was->size == f.size.value_or(0) && was->etag == f.etag) {
          kept[k] = was->tail;
          continue;
        }
      }
      to_read.push_back(k);
    }
    // The consumer answers for every file or none: a kept tail is not
    // read here, and its answers come in `files`' order.
    bool in_order = to_read.size() == files.size();
    for (size_t k = 0; k < order.size() && in_order; ++k) in_order = order[k] == k;
    ParquetTailConsumer* const answers = in_order ? consumer : nullptr;
    TailReaders reads(files, order, to_read, key_prefix, remote, answers, /*keep_tails=*/true);
    auto write = [&]() -> Status {
      SLUICE_ASSIGN_OR_RETURN(TempFile out, TempFile::Create(path, env));
      uint64_t at = front.tails_at();
      std::string buffer;
      auto flush = [&]() -> Status {
        SLUICE_RETURN_IF_ERROR(env->PWriteAll(out.fd(), out.path(), buffer, at));
        at += buffer.size();
        buffer.clear();
        return Status::Ok();
      };
      for (size_t k = 0, j = 0; k < order.size(); ++k) {
        ReadTail read;
        std::string_view tail = kept[k];
        if (j < to_read.size() && to_read[j] == k) {
          SLUICE_ASSIGN_OR_RETURN(read, reads.Take(j++));
          tail = read.tail;
        }
        front.Add(k, tail);
        buffer += tail;
        if (buffer.size() >= kTailWrite) SLUICE_RETURN_IF_ERROR(flush());
        if (answers) answers->Take(k, std::move(*read.answer));
      }
      SLUICE_RETURN_IF_ERROR(flush());
      at = 0;
      for (std::string_view section : front.Sections()) {
        SLUICE_RETURN_IF_ERROR(env->PWriteAll(out.fd(), out.path(), section, at));
        at += section.size();
      }
      return out.Commit();
    };
    Status written = write();
    reads.Finish(written);
    made_here = written.ok();
    answered = made_here && answers != nullptr;
    return written;
  };
  // A store made over another listing (the listing was made anew, or the
  // cache folder served another remote) is made again, from the old one.
  auto current = [&] {
    auto store = ParquetFooterStore::Open(path, env);
    return store.ok() && store->source() == source && store->fingerprint() == fingerprint &&
           store->CheckAll().ok();
  };
  SLUICE_RETURN_IF_ERROR(MakeOncePerNode(path, state_dir, "parquet_footers.lock", wait_timeout,
                                         make, current, env));
  SLUICE_ASSIGN_OR_RETURN(ParquetFooterStore store,
                          made_here ? ParquetFooterStore::OpenJustMade(path, env)
                                    : ParquetFooterStore::Open(path, env));
  if (store.source() != source || store.fingerprint() != fingerprint) {
    return NotFoundError(path + ": made for " + Quote(store.source()) + " over listing " +
                         std::string(store.fingerprint()) + ", not this one");
  }
  if (consumed) *consumed = answered;
  return store;
}

}  // namespace sluice
