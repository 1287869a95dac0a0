// Filling a file that will be read back through the page cache in writes
// the kernel serves cheaply (kPageCacheWriteBlock says why and measures it).
#pragma once

#include <cstdint>
#include <string_view>

#include "base/file.h"
#include "base/status.h"

namespace sluice {

// Appends `data` to `file`, which holds *offset bytes so far, in writes of
// kPageCacheWriteBlock at block-aligned offsets of the file; *offset
// advances by what was written. Errors are TempFile::Write's.
Status WriteInPageCacheBlocks(TempFile& file, std::string_view data, uint64_t* offset);

}  // namespace sluice
