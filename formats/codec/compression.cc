#include "formats/codec/compression.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

#include "base/exception_status.h"
#include "formats/codec/codec_internal.h"

namespace sluice {

namespace {

struct Family {
  std::string_view name;
  bool has_level;
  int min_level;
  int max_level;
  int default_level;  // Mosaic's default for the bare family name
};

// Mosaic's defaults: Zstandard(level=3), Brotli(quality=11), Gzip(level=9),
// Bzip2(level=9); snappy takes no level.
constexpr std::array<Family, 5> kFamilies = {{
    {"br", true, 0, 11, 11},
    {"bz2", true, 1, 9, 9},
    {"gz", true, 0, 9, 9},
    {"snappy", false, 0, 0, 0},
    {"zstd", true, 1, 22, 3},
}};

const Family* FindFamily(std::string_view name) {
  for (const Family& f : kFamilies) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string FamilyList() {
  std::string s;
  for (const Family& f : kFamilies) {
    if (!s.empty()) s += ", ";
    s += f.name;
  }
  return s;
}

std::string LevelRange(const Family& f) {
  return std::to_string(f.min_level) + "-" + std::to_string(f.max_level);
}

// The family and its effective level, or why `c` is not usable.
Result<std::pair<const Family*, int>> Resolve(const Compression& c) {
  const Family* f = FindFamily(c.family);
  if (f == nullptr) {
    return UnimplementedError("unknown compression \"" + c.family + "\" (supported: " +
                              FamilyList() + ")");
  }
  if (!c.level.has_value()) return std::pair{f, f->default_level};
  if (!f->has_level) {
    return InvalidArgumentError("compression " + c.family + " takes no level, got " +
                                std::to_string(*c.level));
  }
  if (*c.level < f->min_level || *c.level > f->max_level) {
    return InvalidArgumentError("compression " + c.family + " level " +
                                std::to_string(*c.level) + " is out of range " +
                                LevelRange(*f));
  }
  return std::pair{f, *c.level};
}

}  // namespace

Result<Compression> ParseCompression(std::string_view name) {
  const size_t colon = name.find(':');
  const std::string_view family = name.substr(0, colon);
  const Family* f = FindFamily(family);
  if (f == nullptr) {
    return UnimplementedError("unknown compression \"" + std::string(name) +
                              "\" (supported: " + FamilyList() + ")");
  }
  Compression c{std::string(family), std::nullopt, std::string(name)};
  if (colon == std::string_view::npos) return c;
  const std::string_view digits = name.substr(colon + 1);
  if (!f->has_level) {
    return InvalidArgumentError("compression \"" + std::string(name) + "\": " +
                                std::string(family) + " takes no level");
  }
  // Mosaic knows exactly the names "<family>:<level>" with a canonical
  // decimal level: no sign, no leading zeros, no spaces.
  int level = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), level);
  const bool canonical = !digits.empty() && ec == std::errc() &&
                         end == digits.data() + digits.size() && digits[0] != '-' &&
                         (digits.size() == 1 || digits[0] != '0');
  if (!canonical || level < f->min_level || level > f->max_level) {
    return InvalidArgumentError("compression \"" + std::string(name) + "\": level must be " +
                                LevelRange(*f) + " for " + std::string(family));
  }
  c.level = level;
  return c;
}

Result<std::string> Compress(const Compression& c, std::string_view raw) {
  SLUICE_ASSIGN_OR_RETURN(auto resolved, Resolve(c));
  const auto [family, level] = resolved;
  using namespace codec_internal;
  // The libraries report errors by code; only our buffers throw (bad_alloc).
  try {
    if (family->name == "zstd") return ZstdCompress(raw, level);
    if (family->name == "br") return BrotliCompress(raw, level);
    if (family->name == "gz") return GzipCompress(raw, level);
    if (family->name == "bz2") return Bzip2Compress(raw, level);
    return SnappyCompress(raw);
  } catch (...) {
    return StatusFromException(std::current_exception(),
                               std::string(family->name) + ": compressing " +
                                   std::to_string(raw.size()) + " bytes");
  }
}

namespace {

using StreamingDecoder = Status (*)(std::string_view, codec_internal::BoundedOutput&,
                                   std::string_view);

// zstd, br, gz and bz2 decode as a stream into either kind of output;
// snappy has no such decoder (null).
StreamingDecoder StreamingDecoderOf(std::string_view family) {
  using namespace codec_internal;
  if (family == "zstd") return ZstdDecode;
  if (family == "br") return BrotliDecode;
  if (family == "gz") return GzipDecode;
  if (family == "bz2") return Bzip2Decode;
  return nullptr;
}

Status OutOfMemory(std::string_view what, std::string_view family, size_t input,
                   uint64_t max_output) {
  return StatusFromException(std::current_exception(),
                             std::string(what) + ": " + std::string(family) + " data of " +
                                 std::to_string(input) + " bytes, decompressing to at most " +
                                 std::to_string(max_output));
}

}  // namespace

Result<std::string> Decompress(const Compression& c, std::string_view data,
                               uint64_t max_output, std::string_view what) {
  auto resolved = Resolve(c);
  if (!resolved.ok()) return resolved.status().WithContext(what);
  const Family* family = resolved->first;
  using namespace codec_internal;
  // Output buffers grow with the output (see BoundedOutput); when memory
  // runs out first, the caller gets a Status, not an exception.
  try {
    // zstd has a one-shot path for frames that state a trustworthy size.
    if (family->name == "zstd") return ZstdDecompress(data, max_output, what);
    if (family->name == "snappy") return SnappyDecompress(data, max_output, what);
    BoundedOutput out(max_output, data.size());
    SLUICE_RETURN_IF_ERROR(StreamingDecoderOf(family->name)(data, out, what));
    return out.Take();
  } catch (...) {
    return OutOfMemory(what, family->name, data.size(), max_output);
  }
}

Result<uint64_t> DecompressInto(const Compression& c, std::string_view data, char* out,
                                uint64_t capacity, std::string_view what) {
  auto resolved = Resolve(c);
  if (!resolved.ok()) return resolved.status().WithContext(what);
  const Family* family = resolved->first;
  try {
    if (family->name == "snappy") return codec_internal::SnappyDecompressInto(data, out, capacity, what);
    if (family->name == "zstd") return codec_internal::ZstdDecompressInto(data, out, capacity, what);
  } catch (...) {
    return OutOfMemory(what, family->name, data.size(), capacity);
  }
  SLUICE_ASSIGN_OR_RETURN(std::string whole, Decompress(c, data, capacity, what));
  if (!whole.empty()) std::memcpy(out, whole.data(), whole.size());
  return whole.size();
}

bool DecompressesStraightInto(const Compression& c) {
  auto resolved = Resolve(c);
  if (!resolved.ok()) return false;
  const std::string_view name = resolved->first->name;
  return name == "snappy" || name == "zstd";  // DecompressInto's own branches
}

Result<uint64_t> DecompressToFile(const Compression& c, std::string_view data,
                                  uint64_t max_output, int fd, std::string_view path,
                                  std::string_view what, Env* env) {
  auto resolved = Resolve(c);
  if (!resolved.ok()) return resolved.status().WithContext(what);
  const Family* family = resolved->first;
  using namespace codec_internal;
  try {
    StreamingDecoder decode = StreamingDecoderOf(family->name);
    BoundedOutput out(max_output, fd, std::string(path), env != nullptr ? env : Env::Default());
    if (decode == nullptr) {
      SLUICE_ASSIGN_OR_RETURN(std::string whole, SnappyDecompress(data, max_output, what));
      // Fill the spilling buffer chunk by chunk: one writer of the file.
      for (size_t at = 0; at < whole.size();) {
        SLUICE_RETURN_IF_ERROR(out.Grow());
        const size_t n = std::min(out.free_size(), whole.size() - at);
        std::memcpy(out.free_begin(), whole.data() + at, n);
        out.Commit(n);
        at += n;
      }
    } else {
      SLUICE_RETURN_IF_ERROR(decode(data, out, what));
    }
    SLUICE_RETURN_IF_ERROR(out.Flush());
    return out.produced();
  } catch (...) {
    return OutOfMemory(what, family->name, data.size(), max_output);
  }
}

}  // namespace sluice
