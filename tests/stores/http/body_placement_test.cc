// Where a response's body sits in the wanted span, and what happens when a
// server states a size other than the one the caller knows.
#include "stores/http/body_placement.h"

#include <gtest/gtest.h>

#include "engine/runtime/event_loop.h"
#include "stores/http/http_client.h"
#include "tests/stores/common/fake_http_server.h"

namespace sluice {
namespace {

using http_detail::BodyPlacement;
using http_detail::PlaceBody;
using http_detail::ResponseHead;
using http_detail::Transfer;
using testing::FakeHttpServer;
using testing::FakeRequest;
using testing::FakeResponse;

Transfer GetOf(std::optional<ByteRange> range, std::optional<uint64_t> expected = std::nullopt) {
  Transfer t;
  t.url = *ParseUrl("http://h/shard.mds");
  t.request.range = range;
  t.request.expected_object_size = expected;
  return t;
}

ResponseHead Partial(std::string_view content_range, uint64_t length) {
  ResponseHead h;
  h.status = 206;
  h.status_line = "HTTP 206 Partial Content";
  h.content_range = content_range;
  h.content_length = length;
  return h;
}

TEST(BodyPlacementTest, APartialAnswerIsPlacedAtItsRange) {
  Transfer t = GetOf(ByteRange::FromTo(100, 199));
  Result<BodyPlacement> p = PlaceBody(t, Partial("bytes 100-199/1000", 100));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->skip, 0u);
  EXPECT_EQ(p->limit, 100u);
  EXPECT_FALSE(p->strict_limit);
  EXPECT_EQ(t.response.object_size, 1000u);
  EXPECT_EQ(t.abs_first, 100u);
  EXPECT_EQ(t.abs_last, 199u);
}

// Found by http_response_fuzz: a 200 stating 9966217342048039368 bytes.
TEST(BodyPlacementTest, ASizeBeyondAnyStoresObjectIsRefused) {
  Transfer t = GetOf(std::nullopt);
  ResponseHead h;
  h.status_line = "HTTP 200 OK";
  h.content_length = 9966217342048039368u;
  Result<BodyPlacement> p = PlaceBody(t, h);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kCorrupt);
  EXPECT_NE(p.status().message().find(
                "HTTP 200 OK states 9966217342048039368 bytes, beyond any object a store holds"),
            std::string::npos)
      << p.status().ToString();
  Transfer r = GetOf(ByteRange::FromTo(0, 9));
  EXPECT_EQ(PlaceBody(r, Partial("bytes 0-9/281474976710656", 10)).status().code(),
            StatusCode::kCorrupt);
  h.content_length = http_detail::kMaxStatedObjectBytes - 1;
  EXPECT_TRUE(PlaceBody(t, h).ok());
}

TEST(BodyPlacementTest, AServerIgnoringTheRangeIsSkippedToIt) {
  Transfer t = GetOf(ByteRange::FromTo(100, 199));
  ResponseHead h;
  h.content_length = 1000;
  Result<BodyPlacement> p = PlaceBody(t, h);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->skip, 100u);
  EXPECT_EQ(p->limit, 100u);
}

// GetToFile's part 0: a 200 is the whole object, kept from the range's first
// byte to the end, not cut to the range.
TEST(BodyPlacementTest, AServerIgnoringTheRangeGivesAllToTheEndWhenAsked) {
  Transfer t = GetOf(ByteRange::FromTo(0, 99));
  t.request.if_range_ignored = HttpRequest::IgnoredRange::kToEnd;
  ResponseHead h;
  h.content_length = 1000;
  Result<BodyPlacement> p = PlaceBody(t, h);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->skip, 0u);
  EXPECT_EQ(p->limit, 1000u);
  EXPECT_EQ(t.abs_last, 999u);
  // A 206 is placed at its range as ever.
  Transfer r = GetOf(ByteRange::FromTo(0, 99));
  r.request.if_range_ignored = HttpRequest::IgnoredRange::kToEnd;
  p = PlaceBody(r, Partial("bytes 0-99/1000", 100));
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->limit, 100u);
}

TEST(BodyPlacementTest, AStatedTotalOtherThanTheExpectedSizeIsTheRemoteChanging) {
  Transfer t = GetOf(ByteRange::FromTo(0, 8u << 20), 2'000'000);
  Result<BodyPlacement> p = PlaceBody(t, Partial("bytes 0-8388608/536870912", 8388609));
  EXPECT_EQ(p.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(p.status().message(),
            "GET http://h/shard.mds: the object is 536870912 bytes, index.json says "
            "2000000 (the remote changed since it was indexed?)");

  Transfer whole = GetOf(std::nullopt, 2'000'000);
  ResponseHead h;
  h.content_length = 3'000'000;
  EXPECT_EQ(PlaceBody(whole, h).status().message(),
            "GET http://h/shard.mds: the object is 3000000 bytes, index.json says "
            "2000000 (the remote changed since it was indexed?)");
}

TEST(BodyPlacementTest, ARangePastTheExpectedSizeFailsEvenWithoutATotal) {
  Transfer t = GetOf(ByteRange::FromTo(0, 99), 50);
  Result<BodyPlacement> p = PlaceBody(t, Partial("bytes 0-99/*", 100));
  EXPECT_EQ(p.status().message(),
            "GET http://h/shard.mds: the object is 100 bytes, index.json says 50 (the remote "
            "changed since it was indexed?)");
}

TEST(BodyPlacementTest, ABodyOfUnknownLengthIsBoundedByTheExpectedSize) {
  Transfer t = GetOf(std::nullopt, 1234);
  ResponseHead chunked;  // 200, no Content-Length
  Result<BodyPlacement> p = PlaceBody(t, chunked);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->limit, 1234u);
  EXPECT_TRUE(p->strict_limit);
}

// Found by tests/fuzz/http_response_fuzz: a 2xx other than 200/206 (a
// proxy's 203, say) states no object size, so its Content-Length went
// unchecked and bounded the body: 5 bytes were delivered for an object the
// index says is empty, 512 MiB for a 2 MB shard.
TEST(BodyPlacementTest, AnyOther2xxIsBoundedByTheExpectedSizeToo) {
  for (std::optional<ByteRange> range :
       {std::optional<ByteRange>(), std::optional<ByteRange>(ByteRange::Suffix(4294967295u)),
        std::optional<ByteRange>(ByteRange::From(0))}) {
    Transfer t = GetOf(range, /*expected=*/0);
    ResponseHead h;
    h.status = 240;
    h.status_line = "HTTP 240 O";
    h.content_length = 5;
    Result<BodyPlacement> p = PlaceBody(t, h);
    if (!p.ok()) continue;  // refusing it outright is fine too
    EXPECT_EQ(p->skip, 0u);
    EXPECT_EQ(p->limit, 0u);
    EXPECT_TRUE(p->strict_limit);
  }
  Transfer t = GetOf(ByteRange::From(0), /*expected=*/2000000);
  ResponseHead h;
  h.status = 203;
  h.status_line = "HTTP 203 Non-Authoritative Information";
  h.content_length = uint64_t{512} << 20;
  Result<BodyPlacement> p = PlaceBody(t, h);
  if (p.ok()) {
    EXPECT_EQ(p->limit, 2000000u);
    EXPECT_TRUE(p->strict_limit);
  }
}

TEST(BodyPlacementTest, AResumedDownloadOfAChangedObjectFails) {
  Transfer t = GetOf(std::nullopt);
  t.delivered = 10;
  t.abs_first = 0;
  t.etag = "\"v1\"";
  ResponseHead h;
  h.content_length = 1000;
  h.sent_if_range = true;
  EXPECT_EQ(PlaceBody(t, h).status().message(),
            "GET http://h/shard.mds: the object changed during the download (ETag \"v1\" no "
            "longer matches; the server sent it whole)");
}

// Against a server: a chunked body that goes on past the expected size is
// cut off with an error, not delivered.
TEST(BodyPlacementTest, AClientStopsAtTheFirstBytePastTheExpectedSize) {
  FakeHttpServer server([](const FakeRequest&) {
    return FakeResponse{200, {{"Transfer-Encoding", "chunked"}},
                        "400\r\n" + std::string(1024, 'x') + "\r\n0\r\n\r\n"};
  });
  EventLoop loop;
  auto client = HttpClient::Create(loop.executor());
  ASSERT_TRUE(client.ok());
  HttpRequest req;
  req.url = server.url() + "/shard.mds";
  req.expected_object_size = 1000;
  uint64_t sunk = 0;
  Result<HttpResponse> r = loop.Run((*client)->Send(
      req, [&](std::string_view chunk) -> boost::asio::awaitable<Status> {
        sunk += chunk.size();
        co_return Status::Ok();
      }));
  EXPECT_EQ(r.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(r.status().message(),
            "GET " + server.url() + "/shard.mds: the body goes on past the expected object size "
            "of 1000 bytes (the remote changed since it was indexed?)");
  EXPECT_EQ(sunk, 0u);
  loop.Shutdown();
}

}  // namespace
}  // namespace sluice
