// ArrivedBytes: the ranges of a buffer received in parts in any order, what
// a reader gets of a range before, as and after it arrives, and what it
// gets once the receive fails (the error, with the source and the range)
// or gives the buffer up.
#include "base/arrived_bytes.h"

#include <memory>
#include <string>
#include <thread>

#include <gtest/gtest.h>

namespace sluice {
namespace {

constexpr char kUrl[] = "http://127.0.0.1/shard.00000.mds";

// A buffer of `total` bytes holding 'a', 'b', ... at their offsets (as
// received), attached to a fresh record.
struct Received {
  explicit Received(uint64_t total) : arrived(total, kUrl) {
    std::shared_ptr<char> buffer(new char[total], std::default_delete<char[]>());
    for (uint64_t i = 0; i < total; ++i) buffer.get()[i] = static_cast<char>('a' + i % 26);
    arrived.Attach(buffer);
  }
  ArrivedBytes arrived;
};

// The range now, without waiting: its bytes, "" when not there.
std::string Now(ArrivedBytes& a, uint64_t offset, uint64_t length) {
  auto got = a.Await(offset, length, /*wait=*/false);
  EXPECT_TRUE(got.ok()) << got.status().ToString();
  return got.ok() && *got ? std::string(**got) : std::string("<none>");
}

TEST(ArrivedBytesTest, ARangeIsThereOnceEveryPartOfItArrivedInAnyOrder) {
  Received r(30);
  ArrivedBytes& a = r.arrived;
  EXPECT_EQ(Now(a, 0, 4), "<none>");
  a.Arrived(20, 10);  // the last part first
  EXPECT_EQ(Now(a, 22, 3), "wxy");
  EXPECT_EQ(Now(a, 18, 4), "<none>");  // straddles a gap
  a.Arrived(0, 10);
  EXPECT_EQ(Now(a, 0, 4), "abcd");
  EXPECT_EQ(Now(a, 5, 10), "<none>");
  EXPECT_EQ(a.arrived(), 20u);
  a.Arrived(10, 10);  // joins both
  EXPECT_EQ(Now(a, 5, 20), "fghijklmnopqrstuvwxy");
  EXPECT_EQ(a.arrived(), 30u);
  a.Arrived(5, 10);  // again: counted once
  EXPECT_EQ(a.arrived(), 30u);
  EXPECT_EQ(Now(a, 0, 30).size(), 30u);
  EXPECT_EQ(Now(a, 30, 0), "");
  auto past = a.Await(25, 6, false);
  ASSERT_FALSE(past.ok());
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
}

TEST(ArrivedBytesTest, AWaitingReaderGetsItsRangeOnceItsLastPartArrives) {
  Received r(16);
  ArrivedBytes& a = r.arrived;
  a.Arrived(0, 4);
  bool blocked = false;
  std::string got;
  std::thread reader([&] {
    auto v = a.Await(2, 8, /*wait=*/true, {}, &blocked);
    got = v.ok() && *v ? std::string(**v) : v.status().ToString();
  });
  // Each part's arrival wakes the reader; only the last gives it the range.
  a.Arrived(8, 8);
  a.Arrived(4, 4);
  reader.join();
  EXPECT_EQ(got, "cdefghij");
  a.Finish(Status::Ok());
  EXPECT_EQ(Now(a, 0, 16), "abcdefghijklmnop");
}

TEST(ArrivedBytesTest, AFailedReceiveGivesWaitersItsErrorWithTheSourceAndRange) {
  Received r(16);
  ArrivedBytes& a = r.arrived;
  a.Arrived(0, 8);
  std::string waited;
  std::thread reader([&] {
    auto v = a.Await(6, 4, /*wait=*/true);
    waited = v.ok() ? "no error" : v.status().ToString();
  });
  a.Finish(IoError("part 2 of 2, bytes 8..16: connection reset"));
  reader.join();
  const std::string expected = std::string(kUrl) +
                               ": bytes 6..10 did not arrive: part 2 of 2, bytes 8..16: "
                               "connection reset";
  EXPECT_NE(waited.find(expected), std::string::npos) << waited;
  // What arrived before the failure is still there; later arrivals are not.
  EXPECT_EQ(Now(a, 0, 8), "abcdefgh");
  a.Arrived(8, 8);
  auto late = a.Await(8, 1, false);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.status().code(), StatusCode::kIoError);
  a.Finish(Status::Ok());  // only the first Finish counts
  EXPECT_FALSE(a.Await(8, 1, false).ok());
}

TEST(ArrivedBytesTest, AnAbandonedBufferGivesNothingMoreAndAStopEndsAWait) {
  Received r(8);
  ArrivedBytes& a = r.arrived;
  a.Arrived(0, 4);
  std::stop_source stop;
  bool stopped = false;
  std::thread reader([&] {
    auto v = a.Await(4, 4, /*wait=*/true, stop.get_token());
    stopped = v.ok() && !*v;
  });
  stop.request_stop();
  reader.join();
  EXPECT_TRUE(stopped);
  std::optional<std::string> abandoned;
  std::thread waiter([&] {
    auto v = a.Await(4, 4, /*wait=*/true);
    abandoned = v.ok() && !*v ? "nullopt" : "other";
  });
  a.Abandon();
  waiter.join();
  EXPECT_EQ(abandoned, "nullopt");
  EXPECT_EQ(Now(a, 0, 4), "<none>");  // nothing from an abandoned buffer
}

TEST(ArrivedBytesTest, AReceiveThatEndedOkWithoutTheRangeIsAnInternalError) {
  Received r(8);
  r.arrived.Arrived(0, 4);
  r.arrived.Finish(Status::Ok());
  auto v = r.arrived.Await(2, 4, true);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
  EXPECT_NE(v.status().message().find("bytes 2..6 did not arrive"), std::string::npos);
}

}  // namespace
}  // namespace sluice
