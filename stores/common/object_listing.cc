#include "stores/common/object_listing.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/parallel_claims.h"
#include "stores/common/xml_lite.h"

namespace sluice {

Status AppendListedObject(std::string_view entry, std::string_view name_tag,
                          std::string_view size_tag, std::string_view etag_tag,
                          std::string_view base, std::string_view root,
                          std::vector<ObjectInfo>* out) {
  auto name = XmlUnescape(XmlFirst(entry, name_tag));
  if (!name.ok()) return name.status().WithContext(std::string(root) + ": list");
  std::string size_text(XmlFirst(entry, size_tag));
  char* end = nullptr;
  unsigned long long size = std::strtoull(size_text.c_str(), &end, 10);
  if (size_text.empty() || *end != '\0') {
    return CorruptError(std::string(root) + ": list entry '" + *name + "' has " +
                        std::string(size_tag) + " '" + size_text + "'");
  }
  if (name->compare(0, base.size(), base) != 0) return Status::Ok();  // outside the root
  auto etag = XmlUnescape(etag_tag.empty() ? std::string_view() : XmlFirst(entry, etag_tag));
  if (!etag.ok()) return etag.status().WithContext(std::string(root) + ": list entry '" + *name + "'");
  out->push_back({name->substr(base.size()), size, std::move(*etag)});
  return Status::Ok();
}

Result<std::string> ReadXmlListingPage(const XmlListingDialect& d, std::string_view xml,
                                       int page, std::string_view previous_token,
                                       std::string_view base, std::string_view root,
                                       std::vector<ObjectInfo>* out,
                                       std::vector<std::string>* sub_prefixes) {
  const std::string where =
      std::string(root) + ": " + std::string(d.operation) + " page " + std::to_string(page);
  if (xml.find("<" + std::string(d.document)) == std::string_view::npos) {
    return CorruptError(where + " has no <" + std::string(d.document) + ">");
  }
  std::string_view entries = d.entries_in.empty() ? xml : XmlFirst(xml, d.entries_in);
  for (std::string_view entry : XmlElements(entries, d.entry)) {
    SLUICE_RETURN_IF_ERROR(AppendListedObject(entry, d.name_tag, d.size_tag, d.etag_tag, base, root, out));
  }
  if (sub_prefixes != nullptr && !d.prefix_entry.empty()) {
    for (std::string_view entry : XmlElements(entries, d.prefix_entry)) {
      auto name = XmlUnescape(XmlFirst(entry, d.prefix_tag));
      if (!name.ok()) return name.status().WithContext(where);
      if (name->size() <= base.size() || name->compare(0, base.size(), base) != 0) continue;
      sub_prefixes->push_back(name->substr(base.size()));
    }
  }
  Result<std::string> next = XmlUnescape(XmlFirst(xml, d.next_tag));
  if (!next.ok()) return next.status().WithContext(where);
  const bool more = d.truncated_tag.empty() ? !next->empty()
                                            : XmlFirst(xml, d.truncated_tag) == "true";
  if (!more) return std::string();
  if (next->empty() || *next == previous_token) {
    return CorruptError(where + " announces another page but gives no new <" +
                        std::string(d.next_tag) + ">");
  }
  return next;
}

namespace {

// A key and where its object is: what the sort moves, 32 bytes, where an
// ObjectInfo (two strings) was 72 with two string moves a step (the sort
// was 1.1k instructions a file of a 10k-file folder's first open).
// `word` is the key's 8 bytes after the prefix every key shares, big-endian,
// zero past its end: a listing's names mostly differ there ("part-0000123"),
// so most comparisons are one of integers. Words that differ order their
// keys as the bytes do (a zero past a key's end ranks as its shorter
// prefix does); equal words leave it to the keys.
struct KeyAt {
  uint64_t word;
  std::string_view key;
  size_t at;
};

bool KeyBefore(const KeyAt& a, const KeyAt& b) {
  if (a.word != b.word) return a.word < b.word;
  return a.key < b.key;
}

// The length of the prefix every key shares.
size_t SharedPrefix(const std::vector<ObjectInfo>& objects) {
  const std::string_view first = objects.front().key;
  size_t shared = first.size();
  for (const ObjectInfo& o : objects) {
    const size_t n = std::min(shared, o.key.size());
    size_t i = 0;
    while (i < n && o.key[i] == first[i]) ++i;
    shared = i;
    if (shared == 0) break;
  }
  return shared;
}

uint64_t WordAfter(std::string_view key, size_t shared) {
  uint64_t word = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t k = shared + i;
    word = (word << 8) | (k < key.size() ? static_cast<unsigned char>(key[k]) : 0u);
  }
  return word;
}

// KeyAt arrays of a large listing mapped apart from malloc's heap and
// unmapped when the sort ends: at a million keys, the entries and the
// merges' buffer freed on the heap stayed there, and the first open's peak
// RSS grew 65 MB (540 -> 605). A small one is malloc's.
class MappedKeys {
 public:
  explicit MappedKeys(size_t n) : bytes_(n * sizeof(KeyAt)) {
    if (bytes_ < kMappedFrom) {
      small_ = std::make_unique<KeyAt[]>(n);
      keys_ = small_.get();
      return;
    }
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    keys_ = static_cast<KeyAt*>(p);
  }
  MappedKeys(const MappedKeys&) = delete;
  MappedKeys& operator=(const MappedKeys&) = delete;
  ~MappedKeys() {
    if (!small_) ::munmap(keys_, bytes_);
  }
  KeyAt* get() const { return keys_; }

 private:
  static constexpr size_t kMappedFrom = size_t{1} << 20;
  size_t bytes_;
  std::unique_ptr<KeyAt[]> small_;
  KeyAt* keys_ = nullptr;
};

// Puts objects[order[i].at] at i, for every i, each object moved once
// along its cycle of the permutation.
void Permute(std::vector<ObjectInfo>* objects, KeyAt* order) {
  std::vector<ObjectInfo>& o = *objects;
  for (size_t i = 0; i < o.size(); ++i) {
    if (order[i].at == i) continue;
    ObjectInfo first = std::move(o[i]);
    size_t j = i;
    while (order[j].at != i) {
      const size_t from = order[j].at;
      o[j] = std::move(o[from]);
      order[j].at = j;
      j = from;
    }
    o[j] = std::move(first);
    order[j].at = j;
  }
}

}  // namespace

void SortByKey(std::vector<ObjectInfo>* objects) {
  const size_t n = objects->size();
  if (n < 2) return;
  const size_t shared = SharedPrefix(*objects);
  MappedKeys keys(n);
  KeyAt* order = keys.get();
  for (size_t i = 0; i < n; ++i) {
    const std::string_view key = (*objects)[i].key;
    order[i] = {WordAfter(key, shared), key, i};
  }
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  if (n < kParallelSortFrom || threads == 1) {
    std::sort(order, order + n, KeyBefore);
    Permute(objects, order);
    return;
  }
  // A part a thread, then the parts merged pairwise into the other array,
  // a level's merges at once. (Keys are distinct in a listing: the order
  // is std::sort's.)
  MappedKeys other(n);
  KeyAt* from = order;
  KeyAt* to = other.get();
  const size_t part = (n + threads - 1) / threads;
  ParallelClaims(n, part, threads,
                 [&](size_t begin, size_t end) { std::sort(from + begin, from + end, KeyBefore); });
  for (size_t width = part; width < n; width *= 2) {
    const size_t pairs = (n + 2 * width - 1) / (2 * width);
    ParallelClaims(pairs, 1, threads, [&](size_t first, size_t last) {
      for (size_t p = first; p < last; ++p) {
        const size_t begin = p * 2 * width, mid = std::min(n, begin + width),
                     end = std::min(n, begin + 2 * width);
        std::merge(from + begin, from + mid, from + mid, from + end, to + begin, KeyBefore);
      }
    });
    std::swap(from, to);
  }
  // The views point into the objects' own key buffers, which a move of a
  // long key keeps, but not a short (in-place) one's: only `at` is used now.
  Permute(objects, from);
}

}  // namespace sluice
