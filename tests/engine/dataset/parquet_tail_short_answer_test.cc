// A tail answered with fewer bytes than asked (the file changed since it
// was listed) is one error whichever path read it: the store's maker
// (ReadParquetTailInRoom) and a local folder's fetch of a row group
// (ParquetFooterSource::Tail), both ParquetTailShortAnswerError's text.
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "base/uninitialized_buffer.h"
#include "engine/dataset/parquet_footer_source.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/remote_source.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;

// A local folder whose ranged reads of a version answer one byte short.
class OneByteShortRemote final : public RemoteSource {
 public:
  explicit OneByteShortRemote(std::unique_ptr<RemoteSource> inner) : inner_(std::move(inner)) {}

  Result<std::string> GetRangeOnlyOfVersion(const std::string& key, uint64_t offset,
                                            uint64_t length, const ObjectVersion& version,
                                            std::stop_token stop) override {
    auto got = inner_->GetRangeOnlyOfVersion(key, offset, length, version, std::move(stop));
    if (got.ok() && !got->empty()) got->pop_back();
    return got;
  }
  Result<uint64_t> GetRangeOnlyOfVersionInRoom(const std::string& key, uint64_t offset,
                                               uint64_t length, const ObjectVersion& version,
                                               UninitializedBuffer* room) override {
    auto got = inner_->GetRangeOnlyOfVersionInRoom(key, offset, length, version, room);
    if (got.ok() && *got > 0) return *got - 1;
    return got;
  }
  bool OnLocalDisk() const override { return inner_->OnLocalDisk(); }
  std::string Describe() const override { return inner_->Describe(); }
  // Nothing but the tails' ranged reads is asked of it here.
  Result<uint64_t> Fetch(const std::string&, const std::string&, std::optional<uint64_t>) override {
    return UnimplementedError("Fetch");
  }
  Result<std::string> GetRangeOnly(const std::string&, uint64_t, uint64_t, std::stop_token) override {
    return UnimplementedError("GetRangeOnly");
  }
  Result<std::vector<ObjectInfo>> List(const std::string&) override {
    return UnimplementedError("List");
  }
  Result<std::vector<uint64_t>> Sizes(const std::vector<std::string>&) override {
    return UnimplementedError("Sizes");
  }

 private:
  std::unique_ptr<RemoteSource> inner_;
};

// 100000 bytes ending as a Parquet file with a footer of 1000 bytes.
std::string ShortAnswerFile() {
  std::string b = "PAR1" + std::string(100000 - 4 - 1000 - 8, 'f') + std::string(1000, 'm');
  const uint32_t n = 1000;
  b.append(reinterpret_cast<const char*>(&n), 4);
  return b + "PAR1";
}

TEST(ParquetTailShortAnswer, IsOneErrorFromTheStoresReadAndTheFolderSource) {
  ScratchDir dir, state;
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "a.parquet"), ShortAnswerFile()).ok());
  auto inner = OpenRemoteSource(dir.path(), StoreOptions{});
  ASSERT_TRUE(inner.ok()) << inner.status().message();
  OneByteShortRemote remote(std::move(*inner));
  ASSERT_TRUE(remote.OnLocalDisk()) << "the source reads a local folder's tails itself";
  const std::string url = remote.Describe() + "/a.parquet";

  // The store's maker: its first read, the last 64 KiB.
  UninitializedBuffer room;
  std::string longer;
  auto read = ReadParquetTailInRoom(remote, "a.parquet", "a.parquet", 100000, "", &room, &longer);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().ToString(),
            "corrupt: a.parquet: footer: " + url +
                " answered 65535 bytes for bytes [34464, 100000) (listed with 100000 bytes: the "
                "file changed since it was listed?)");

  // A row group's fetch: the footer's 1000 bytes and the 8 after it.
  ParquetFooterSource source(remote, state.path(), Env::Default());
  ShardEntry::FilePiece piece;
  piece.file = "a.parquet";
  piece.file_bytes = 100000;
  piece.tail_bytes = 1008;
  auto tail = source.Tail(piece, "a.parquet", "a.parquet: row group 0");
  ASSERT_FALSE(tail.ok());
  EXPECT_EQ(tail.status().ToString(),
            "corrupt: a.parquet: row group 0: footer: " + url +
                " answered 1007 bytes for bytes [98992, 100000) (listed with 100000 bytes: the "
                "file changed since it was listed?)");
}

}  // namespace
}  // namespace sluice
