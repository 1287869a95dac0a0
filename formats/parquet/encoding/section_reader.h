// A bounds-checked cursor over one page's values section, shared by the
// decoders in this folder, and the one spelling of their errors.
//
// Every read first checks the bytes it needs against what is left, so a
// declared count, length or width never reads or allocates past the section.
// Errors are kCorrupt "<ENCODING> at offset <n>: <what was expected>", the
// offset counted from the start of the section the caller handed to the
// decoder; the caller prepends its file/column/page context
// (Status::WithContext). Not thread-safe (a cursor has a position); the
// section's bytes are borrowed and must outlive the reader; the encoding's
// name is copied (a caller may build it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice::parquet {

// kCorrupt "<encoding> at offset <offset>: <detail>".
Status EncodingError(std::string_view encoding, uint64_t offset, std::string_view detail);

class SectionReader {
 public:
  // `base_offset` is where `section` starts inside the caller's section (an
  // encoding nested in another reports offsets in the outer one).
  SectionReader(std::string_view section, std::string_view encoding, uint64_t base_offset = 0)
      : data_(reinterpret_cast<const uint8_t*>(section.data())),
        size_(section.size()),
        base_(base_offset),
        encoding_(encoding) {}

  size_t remaining() const { return size_ - pos_; }
  size_t position() const { return pos_; }  // within this reader's bytes
  uint64_t offset() const { return base_ + pos_; }  // as errors report it
  uint64_t base_offset() const { return base_; }
  const uint8_t* current() const { return data_ + pos_; }
  std::string_view encoding() const { return encoding_; }
  std::string_view rest() const {
    return {reinterpret_cast<const char*>(data_ + pos_), size_ - pos_};
  }

  Status Error(std::string_view detail) const { return ErrorAt(offset(), detail); }
  Status ErrorAt(uint64_t offset, std::string_view detail) const {
    return EncodingError(encoding_, offset, detail);
  }

  // OK when `n` more bytes exist; else "expected <n> bytes of <what>, found
  // <remaining> (the section ends)".
  Status Need(uint64_t n, std::string_view what) const {
    if (n <= remaining()) return Status::Ok();
    return NeedError(n, what);
  }
  // The caller has checked the bytes exist.
  void Skip(size_t n) { pos_ += n; }
  uint8_t ReadByte() { return data_[pos_++]; }

  // An unsigned LEB128 integer of at most 64 bits (ten bytes).
  Status ReadUleb128(std::string_view what, uint64_t* out);
  // A zigzag-encoded LEB128 integer (the DELTA encodings' signed header fields).
  Status ReadZigZag(std::string_view what, int64_t* out);

 private:
  Status NeedError(uint64_t n, std::string_view what) const;

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  uint64_t base_;
  std::string encoding_;
};

}  // namespace sluice::parquet
