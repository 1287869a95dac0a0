// sluice demo [--files] [DIR-OR-URL]: the main job on an embedded default.
//
// It writes a synthetic MDS dataset (with --files: a folder of raw files,
// streamed as a raw-file dataset) or takes the folder or store URL given,
// treats it as the remote behind a cache folder per simulated node with a
// cache_limit smaller than the dataset, and streams one shuffled epoch with
// 2 nodes x 2 ranks x 2 DataLoader workers as 8 forked processes. Halfway
// the job is interrupted; it resumes from Mosaic's sample_in_epoch. It checks
// that the samples read are exactly one epoch in the planner's order and that
// no cache folder ever held more than the limit, then prints samples/s, MB/s,
// cache hits, downloads, evictions and the time consumers waited.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "base/file.h"
#include "bindings/cli/bench/cache_usage.h"
#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/progress.h"
#include "engine/dataset/streaming_dataset.h"
#include "formats/mds/mds_writer.h"

namespace sluice::cli {
namespace {

constexpr uint64_t kSamples = 200000;
constexpr uint64_t kFiles = 6000;  // 2-20 KB each, about 66 MB
constexpr size_t kEmbedding = 64;
constexpr int64_t kNodes = 2, kRanks = 2, kWorkers = 2, kBatch = 32;
constexpr int kProcs = kNodes * kRanks * kWorkers;
constexpr uint64_t kCacheLimit = 24 << 20;  // smaller than the dataset

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

Status WriteSynthetic(const std::string& dir) {
  ShardedWriterOptions options;
  options.compression = "zstd";
  options.hashes = {"xxh64"};
  options.size_limit = uint64_t{1} << 20;
  SLUICE_ASSIGN_OR_RETURN(
      auto writer, MdsWriter::Create(dir, {{"id", "int"}, {"text", "str"}, {"label", "uint8"},
                                           {"embedding", "ndarray:float32:64"}},
                                     options));
  std::vector<float> emb(kEmbedding);
  std::vector<MdsValue> values(4);  // columns sorted: embedding, id, label, text
  Progress progress("writing", kSamples);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (uint64_t i = 0; i < kSamples; ++i) {
    for (float& e : emb) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      e = static_cast<float>(x % 2001) / 1000.0f - 1.0f;
    }
    std::string text = "sample " + std::to_string(i) + " says hello";
    values[0] = MdsNdArray{NdDtype::kFloat32, {kEmbedding},
                           std::string_view(reinterpret_cast<const char*>(emb.data()),
                                            emb.size() * sizeof(float))};
    values[1] = static_cast<int64_t>(i);
    values[2] = static_cast<uint64_t>(i % 10);
    values[3] = MdsText{text};
    SLUICE_RETURN_IF_ERROR(writer->Write(values));
    progress.Add(1);
  }
  return writer->Finish();
}

// kFiles files of 2,000-19,999 pseudo-random bytes in 60 folders, and the
// _SUCCESS marker a Spark job leaves beside them (not part of the dataset).
Status WriteSyntheticFiles(const std::string& dir) {
  Progress progress("writing", kFiles);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  std::string bytes;
  for (uint64_t i = 0; i < kFiles; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    bytes.resize(2000 + x % 18000);
    for (char& c : bytes) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      c = static_cast<char>(x);
    }
    std::string folder = dir + "/class" + std::to_string(i % 60);
    SLUICE_RETURN_IF_ERROR(MakeDirs(folder));
    SLUICE_RETURN_IF_ERROR(
        WriteFileAtomic(folder + "/img" + std::to_string(i) + ".bin", bytes));
    progress.Add(1);
  }
  return WriteFileAtomic(dir + "/_SUCCESS", "");
}

// What each process reports back through shared memory.
struct Slot {
  std::atomic<uint64_t> samples{0}, bytes{0};
  std::atomic<uint64_t> hits{0}, downloads{0}, evictions{0}, wait_ns{0};
  std::atomic<int> failed{0};
};

DatasetOptions Options(bool files, const std::string& remote, const std::string& cache,
                       int64_t node, int64_t rank) {
  DatasetOptions o;
  StreamOptions s;
  s.remote = remote;
  s.local = cache;
  if (files) {
    s.files = FileDatasetOptions{};  // every file under `remote`
  } else {
    s.validate_hash = "xxh64";
  }
  o.streams.push_back(s);
  o.plan.batch_size = kBatch;
  o.plan.shuffle = true;
  // Blocks of 8192 samples keep each worker's prefetch window on a few
  // shards, so four workers per node fit in a cache smaller than the data.
  o.plan.shuffle_block_size = 8192;
  o.predownload = 128;
  o.cache_limit = kCacheLimit;
  o.wait_timeout = std::chrono::seconds(30);
  o.world.world_size = kNodes * kRanks;
  o.world.local_world_size = kRanks;
  o.world.rank = node * kRanks + rank;
  o.world.local_rank = rank;
  return o;
}

// One DataLoader worker: reads `count` samples (all when negative) of its
// share of `epoch` after `sample_in_epoch`, writing their ids to `ids_path`.
Status Worker(bool files, const std::string& remote, const std::string& cache, int64_t node,
              int64_t rank, int64_t worker, int64_t sample_in_epoch, int64_t count,
              const std::string& ids_path, Slot* slot) {
  SLUICE_ASSIGN_OR_RETURN(auto ds,
                          StreamingDataset::Open(Options(files, remote, cache, node, rank)));
  SLUICE_RETURN_IF_ERROR(ds->IterBegin(0, sample_in_epoch, worker, kWorkers));
  std::ofstream out(ids_path);
  std::vector<int64_t> ids(256);
  std::vector<SampleFields> batch;
  int64_t done = 0;
  while (count < 0 || done < count) {
    size_t want = count < 0 ? ids.size() : std::min<size_t>(ids.size(), size_t(count - done));
    SLUICE_ASSIGN_OR_RETURN(size_t n, ds->NextBatch(want, ids.data(), &batch));
    if (n == 0) break;
    uint64_t bytes = 0, sum = 0;
    for (size_t k = 0; k < n; ++k) {
      for (std::string_view f : batch[k].fields) {
        for (char c : f) sum += static_cast<unsigned char>(c);  // touch every byte
        bytes += f.size();
      }
      out << ids[k] << '\n';
    }
    if (sum == 1) std::fputc(' ', stderr);  // keeps the reads observable
    done += static_cast<int64_t>(n);
    slot->samples += n;
    slot->bytes += bytes;
  }
  DatasetCounters c = ds->counters();
  slot->hits += c.cache_hits;
  slot->downloads += c.shards_downloaded;
  slot->evictions += c.shards_evicted;
  slot->wait_ns += c.consumer_wait_ns;
  return Status::Ok();
}

// Runs one phase: kProcs forked workers, a progress bar and a cache watcher.
Status RunPhase(const char* label, bool files, const std::string& remote,
                const std::vector<std::string>& caches,
                int64_t sample_in_epoch, int64_t per_worker, const std::string& work_dir,
                uint64_t expected, Slot* slots, uint64_t* max_cache) {
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    int64_t node = p / (kRanks * kWorkers), rank = (p / kWorkers) % kRanks, worker = p % kWorkers;
    pid_t pid = ::fork();
    if (pid < 0) return IoError("fork failed");
    if (pid == 0) {
      std::string ids = work_dir + "/" + label + "." + std::to_string(p) + ".ids";
      Status st = Worker(files, remote, caches[static_cast<size_t>(node)], node, rank, worker,
                         sample_in_epoch, per_worker, ids, &slots[p]);
      if (!st.ok()) {
        std::fprintf(stderr, "\nworker %d: %s\n", p, st.ToString().c_str());
        slots[p].failed = 1;
      }
      std::fflush(nullptr);
      ::_exit(st.ok() ? 0 : 1);
    }
    pids.push_back(pid);
  }
  Progress progress(label, expected);
  uint64_t shown = 0;
  for (size_t alive = pids.size(); alive > 0;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (const std::string& c : caches) {
      // A walk is not a snapshot: under this churn a walk can count a file
      // evicted behind it and one written after; this bound cannot.
      *max_cache = std::max(*max_cache, bench::CachedBytesAtOneInstant({c}));
    }
    uint64_t now = 0;
    for (int p = 0; p < kProcs; ++p) now += slots[p].samples;
    progress.Add(now - shown);
    shown = now;
    alive = 0;
    for (pid_t& pid : pids) {
      if (pid > 0 && ::waitpid(pid, nullptr, WNOHANG) == 0) ++alive;
      else pid = -1;
    }
  }
  for (int p = 0; p < kProcs; ++p) {
    if (slots[p].failed) return InternalError(std::string(label) + ": a worker failed");
  }
  return Status::Ok();
}

std::vector<int64_t> ReadIds(const std::string& path) {
  std::vector<int64_t> v;
  std::ifstream in(path);
  for (int64_t x; in >> x;) v.push_back(x);
  return v;
}

Status Demo(const std::string& remote_arg, bool files) {
  char tmpl[] = "/tmp/sluice-demo-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return IoError("cannot create a temp folder");
  std::string work = tmpl;
  std::string remote = remote_arg.empty() ? work + "/remote" : remote_arg;
  if (remote_arg.empty() && files) {
    std::printf("== writing %llu synthetic files of 2-20 KB in 60 folders to %s\n",
                (unsigned long long)kFiles, remote.c_str());
    auto t = std::chrono::steady_clock::now();
    SLUICE_RETURN_IF_ERROR(WriteSyntheticFiles(remote));
    std::printf("   written in %.2f s\n", Seconds(t));
  } else if (remote_arg.empty()) {
    std::printf("== writing a synthetic dataset of %llu samples (zstd, xxh64) to %s\n",
                (unsigned long long)kSamples, remote.c_str());
    auto t = std::chrono::steady_clock::now();
    SLUICE_RETURN_IF_ERROR(WriteSynthetic(remote));
    std::printf("   written in %.2f s\n\n", Seconds(t));
    std::fflush(stdout);
    if (RunInspect({remote}) != 0) return InternalError("inspect failed");
  }
  std::vector<std::string> caches;
  for (int n = 0; n < kNodes; ++n) caches.push_back(work + "/cache-node" + std::to_string(n));

  // The plan every worker will follow, computed here without reading data.
  SLUICE_ASSIGN_OR_RETURN(auto planner_view,
                          StreamingDataset::Open(Options(files, remote, caches[0], 0, 0)));
  int64_t epoch_size = planner_view->epoch_size();
  const uint64_t num_samples = planner_view->num_samples();
  if (files) {
    std::printf("   %llu files in the dataset (listed once, cached in %s/.sluice)\n",
                (unsigned long long)num_samples, caches[0].c_str());
  }
  // Interrupt after half the steps: every rank has taken `steps` batches,
  // alternating between its workers, so each worker yielded steps/W batches.
  int64_t steps = (planner_view->length() / kBatch) / 2 / kWorkers * kWorkers;
  int64_t per_worker = steps / kWorkers * kBatch;
  int64_t resume_at = steps * kBatch * kNodes * kRanks;  // Mosaic's sample_in_epoch
  // Per process: its planned ids for the whole epoch and after resumption.
  std::vector<int64_t> planned;
  std::vector<std::vector<int64_t>> first_plan(kProcs), resumed_plan(kProcs);
  for (int p = 0; p < kProcs; ++p) {
    int64_t node = p / (kRanks * kWorkers), rank = (p / kWorkers) % kRanks, worker = p % kWorkers;
    SLUICE_ASSIGN_OR_RETURN(auto view,
                            StreamingDataset::Open(Options(files, remote, caches[0], node, rank)));
    SLUICE_ASSIGN_OR_RETURN(auto all, view->WorkerIds(0, 0, worker, kWorkers));
    SLUICE_ASSIGN_OR_RETURN(resumed_plan[p], view->WorkerIds(0, resume_at, worker, kWorkers));
    planned.insert(planned.end(), all.begin(), all.end());
    first_plan[p].assign(all.begin(), all.begin() + std::min<int64_t>(per_worker, all.size()));
  }
  planner_view.reset();
  std::printf("\n== streaming one shuffled epoch of %s (py1e, seed 9176, blocks of 8192): %lld "
              "nodes x %lld ranks x %lld workers = %d processes, batch %lld, cache_limit %llu MiB "
              "per node\n",
              files ? "files" : "samples", (long long)kNodes, (long long)kRanks, (long long)kWorkers, kProcs, (long long)kBatch,
              (unsigned long long)(kCacheLimit >> 20));
  std::fflush(stdout);

  void* mem = ::mmap(nullptr, sizeof(Slot) * kProcs * 2, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return IoError("cannot map shared counters");
  Slot* slots = new (mem) Slot[kProcs * 2];
  uint64_t max_cache = 0;
  auto t = std::chrono::steady_clock::now();
  SLUICE_RETURN_IF_ERROR(RunPhase("first half", files, remote, caches, 0, per_worker, work,
                                  static_cast<uint64_t>(per_worker * kProcs), slots, &max_cache));
  std::printf("   interrupted after %lld steps; resuming at sample_in_epoch %lld\n",
              (long long)steps, (long long)resume_at);
  std::fflush(stdout);
  SLUICE_RETURN_IF_ERROR(RunPhase("resumed", files, remote, caches, resume_at, -1, work,
                                  planned.size() - static_cast<uint64_t>(per_worker * kProcs),
                                  slots + kProcs, &max_cache));
  double secs = Seconds(t);

  // Check: each process read exactly its planned ids, in order, before and
  // after the interruption, and together that is exactly the epoch.
  std::vector<int64_t> read;
  for (int p = 0; p < kProcs; ++p) {
    auto first = ReadIds(work + "/first half." + std::to_string(p) + ".ids");
    auto second = ReadIds(work + "/resumed." + std::to_string(p) + ".ids");
    if (first != first_plan[p] || second != resumed_plan[p]) {
      return InternalError("process " + std::to_string(p) + " did not read its planned order");
    }
    read.insert(read.end(), first.begin(), first.end());
    read.insert(read.end(), second.begin(), second.end());
  }
  std::vector<int64_t> a = planned, b = read;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a != b) {
    return InternalError("the samples read (" + std::to_string(b.size()) +
                         ") are not the planned epoch (" + std::to_string(a.size()) + ")");
  }
  std::vector<char> seen(num_samples, 0);
  for (int64_t id : read) seen[static_cast<size_t>(id)] = 1;
  uint64_t covered = static_cast<uint64_t>(std::count(seen.begin(), seen.end(), 1));

  uint64_t samples = 0, bytes = 0, hits = 0, downloads = 0, evictions = 0, wait_ns = 0;
  for (int p = 0; p < 2 * kProcs; ++p) {
    samples += slots[p].samples, bytes += slots[p].bytes, hits += slots[p].hits;
    downloads += slots[p].downloads, evictions += slots[p].evictions, wait_ns += slots[p].wait_ns;
  }
  std::printf("\n== results\n");
  std::printf("   epoch: %lld planned samples (epoch size %lld), %llu distinct; every process read "
              "its planned order exactly, across the interruption\n",
              (long long)planned.size(), (long long)epoch_size, (unsigned long long)covered);
  std::printf("   throughput: %llu samples in %.2f s = %.0f samples/s, %.1f MB/s (all %d processes)\n",
              (unsigned long long)samples, secs, samples / secs, bytes / 1e6 / secs, kProcs);
  const char* unit = files ? "file" : "shard";
  std::printf("   cache: %llu hits, %llu %s downloads, %llu evictions; largest cache folder "
              "%.1f MiB of a %.0f MiB limit\n",
              (unsigned long long)hits, (unsigned long long)downloads, unit,
              (unsigned long long)evictions, max_cache / 1048576.0, kCacheLimit / 1048576.0);
  std::printf("   consumers waited %.3f s in total for %ss\n", wait_ns / 1e9, unit);
  if (max_cache > kCacheLimit) {
    return InternalError("a cache folder grew past cache_limit: " + std::to_string(max_cache) +
                         " > " + std::to_string(kCacheLimit) + " bytes");
  }
  ::munmap(mem, sizeof(Slot) * kProcs * 2);
  std::printf("\ndemo finished: data and caches in %s\n", work.c_str());
  return Status::Ok();
}

}  // namespace

int RunDemo(const Args& args) {
  auto flags = ParseFlags(args, {}, {"files"});
  if (!flags.ok()) return Error("demo", flags.status(), 2);
  if (flags->positional.size() > 1) {
    std::fputs("usage: sluice demo [--files] [DATASET-FOLDER-OR-URL]\n", stderr);
    return 2;
  }
  Status st = Demo(flags->positional.empty() ? "" : flags->positional[0], flags->Has("files"));
  if (!st.ok()) return Error("demo", st);
  return 0;
}

}  // namespace sluice::cli
