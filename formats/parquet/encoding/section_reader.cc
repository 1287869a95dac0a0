#include "formats/parquet/encoding/section_reader.h"

namespace sluice::parquet {

Status EncodingError(std::string_view encoding, uint64_t offset, std::string_view detail) {
  std::string message(encoding);
  message += " at offset ";
  message += std::to_string(offset);
  message += ": ";
  message += detail;
  return CorruptError(std::move(message));
}

Status SectionReader::NeedError(uint64_t n, std::string_view what) const {
  return Error("expected " + std::to_string(n) + " bytes of " + std::string(what) + ", found " +
               std::to_string(remaining()) + " (the section ends)");
}

Status SectionReader::ReadUleb128(std::string_view what, uint64_t* out) {
  const uint64_t start = offset();
  uint64_t value = 0;
  for (unsigned i = 0; i < 10; ++i) {
    if (pos_ == size_) {
      return ErrorAt(start, "the section ends inside the ULEB128 " + std::string(what));
    }
    const uint8_t b = data_[pos_++];
    // The tenth byte holds bit 63 only.
    if (i == 9 && b > 1) {
      return ErrorAt(start, "the ULEB128 " + std::string(what) + " exceeds 64 bits");
    }
    value |= uint64_t{b & 0x7fu} << (7 * i);
    if ((b & 0x80) == 0) {
      *out = value;
      return Status::Ok();
    }
  }
  return ErrorAt(start, "the ULEB128 " + std::string(what) + " exceeds 64 bits");
}

Status SectionReader::ReadZigZag(std::string_view what, int64_t* out) {
  uint64_t u = 0;
  SLUICE_RETURN_IF_ERROR(ReadUleb128(what, &u));
  *out = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
  return Status::Ok();
}

}  // namespace sluice::parquet
