// A raw snappy block decompressed a prefix at a time: a reader that needs
// only the start of a block (formats/parquet's lazy rows: a dictionary page
// of which the first rows index a few entries) writes its first bytes and
// goes on later, where libsnappy writes all of them at once. The tags are
// read by snappy_codec.cc's one tag reader. Malformed blocks are refused
// (false) where the output reaches them, saying nothing of why: decompress
// the block whole (Decompress) for the error.
// Not thread-safe; the bytes written are never rewritten, so views of
// [0, produced()) stay valid while later calls write past them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace sluice {

class SnappyPrefix {
 public:
  // `data` is the block and `out` room for `capacity` bytes; both must
  // outlive the decoder. False when the header is bad or declares more
  // than `capacity`.
  bool Start(std::string_view data, char* out, uint64_t capacity);
  uint64_t size() const { return declared_; }  // the block's decompressed size
  uint64_t produced() const { return produced_; }
  // Decompresses whole tags until at least min(bytes, size()) bytes are out;
  // at size(), the block must end there. False when a tag is cut short,
  // a copy reaches before the start, the tags pass size() or end before it,
  // or bytes follow the last one; every later call is then false too.
  bool DecodeTo(uint64_t bytes);

 private:
  std::string_view data_;
  char* out_ = nullptr;
  size_t pos_ = 0;  // the next tag in data_
  uint64_t declared_ = 0;
  uint64_t produced_ = 0;
  bool failed_ = true;
};

}  // namespace sluice
