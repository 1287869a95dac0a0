// A Parquet file replaced on its store after the node listed it (issue 35):
// the row group's ranged read asks for the listed version (If-Match) and
// fails at once, with the file, row group, range and both ETags, whatever
// download_retry says. The store is a fake S3 endpoint (FakeHttpServer,
// named as such: s3rver neither answers 412 to If-Match nor can be told to
// ignore it), so each request on the wire is counted.
#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "base/file.h"
#include "engine/dataset/remote_source.h"
#include "engine/dataset/parquet_stream_index.h"
#include "engine/dataset/streaming_dataset.h"
#include "tests/common/scoped_env.h"
#include "tests/engine/dataset/dataset_test_util.h"
#include "tests/stores/common/fake_http_server.h"
#include "tests/stores/common/node_servers.h"

namespace sluice {
namespace {

using testing::FakeRequest;
using testing::FakeResponse;
using testing::ScratchDir;

const std::string kFile =
    std::string(SLUICE_TEST_DATA_DIR) + "/parquet/pa26_types_plain_uncompressed.parquet";

// s3://bkt/t/a.parquet, listed with ETag "v1"; Replace() makes it "v2".
// With `honour_if_match`, a GET whose If-Match is not the current ETag is
// answered 412 as S3 does; without, it is answered with the current
// object and ETag (a server that ignores If-Match).
class FakeS3Object {
 public:
  FakeS3Object(std::string bytes, bool honour_if_match)
      : bytes_(std::move(bytes)), honour_(honour_if_match),
        server_([this](const FakeRequest& r) { return Answer(r); }) {}

  std::string url() const { return server_.url(); }
  void Replace() {
    std::lock_guard<std::mutex> lock(mu_);
    etag_ = "\"v2\"";
  }
  // "<METHOD> <target> [If-Match <etag>] [<range>]" per request, in order.
  std::vector<std::string> Requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return log_;
  }

 private:
  FakeResponse Answer(const FakeRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string line = r.method + " " + r.target;
    if (!r.Header("if-match").empty()) line += " If-Match " + r.Header("if-match");
    if (!r.Header("range").empty()) line += " " + r.Header("range");
    log_.push_back(line);
    const std::string size = std::to_string(bytes_.size());
    if (r.target.rfind("/bkt?", 0) == 0) {
      return {200, {{"Content-Type", "application/xml"}},
              "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ListBucketResult><Name>bkt</Name>"
              "<KeyCount>1</KeyCount><IsTruncated>false</IsTruncated><Contents>"
              "<Key>t/a.parquet</Key><Size>" + size + "</Size><ETag>&quot;v1&quot;</ETag>"
              "</Contents></ListBucketResult>"};
    }
    if (r.target != "/bkt/t/a.parquet") return {404, {}, "<Error><Code>NoSuchKey</Code></Error>"};
    if (r.method == "HEAD") return {200, {{"Content-Length", size}, {"ETag", etag_}}, ""};
    if (honour_ && !r.Header("if-match").empty() && r.Header("if-match") != etag_) {
      return {412, {{"Content-Type", "application/xml"}},
              "<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions "
              "you specified did not hold</Message></Error>"};
    }
    const std::string range = r.Header("range");  // bytes=<first>-<last>
    const uint64_t first = std::stoull(range.substr(6));
    const uint64_t last = std::stoull(range.substr(range.find('-') + 1));
    return {206,
            {{"Content-Range", "bytes " + std::to_string(first) + "-" + std::to_string(last) +
                                   "/" + size},
             {"ETag", etag_}},
            bytes_.substr(first, last - first + 1)};
  }

  const std::string bytes_;
  const bool honour_;
  mutable std::mutex mu_;
  std::string etag_ = "\"v1\"";
  std::vector<std::string> log_;
  testing::FakeHttpServer server_;
};

// The store environment of a stream on `object` (unsigned requests).
auto FakeS3Env(const FakeS3Object& object) {
  auto env = testing::CleanStoreEnv();
  env["S3_ENDPOINT_URL"] = object.url();
  env["S3_UNSIGNED"] = "1";
  env["AWS_REGION"] = "us-east-1";
  return env;
}

// Opens s3://bkt/t over `object`, cached in `cache` (download_retry 2: a retry would show on
// the wire), reads row 0 after the object is replaced, and returns the
// error; *opened and *read: the requests of the open and of the read.
Status ReadAfterReplace(FakeS3Object& object, const ScratchDir& cache,
                        std::vector<std::string>* opened, std::vector<std::string>* read) {
  testing::ScopedEnv scoped(FakeS3Env(object));
  DatasetOptions o;
  StreamOptions s;
  s.local = cache.path();
  s.remote = "s3://bkt/t";
  s.download_retry = 2;
  s.parquet.emplace();  // no index.json request
  o.streams.push_back(s);
  o.prefetch_next_epoch = false;
  o.peek_first_sample = false;
  o.wait_timeout = std::chrono::seconds(20);
  auto ds = StreamingDataset::Open(o);
  EXPECT_TRUE(ds.ok()) << ds.status().message();
  if (!ds.ok()) return ds.status();
  EXPECT_EQ((*ds)->num_samples(), 48u);
  *opened = object.Requests();
  object.Replace();
  SampleFields f;
  Status got = (*ds)->Get(0, &f);
  std::vector<std::string> all = object.Requests();
  read->assign(all.begin() + static_cast<std::ptrdiff_t>(opened->size()), all.end());
  return got;
}

// "bytes=<first>-<last>" of a logged request line: "[first, last + 1)" and
// "first..last + 1".
std::pair<std::string, std::string> RangeTexts(const std::string& line) {
  const std::string range = line.substr(line.rfind("bytes=") + 6);
  const uint64_t first = std::stoull(range);
  const uint64_t end = std::stoull(range.substr(range.find('-') + 1)) + 1;
  return {"[" + std::to_string(first) + ", " + std::to_string(end) + ")",
          std::to_string(first) + ".." + std::to_string(end)};
}

std::string Lines(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// a.parquet of `bytes` served at s3://bkt/t (If-Match honoured), the
// store environment set for it, and a remote source opened on it with no
// download retry; `remote` is null when the open failed (`error` says why).
struct ListedParquetObject {
  explicit ListedParquetObject(const std::string& bytes)
      : object(bytes, /*honour_if_match=*/true), scoped(FakeS3Env(object)) {
    StoreOptions options;
    options.download_retry = 0;
    auto opened = OpenRemoteSource("s3://bkt/t", options);
    if (opened.ok()) {
      remote = std::move(*opened);
    } else {
      error = opened.status();
    }
  }
  FakeS3Object object;
  testing::ScopedEnv scoped;
  std::unique_ptr<RemoteSource> remote;
  Status error = Status::Ok();
};

// The requests of a read of a.parquet's parts [0, 4), [4, 104) and
// [104, size): one ranged GET a part of the listed version "v1", in any
// order (they are sent together).
void ExpectOneIfMatchGetPerPart(const FakeS3Object& object, uint64_t size) {
  std::vector<std::string> lines = object.Requests();
  std::sort(lines.begin(), lines.end());
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "GET /bkt/t/a.parquet If-Match \"v1\" bytes=0-3",
                       "GET /bkt/t/a.parquet If-Match \"v1\" bytes=104-" +
                           std::to_string(size - 1),
                       "GET /bkt/t/a.parquet If-Match \"v1\" bytes=4-103"}))
      << Lines(lines);
}

// Every part of a read of a.parquet's listed version "v1", the object
// replaced by "v2" meanwhile: the error naming both ETags and its range.
template <typename T>
void ExpectEveryPartChangedSinceListed(const std::vector<Result<T>>& got,
                                       const std::vector<DataSpan>& spans) {
  ASSERT_EQ(got.size(), spans.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    ASSERT_FALSE(got[i].ok()) << i;
    EXPECT_EQ(got[i].status().code(), StatusCode::kCorrupt) << i;
    EXPECT_EQ(got[i].status().message(),
              "s3://bkt/t/a.parquet: changed since it was listed (ETag \"v2\", listed \"v1\"); "
              "bytes " + std::to_string(spans[i].offset) + ".." +
                  std::to_string(spans[i].offset + spans[i].length) + " not read")
        << i;
  }
}

// The error of row group 0 (the cache's fetch of its piece, named by the
// listed ETag), the range read as `line` logged it.
std::string Expected(const ScratchDir& cache, const std::string& line) {
  auto [interval, dots] = RangeTexts(line);
  return "shard cache '" + cache.path() + "': fetching shard 0 '" +
         RowGroupPieceName("a.parquet", 0, {}, "\"v1\"") + "': a.parquet: row group 0, bytes " + interval + " of s3://bkt/t/a.parquet: " +
         "s3://bkt/t/a.parquet: changed since it was listed (ETag \"v2\", listed \"v1\"); bytes " + dots + " not read";
}

TEST(ParquetChangedFile, A412ToIfMatchFailsAtOnceNamingBothEtags) {
  auto bytes = ReadFile(kFile);
  ASSERT_TRUE(bytes.ok());
  FakeS3Object object(*bytes, /*honour_if_match=*/true);
  ScratchDir cache;
  std::vector<std::string> opened, read;
  Status got = ReadAfterReplace(object, cache, &opened, &read);
  ASSERT_EQ(opened.size(), 2u);  // the listing, the footer (of the listed version)
  EXPECT_EQ(opened[0].rfind("GET /bkt?", 0), 0u) << opened[0];
  EXPECT_EQ(opened[1].rfind("GET /bkt/t/a.parquet If-Match \"v1\" bytes=", 0), 0u) << opened[1];
  // One ranged GET (412), then the HEAD that tells the new ETag; no retry.
  ASSERT_EQ(read.size(), 2u) << Lines(read);
  EXPECT_EQ(read[0].rfind("GET /bkt/t/a.parquet If-Match \"v1\" bytes=", 0), 0u) << read[0];
  EXPECT_EQ(read[1], "HEAD /bkt/t/a.parquet");
  EXPECT_EQ(got.code(), StatusCode::kCorrupt);
  EXPECT_EQ(got.message(), Expected(cache, read[0]));
}

TEST(ParquetChangedFile, AnotherEtagInTheAnswerFailsAtOnceUnread) {
  auto bytes = ReadFile(kFile);
  ASSERT_TRUE(bytes.ok());
  FakeS3Object object(*bytes, /*honour_if_match=*/false);
  ScratchDir cache;
  std::vector<std::string> opened, read;
  Status got = ReadAfterReplace(object, cache, &opened, &read);
  ASSERT_EQ(opened.size(), 2u);
  ASSERT_EQ(read.size(), 1u) << Lines(read);
  EXPECT_EQ(read[0].rfind("GET /bkt/t/a.parquet If-Match \"v1\" bytes=", 0), 0u) << read[0];
  EXPECT_EQ(got.code(), StatusCode::kCorrupt);
  EXPECT_EQ(got.message(), Expected(cache, read[0]));
}

// A row group's piece is read in parts, all at once (RemoteSource::
// GetRangesOnlyOfVersion, as StreamShards::ReadPiece asks for a piece above
// a part's size): each part its own ranged GET of the listed version
// (If-Match), its bytes exact; once the object is replaced, every part is
// the error naming both ETags and its own range, and nothing is read.
TEST(ParquetChangedFile, PartsOfTheListedVersionAreEachAGetWithIfMatch) {
  auto bytes = ReadFile(kFile);
  ASSERT_TRUE(bytes.ok());
  ASSERT_GT(bytes->size(), 200u);
  ListedParquetObject listed(*bytes);
  ASSERT_TRUE(listed.remote) << listed.error.message();
  FakeS3Object& object = listed.object;
  RemoteSource* remote = listed.remote.get();
  const uint64_t size = bytes->size();
  const std::vector<DataSpan> spans = {{0, 4}, {4, 100}, {104, size - 104}};
  std::vector<Result<std::string>> got =
      remote->GetRangesOnlyOfVersion("a.parquet", spans, "\"v1\"");
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < spans.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status().message();
    EXPECT_EQ(*got[i], bytes->substr(spans[i].offset, spans[i].length)) << i;
  }
  ExpectOneIfMatchGetPerPart(object, size);

  object.Replace();
  got = remote->GetRangesOnlyOfVersion("a.parquet", spans, "\"v1\"");
  ExpectEveryPartChangedSinceListed(got, spans);
}

// The parts received in place (RemoteSource::GetRangesOnlyOfVersionInto,
// as StreamShards::ReadPiece reads a piece): each part its own ranged GET
// of the listed version, all at once, part i's bytes right after part
// i-1's in the one buffer; once the object is replaced, every part is the
// error naming both ETags and its own range.
TEST(ParquetChangedFile, PartsReceivedInPlaceLieEachAfterTheLast) {
  auto bytes = ReadFile(kFile);
  ASSERT_TRUE(bytes.ok());
  ASSERT_GT(bytes->size(), 200u);
  ListedParquetObject listed(*bytes);
  ASSERT_TRUE(listed.remote) << listed.error.message();
  FakeS3Object& object = listed.object;
  RemoteSource* remote = listed.remote.get();
  const uint64_t size = bytes->size();
  // Out of the file's order, so that a part placed at its file offset
  // (or all at the start) shows.
  const std::vector<DataSpan> spans = {{104, size - 104}, {0, 4}, {4, 100}};
  std::string into(size, '\0');
  std::vector<Result<uint64_t>> got =
      remote->GetRangesOnlyOfVersionInto("a.parquet", spans, "\"v1\"", into.data());
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < spans.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << i << ": " << got[i].status().message();
    EXPECT_EQ(*got[i], spans[i].length) << i;
  }
  const std::string expected = bytes->substr(104) + bytes->substr(0, 104);
  // Compared without printing them (binary, kilobytes): where they part.
  const size_t parted = static_cast<size_t>(
      std::mismatch(into.begin(), into.end(), expected.begin()).first - into.begin());
  EXPECT_EQ(parted, size) << "the bytes differ from offset " << parted;
  ExpectOneIfMatchGetPerPart(object, size);

  object.Replace();
  got = remote->GetRangesOnlyOfVersionInto("a.parquet", spans, "\"v1\"", into.data());
  ExpectEveryPartChangedSinceListed(got, spans);
}

// A plain path's parts (RemoteSource's own GetRangesOnlyOfVersionInto):
// the same places, a part past the file's end short by what is not there,
// and a missing file every part's kNotFound.
TEST(ParquetChangedFile, PlainPathPartsLieEachAfterTheLast) {
  ScratchDir dir;
  const std::string bytes = "0123456789abcdefghij";
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "a.parquet"), bytes).ok());
  auto remote = OpenRemoteSource(dir.path(), StoreOptions{});
  ASSERT_TRUE(remote.ok()) << remote.status().message();
  const std::vector<DataSpan> spans = {{10, 4}, {0, 3}, {16, 8}};
  std::string into(15, '.');
  std::vector<Result<uint64_t>> got =
      (*remote)->GetRangesOnlyOfVersionInto("a.parquet", spans, "", into.data());
  ASSERT_EQ(got.size(), 3u);
  for (const auto& g : got) ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(*got[0], 4u);
  EXPECT_EQ(*got[1], 3u);
  EXPECT_EQ(*got[2], 4u);
  EXPECT_EQ(into, "abcd012ghij....");
  got = (*remote)->GetRangesOnlyOfVersionInto("b.parquet", spans, "", into.data());
  ASSERT_EQ(got.size(), 3u);
  for (const auto& g : got) EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace sluice
