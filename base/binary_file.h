// The header rule of the binary files Sluice keeps in a cache's state folder
// (the epoch checkpoints, the binary index, the Parquet footer store): every
// one starts with a magic and a layout version, and a file whose body one
// checksum covers goes on with its header's size, the key of what it was
// made from and that checksum. Other processes, a crash, a full disk or
// another build of Sluice may have left anything in such a file, so a
// reader checks all of these before it uses a byte, and a file that fails
// is rebuilt by its owner (engine/dataset/node_file.h's MakeOncePerNode);
// writers write it through base/file.h's TempFile and rename.
//
// Little-endian like the node that writes and reads it. Stateless and
// thread-safe; nothing here keeps a pointer into the bytes it checks.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>

#include "base/status.h"

namespace sluice {

// What a file is, for writing its head and for checking and naming it.
struct BinaryFileKind {
  std::string_view magic;  // exactly 8 bytes
  uint32_t version = 0;    // the layout version
  uint64_t header_bytes = 0;  // the whole header (its head first)
  std::string_view noun;      // with its article, in errors: "a binary index"
  // Keyed files: why a file of another key is not this one's, e.g. "made
  // for another plan" (the error adds " (stale)").
  std::string_view stale = {};
};

// The first 12 bytes of every one of them.
struct BinaryFileTag {
  char magic[8];
  uint32_t version;
};
static_assert(sizeof(BinaryFileTag) == 12);

// The first 32 bytes of a keyed file: its header's first member.
struct KeyedFileHead {
  BinaryFileTag tag;
  uint32_t header_bytes;  // BinaryFileKind::header_bytes
  uint64_t key;           // what the file was made from (its writer's)
  uint64_t checksum;      // XXH3-64 of every byte after the header
};
static_assert(sizeof(KeyedFileHead) == 32);

// A section after the header: `count` records of `record_bytes` each (1 for
// a text of `count` bytes; never 0).
struct BinarySection {
  uint64_t count;
  uint64_t record_bytes;
};

// `kind`'s tag, to write.
BinaryFileTag TagOf(const BinaryFileKind& kind);

// Checks that `bytes` (named `source` in errors) hold `kind`'s header and
// start with its magic and version. kCorrupt "<source>: N bytes, shorter
// than the H-byte header of <noun>", "<source>: not <noun>" or
// "<source>: <noun> of layout V, expected W".
Status CheckBinaryTag(std::string_view bytes, const BinaryFileKind& kind, std::string_view source);

// The head of a keyed file whose body (every byte after its header) is
// `body`'s pieces in order.
KeyedFileHead SealKeyedHead(const BinaryFileKind& kind, uint64_t key,
                            std::span<const std::string_view> body);

// The head of the keyed file `bytes`, checked: CheckBinaryTag, then the
// header's size (kCorrupt "<source>: a header of H bytes, expected K"),
// then the key: a file made from something else is kNotFound
// "<source>: <stale> (stale)", rebuilt without hashing it.
Result<KeyedFileHead> ReadKeyedHead(std::string_view bytes, const BinaryFileKind& kind, uint64_t key,
                                    std::string_view source);

// Checks the body of the keyed file `bytes` whose head ReadKeyedHead gave:
// the sections the caller's header declares fill the file exactly (kCorrupt
// "<source>: sections larger than the file's N bytes" or "<source>: N bytes
// where its header says M"), and the checksum (kCorrupt "<source>:
// checksum mismatch"). Only then may the caller size anything by them.
Status CheckKeyedBody(std::string_view bytes, const KeyedFileHead& head,
                      std::initializer_list<BinarySection> sections, std::string_view source);

}  // namespace sluice
