// The footer store maker's consumer (parquet_footer_store.h's
// ParquetTailConsumer): given every tail it read, as stored, and taking the
// answers in file order, only when this process read every tail of a
// listing in path order; and the stream's table made that way is the one
// read back from the store, bytes and first error alike.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "base/file.h"
#include "engine/dataset/parquet_footer_store.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/remote_source.h"
#include "tests/common/temp_dir.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice {
namespace {

using testing::ScratchDir;
using testing::TagOf;

// Records what the maker hands it: each Read's tail by file (and answers
// file i with "answer i", or an error for `failing`), each Take in turn.
class RecordingTailConsumer final : public ParquetTailConsumer {
 public:
  explicit RecordingTailConsumer(size_t failing = SIZE_MAX) : failing_(failing) {}
  struct Text final : Answer {
    std::string text;
  };
  class Recorder final : public Reader {
   public:
    explicit Recorder(RecordingTailConsumer& owner) : owner_(owner) {}
    Result<std::unique_ptr<Answer>> Read(size_t file, std::string_view tail) override {
      {
        std::lock_guard lock(owner_.mu_);
        owner_.read[file] += std::string(tail);
      }
      if (file == owner_.failing_) return CorruptError("file " + std::to_string(file) + " failed");
      auto answer = std::make_unique<Text>();
      answer->text = "answer " + std::to_string(file);
      return std::unique_ptr<Answer>(std::move(answer));
    }

   private:
    RecordingTailConsumer& owner_;
  };
  std::unique_ptr<Reader> NewReader() override {
    std::lock_guard lock(mu_);
    ++readers;
    return std::make_unique<Recorder>(*this);
  }
  void Take(size_t file, Result<std::unique_ptr<Answer>> answer) override {
    taken.push_back(std::to_string(file) + ": " +
                    (answer.ok() ? static_cast<const Text&>(**answer).text
                                 : answer.status().ToString()));
  }

  std::map<size_t, std::string> read;
  std::vector<std::string> taken;
  size_t readers = 0;

 private:
  std::mutex mu_;
  const size_t failing_;
};

struct ConsumerFolder {
  explicit ConsumerFolder(size_t count) {
    auto a = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_codec_none.parquet");
    auto b = ReadFile(std::string(SLUICE_TEST_DATA_DIR) + "/parquet/hf_text.parquet");
    EXPECT_TRUE(a.ok() && b.ok());
    for (size_t i = 0; i < count; ++i) {
      const std::string name = "f" + std::to_string(10000 + i) + ".parquet";
      const std::string& bytes = i % 3 == 1 ? *b : *a;
      EXPECT_TRUE(WriteFileAtomic(JoinPath(remote.path(), name), bytes).ok());
      files.push_back({name, bytes.size(), TagOf(remote.path(), name)});
    }
    auto opened = OpenRemoteSource(remote.path(), StoreOptions{});
    EXPECT_TRUE(opened.ok()) << opened.status().message();
    source = std::move(*opened);
  }
  Result<ParquetFooterStore> Load(const std::vector<ListedFile>& listed,
                                  ParquetTailConsumer* consumer, bool* consumed) {
    return LoadOrMakeParquetFooterStore(ParquetFooterStorePath(state.path()), state.path(), "src",
                                        listed, "", *source, std::chrono::seconds(5),
                                        Env::Default(), consumer, consumed);
  }
  ScratchDir remote, state;
  std::unique_ptr<RemoteSource> source;
  std::vector<ListedFile> files;
};

std::vector<std::string> AnswersInFileOrder(size_t count, size_t failing = SIZE_MAX) {
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    out.push_back(std::to_string(i) + ": " +
                  (i == failing ? "corrupt: file " + std::to_string(i) + " failed"
                                : "answer " + std::to_string(i)));
  }
  return out;
}

// The maker that reads every tail (3,000 files: more than its window of
// reads ahead) gives each to a reader once, the very bytes it stores, and
// hands every answer to Take in file order; an answer's error is the
// consumer's, and the store is still made.
TEST(ParquetTailConsumer, EveryTailReadIsReadOnceAsStoredAndTakenInFileOrder) {
  ConsumerFolder folder(3000);
  RecordingTailConsumer consumer(/*failing=*/1234);
  bool consumed = false;
  auto store = folder.Load(folder.files, &consumer, &consumed);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(consumed);
  EXPECT_GE(consumer.readers, 1u);
  EXPECT_LE(consumer.readers, size_t{kConcurrentFooterReads});
  ASSERT_EQ(consumer.read.size(), folder.files.size());
  for (size_t i = 0; i < folder.files.size(); ++i) {
    auto held = store->Find(folder.files[i].path);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    ASSERT_EQ(consumer.read[i], held->tail) << i;
  }
  EXPECT_EQ(consumer.taken, AnswersInFileOrder(folder.files.size(), 1234));
}

// A tail that cannot be read (its file removed since the listing) ends the
// make with that file's error, the readers' other claimed reads not made
// (a reader claims several files at once: those it does not read are
// handed to the writer as that error, not left for it to wait on), and no
// store is left.
TEST(ParquetTailConsumer, AnUnreadableTailEndsTheMakeWithItsFilesError) {
  ConsumerFolder folder(3000);
  const ListedFile& gone = folder.files[1501];
  ASSERT_TRUE(Env::Default()->Remove(JoinPath(folder.remote.path(), gone.path)).ok());
  RecordingTailConsumer consumer;
  bool consumed = true;
  auto store = folder.Load(folder.files, &consumer, &consumed);
  ASSERT_FALSE(store.ok());
  EXPECT_FALSE(consumed);
  const std::string expected = gone.path + ": footer: reading bytes [0, " +
                               std::to_string(*gone.size) + ") of " +
                               folder.source->Describe() + "/" + gone.path + ": ";
  EXPECT_EQ(store.status().message().substr(0, expected.size()), expected)
      << store.status().message();
  EXPECT_FALSE(Env::Default()->Stat(ParquetFooterStorePath(folder.state.path())).ok());
  // No tail past the unreadable one is taken (the writer takes in file
  // order; how many before it depends on the threads' timing).
  EXPECT_LE(consumer.taken.size(), size_t{1501});
}

// Its readers' Reads each wait until `count` are under way at once, or
// until one has waited kGatherGuard (then none waits): the most seen at once.
class GatheringTailConsumer final : public ParquetTailConsumer {
 public:
  static constexpr std::chrono::seconds kGatherGuard{30};
  explicit GatheringTailConsumer(size_t count) : count_(count) {}
  class Gatherer final : public Reader {
   public:
    explicit Gatherer(GatheringTailConsumer& owner) : owner_(owner) {}
    Result<std::unique_ptr<Answer>> Read(size_t, std::string_view) override {
      std::unique_lock lock(owner_.mu_);
      owner_.most_at_once = std::max(owner_.most_at_once, ++owner_.under_way_);
      owner_.cv_.notify_all();
      if (!owner_.cv_.wait_for(lock, kGatherGuard, [&] {
            return owner_.gave_up_ || owner_.most_at_once == owner_.count_;
          })) {
        owner_.gave_up_ = true;
        owner_.cv_.notify_all();
      }
      --owner_.under_way_;
      return std::unique_ptr<Answer>(std::make_unique<Answer>());
    }

   private:
    GatheringTailConsumer& owner_;
  };
  std::unique_ptr<Reader> NewReader() override { return std::make_unique<Gatherer>(*this); }
  void Take(size_t, Result<std::unique_ptr<Answer>>) override {}

  size_t most_at_once = 0;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const size_t count_;
  size_t under_way_ = 0;
  bool gave_up_ = false;
};

// A folder of fewer files than readers (8, as parquet_stream_bench.py's
// tables) has all its tails read at once, one a reader: a reader that
// claimed all 8 read them in series, 8 round trips before a shuffled first
// row (0.12 s of the 0.27 s through a 15 ms link; issue 35).
TEST(ParquetTailConsumer, EightTailsAreReadAtOnceOneAReader) {
  ConsumerFolder folder(8);
  GatheringTailConsumer consumer(8);
  bool consumed = false;
  auto store = folder.Load(folder.files, &consumer, &consumed);
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  EXPECT_TRUE(consumed);
  EXPECT_EQ(consumer.most_at_once, 8u);
}

// No answer where this process did not read every tail of a listing in
// path order: the store already made (mapped), made anew from an older
// one (its kept tails are not read), or a listing out of path order. The
// caller reads the store then.
TEST(ParquetTailConsumer, NoAnswerUnlessEveryTailIsReadHereInPathOrder) {
  ConsumerFolder folder(40);
  {
    RecordingTailConsumer first;
    bool consumed = false;
    ASSERT_TRUE(folder.Load(folder.files, &first, &consumed).ok());
    ASSERT_TRUE(consumed);
  }
  RecordingTailConsumer mapped;
  bool consumed = true;
  ASSERT_TRUE(folder.Load(folder.files, &mapped, &consumed).ok());
  EXPECT_FALSE(consumed);
  EXPECT_TRUE(mapped.read.empty() && mapped.taken.empty());
  // A listing of one file fewer: the others' tails kept from the old store.
  std::vector<ListedFile> fewer = folder.files;
  fewer.erase(fewer.begin() + 7);
  RecordingTailConsumer kept;
  consumed = true;
  auto remade = folder.Load(fewer, &kept, &consumed);
  ASSERT_TRUE(remade.ok()) << remade.status().ToString();
  EXPECT_EQ(remade->size(), 39u);
  EXPECT_FALSE(consumed);
  EXPECT_TRUE(kept.taken.empty());
  // Out of path order, in a fresh state folder: every tail read, none answered.
  ConsumerFolder other(40);
  std::vector<ListedFile> reversed(other.files.rbegin(), other.files.rend());
  RecordingTailConsumer unordered;
  consumed = true;
  auto made = other.Load(reversed, &unordered, &consumed);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->size(), 40u);
  EXPECT_FALSE(consumed);
  EXPECT_TRUE(unordered.taken.empty());
}

// The stream's table made as its footer store is written (the node's first
// process) is byte for byte the table read back from that store (any later
// process); with two footers that do not decode, both name the first in
// file order, in the same words.
TEST(ParquetTailConsumer, TheTableMadeFromTheTailsReadIsTheTableReadBackFromTheStore) {
  ConsumerFolder folder(1500);
  StreamOptions stream;
  ScratchDir cache, cache2;
  stream.local = cache.path();
  stream.remote = folder.remote.path();
  auto first = LoadParquetStreamTable(stream, FileDatasetOptions{}, folder.source.get(),
                                      std::chrono::seconds(20));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto again = LoadParquetStreamTable(stream, FileDatasetOptions{}, folder.source.get(),
                                      std::chrono::seconds(20));
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_GE(first->size(), folder.files.size());
  EXPECT_TRUE(first->Serialize(7) == again->Serialize(7)) << "the tables' bytes differ";
  const std::string bad = "PAR1" + std::string(200, '\xff') + std::string("\xc8\0\0\0", 4) + "PAR1";
  for (size_t i : {1222, 555}) {
    ASSERT_TRUE(WriteFileAtomic(JoinPath(folder.remote.path(), folder.files[i].path), bad).ok());
  }
  stream.local = cache2.path();
  auto bad_first = LoadParquetStreamTable(stream, FileDatasetOptions{}, folder.source.get(),
                                          std::chrono::seconds(20));
  auto bad_again = LoadParquetStreamTable(stream, FileDatasetOptions{}, folder.source.get(),
                                          std::chrono::seconds(20));
  ASSERT_FALSE(bad_first.ok());
  ASSERT_FALSE(bad_again.ok());
  EXPECT_EQ(bad_first.status().ToString(), bad_again.status().ToString());
  EXPECT_NE(bad_first.status().message().find(folder.files[555].path + ": "), std::string::npos)
      << bad_first.status().ToString();
  EXPECT_EQ(bad_first.status().message().find(folder.files[1222].path), std::string::npos)
      << bad_first.status().ToString();
}

}  // namespace
}  // namespace sluice
