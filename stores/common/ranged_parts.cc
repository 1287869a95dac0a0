#include "stores/common/ranged_parts.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "base/asio/co_status.h"
#include "stores/common/part_uploads.h"
#include "stores/common/store_keys.h"
#include "stores/http/http_client.h"
#include "stores/http/parts_version.h"

namespace sluice {
namespace {

// The parts of one read are of one version (PartsVersion, the rule every
// read in parts shares): part `part`'s answer stated `etag`, ok when that
// is the first answer's version, else kCorrupt naming both parts of
// `object` and their ETags: the object was replaced while it was read.
Status AgreesWithFirst(PartsVersion& first, const std::string& object, uint64_t part,
                       const std::string& etag) {
  std::optional<std::string> differs = first.Disagreement(part, etag);
  if (!differs) return Status::Ok();
  return CorruptError(object + ": replaced while it was read in parts (" + *differs +
                      "); its parts not joined");
}

// One part's bytes told to `arrived` as they land (IntoProgress), once its
// answer is of the first answer's version (PartsVersion): a reader may view
// them before the part ends. If the part then fails, what was told stays
// told (the server sent those bytes, of the version every part is of; a
// reader may have used them), and the error reaches the readers of the
// rest through ArrivedBytes::Finish. One per part, in ReadPart's frame;
// called on the store's executor.
class PartProgress final : public IntoProgress {
 public:
  PartProgress(std::string object, PartsVersion* first, uint64_t part, ArrivedBytes* arrived,
               uint64_t at)
      : object_(std::move(object)), first_(first), part_(part), arrived_(arrived), at_(at) {}
  Status Answered(const ObjectStated& stated) override {
    refused_ = AgreesWithFirst(*first_, object_, part_, stated.etag);
    return refused_;
  }
  void Received(uint64_t n) override {
    if (arrived_ != nullptr) arrived_->Arrived(at_, n);
  }
  // Answered's refusal (AgreesWithFirst's kCorrupt), or ok.
  const Status& refused() const { return refused_; }

 private:
  const std::string object_;
  PartsVersion* const first_;
  const uint64_t part_;
  ArrivedBytes* const arrived_;
  const uint64_t at_;
  Status refused_;
};

// One part: bytes [offset, offset + n) of `key` into `into`, their count
// into `*got`. A range past the object's end (kOutOfRange) leaves 0: the
// object ended before this part (checked against the parts before it).
// It asks for the version `version` names, or else the one the first
// answer stated (`first`); its own answer's ETag goes to `*stated`, and one
// that is not the first answer's is AgreesWithFirst's kCorrupt (no byte of it
// told to `arrived`).
// `arrived` (may be null) is told of the part's bytes, at `at` in the
// caller's buffer, as they land (PartProgress) where the store tells it,
// else when the part returns. Plain parameters, not a capturing lambda: each is the
// frame's own.
boost::asio::awaitable<Status> ReadPart(Store* store, std::string key, uint64_t offset,
                                        uint64_t n, ObjectVersion version, char* into, uint64_t* got,
                                        std::string which, ArrivedBytes* arrived, uint64_t at,
                                        PartsVersion* first, uint64_t part, ObjectStated* stated) {
  if (version.etag.empty()) version.etag = first->Etag();
  version.stated = stated;
  const std::string object = JoinKey(store->root(), key);
  PartProgress progress(object, first, part, arrived, at);
  Result<uint64_t> r = co_await store->GetRangeOnlyInto(std::move(key), offset, n,
                                                        std::move(version), into, &progress);
  // Another version's answer, refused at its head: the error as it is.
  if (!progress.refused().ok()) co_return progress.refused();
  if (r.ok()) {
    // Again for a store that tells no progress (its answer came whole).
    Status same = AgreesWithFirst(*first, object, part, stated->etag);
    if (!same.ok()) co_return same;
    *got = *r;
    // A short part ends the object: its bytes are still the object's.
    if (arrived != nullptr) arrived->Arrived(at, *r);
    co_return Status::Ok();
  }
  if (r.status().code() == StatusCode::kOutOfRange) co_return Status::Ok();
  co_return r.status().WithContext(which);
}

}  // namespace

int RangedPartCount(uint64_t length, uint64_t part_size, int most, int free) {
  if (part_size == 0 || length <= part_size) return 1;
  const uint64_t parts = (length + part_size - 1) / part_size;
  const int cap = std::max(std::min(most, free), 1);
  return static_cast<int>(std::min<uint64_t>(parts, static_cast<uint64_t>(cap)));
}

boost::asio::awaitable<Result<uint64_t>> GetRangeInPartsInto(Store& store, std::string key,
                                                             uint64_t offset, uint64_t length,
                                                             char* into, uint64_t part_size,
                                                             ObjectVersion version,
                                                             ArrivedBytes* arrived) {
  if (length == 0) co_return uint64_t{0};
  // Held to the end: the parts' connections stay promised while they run.
  const RangedPartsClaim claim = store.ClaimRangedParts(length, part_size);
  uint64_t parts = static_cast<uint64_t>(std::max(1, claim.parts));
  const uint64_t each = (length + parts - 1) / parts;
  // Parts of `each` may cover `length` in fewer than were claimed (5 bytes
  // in 4 parts: 2 + 2 + 1); a part that would start at or past the end
  // would read past `into`.
  parts = (length + each - 1) / each;
  if (parts == 1) {
    // One answer: no other part's version to agree with.
    PartsVersion only;
    PartProgress progress(JoinKey(store.root(), key), &only, 0, arrived, 0);
    Result<uint64_t> whole =
        co_await store.GetRangeOnlyInto(key, offset, length, version, into, &progress);
    if (whole.ok() && arrived != nullptr) arrived->Arrived(0, *whole);
    co_return whole;
  }
  std::vector<uint64_t> got(parts, 0);
  // What each part's answer stated, and the first answer's ETag, which the
  // parts sent after it ask for: parts of two versions of an object of the
  // same size (the index's size checks nothing else) are never joined.
  std::vector<ObjectStated> stated(parts);
  PartsVersion first_answer;
  Store* const s = &store;
  const std::string* const k = &key;
  const ObjectVersion* const e = &version;
  uint64_t* const counts = got.data();
  ObjectStated* const states = stated.data();
  PartsVersion* const fa = &first_answer;
  Status status = co_await ForEachPartConcurrently(
      parts, static_cast<int>(parts),
      [s, k, e, counts, states, fa, offset, length, each, parts, into, arrived](uint64_t i) {
        const uint64_t first = i * each;
        const uint64_t n = std::min(each, length - first);
        return ReadPart(s, *k, offset + first, n, *e, into + first, counts + i,
                        "part " + std::to_string(i + 1) + " of " + std::to_string(parts) +
                            ", bytes " + std::to_string(offset + first) + ".." +
                            std::to_string(offset + first + n),
                        arrived, first, fa, i, states + i);
      });
  if (!status.ok()) co_return status;
  if (version.stated != nullptr) *version.stated = stated[first_answer.first_part()];
  uint64_t total = 0;
  for (uint64_t i = 0; i < parts; ++i) {
    if (total < i * each && got[i] > 0) {
      co_return CorruptError(JoinKey(store.root(), key) + ": bytes " +
                             std::to_string(offset + i * each) + ".." +
                             std::to_string(offset + i * each + got[i]) +
                             " came after the object ended at byte " +
                             std::to_string(offset + total) +
                             " (it changed while it was read in parts)");
    }
    total += got[i];
  }
  co_return total;
}

}  // namespace sluice
