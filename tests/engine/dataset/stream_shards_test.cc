// StreamShards downloading over HTTP into the shard cache: the temporaries a
// download leaves when its process is killed, the folder's bytes under
// cache_limit with those temporaries counted, and the mode of what is
// downloaded.
#include "engine/dataset/stream_shards.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/remote_source.h"
#include "formats/mds/mds_writer.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/engine/dataset/multiprocess_util.h"
#include "tests/engine/dataset/stalling_file_server.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;
using testing::ScratchDir;
using testing::StallingFileServer;

// Files below `dir` (but .sluice/), as relative names, sorted.
std::vector<std::string> FilesBelow(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename() == ".sluice") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(ec)) out.push_back(fs::relative(it->path(), dir, ec).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

class StreamShardsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Six shards of ~5 MB: half of one is more than the 2 MiB the HTTP
    // client receives before it writes, so a stalled body leaves bytes.
    ShardedWriterOptions options;
    options.size_limit = 5 << 20;
    auto writer = MdsWriter::Create(remote_.path(), {{"data", "bytes"}}, options);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    for (int i = 0; i < 56; ++i) {
      std::string data(512 << 10, static_cast<char>('a' + i % 26));
      ASSERT_TRUE((*writer)->WriteFields({data}).ok());
    }
    ASSERT_TRUE((*writer)->Finish().ok());
    auto text = ReadFile(JoinPath(remote_.path(), "index.json"));
    ASSERT_TRUE(text.ok());
    auto index = ParseIndex(*text, "index.json");
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    index_ = std::move(*index);
    auto table = ShardTable::FromIndex(index_);
    ASSERT_TRUE(table.ok());
    table_ = std::make_shared<const ShardTable>(std::move(*table));
    ASSERT_GE(index_.shards.size(), 6u);
    for (const ShardEntry& e : index_.shards) largest_ = std::max(largest_, e.raw_data.bytes);
    server_ = std::make_unique<StallingFileServer>(remote_.path(), Name(0));
  }

  std::string Name(size_t shard) const { return index_.shards[shard].raw_data.basename; }
  std::string cache() const { return cache_.path(); }

  Result<std::unique_ptr<StreamShards>> Open(std::optional<uint64_t> limit) {
    stream_.remote = server_->url();
    stream_.local = cache();
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RemoteSource> remote, OpenRemoteSource(stream_.remote));
    return StreamShards::Open(stream_, table_, std::move(remote), limit, std::chrono::seconds(20));
  }

  Status OpenShard(StreamShards& s, size_t shard) {
    return s.OpenShard(shard, index_.shards[shard].column_names.size()).status();
  }

  // Forks a process that downloads shard 0 (which stalls mid-body), waits
  // until its temporary holds bytes, SIGKILLs it and returns the temporary.
  std::string KillMidDownload() {
    pid_t child = testing::Fork([&] {
      auto s = Open(std::nullopt);
      if (!s.ok()) return 1;
      (void)OpenShard(**s, 0);
      return 2;  // unreachable: the body never ends
    });
    std::string temp;
    for (int i = 0; i < 10000 && temp.empty(); ++i) {
      for (const std::string& f : FilesBelow(cache())) {
        std::optional<TempName> t = ParseTempName(fs::path(f).filename().string());
        std::error_code ec;
        if (t && t->owner.pid == static_cast<uint32_t>(child) &&
            fs::file_size(JoinPath(cache(), f), ec) > 0) {
          temp = f;
        }
      }
      if (temp.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ::kill(child, SIGKILL);
    EXPECT_EQ(testing::WaitExit(child), 128 + SIGKILL);
    return temp;
  }

  ScratchDir remote_, cache_;
  Index index_;
  std::shared_ptr<const ShardTable> table_;  // index_'s, as StreamShards takes it
  uint64_t largest_ = 0;
  StreamOptions stream_;
  std::unique_ptr<StallingFileServer> server_;
};

// A download killed mid-body leaves exactly one temporary (the cache's,
// written in place by the HTTP client), which the next open deletes.
TEST_F(StreamShardsTest, KilledDownloadMultiProcessLeavesOneTemporaryThatTheNextOpenSweeps) {
  const std::string temp = KillMidDownload();
  ASSERT_FALSE(temp.empty()) << "the child never wrote into the cache";
  EXPECT_EQ(temp.rfind("." + Name(0) + ".sluice-tmp.", 0), 0u) << temp;
  EXPECT_EQ(FilesBelow(cache()), std::vector<std::string>{temp});
  auto s = Open(std::nullopt);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(FilesBelow(cache()), std::vector<std::string>{});
  EXPECT_EQ((*s)->cache()->bytes_used(), 0u);
}

// After a killed download, three threads fetch every shard under a limit of
// three shards while a sampler sums every file in the folder, temporaries
// included: it never sees more than the limit.
TEST_F(StreamShardsTest, FolderStaysUnderTheLimitWithTemporariesCountedMultiProcess) {
  ASSERT_FALSE(KillMidDownload().empty());
  server_ = std::make_unique<StallingFileServer>(remote_.path(), "none");
  const uint64_t limit = 3 * largest_;
  auto s = Open(limit);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  std::atomic<bool> done{false};
  std::atomic<uint64_t> max_bytes{0}, samples{0};
  std::thread sampler([&] {
    while (!done.load()) {
      uint64_t total = 0;
      std::error_code ec;
      for (const std::string& f : FilesBelow(cache())) {
        uint64_t n = fs::file_size(JoinPath(cache(), f), ec);
        if (!ec) total += n;
      }
      max_bytes = std::max(max_bytes.load(), total);
      ++samples;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  });
  std::vector<std::thread> readers;
  std::atomic<int> failures{0};
  const size_t n = index_.shards.size();
  for (size_t t = 0; t < 3; ++t) {
    readers.emplace_back([&, t] {
      for (size_t round = 0; round < 2; ++round) {
        for (size_t k = 0; k < n; ++k) {
          Status st = OpenShard(**s, (k * (t + 1) + t + round) % n);
          if (!st.ok()) {
            ++failures;
            ADD_FAILURE() << st.ToString();
          }
        }
      }
    });
  }
  for (std::thread& r : readers) r.join();
  done = true;
  sampler.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(samples.load(), 10u);
  EXPECT_LE(max_bytes.load(), limit);
  EXPECT_LE((*s)->cache()->bytes_used(), limit);
  for (const std::string& f : FilesBelow(cache())) {
    EXPECT_FALSE(ParseTempName(fs::path(f).filename().string()).has_value()) << f;
  }
}

// Downloaded shards are data files: 0666 masked by the umask.
TEST_F(StreamShardsTest, DownloadedShardsAreCreated0666MaskedByTheUmask) {
  auto s = Open(std::nullopt);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const mode_t old = ::umask(022);
  Status first = OpenShard(**s, 1);
  ::umask(027);
  Status second = OpenShard(**s, 2);
  ::umask(old);
  ASSERT_TRUE(first.ok()) << first.ToString();
  ASSERT_TRUE(second.ok()) << second.ToString();
  struct stat st;
  ASSERT_EQ(::stat(JoinPath(cache(), Name(1)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0644u);
  ASSERT_EQ(::stat(JoinPath(cache(), Name(2)).c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

}  // namespace
}  // namespace sluice
