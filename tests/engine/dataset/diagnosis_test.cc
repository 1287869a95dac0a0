// The diagnosis sentence for constructed counters: each cause, exactly.
#include "engine/dataset/diagnosis.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

// 10 s in which the consumer waited 3.1 s, mostly on downloads.
DatasetMetrics DownloadBound() {
  DatasetMetrics w;
  w.seconds = 10;
  w.samples = 1000;
  w.bytes = 1'000'000;
  w.waits.total_ns = 3'100'000'000;
  w.waits.download_ns = 2'900'000'000;
  w.waits.decode_ns = 200'000'000;
  w.bytes_downloaded = 950'000'000;
  w.remote = "s3://bucket/ds";
  HostStatsSnapshot h;
  h.host = "https://bucket.s3.amazonaws.com:443";
  h.requests = 100;
  h.busy_us = 80'000'000;  // 8 requests in flight on average over 10 s
  // 100 first bytes: 90 near 23 ms, 10 in [2^19, 2^19.5) us, whose middle
  // 2^19.25 us (623 ms) is the p95.
  h.first_byte.buckets[LogHistogram::BucketOf(23'000)] = 90;
  h.first_byte.buckets[LogHistogram::BucketOf(600'000)] = 10;
  w.hosts.push_back(h);
  return w;
}

TEST(Diagnosis, DownloadsNameTheRemoteAndTheStoreSide) {
  EXPECT_EQ(Diagnose(DownloadBound()),
            "waited 31% of the time on downloads from s3://bucket/ds: 8.0 requests in flight, "
            "95 MB/s, time to first byte p95 623 ms; raise fetch_concurrency or predownload");
}

// A job's window: two workers waited 3.1 s each in the same 10 s, 31% of
// the time each (not 62%).
TEST(Diagnosis, TheShareWaitedIsPerReader) {
  DatasetMetrics w = DownloadBound();
  w.readers = 2;
  w.waits.total_ns *= 2;
  w.waits.download_ns *= 2;
  w.waits.decode_ns *= 2;
  EXPECT_EQ(Diagnose(w),
            "waited 31% of the time on downloads from s3://bucket/ds: 8.0 requests in flight, "
            "95 MB/s, time to first byte p95 623 ms; raise fetch_concurrency or predownload");
  w.readers = 1;
  EXPECT_EQ(Diagnose(w).substr(0, 11), "waited 62% ");
}

TEST(Diagnosis, ThrottlingSaysToAskLess) {
  DatasetMetrics w = DownloadBound();
  w.hosts[0].throttles_503 = 7;
  w.hosts[0].throttles_429 = 2;
  w.hosts[0].retries = 9;
  EXPECT_EQ(Diagnose(w),
            "waited 31% of the time on downloads from s3://bucket/ds: 8.0 requests in flight, "
            "95 MB/s, time to first byte p95 623 ms; the store throttled 9 requests (429/503) and "
            "9 were retried: lower fetch_concurrency or spread the data over more prefixes");
}

TEST(Diagnosis, AFolderRemoteHasNoStoreSide) {
  DatasetMetrics w = DownloadBound();
  w.hosts.clear();
  w.remote = "/data/ds";
  EXPECT_EQ(Diagnose(w), "waited 31% of the time on downloads from /data/ds: 95 MB/s; raise "
                         "fetch_concurrency or predownload");
}

TEST(Diagnosis, EachOtherCause) {
  DatasetMetrics w = DownloadBound();
  w.waits.download_ns = 0;
  w.waits.cache_room_ns = 2'900'000'000;
  w.cache_limit = 2'000'000'000;
  w.cache_bytes_on_disk = 1'990'000'000;
  EXPECT_EQ(Diagnose(w), "waited 31% of the time for room in the cache (cache_limit 2000 MB, "
                         "1990 MB on disk); raise cache_limit");
  w.waits.cache_room_ns = 0;
  w.waits.peer_download_ns = 2'900'000'000;
  EXPECT_EQ(Diagnose(w), "waited 31% of the time for shards other processes of this node were "
                         "downloading (95 MB/s downloaded here); raise predownload so that they "
                         "start sooner, or fetch_concurrency");
  w.waits.peer_download_ns = 0;
  w.waits.decode_ns = 3'100'000'000;
  EXPECT_EQ(Diagnose(w), "waited 31% of the time opening shards (decompression, hash checks, "
                         "mapping); raise predownload so that they open ahead, or drop "
                         "validate_hash");
  w.waits.decode_ns = 0;
  w.waits.other_ns = 3'100'000'000;
  EXPECT_EQ(Diagnose(w), "waited 31% of the time for the prefetcher to reach the next shard; "
                         "raise predownload or fetch_concurrency");
}

TEST(Diagnosis, BelowFivePercentIsNotDataBound) {
  DatasetMetrics w = DownloadBound();
  w.waits.total_ns = 490'000'000;
  EXPECT_EQ(Diagnose(w),
            "not data-bound: waited 5% of the time for data (100 samples/s, 0.1 MB/s delivered)");
  EXPECT_EQ(Diagnose(DatasetMetrics()), "no samples read yet");
}

}  // namespace
}  // namespace sluice
