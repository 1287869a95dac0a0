// UTF-8 validation with the rules of Python's strict "utf-8" codec (no
// overlong forms, no surrogates, nothing above U+10FFFF): the one owner of
// that rule for the formats (MDS str columns, text shards and their column
// names). Pure; thread-safe.
#pragma once

#include <cstddef>
#include <string_view>

namespace sluice {

// Byte offset of the first sequence in `text` that Python's strict decoder
// rejects (the offset of its lead byte), or std::string_view::npos when all
// of `text` is valid UTF-8.
size_t FindInvalidUtf8(std::string_view text);

}  // namespace sluice
