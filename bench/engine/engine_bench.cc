// Streaming engine throughput through the public C ABI (issue 5, Benchmark).
//
// One consumer thread iterates sluice_stream_next_batch and hashes every
// byte of every sample (so a zero-copy view cannot flatter the figure):
//   warm: shards already in the local cache, median of N passes, shuffled
//         (py1e) and not, beside `cat` and a 1 MiB read() loop over the same
//         cached shard files (page-cache read bandwidth, median of N);
//   cold: an empty cache folder and the dataset served by a loopback nginx
//         (http://127.0.0.1:PORT/...): time to the first sample, total time,
//         and how long the consumer waited for shards before and after the
//         first prefetch window (`predownload` samples) was consumed.
// Every pass checks the sample count and an order-independent checksum of
// all sample bytes against the one computed when the dataset was written,
// with the samples the planner's epoch repeats (ExpectedPass).
//
// Usage: engine_bench [DIR] [--sets=NxBYTES,...] [--passes=N] [--batch=N]
//                     [--predownload=N] [--order=sequential|py1e|py1s] [--no-cold]
//                     [--cold-rate=MBPS]
//   DIR     default /tmp/sluice-bench-engine; datasets are written once into
//           DIR/data/<name> (reused when present), caches live in
//           DIR/cache/<name>, nginx's files in DIR/nginx.
//   --sets  default 1000000x1024,8192x262144,2048x1048576 (samples x bytes).
//   --order one order only (default both: sequential and py1e; a shuffled
//           one by the algorithm named); --no-cold skips the cold runs
//           when the cache folder is already filled.
//   --cold-rate  paces the cold consumer to MBPS MB/s of sample bytes (a
//           training step's pace): a consumer slower than the downloads
//           should never wait once the first window is in.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/common/time_cat.h"
#include "bench/engine/loopback_nginx.h"
#include "sluice.h"

extern char** environ;

namespace sluice::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// CPU seconds of every thread of this process (consumer and prefetcher):
// a figure that a busy machine distorts less than wall time.
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Reads every byte of one sample; the per-sample hashes are summed, so the
// dataset checksum does not depend on the order samples arrive in.
uint64_t SampleHash(const uint8_t* p, uint64_t len) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  uint64_t j = 0;
  for (; j + 32 <= len; j += 32) {
    uint64_t w[4];
    std::memcpy(w, p + j, 32);
    a += w[0];
    b ^= w[1];
    c += w[2];
    d ^= w[3];
  }
  for (; j < len; ++j) a += p[j];
  return Mix(a ^ Mix(b + len) ^ (Mix(c) + d));
}

// Deterministic incompressible filler (splitmix64).
void FillRandom(uint64_t* state, uint8_t* out, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = Mix(*state += 0x9E3779B97F4A7C15ull);
    std::memcpy(out + i, &z, std::min<size_t>(8, n - i));
  }
}

std::string LastError() { return sluice_last_error(); }

struct SetSpec {
  uint64_t samples = 0, bytes = 0;
  std::string name;
  uint64_t checksum = 0;  // of all sample bytes, from the writer side
};

std::string SizeName(uint64_t b) {
  if (b % (1 << 20) == 0) return std::to_string(b >> 20) + "MiB";
  if (b % 1024 == 0) return std::to_string(b >> 10) + "KiB";
  return std::to_string(b) + "B";
}

// Writes DIR/data/<name> through the C ABI writer (uncompressed MDS, one
// "bytes" column, 64 MiB shards) unless it exists with the right count;
// its checksum is kept beside it in <name>.sum.
bool EnsureDataset(const std::string& data_root, SetSpec* s) {
  const std::string dir = data_root + "/" + s->name, sum_file = dir + ".sum";
  {
    std::ifstream in(sum_file);
    uint64_t n = 0, sum = 0;
    if (in >> n >> std::hex >> sum && n == s->samples && fs::exists(dir + "/index.json")) {
      s->checksum = sum;
      return true;
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  std::printf("writing %s ...", dir.c_str());
  std::fflush(stdout);
  auto t0 = Clock::now();
  const char* names[] = {"bytes"};
  const char* encodings[] = {"bytes"};
  sluice_writer* w = nullptr;
  if (sluice_writer_open(dir.c_str(), names, encodings, 1, nullptr, &w) != SLUICE_OK) {
    std::fprintf(stderr, "\nsluice_writer_open: %s\n", LastError().c_str());
    return false;
  }
  std::vector<uint8_t> buf(s->bytes);
  uint64_t state = 0x5EED0000 + s->bytes, sum = 0;
  for (uint64_t i = 0; i < s->samples; ++i) {
    FillRandom(&state, buf.data(), buf.size());
    sum += SampleHash(buf.data(), buf.size());
    sluice_bytes f{buf.data(), buf.size()};
    if (sluice_writer_write(w, &f, 1) != SLUICE_OK) {
      std::fprintf(stderr, "\nsluice_writer_write: %s\n", LastError().c_str());
      sluice_writer_close(w);
      return false;
    }
  }
  bool ok = sluice_writer_finish(w) == SLUICE_OK;
  if (!ok) std::fprintf(stderr, "\nsluice_writer_finish: %s\n", LastError().c_str());
  sluice_writer_close(w);
  if (!ok) return false;
  std::ofstream(sum_file) << s->samples << " " << std::hex << sum << "\n";
  s->checksum = sum;
  double secs = Seconds(t0, Clock::now());
  std::printf(" %.1f s\n", secs);
  return true;
}

struct Options {
  std::string root = "/tmp/sluice-bench-engine";
  std::vector<SetSpec> sets;
  int passes = 3;
  uint32_t batch = 256;
  uint64_t predownload = 0;  // 0: Mosaic's default, 8 * batch
  bool cold = true;
  double cold_rate_mbps = 0;  // 0: the cold consumer runs flat out
  std::vector<bool> orders = {false, true};  // shuffle off, on
  std::string shuffle_algo = "py1e";         // the shuffled order's algorithm
};

std::string StreamConfig(const Options& o, const std::string& remote, const std::string& local,
                         bool shuffle) {
  char buf[2048];
  std::snprintf(buf, sizeof(buf),
                "{\"remote\": \"%s\", \"local\": \"%s\", \"batch_size\": %u, "
                "\"predownload\": %" PRIu64 ", \"shuffle\": %s, \"shuffle_algo\": \"%s\", "
                "\"shuffle_seed\": 9176, \"world\": {\"rank\": 0, \"world_size\": 1, "
                "\"local_rank\": 0, \"local_world_size\": 1}}",
                remote.c_str(), local.c_str(), o.batch, o.predownload,
                shuffle ? "true" : "false", o.shuffle_algo.c_str());
  return buf;
}

struct Pass {
  double seconds = 0;        // iter_begin to the end of the epoch
  double iter_begin = 0;     // the iter_begin call (plans the epoch)
  double cpu = 0;            // process CPU seconds during the pass
  double first_sample = 0;   // iter_begin to the first sample's view
  uint64_t samples = 0, bytes = 0, checksum = 0;
  uint64_t wait_ns = 0;         // consumer_wait_ns during the pass
  uint64_t wait_window_ns = 0;  // ... until `predownload` samples were consumed
  double max_call_after_window = 0;  // longest next_batch call after that
  sluice_stream_stats stats{};  // counter deltas of the pass
};

sluice_stream_stats Delta(const sluice_stream_stats& a, const sluice_stream_stats& b) {
  return {b.bytes_downloaded - a.bytes_downloaded, b.shards_downloaded - a.shards_downloaded,
          b.shards_evicted - a.shards_evicted, b.cache_hits - a.cache_hits,
          b.consumer_wait_ns - a.consumer_wait_ns, b.shards_skipped - a.shards_skipped,
          b.samples_skipped - a.samples_skipped};
}

// One epoch of worker 0 of 1, every byte hashed.
// rate_mbps > 0: after each batch, sleep until the bytes so far took that
// long at that rate.
bool RunPass(sluice_stream* s, uint64_t epoch, const Options& o, double rate_mbps, Pass* out) {
  const uint32_t cols = sluice_stream_num_columns(s);
  std::vector<int64_t> ids(o.batch);
  std::vector<sluice_bytes> fields(static_cast<size_t>(o.batch) * cols);
  sluice_stream_stats before{}, at_window{}, after{};
  sluice_stream_counters(s, &before);
  *out = Pass{};
  bool window_seen = false;
  const double cpu0 = ProcessCpuSeconds();
  auto t0 = Clock::now();
  if (sluice_stream_iter_begin(s, epoch, 0, 0, 1) != SLUICE_OK) {
    std::fprintf(stderr, "sluice_stream_iter_begin: %s\n", LastError().c_str());
    return false;
  }
  out->iter_begin = Seconds(t0, Clock::now());
  for (;;) {
    uint32_t count = 0;
    auto c0 = Clock::now();
    // The first call asks for one sample: the time to the first sample, not
    // to the first batch (a shuffled batch may span every shard).
    const uint32_t want = out->samples == 0 ? 1 : o.batch;
    if (sluice_stream_next_batch(s, want, ids.data(), fields.data(), &count) != SLUICE_OK) {
      std::fprintf(stderr, "sluice_stream_next_batch: %s\n", LastError().c_str());
      return false;
    }
    auto c1 = Clock::now();
    if (count == 0) break;
    if (out->samples == 0) out->first_sample = Seconds(t0, c1);
    if (window_seen) out->max_call_after_window = std::max(out->max_call_after_window,
                                                           Seconds(c0, c1));
    for (uint32_t k = 0; k < count; ++k) {
      for (uint32_t c = 0; c < cols; ++c) {
        const sluice_bytes& f = fields[static_cast<size_t>(k) * cols + c];
        out->checksum += SampleHash(f.data, f.size);
        out->bytes += f.size;
      }
    }
    out->samples += count;
    if (rate_mbps > 0) {
      std::this_thread::sleep_until(
          t0 + std::chrono::duration_cast<Clock::duration>(
                   std::chrono::duration<double>(static_cast<double>(out->bytes) / (rate_mbps * 1e6))));
    }
    if (!window_seen && out->samples >= o.predownload) {
      sluice_stream_counters(s, &at_window);
      window_seen = true;
    }
  }
  sluice_stream_release(s);
  out->seconds = Seconds(t0, Clock::now());
  out->cpu = ProcessCpuSeconds() - cpu0;
  sluice_stream_counters(s, &after);
  if (!window_seen) at_window = after;
  out->stats = Delta(before, after);
  out->wait_ns = out->stats.consumer_wait_ns;
  out->wait_window_ns = at_window.consumer_wait_ns - before.consumer_wait_ns;
  return true;
}

// What a pass of `epoch` must yield: the planner's epoch for worker 0 of 1
// (sluice_plan_create over the handle's shard sizes and the stream's plan
// options), its sample count and the set's checksum with each sample the
// plan repeats (Mosaic pads an epoch so that its canonical nodes get equal
// shares: py1s's 64 over 100,000 samples give 100,032) or leaves out
// counted that many times. The repeated samples' bytes come from
// sluice_stream_get, so call it after the pass (a cold one must not fetch).
bool ExpectedPass(sluice_stream* s, const SetSpec& set, const Options& o, bool shuffle,
                  uint64_t epoch, uint64_t* samples, uint64_t* checksum) {
  const uint64_t shards = sluice_stream_num_shards(s);
  std::vector<uint64_t> sizes(shards);
  std::vector<uint32_t> streams(shards);
  if (sluice_stream_shard_table(s, sizes.data(), streams.data(), shards) != SLUICE_OK) {
    std::fprintf(stderr, "sluice_stream_shard_table: %s\n", LastError().c_str());
    return false;
  }
  std::string config = "{\"streams\": [{\"shard_sizes\": [";
  for (uint64_t g = 0; g < shards; ++g) config += (g ? ", " : "") + std::to_string(sizes[g]);
  char rest[512];
  std::snprintf(rest, sizeof(rest),
                "]}], \"world\": {\"num_nodes\": 1, \"ranks_per_node\": 1, "
                "\"workers_per_rank\": 1}, \"batch_size\": %u, \"shuffle\": %s, "
                "\"shuffle_algo\": \"%s\", \"shuffle_seed\": 9176, \"epoch\": %" PRIu64 "}",
                o.batch, shuffle ? "true" : "false", o.shuffle_algo.c_str(), epoch);
  config += rest;
  sluice_plan* plan = nullptr;
  if (sluice_plan_create(config.c_str(), &plan) != SLUICE_OK) {
    std::fprintf(stderr, "sluice_plan_create: %s\n", LastError().c_str());
    return false;
  }
  const int64_t* ids = nullptr;
  uint64_t count = 0;
  std::vector<uint32_t> times(set.samples);
  bool ok = sluice_plan_worker_ids(plan, 0, 0, 0, &ids, &count) == SLUICE_OK;
  for (uint64_t k = 0; ok && k < count; ++k) {
    ok = ids[k] >= 0 && static_cast<uint64_t>(ids[k]) < set.samples;
    if (ok) ++times[static_cast<size_t>(ids[k])];
  }
  sluice_plan_free(plan);
  if (!ok) {
    std::fprintf(stderr, "%s: the planner's epoch %" PRIu64 ": no ids or an id out of range\n",
                 set.name.c_str(), epoch);
    return false;
  }
  *samples = count;
  *checksum = set.checksum;
  const uint32_t cols = sluice_stream_num_columns(s);
  std::vector<sluice_bytes> fields(cols);
  for (uint64_t id = 0; id < set.samples; ++id) {
    if (times[id] == 1) continue;
    if (sluice_stream_get(s, id, fields.data(), cols) != SLUICE_OK) {
      std::fprintf(stderr, "sluice_stream_get: %s\n", LastError().c_str());
      return false;
    }
    uint64_t hash = 0;
    for (const sluice_bytes& f : fields) hash += SampleHash(f.data, f.size);
    *checksum += (uint64_t{times[id]} - 1) * hash;  // modulo 2^64: a missing one subtracts
  }
  return true;
}

bool CheckPass(sluice_stream* s, const SetSpec& set, const Options& o, bool shuffle,
               uint64_t epoch, const Pass& p, const char* what) {
  uint64_t samples = 0, checksum = 0;
  if (!ExpectedPass(s, set, o, shuffle, epoch, &samples, &checksum)) return false;
  if (p.samples != samples || p.checksum != checksum) {
    std::fprintf(stderr,
                 "%s %s: %" PRIu64 " samples, checksum %016" PRIx64 "; expected %" PRIu64
                 " and %016" PRIx64 "\n",
                 set.name.c_str(), what, p.samples, p.checksum, samples, checksum);
    return false;
  }
  return true;
}

// read() of every file with a 1 MiB buffer: wall seconds, < 0 on failure.
double TimeReadLoop(const std::vector<std::string>& files) {
  std::vector<char> buf(1 << 20);
  auto start = Clock::now();
  for (const std::string& f : files) {
    int fd = open(f.c_str(), O_RDONLY);
    if (fd < 0) return -1;
    ssize_t n;
    while ((n = read(fd, buf.data(), buf.size())) > 0) {
    }
    close(fd);
    if (n < 0) return -1;
  }
  return Seconds(start, Clock::now());
}

// One curl process (one kept-alive connection) downloading `urls` into
// files in `dir`, as the engine does: wall seconds, < 0 on failure.
double TimeCurl(const std::vector<std::string>& urls, const std::string& dir) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  std::vector<std::string> args = {"curl", "-sSf", "--output-dir", dir};
  for (const std::string& u : urls) {
    args.push_back("-O");
    args.push_back(u);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  auto start = Clock::now();
  pid_t pid;
  if (posix_spawnp(&pid, "curl", nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  bool ok = waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  double secs = Seconds(start, Clock::now());
  fs::remove_all(dir, ec);
  return ok ? secs : -1;
}

// The shard files of a cache folder (what the engine maps), and their bytes.
std::vector<std::string> ShardFiles(const std::string& dir, uint64_t* bytes) {
  std::vector<std::string> files;
  *bytes = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name == "index.json" || name[0] == '.') continue;
    files.push_back(e.path().string());
    *bytes += e.file_size();
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct WarmRow {
  std::string set, order;
  uint64_t sample_bytes = 0;
  double seconds = 0, samples_per_s = 0, gbps = 0, iter_begin = 0, wait = 0, cpu = 0;
  double first_pass = 0;  // the handle's first pass (maps every shard)
};

struct ColdRow {
  std::string set, order;
  double open = 0, first = 0, total = 0, gbps = 0, wait = 0, wait_window = 0, max_call = 0;
  double curl_gbps = 0;  // curl of the same shard files, one connection
  uint64_t downloaded = 0, shards = 0;
};

bool ParseSets(std::string_view text, std::vector<SetSpec>* out) {
  out->clear();
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string item(text.substr(0, comma));
    text = comma == std::string_view::npos ? "" : text.substr(comma + 1);
    unsigned long long n = 0, b = 0;
    char extra = 0;
    if (std::sscanf(item.c_str(), "%llux%llu%c", &n, &b, &extra) != 2 || n == 0 || b == 0) {
      return false;
    }
    SetSpec s;
    s.samples = n;
    s.bytes = b;
    s.name = std::to_string(n) + "x" + SizeName(b);
    out->push_back(s);
  }
  return !out->empty();
}

int Usage() {
  std::fprintf(stderr,
               "usage: engine_bench [DIR] [--sets=NxBYTES,...] [--passes=N] [--batch=N] "
               "[--predownload=N] [--order=sequential|py1e|py1s] [--no-cold] [--cold-rate=MBPS]\n");
  return 2;
}

int Run(int argc, char** argv) {
  Options o;
  std::string sets = "1000000x1024,8192x262144,2048x1048576";
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--sets=", 0) == 0) {
      sets = std::string(a.substr(7));
    } else if (a.rfind("--passes=", 0) == 0) {
      o.passes = std::atoi(argv[i] + 9);
    } else if (a.rfind("--batch=", 0) == 0) {
      o.batch = static_cast<uint32_t>(std::atoi(argv[i] + 8));
    } else if (a.rfind("--predownload=", 0) == 0) {
      o.predownload = std::strtoull(argv[i] + 14, nullptr, 10);
    } else if (a == "--order=sequential") {
      o.orders = {false};
    } else if (a == "--order=py1e" || a == "--order=py1s") {
      o.orders = {true};
      o.shuffle_algo = std::string(a.substr(8));
    } else if (a.rfind("--cold-rate=", 0) == 0) {
      o.cold_rate_mbps = std::atof(argv[i] + 12);
    } else if (a == "--no-cold") {
      o.cold = false;
    } else if (a.rfind("--", 0) == 0) {
      return Usage();
    } else {
      o.root = std::string(a);
    }
  }
  if (!ParseSets(sets, &o.sets) || o.passes < 1 || o.batch < 1) return Usage();
  if (o.predownload == 0) o.predownload = 8ull * o.batch;
  if (sluice_abi_version() != SLUICE_ABI_VERSION) {
    std::fprintf(stderr, "libsluice ABI %u, header %u\n", sluice_abi_version(),
                 SLUICE_ABI_VERSION);
    return 1;
  }

  const std::string data_root = o.root + "/data", cache_root = o.root + "/cache";
  fs::create_directories(data_root);
  fs::create_directories(cache_root);
  std::string loadavg;
  std::getline(std::ifstream("/proc/loadavg"), loadavg);
  std::printf("engine_bench: libsluice %s, %s, batch %u, predownload %" PRIu64
              ", %d warm passes (median); loadavg %s\n",
              sluice_version(), o.root.c_str(), o.batch, o.predownload, o.passes,
              loadavg.c_str());
  for (SetSpec& s : o.sets) {
    if (!EnsureDataset(data_root, &s)) return 1;
  }

  LoopbackNginx nginx;
  if (std::string err = nginx.Start(data_root, o.root + "/nginx"); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  const std::string base = "http://127.0.0.1:" + std::to_string(nginx.port()) + "/";

  std::vector<WarmRow> warm_rows;
  std::vector<ColdRow> cold_rows;
  std::vector<std::pair<std::string, double>> page_cache;  // set -> GB/s
  for (const SetSpec& set : o.sets) {
    const std::string remote = base + set.name, local = cache_root + "/" + set.name;
    const bool have_cache = fs::exists(local + "/index.json");
    for (bool shuffle : o.orders) {
      if (!o.cold && have_cache) break;
      std::error_code ec;
      fs::remove_all(local, ec);
      ColdRow row;
      row.set = set.name;
      row.order = shuffle ? o.shuffle_algo : "sequential";
      auto t0 = Clock::now();
      sluice_stream* s = nullptr;
      if (sluice_stream_open(StreamConfig(o, remote, local, shuffle).c_str(), &s) != SLUICE_OK) {
        std::fprintf(stderr, "sluice_stream_open: %s\n", LastError().c_str());
        return 1;
      }
      row.open = Seconds(t0, Clock::now());
      Pass p;
      bool ok = RunPass(s, 0, o, o.cold_rate_mbps, &p) &&
                CheckPass(s, set, o, shuffle, 0, p, "cold");
      sluice_stream_close(s);
      if (!ok) return 1;
      row.first = row.open + p.first_sample;
      row.total = row.open + p.seconds;
      row.gbps = p.bytes / 1e9 / row.total;
      row.wait = p.wait_ns / 1e9;
      row.wait_window = p.wait_window_ns / 1e9;
      row.max_call = p.max_call_after_window;
      row.downloaded = p.stats.bytes_downloaded;
      row.shards = p.stats.shards_downloaded;
      cold_rows.push_back(row);
      std::printf("cold %-16s %-10s first sample %.3f s, total %.2f s, waited %.2f s "
                  "(%.2f s after the first window)\n",
                  set.name.c_str(), row.order.c_str(), row.first, row.total, row.wait,
                  row.wait - row.wait_window);
      std::fflush(stdout);
      if (!o.cold) break;
    }

    for (bool shuffle : o.orders) {
      sluice_stream* s = nullptr;
      if (sluice_stream_open(StreamConfig(o, remote, local, shuffle).c_str(), &s) != SLUICE_OK) {
        std::fprintf(stderr, "sluice_stream_open: %s\n", LastError().c_str());
        return 1;
      }
      std::vector<double> secs, begins, waits, cpus;
      uint64_t yielded = 0;  // a pass's samples (padded by the planner)
      for (int e = 0; e < o.passes; ++e) {
        Pass p;
        if (!RunPass(s, static_cast<uint64_t>(e), o, 0, &p) ||
            !CheckPass(s, set, o, shuffle, static_cast<uint64_t>(e), p, "warm")) {
          sluice_stream_close(s);
          return 1;
        }
        if (p.stats.shards_downloaded != 0) {
          std::fprintf(stderr, "%s: a warm pass downloaded %" PRIu64 " shards\n",
                       set.name.c_str(), p.stats.shards_downloaded);
          sluice_stream_close(s);
          return 1;
        }
        yielded = p.samples;
        secs.push_back(p.seconds);
        begins.push_back(p.iter_begin);
        waits.push_back(p.wait_ns / 1e9);
        cpus.push_back(p.cpu);
      }
      sluice_stream_close(s);
      WarmRow row;
      row.set = set.name;
      row.order = shuffle ? o.shuffle_algo : "sequential";
      row.sample_bytes = set.bytes;
      row.seconds = Median(secs);
      row.iter_begin = Median(begins);
      row.wait = Median(waits);
      row.cpu = Median(cpus);
      row.first_pass = secs[0];
      row.samples_per_s = yielded / row.seconds;
      row.gbps = yielded * set.bytes / 1e9 / row.seconds;
      warm_rows.push_back(row);
      std::printf("warm %-16s %-10s %.3f s (passes:", set.name.c_str(), row.order.c_str(),
                  row.seconds);
      for (double x : secs) std::printf(" %.3f", x);
      std::printf(")\n");
      std::fflush(stdout);
    }

    uint64_t file_bytes = 0;
    std::vector<std::string> files = ShardFiles(local, &file_bytes);
    if (TimeCat(files) < 0) {  // page cache warm
      std::fprintf(stderr, "cat failed in %s\n", local.c_str());
      return 1;
    }
    std::vector<double> cats, reads;
    for (int i = 0; i < o.passes; ++i) {
      cats.push_back(TimeCat(files));
      reads.push_back(TimeReadLoop(files));
      if (cats.back() < 0 || reads.back() < 0) {
        std::fprintf(stderr, "reading the shard files in %s failed\n", local.c_str());
        return 1;
      }
    }
    if (o.cold && !cold_rows.empty() && cold_rows.back().set == set.name) {
      std::vector<std::string> urls;
      for (const std::string& f : files) urls.push_back(remote + "/" + fs::path(f).filename().string());
      double c = TimeCurl(urls, o.root + "/curl");
      if (c < 0) {
        std::fprintf(stderr, "curl of %s failed\n", remote.c_str());
        return 1;
      }
      for (ColdRow& r : cold_rows) {
        if (r.set == set.name) r.curl_gbps = file_bytes / 1e9 / c;
      }
    }
    double cat_gbps = file_bytes / 1e9 / Median(cats);
    double read_gbps = file_bytes / 1e9 / Median(reads);
    std::printf("page cache %-16s %zu shard files, %.3f GB: cat %.2f GB/s, read() 1 MiB %.2f "
                "GB/s\n",
                set.name.c_str(), files.size(), file_bytes / 1e9, cat_gbps, read_gbps);
    page_cache.emplace_back(set.name, std::max(cat_gbps, read_gbps));
  }

  std::printf("\nWarm local cache, one consumer thread, every byte hashed (median of %d):\n",
              o.passes);
  std::printf("%-16s %-10s %8s %11s %6s %9s %7s %7s %7s %8s %8s  %s\n", "dataset", "order",
              "seconds", "samples/s", "GB/s", "pagecache", "% of pc", "cpu s", "begin s",
              "waited s", "1st pass", "target");
  for (const WarmRow& r : warm_rows) {
    double pc = 0;
    for (auto& [name, g] : page_cache) {
      if (name == r.set) pc = g;
    }
    std::string target;
    if (r.sample_bytes <= 4096) {
      target = std::string(r.samples_per_s >= 2e6 ? "met" : "MISSED") + " (>= 2M samples/s)";
    } else {
      target = std::string(r.gbps >= 0.8 * pc ? "met" : "MISSED") + " (>= 80% of page cache)";
    }
    std::printf("%-16s %-10s %8.3f %11.0f %6.2f %9.2f %6.0f%% %7.3f %7.3f %8.3f %8.3f  %s\n",
                r.set.c_str(), r.order.c_str(), r.seconds, r.samples_per_s, r.gbps, pc,
                100 * r.gbps / pc, r.cpu, r.iter_begin, r.wait, r.first_pass, target.c_str());
  }
  std::printf(
      "seconds: iter_begin to the end of the epoch (epochs 0..N-1 on one handle; epoch e+1\n"
      "starts with the shards prefetched near the end of epoch e); cpu s: process CPU in\n"
      "that time; begin s: the iter_begin call (plans the epoch); waited s:\n"
      "consumer_wait_ns; 1st pass: seconds of epoch 0 (every shard mapped afresh).\n"
      "pagecache: GB/s of the faster of `cat` and a 1 MiB read() loop over the cached shard\n"
      "files (median of %d). Mosaic's Python StreamingDataset on this kind of machine (one\n"
      "process, batch_size 256, warm): 25k samples/s for 1 KiB samples (23k shuffled),\n"
      "2.3-3.0 GB/s for 256 KiB samples.\n",
      o.passes);
  if (!cold_rows.empty()) {
    std::printf("\nCold: empty cache, remote %s (nginx), one pass each", base.c_str());
    if (o.cold_rate_mbps > 0) std::printf(", consumer paced at %.0f MB/s", o.cold_rate_mbps);
    std::printf(":\n");
    std::printf("%-16s %-10s %7s %9s %8s %6s %8s %7s %7s %9s %10s %12s\n", "dataset", "order",
                "open s", "1st smp s", "total s", "GB/s", "curl GB/s", "dl GB", "shards",
                "waited s", "after win s", "max call ms");
    for (const ColdRow& r : cold_rows) {
      std::printf("%-16s %-10s %7.3f %9.3f %8.2f %6.2f %9.2f %7.3f %7" PRIu64
                  " %9.2f %10.2f %12.1f\n",
                  r.set.c_str(), r.order.c_str(), r.open, r.first, r.total, r.gbps, r.curl_gbps,
                  r.downloaded / 1e9, r.shards, r.wait, r.wait - r.wait_window,
                  r.max_call * 1e3);
    }
    std::printf(
        "1st smp: open (index.json download) to the first sample. curl: one curl process\n"
        "(one connection) downloading the same shard files into files. waited:\n"
        "consumer_wait_ns.\n"
        "after win: waited after the first %" PRIu64 " (predownload) samples were consumed;\n"
        "max call: the longest next_batch call after that.\n",
        o.predownload);
  }
  return 0;
}

}  // namespace
}  // namespace sluice::bench

int main(int argc, char** argv) { return sluice::bench::Run(argc, argv); }
