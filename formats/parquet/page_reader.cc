#include "formats/parquet/page_reader.h"

#include <zlib.h>

#include <cstdio>

#include "formats/codec/compression.h"
#include "formats/parquet/encoding/lz4_raw.h"
#include "formats/parquet/metadata_decoder.h"

namespace sluice::parquet {
namespace {

// formats/codec's family for each codec it decodes; nullptr otherwise.
const char* CodecFamily(CompressionCodec codec) {
  switch (codec) {
    case CompressionCodec::kSnappy: return "snappy";
    case CompressionCodec::kGzip: return "gz";
    case CompressionCodec::kBrotli: return "br";
    case CompressionCodec::kZstd: return "zstd";
    default: return nullptr;
  }
}

// Codec LZ4 (5) as parquet-java (Hadoop) writes it: frames of a 4-byte
// big-endian decompressed size, a 4-byte big-endian compressed size and an
// LZ4 block. Older Arrow writers stored one bare LZ4 block under the same
// codec, so input that does not frame exactly is tried as that.
Result<std::string> DecompressHadoopLz4(std::string_view data, uint64_t size,
                                        std::string_view what) {
  std::string out;
  std::string_view rest = data;
  bool framed = !rest.empty();
  while (framed && !rest.empty()) {
    if (rest.size() < 8) {
      framed = false;
      break;
    }
    const auto be32 = [](const char* p) {
      return (uint32_t{static_cast<uint8_t>(p[0])} << 24) | (uint32_t{static_cast<uint8_t>(p[1])} << 16) |
             (uint32_t{static_cast<uint8_t>(p[2])} << 8) | uint32_t{static_cast<uint8_t>(p[3])};
    };
    const uint32_t raw = be32(rest.data());
    const uint32_t stored = be32(rest.data() + 4);
    if (stored > rest.size() - 8 || raw > size - out.size()) {
      framed = false;
      break;
    }
    Result<std::string> block = DecompressLz4Raw(rest.substr(8, stored), raw, what);
    if (!block.ok()) {
      framed = false;
      break;
    }
    out += *block;
    rest.remove_prefix(8 + size_t{stored});
  }
  if (framed && out.size() == size) return out;
  return DecompressLz4Raw(data, size, what);
}

uint32_t Crc32(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) {  // zlib takes uInt lengths
    const uInt n = static_cast<uInt>(std::min<size_t>(bytes.size(), 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), n);
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

// A data page encoded PLAIN, or a dictionary page (PLAIN values).
bool IsPlainPage(const PageHeader& h) {
  if (h.type == PageType::kDataPage) return h.data_page_header->encoding == Encoding::kPlain;
  if (h.type == PageType::kDictionaryPage) {
    const Encoding e = h.dictionary_page_header->encoding;
    return e == Encoding::kPlain || e == Encoding::kPlainDictionary;
  }
  return h.type == PageType::kDataPageV2 && h.data_page_header_v2->encoding == Encoding::kPlain;
}

}  // namespace

Status CheckCodecSupported(CompressionCodec codec) {
  if (codec == CompressionCodec::kUncompressed || codec == CompressionCodec::kLz4Raw ||
      codec == CompressionCodec::kLz4 || CodecFamily(codec) != nullptr) {
    return Status::Ok();
  }
  return UnimplementedError("compression " + CompressionCodecName(codec) +
                            " is not supported (UNCOMPRESSED, SNAPPY, GZIP, ZSTD, BROTLI, "
                            "LZ4_RAW and LZ4 are)");
}

std::string PageReader::Where(uint64_t file_offset) const {
  return context_ + ": page at offset " + std::to_string(file_offset);
}

Status PageReader::Decompress(std::string_view stored, uint64_t size, uint64_t at, Page* page,
                              std::string_view* out) {
  if (codec_ == CompressionCodec::kUncompressed) {
    if (stored.size() != size) {
      return CorruptError(Where(at) + ": " + std::to_string(stored.size()) +
                          " bytes stored uncompressed, the header says " + std::to_string(size));
    }
    *out = stored;
    return Status::Ok();
  }
  SLUICE_RETURN_IF_ERROR(CheckCodecSupported(codec_).WithContext(Where(at)));
  const char* family = CodecFamily(codec_);
  if (family != nullptr && page_buffer_capacity_ > 0) {
    if (page_buffer_.size() == 0) {
      SLUICE_ASSIGN_OR_RETURN(page_buffer_,
                              UninitializedBuffer::Allocate(page_buffer_capacity_, context_,
                                                                  page_buffer_pages_));
    }
    // Pages start on a cache line.
    const size_t start = (used_ + 63) & ~size_t{63};
    if (start <= page_buffer_.size() && size <= page_buffer_.size() - start) {
      char* dst = page_buffer_.data() + start;
      page_start_ = start;
      if (defer_pieces_ && codec_ == CompressionCodec::kSnappy && IsPlainPage(page->header) &&
          stored.size() >= size - size / 8 && SnappyPieces(stored, dst, size, &pieces_)) {
        // SnappyPieces holds the block to exactly `size` bytes.
        used_ = start + size;
        unkept_ = used_ - before_page_;
        page->in_page_buffer = true;
        page->pieces = pieces_.pieces;
        page->space = dst;
        page->space_size = size;
        page->space_used = pieces_.scratch_used;
        page->compressed = stored;
        *out = {};
        return Status::Ok();
      }
      if (defer_dictionaries_ && codec_ == CompressionCodec::kSnappy &&
          page->header.type == PageType::kDictionaryPage && IsPlainPage(page->header)) {
        used_ = start + size;
        unkept_ = used_ - before_page_;
        page->in_page_buffer = true;
        page->left_compressed = true;
        page->space = dst;
        page->space_size = size;
        page->compressed = stored;
        *out = {};
        return Status::Ok();
      }
      if (!compression_) compression_ = *ParseCompression(family);
      SLUICE_ASSIGN_OR_RETURN(const uint64_t produced,
                              DecompressInto(*compression_, stored, dst, size, Where(at)));
      if (produced != size) return SizeMismatch(produced, size, at);
      used_ = start + size;
      unkept_ = used_ - before_page_;
      page->in_page_buffer = true;
      *out = std::string_view(dst, size);
      return Status::Ok();
    }
  }
  Result<std::string> raw =
      codec_ == CompressionCodec::kLz4Raw ? DecompressLz4Raw(stored, size, Where(at))
      : codec_ == CompressionCodec::kLz4  ? DecompressHadoopLz4(stored, size, Where(at))
                                          : sluice::Decompress(*ParseCompression(CodecFamily(codec_)),
                                                               stored, size, Where(at));
  if (!raw.ok()) return raw.status();
  if (raw->size() != size) return SizeMismatch(raw->size(), size, at);
  page->storage = std::make_unique<std::string>(std::move(raw).value());
  *out = *page->storage;
  return Status::Ok();
}

Status PageReader::Materialize(Page* page) {
  if (page->pieces.empty() && !page->left_compressed) return Status::Ok();
  const uint64_t size = page->space_size;
  if (!compression_) compression_ = *ParseCompression("snappy");
  const std::string where = Where(page->file_offset);
  SLUICE_ASSIGN_OR_RETURN(const uint64_t produced,
                          DecompressInto(*compression_, page->compressed, page->space, size, where));
  if (produced != size) return SizeMismatch(produced, size, page->file_offset);
  page->body = std::string_view(page->space, size);
  page->pieces = {};
  page->left_compressed = false;
  return Status::Ok();
}

Status PageReader::SizeMismatch(uint64_t produced, uint64_t size, uint64_t at) const {
  return CorruptError(Where(at) + ": " + CompressionCodecName(codec_) + " data decompresses to " +
                      std::to_string(produced) + " bytes, the header says " + std::to_string(size));
}

Result<bool> PageReader::NextHeader(Page* page) {
  return NextPage(page, false);
}

Result<bool> PageReader::Next(Page* page) { return NextPage(page, true); }

Result<bool> PageReader::NextPage(Page* page, bool body) {
  used_ -= unkept_;  // the last page's bytes, unless kept
  unkept_ = 0;
  before_page_ = used_;
  page->in_page_buffer = false;
  while (pos_ < chunk_.size()) {
    const uint64_t at = file_offset_ + pos_;
    size_t header_size = 0;
    Result<PageHeader> h = DecodePageHeader(chunk_.substr(pos_), &header_size, limits_.thrift);
    if (!h.ok()) return h.status().WithContext(Where(at) + ": header");
    const PageHeader& ph = *h;
    const uint64_t left = chunk_.size() - pos_ - header_size;
    const uint64_t stored_size = static_cast<uint64_t>(ph.compressed_page_size);
    const uint64_t size = static_cast<uint64_t>(ph.uncompressed_page_size);
    if (stored_size > left) {
      return CorruptError(Where(at) + ": " + std::to_string(stored_size) +
                          " bytes of page after its header, " + std::to_string(left) +
                          " left in the column chunk");
    }
    if (stored_size > limits_.max_page_bytes || size > limits_.max_page_bytes) {
      return CorruptError(Where(at) + ": a page of " + std::to_string(std::max(stored_size, size)) +
                          " bytes, more than the limit of " +
                          std::to_string(limits_.max_page_bytes));
    }
    const std::string_view stored = chunk_.substr(pos_ + header_size, stored_size);
    pos_ += header_size + stored_size;
    if (body && limits_.verify_crc && ph.crc && Crc32(stored) != *ph.crc) {
      char text[64];
      std::snprintf(text, sizeof text, "is %08x, the header says %08x", Crc32(stored), *ph.crc);
      return CorruptError(Where(at) + ": CRC-32 of the page's " + std::to_string(stored_size) +
                          " bytes " + text);
    }
    if (ph.type == PageType::kIndexPage) continue;  // nothing to decode
    page->header = ph;
    page->file_offset = at;
    page->repetition_levels = {};
    page->definition_levels = {};
    page->storage.reset();
    page->pieces = {};
    page->space = nullptr;
    page->space_size = 0;
    page->space_used = 0;
    page->compressed = {};
    page->left_compressed = false;
    page->body = {};
    if (ph.type != PageType::kDataPageV2) {
      if (!body) return true;
      SLUICE_RETURN_IF_ERROR(Decompress(stored, size, at, page, &page->body));
      return true;
    }
    const DataPageHeaderV2& v2 = *ph.data_page_header_v2;
    const uint64_t rep = static_cast<uint64_t>(v2.repetition_levels_byte_length);
    const uint64_t def = static_cast<uint64_t>(v2.definition_levels_byte_length);
    if (rep + def > stored_size || rep + def > size) {
      return CorruptError(Where(at) + ": " + std::to_string(rep + def) +
                          " bytes of levels in a page of " + std::to_string(stored_size) +
                          " bytes (" + std::to_string(size) + " uncompressed)");
    }
    page->repetition_levels = stored.substr(0, rep);
    page->definition_levels = stored.substr(rep, def);
    const std::string_view values = stored.substr(rep + def);
    if (!body) return true;
    if (!v2.is_compressed) {
      if (values.size() != size - rep - def) {
        return CorruptError(Where(at) + ": " + std::to_string(values.size()) +
                            " bytes of values stored uncompressed, the header says " +
                            std::to_string(size - rep - def));
      }
      page->body = values;
      return true;
    }
    SLUICE_RETURN_IF_ERROR(Decompress(values, size - rep - def, at, page, &page->body));
    return true;
  }
  return false;
}

}  // namespace sluice::parquet
