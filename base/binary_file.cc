// The binary files' header rule (binary_file.h).
#include "base/binary_file.h"

#include <xxhash.h>

#include <cstring>
#include <memory>
#include <new>
#include <string>

namespace sluice {
namespace {

Status CorruptIn(std::string_view source, const std::string& what) {
  return CorruptError(std::string(source) + ": " + what);
}

}  // namespace

BinaryFileTag TagOf(const BinaryFileKind& kind) {
  BinaryFileTag tag{};
  std::memcpy(tag.magic, kind.magic.data(), sizeof(tag.magic));
  tag.version = kind.version;
  return tag;
}

Status CheckBinaryTag(std::string_view bytes, const BinaryFileKind& kind, std::string_view source) {
  if (bytes.size() < kind.header_bytes) {
    return CorruptIn(source, std::to_string(bytes.size()) + " bytes, shorter than the " +
                                 std::to_string(kind.header_bytes) + "-byte header of " +
                                 std::string(kind.noun));
  }
  BinaryFileTag tag;
  std::memcpy(&tag, bytes.data(), sizeof(tag));
  if (std::string_view(tag.magic, sizeof(tag.magic)) != kind.magic) {
    return CorruptIn(source, "not " + std::string(kind.noun));
  }
  if (tag.version != kind.version) {
    return CorruptIn(source, std::string(kind.noun) + " of layout " + std::to_string(tag.version) +
                                 ", expected " + std::to_string(kind.version));
  }
  return Status::Ok();
}

KeyedFileHead SealKeyedHead(const BinaryFileKind& kind, uint64_t key,
                            std::span<const std::string_view> body) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  if (!state) throw std::bad_alloc();
  XXH3_64bits_reset(state.get());
  for (std::string_view piece : body) XXH3_64bits_update(state.get(), piece.data(), piece.size());
  KeyedFileHead head{};
  head.tag = TagOf(kind);
  head.header_bytes = static_cast<uint32_t>(kind.header_bytes);
  head.key = key;
  head.checksum = XXH3_64bits_digest(state.get());
  return head;
}

Result<KeyedFileHead> ReadKeyedHead(std::string_view bytes, const BinaryFileKind& kind, uint64_t key,
                                    std::string_view source) {
  SLUICE_RETURN_IF_ERROR(CheckBinaryTag(bytes, kind, source));
  KeyedFileHead head;
  std::memcpy(&head, bytes.data(), sizeof(head));
  if (head.header_bytes != kind.header_bytes) {
    return CorruptIn(source, "a header of " + std::to_string(head.header_bytes) + " bytes, expected " +
                                 std::to_string(kind.header_bytes));
  }
  if (head.key != key) return NotFoundError(std::string(source) + ": " + std::string(kind.stale) + " (stale)");
  return head;
}

Status CheckKeyedBody(std::string_view bytes, const KeyedFileHead& head,
                      std::initializer_list<BinarySection> sections, std::string_view source) {
  const uint64_t limit = bytes.size();
  uint64_t need = head.header_bytes;
  for (const BinarySection& s : sections) {
    if (s.count > limit / s.record_bytes || s.count * s.record_bytes > limit - need) {
      return CorruptIn(source, "sections larger than the file's " + std::to_string(limit) + " bytes");
    }
    need += s.count * s.record_bytes;
  }
  if (need != limit) {
    return CorruptIn(source, std::to_string(limit) + " bytes where its header says " + std::to_string(need));
  }
  const uint64_t body = head.header_bytes;
  if (XXH3_64bits(bytes.data() + body, limit - body) != head.checksum) {
    return CorruptIn(source, "checksum mismatch");
  }
  return Status::Ok();
}

}  // namespace sluice
