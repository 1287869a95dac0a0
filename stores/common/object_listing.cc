#include "stores/common/object_listing.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
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

// Puts objects[order[i].at] at i, for every i, each object moved once
// along its cycle of the permutation.
void Permute(std::vector<ObjectInfo>* objects, std::vector<KeyAt>* order) {
  std::vector<ObjectInfo>& o = *objects;
  for (size_t i = 0; i < o.size(); ++i) {
    if ((*order)[i].at == i) continue;
    ObjectInfo first = std::move(o[i]);
    size_t j = i;
    while ((*order)[j].at != i) {
      const size_t from = (*order)[j].at;
      o[j] = std::move(o[from]);
      (*order)[j].at = j;
      j = from;
    }
    o[j] = std::move(first);
    (*order)[j].at = j;
  }
}

}  // namespace

void SortByKey(std::vector<ObjectInfo>* objects) {
  const size_t n = objects->size();
  if (n < 2) return;
  const size_t shared = SharedPrefix(*objects);
  std::vector<KeyAt> order(n);
  for (size_t i = 0; i < n; ++i) {
    const std::string_view key = (*objects)[i].key;
    order[i] = {WordAfter(key, shared), key, i};
  }
  const auto by_key = KeyBefore;
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
  if (n < kParallelSortFrom || threads == 1) {
    std::sort(order.begin(), order.end(), by_key);
  } else {
    // A part a thread, then the parts merged pairwise, a level's merges at
    // once. (Keys are distinct in a listing: the order is std::sort's.)
    const auto at = [&](size_t i) { return order.begin() + static_cast<ptrdiff_t>(i); };
    const size_t part = (n + threads - 1) / threads;
    ParallelClaims(n, part, threads,
                   [&](size_t begin, size_t end) { std::sort(at(begin), at(end), by_key); });
    for (size_t width = part; width < n; width *= 2) {
      const size_t pairs = (n + 2 * width - 1) / (2 * width);
      ParallelClaims(pairs, 1, threads, [&](size_t first, size_t last) {
        for (size_t p = first; p < last; ++p) {
          const size_t begin = p * 2 * width, mid = std::min(n, begin + width),
                       end = std::min(n, begin + 2 * width);
          if (mid < end) std::inplace_merge(at(begin), at(mid), at(end), by_key);
        }
      });
    }
  }
  // The views point into the objects' own key buffers, which a move of a
  // long key keeps, but not a short (in-place) one's: only `at` is used now.
  Permute(objects, &order);
}

}  // namespace sluice
