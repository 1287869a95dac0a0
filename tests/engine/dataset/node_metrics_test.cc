// The node's records as files: hosts merged by name with exact counts and
// histogram buckets, percentiles of a known merged histogram, the bound on
// hosts and host names, records of another version or cut short passed
// over, the prefetch lead's sum and min, a window's least leads, and the
// deletion of ended processes' records past the retention.
#include "engine/dataset/node_metrics.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>

#include <gtest/gtest.h>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "tests/common/scoped_env.h"
#include "tests/common/temp_dir.h"

namespace sluice {
namespace {

using testing::TempDir;

HostStatsSnapshot HostWith(const std::string& name, uint64_t requests) {
  HostStatsSnapshot h;
  h.host = name;
  h.requests = requests;
  h.attempts = requests;
  return h;
}

std::map<std::string, HostStatsSnapshot> ByName(const DatasetMetrics& m) {
  std::map<std::string, HostStatsSnapshot> out;
  for (const HostStatsSnapshot& h : m.hosts) out[h.host] = h;
  return out;
}

// The record of `dataset` written by this process, renamed as if an ended
// process had written it (this pid with another start: a reused pid).
std::string WriteEndedRecord(const std::string& dir, uint64_t dataset, const DatasetMetrics& m) {
  EXPECT_TRUE(WriteNodeRecord(dir, dataset, m).ok());
  const TempOwner me = ThisProcessTempOwner();
  char name[80];
  std::snprintf(name, sizeof name, "%u.%llu.%016llx.rec", me.pid,
                static_cast<unsigned long long>(me.start + 1),
                static_cast<unsigned long long>(dataset));
  const std::string path = JoinPath(dir, name);
  EXPECT_EQ(::rename(JoinPath(dir, NodeRecordName(dataset)).c_str(), path.c_str()), 0);
  return path;
}

void SetAgeSeconds(const std::string& path, int64_t age) {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  t.tv_sec -= age;
  const timespec times[2] = {t, t};
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

// Two processes' records of one host and one of another: counts, error
// kinds and histogram buckets add up by host; the merged histogram's
// percentiles are its buckets' middles.
TEST(NodeMetrics, HostsMergeByNameWithExactCountsBucketsAndPercentiles) {
  TempDir dir;
  testing::ScopedEnv retention("SLUICE_METRICS_RETENTION_S", std::nullopt);
  const int fast = LogHistogram::BucketOf(1000);     // [2^9.5, 2^10) us
  const int mid = LogHistogram::BucketOf(10000);     // [2^13, 2^13.5) us
  const int slow = LogHistogram::BucketOf(1000000);  // [2^19.5, 2^20) us
  ASSERT_EQ(fast, 20);
  ASSERT_EQ(mid, 27);
  ASSERT_EQ(slow, 40);
  DatasetMetrics a;
  HostStatsSnapshot a1 = HostWith("http://127.0.0.1:81", 90);
  a1.retries = 3;
  a1.throttles_429 = 2;
  a1.errors[static_cast<int>(HttpErrorKind::kThrottled)] = 2;
  a1.errors[static_cast<int>(HttpErrorKind::kTimeout)] = 1;
  a1.bytes = 9000;
  a1.busy_us = 500;
  a1.in_flight = 4;
  a1.first_byte.buckets[fast] = 90;
  a1.transfer.buckets[mid] = 90;
  a.hosts = {a1};
  DatasetMetrics b;
  HostStatsSnapshot b1 = HostWith("http://127.0.0.1:81", 10);
  b1.failed = 1;
  b1.throttles_503 = 5;
  b1.errors[static_cast<int>(HttpErrorKind::kTimeout)] = 4;
  b1.bytes = 1000;
  b1.first_byte.buckets[mid] = 8;
  b1.first_byte.buckets[slow] = 2;
  b1.transfer.buckets[slow] = 10;
  b.hosts = {b1, HostWith("http://127.0.0.1:82", 7)};
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 1, a).ok());
  WriteEndedRecord(dir.path(), 2, b);  // another process's
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 2u);
  ASSERT_EQ(sum->hosts.size(), 2u);
  auto hosts = ByName(*sum);
  const HostStatsSnapshot& h = hosts.at("http://127.0.0.1:81");
  EXPECT_EQ(h.requests, 100u);
  EXPECT_EQ(h.attempts, 100u);
  EXPECT_EQ(h.retries, 3u);
  EXPECT_EQ(h.failed, 1u);
  EXPECT_EQ(h.throttles_429, 2u);
  EXPECT_EQ(h.throttles_503, 5u);
  EXPECT_EQ(h.errors[static_cast<int>(HttpErrorKind::kThrottled)], 2u);
  EXPECT_EQ(h.errors[static_cast<int>(HttpErrorKind::kTimeout)], 5u);
  EXPECT_EQ(h.bytes, 10000u);
  EXPECT_EQ(h.busy_us, 500u);
  EXPECT_EQ(h.in_flight, 0);  // a gauge of one process: not in a sum
  LogHistogram::Counts first_byte, transfer;
  first_byte.buckets[fast] = 90;
  first_byte.buckets[mid] = 8;
  first_byte.buckets[slow] = 2;
  transfer.buckets[mid] = 90;
  transfer.buckets[slow] = 10;
  EXPECT_EQ(h.first_byte.buckets, first_byte.buckets);
  EXPECT_EQ(h.transfer.buckets, transfer.buckets);
  // Ranks 50, 95 and 99 of 100 fall in the fast, mid and slow buckets.
  EXPECT_EQ(h.first_byte.QuantileMicros(0.50), std::exp2(39.0 / 4));
  EXPECT_EQ(h.first_byte.QuantileMicros(0.95), std::exp2(53.0 / 4));
  EXPECT_EQ(h.first_byte.QuantileMicros(0.99), std::exp2(79.0 / 4));
  EXPECT_EQ(h.transfer.QuantileMicros(0.95), std::exp2(79.0 / 4));
  EXPECT_EQ(hosts.at("http://127.0.0.1:82").requests, 7u);
  // The report shows them (milliseconds).
  auto json = ParsePyJson(MetricsJson(*sum, *sum));
  ASSERT_TRUE(json.ok());
  const JsonValue* fb =
      JsonMember(*JsonMember(*JsonMember(*json, "hosts"), "http://127.0.0.1:81"), "first_byte");
  EXPECT_EQ(std::get<int64_t>(JsonMember(*fb, "count")->v), 100);
  EXPECT_EQ(std::get<double>(JsonMember(*fb, "p99_ms")->v), std::exp2(79.0 / 4) / 1000);
  // The job's sum has one instance's hosts only.
  auto one = SumNodeRecords(dir.path(), uint64_t{2});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->hosts.size(), 2u);
  EXPECT_EQ(ByName(*one).at("http://127.0.0.1:81").requests, 10u);
}

// Two datasets of one process each record the process-wide host counters
// (from their own open to their last write): the node counts them once,
// from the record that saw the most, beside another process's.
TEST(NodeMetrics, TwoDatasetsOfOneProcessCountItsHostsOnce) {
  TempDir dir;
  testing::ScopedEnv retention("SLUICE_METRICS_RETENTION_S", std::nullopt);
  DatasetMetrics first;  // opened first: it saw all 50 requests
  first.samples = 10;
  first.hosts = {HostWith("http://127.0.0.1:81", 50), HostWith("http://127.0.0.1:82", 4)};
  first.hosts[0].retries = 5;
  DatasetMetrics second;  // opened after 20 of them
  second.samples = 7;
  second.hosts = {HostWith("http://127.0.0.1:81", 30)};
  DatasetMetrics other;  // another process
  other.samples = 1;
  other.hosts = {HostWith("http://127.0.0.1:81", 6)};
  other.hosts[0].throttles_503 = 2;
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 7, second).ok());
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 8, first).ok());
  WriteEndedRecord(dir.path(), 9, other);
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 3u);
  EXPECT_EQ(sum->samples, 18u);  // the datasets' own counts add up
  auto hosts = ByName(*sum);
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts.at("http://127.0.0.1:81").requests, 56u);
  EXPECT_EQ(hosts.at("http://127.0.0.1:81").retries, 5u);
  EXPECT_EQ(hosts.at("http://127.0.0.1:82").requests, 4u);
  EXPECT_EQ(sum->http_requests, 60u);
  EXPECT_EQ(sum->http_retries, 5u);
  EXPECT_EQ(sum->http_throttles, 2u);
  // The job's sum (one dataset) is that dataset's record alone.
  auto job = SumNodeRecords(dir.path(), uint64_t{7});
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(ByName(*job).at("http://127.0.0.1:81").requests, 30u);
  EXPECT_EQ(job->http_requests, 30u);
}

// 70 hosts of 1..70 requests and one whose name is too long: the 64
// busiest stay by name, the other six and the long one are "other".
TEST(NodeMetrics, ARecordKeepsTheBusiestHostsAndSumsTheRestAsOther) {
  TempDir dir;
  DatasetMetrics m;
  for (int k = 0; k < 70; ++k) {
    char name[40];
    std::snprintf(name, sizeof name, "http://h%02d:80", k);
    m.hosts.push_back(HostWith(name, static_cast<uint64_t>(k + 1)));
  }
  HostStatsSnapshot long_name = HostWith("http://" + std::string(kNodeRecordHostName, 'x'), 100);
  long_name.first_byte.buckets[3] = 5;
  m.hosts.push_back(long_name);
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 1, m).ok());
  WriteEndedRecord(dir.path(), 2, m);  // another process's
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  ASSERT_EQ(sum->hosts.size(), kNodeRecordHosts + 1);
  auto hosts = ByName(*sum);
  EXPECT_EQ(hosts.count("http://h05:80"), 0u);
  EXPECT_EQ(hosts.at("http://h06:80").requests, 2 * 7u);
  EXPECT_EQ(hosts.at("http://h69:80").requests, 2 * 70u);
  // (1 + ... + 6) + 100, twice.
  EXPECT_EQ(hosts.at("other").requests, 2 * 121u);
  EXPECT_EQ(hosts.at("other").first_byte.buckets[3], 10u);
}

// A record of the previous version, one cut short, one with a byte too
// many, and files not named as records: none is summed, none deleted.
TEST(NodeMetrics, RecordsOfAnotherVersionOrLengthArePassedOver) {
  TempDir dir;
  DatasetMetrics m;
  m.samples = 5;
  m.hosts = {HostWith("http://127.0.0.1:81", 3)};
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 9, m).ok());
  const std::string good = ReadFile(JoinPath(dir.path(), NodeRecordName(9))).value();
  const std::string old_version = "SLNODE01" + std::string(8 + 8 * 25, '\1');
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), NodeRecordName(1)), old_version).ok());
  ASSERT_TRUE(
      WriteFileAtomic(JoinPath(dir.path(), NodeRecordName(2)), good.substr(0, good.size() - 1))
          .ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), NodeRecordName(3)), good + "x").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "junk.rec"), "SLNODE03short").ok());
  ASSERT_TRUE(WriteFileAtomic(JoinPath(dir.path(), "notes.txt"), "x").ok());
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 1u);
  EXPECT_EQ(sum->samples, 5u);
  ASSERT_EQ(sum->hosts.size(), 1u);
  EXPECT_EQ(sum->hosts[0].requests, 3u);
  EXPECT_EQ(Env::Default()->ListFolder(dir.path()).value().size(), 6u);
}

// The lead now: the running processes' leads added; its min: the least of
// every record that has batches, ended processes' too.
TEST(NodeMetrics, ThePrefetchLeadSumsRunningProcessesAndTheMinIsTheLeast) {
  TempDir dir;
  testing::ScopedEnv retention("SLUICE_METRICS_RETENTION_S", std::nullopt);
  auto record = [](uint64_t batches, uint64_t lead, uint64_t lead_shards, uint64_t min,
                   uint64_t min_shards) {
    DatasetMetrics m;
    m.batches = batches;
    m.prefetch_lead_samples = lead;
    m.prefetch_lead_shards = lead_shards;
    m.lead_samples_min = min;
    m.lead_shards_min = min_shards;
    return m;
  };
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 1, record(5, 10, 2, 4, 1)).ok());
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 2, record(3, 20, 3, 7, 2)).ok());
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 3, record(0, 0, 0, 0, 0)).ok());  // no batch yet
  WriteEndedRecord(dir.path(), 4, record(8, 50, 9, 3, 5));
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 4u);
  EXPECT_EQ(sum->batches, 16u);
  EXPECT_EQ(sum->prefetch_lead_samples, 30u);
  EXPECT_EQ(sum->prefetch_lead_shards, 5u);
  EXPECT_EQ(sum->lead_samples_min, 3u);
  EXPECT_EQ(sum->lead_shards_min, 1u);
  auto none = SumNodeRecords(dir.path(), uint64_t{3});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->lead_samples_min, 0u);
  EXPECT_EQ(none->prefetch_lead_samples, 0u);
}

// A window over the records: its least leads are those of the batches the
// records gained since its previous sum (two processes' records, the second
// not growing in the second window; a record new to it counted whole), as
// the records read back carry them; another window keeps its own start.
TEST(NodeMetrics, AWindowsLeastLeadsAreThoseOfTheBatchesSinceItsLastSum) {
  TempDir dir;
  testing::ScopedEnv retention("SLUICE_METRICS_RETENTION_S", std::nullopt);
  DatasetMetrics a, b;
  auto close = [](DatasetMetrics* m, uint64_t batches, uint64_t least, uint64_t least_shards) {
    m->batches = batches;
    m->lead_samples_steps.Close(batches, least);
    m->lead_shards_steps.Close(batches, least_shards);
  };
  close(&a, 4, 10, 3);  // a's batches 1-4: least lead 10
  close(&b, 6, 2, 1);   // b's 1-6: 2
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 1, a).ok());
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 2, b).ok());
  NodeLeadWindow window, other;
  auto sum = SumNodeRecords(dir.path(), std::nullopt, Env::Default(), std::nullopt, &window);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(window.lead_samples_min, 2u);
  EXPECT_EQ(window.lead_shards_min, 1u);
  EXPECT_EQ(window.seen.size(), 2u);
  EXPECT_EQ(window.readers, 2u);
  close(&a, 7, 5, 2);  // 5-7: 5
  close(&a, 9, 8, 3);  // 8-9: 8
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 1, a).ok());
  sum = SumNodeRecords(dir.path(), std::nullopt, Env::Default(), std::nullopt, &window);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->batches, 15u);
  EXPECT_EQ(window.lead_samples_min, 5u);  // not b's 2: b read nothing since
  EXPECT_EQ(window.lead_shards_min, 2u);
  EXPECT_EQ(window.readers, 1u);
  // A third record, new to the window: all its batches count.
  DatasetMetrics c;
  close(&c, 2, 6, 4);
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 3, c).ok());
  close(&a, 12, 9, 5);
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 1, a).ok());
  sum = SumNodeRecords(dir.path(), std::nullopt, Env::Default(), std::nullopt, &window);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(window.lead_samples_min, 6u);
  EXPECT_EQ(window.lead_shards_min, 4u);
  EXPECT_EQ(window.readers, 2u);
  // Nothing since: no least.
  sum = SumNodeRecords(dir.path(), std::nullopt, Env::Default(), std::nullopt, &window);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(window.lead_samples_min, 0u);
  EXPECT_EQ(window.readers, 0u);
  // A window of dataset 1 alone, first summed now: a's batches since open.
  sum = SumNodeRecords(dir.path(), uint64_t{1}, Env::Default(), std::nullopt, &other);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(other.lead_samples_min, 5u);
  EXPECT_EQ(other.seen.size(), 1u);
}

// An ended process's record older than the retention is deleted when the
// folder is summed; a recent one and a running process's old one stay.
TEST(NodeMetrics, RecordsOfEndedProcessesPastTheRetentionAreDeleted) {
  TempDir dir;
  testing::ScopedEnv retention("SLUICE_METRICS_RETENTION_S", std::nullopt);
  DatasetMetrics m;
  m.samples = 1;
  const std::string expired = WriteEndedRecord(dir.path(), 1, m);
  SetAgeSeconds(expired, 25 * 3600);
  m.samples = 10;
  const std::string recent = WriteEndedRecord(dir.path(), 2, m);
  SetAgeSeconds(recent, 3600);
  m.samples = 100;
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 3, m).ok());
  const std::string live = JoinPath(dir.path(), NodeRecordName(3));
  SetAgeSeconds(live, 25 * 3600);
  auto sum = SumNodeRecords(dir.path(), std::nullopt);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 2u);
  EXPECT_EQ(sum->samples, 110u);
  EXPECT_FALSE(FileExists(expired));
  EXPECT_TRUE(FileExists(recent));
  EXPECT_TRUE(FileExists(live));
  {
    // A retention of 30 minutes takes the recent one too, on any sum (a
    // job's, of another instance, as well).
    testing::ScopedEnv shorter("SLUICE_METRICS_RETENTION_S", "1800");
    auto job = SumNodeRecords(dir.path(), uint64_t{3});
    ASSERT_TRUE(job.ok()) << job.status().ToString();
    EXPECT_EQ(job->samples, 100u);
    EXPECT_FALSE(FileExists(recent));
    EXPECT_TRUE(FileExists(live));
  }
  testing::ScopedEnv bad("SLUICE_METRICS_RETENTION_S", "1d");
  EXPECT_EQ(SumNodeRecords(dir.path(), std::nullopt).status().ToString(),
            "invalid argument: environment variable SLUICE_METRICS_RETENTION_S '1d': expected "
            "a number of seconds (a decimal integer)");
}

// Pruning alone (a dataset's first record does it, so that a node where
// nobody sums forgets its ended processes): the same rule as a sum's.
TEST(NodeMetrics, PruningDeletesOnlyEndedRecordsPastTheRetention) {
  TempDir dir;
  testing::ScopedEnv retention("SLUICE_METRICS_RETENTION_S", std::nullopt);
  DatasetMetrics m;
  const std::string expired = WriteEndedRecord(dir.path(), 1, m);
  SetAgeSeconds(expired, 25 * 3600);
  const std::string recent = WriteEndedRecord(dir.path(), 2, m);
  SetAgeSeconds(recent, 3600);
  ASSERT_TRUE(WriteNodeRecord(dir.path(), 3, m).ok());
  const std::string live = JoinPath(dir.path(), NodeRecordName(3));
  SetAgeSeconds(live, 25 * 3600);
  const std::string foreign = JoinPath(dir.path(), "notes.txt");
  ASSERT_TRUE(WriteFileAtomic(foreign, "x").ok());
  SetAgeSeconds(foreign, 25 * 3600);
  ASSERT_TRUE(PruneNodeRecords(dir.path()).ok());
  EXPECT_FALSE(FileExists(expired));
  EXPECT_TRUE(FileExists(recent));
  EXPECT_TRUE(FileExists(live));
  EXPECT_TRUE(FileExists(foreign));
  ASSERT_TRUE(PruneNodeRecords(dir.path(), Env::Default(), int64_t{60}).ok());
  EXPECT_FALSE(FileExists(recent));
  EXPECT_TRUE(FileExists(live));
  testing::ScopedEnv bad("SLUICE_METRICS_RETENTION_S", "1d");
  EXPECT_EQ(PruneNodeRecords(dir.path()).ToString(),
            "invalid argument: environment variable SLUICE_METRICS_RETENTION_S '1d': expected "
            "a number of seconds (a decimal integer)");
}

// The dataset option metrics_retention_s wins over the variable (a bad one
// included, which it leaves unread).
TEST(NodeMetrics, TheRetentionOptionWinsOverTheVariable) {
  TempDir dir;
  testing::ScopedEnv bad("SLUICE_METRICS_RETENTION_S", "1d");
  DatasetMetrics m;
  m.samples = 1;
  const std::string older = WriteEndedRecord(dir.path(), 1, m);
  SetAgeSeconds(older, 120);
  m.samples = 10;
  const std::string newer = WriteEndedRecord(dir.path(), 2, m);
  SetAgeSeconds(newer, 30);
  auto sum = SumNodeRecords(dir.path(), std::nullopt, Env::Default(), int64_t{60});
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  EXPECT_EQ(sum->processes, 1u);
  EXPECT_EQ(sum->samples, 10u);
  EXPECT_FALSE(FileExists(older));
  EXPECT_TRUE(FileExists(newer));
  auto none = SumNodeRecords(dir.path(), std::nullopt, Env::Default(), int64_t{0});
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->processes, 0u);
  EXPECT_FALSE(FileExists(newer));
  EXPECT_EQ(NodeRecordRetention(int64_t{7}).value(), std::chrono::seconds(7));
}

}  // namespace
}  // namespace sluice
