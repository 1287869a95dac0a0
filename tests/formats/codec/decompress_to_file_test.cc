// DecompressToFile: the same bytes and errors as Decompress, written to a
// file a chunk at a time, so a bomb that stays within its limit costs disk,
// not memory.
#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "formats/codec/compression.h"
#include "tests/base/address_limit.h"
#include "tests/formats/codec/codec_test_util.h"

namespace sluice {
namespace {

constexpr const char* kFamilies[] = {"zstd", "br", "gz", "bz2", "snappy"};

// Compressed at the family's fastest level: decoding is what is tested.
std::string PackedBy(const char* family, const std::string& raw) {
  const std::string f(family);
  const std::string name = f == "snappy" ? f : f == "br" ? "br:0" : f + ":1";
  return *Compress(*ParseCompression(name), raw);
}

// A scratch file, removed by the destructor.
class ScratchFile {
 public:
  ScratchFile() {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/sluice-d2f-XXXXXX";
    fd_ = ::mkstemp(path_.data());
  }
  ~ScratchFile() {
    ::close(fd_);
    ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  const std::string& path() const { return path_; }
  std::string Contents() const {
    std::string out;
    char buf[1 << 16];
    for (off_t at = 0;;) {
      ssize_t n = ::pread(fd_, buf, sizeof(buf), at);
      if (n <= 0) return out;
      out.append(buf, static_cast<size_t>(n));
      at += n;
    }
  }

 private:
  std::string path_;
  int fd_ = -1;
};

// "ok <size>" or "<code>: <message>", and the file's bytes in *contents.
std::string ToFile(const char* family, const std::string& data, uint64_t max_output,
                   std::string* contents = nullptr) {
  ScratchFile f;
  auto n = DecompressToFile(*ParseCompression(family), data, max_output, f.fd(), f.path(), "w");
  if (contents) *contents = f.Contents();
  return n.ok() ? "ok " + std::to_string(*n) : n.status().ToString();
}

std::string InMemory(const char* family, const std::string& data, uint64_t max_output) {
  auto out = Decompress(*ParseCompression(family), data, max_output, "w");
  return out.ok() ? "ok " + std::to_string(out->size()) : out.status().ToString();
}

// Several chunks' worth (1 MiB each) plus a tail, exactly.
TEST(DecompressToFile, WritesTheSameBytesAsDecompress) {
  const std::string raw = testing::TestBytes((3 << 20) + 12345, 4);
  for (const char* family : kFamilies) {
    const std::string packed = PackedBy(family, raw);
    std::string contents;
    EXPECT_EQ(ToFile(family, packed, raw.size(), &contents), "ok " + std::to_string(raw.size()))
        << family;
    EXPECT_TRUE(contents == raw) << family;
  }
  // Empty output, and output of exactly one chunk.
  for (size_t size : {size_t{0}, size_t{1} << 20}) {
    const std::string exact = testing::TestBytes(size, 5);
    for (const char* family : kFamilies) {
      std::string contents;
      EXPECT_EQ(ToFile(family, PackedBy(family, exact), size, &contents),
                "ok " + std::to_string(size))
          << family << " " << size;
      EXPECT_TRUE(contents == exact) << family;
    }
  }
}

// The text of an error without its count of bytes decoded before a cut
// stream ended: how far a decoder gets depends on the room it is given (br
// keeps output in its ring buffer until there is room for it).
std::string WithoutProgress(std::string error) {
  const size_t at = error.find(", after ");
  return at == std::string::npos ? error : error.substr(0, at);
}

// Too much output, a cut stream and a damaged one: Decompress's errors.
TEST(DecompressToFile, ErrorsAreDecompressErrors) {
  const std::string raw = testing::TestBytes((2 << 20) + 7, 6);
  for (const char* family : kFamilies) {
    const std::string packed = PackedBy(family, raw);
    const std::string cut = packed.substr(0, packed.size() / 2);
    std::string damaged = packed;
    for (size_t i = damaged.size() / 3; i < damaged.size() / 3 + 64; ++i) damaged[i] ^= 0x5a;
    for (const auto& [data, max] : {std::pair{packed, uint64_t{1} << 20},
                                    std::pair{cut, uint64_t{raw.size()}},
                                    std::pair{damaged, uint64_t{raw.size()}}}) {
      const std::string expected = InMemory(family, data, max);
      ASSERT_NE(expected.rfind("ok", 0), 0u) << family;
      EXPECT_EQ(WithoutProgress(ToFile(family, data, max)), WithoutProgress(expected)) << family;
    }
  }
}

TEST(DecompressToFile, AFailedWriteNamesTheFile) {
  const std::string packed = PackedBy("gz", std::string(3 << 20, 'x'));
  ScratchFile f;
  const int read_only = ::open(f.path().c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(read_only, 0);
  auto n = DecompressToFile(*ParseCompression("gz"), packed, 3 << 20, read_only, f.path(), "w");
  ::close(read_only);
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().ToString(), "i/o error: cannot write " + f.path() + ": Bad file descriptor");
}

// 256 MiB of zeros within a limit that allows them, decoded by a child that
// may add only 64 MiB of address space: in memory that runs out; to a file
// it is written whole.
TEST(DecompressToFile, ABombWithinItsLimitCostsDiskNotMemory) {
  if (!testing::kAddressLimitWorks) GTEST_SKIP() << "RLIMIT_AS does not work under ASan";
  constexpr size_t kPart = 16 << 20, kParts = 16;
  const std::string part = PackedBy("gz", std::string(kPart, '\0'));
  std::string bomb;
  for (size_t i = 0; i < kParts; ++i) bomb += part;
  const uint64_t size = uint64_t{kPart} * kParts;
  EXPECT_EQ(testing::RunWithAddressLimit(64 << 20, [&] { return InMemory("gz", bomb, size); }),
            "i/o error: w: gz data of " + std::to_string(bomb.size()) +
                " bytes, decompressing to at most 268435456: out of memory (std::bad_alloc)");
  EXPECT_EQ(testing::RunWithAddressLimit(64 << 20, [&] { return ToFile("gz", bomb, size); }),
            "ok 268435456");
}

}  // namespace
}  // namespace sluice
