#include "bindings/cli/bench/bench_run.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <thread>

#include "bindings/cli/bench/cache_usage.h"
#include "bindings/cli/bench/job_plan.h"
#include "bindings/cli/bench/scratch_folder.h"
#include "engine/dataset/diagnosis.h"
#include "engine/dataset/streaming_dataset.h"

namespace sluice::bench {
namespace {

using Clock = std::chrono::steady_clock;

// What each worker process publishes, through memory shared with the parent.
struct Slot {
  std::atomic<uint64_t> samples{0}, sample_bytes{0}, bytes_downloaded{0};
  std::atomic<uint64_t> shards_downloaded{0}, cache_hits{0}, shards_evicted{0}, wait_ns{0};
  std::atomic<int64_t> first_sample_ns{-1}, done_ns{-1};
  std::atomic<int> failed{0};
  std::atomic<int> code{0};  // the worker's StatusCode
  char error[1024] = {};
  char diagnosis[1024] = {};  // the engine's, over the worker's run
};

int64_t NsSince(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

void Publish(const StreamingDataset& ds, Slot* slot) {
  DatasetCounters c = ds.counters();
  slot->bytes_downloaded = c.bytes_downloaded;
  slot->shards_downloaded = c.shards_downloaded;
  slot->cache_hits = c.cache_hits;
  slot->shards_evicted = c.shards_evicted;
  slot->wait_ns = c.consumer_wait_ns;
}

// One worker process: every epoch's share of (node, rank, worker), batch by
// batch, with the consumer model of bench_run.h. Stalls (ns) go to `stalls`.
Status Worker(const BenchOptions& o, int64_t node, int64_t rank, int64_t worker,
              Clock::time_point t0, Slot* slot, std::vector<uint64_t>* stalls) {
  SLUICE_ASSIGN_OR_RETURN(auto ds, StreamingDataset::Open(o.ForRank(node, rank)));
  const size_t batch = static_cast<size_t>(o.dataset.batch_size());
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(o.step_time_s * static_cast<double>(o.workers_per_rank)));
  std::vector<int64_t> ids(batch);
  std::vector<SampleFields> fields;
  Clock::time_point due = t0;
  uint64_t checksum = 0;
  for (int64_t epoch = 0; epoch < o.epochs; ++epoch) {
    SLUICE_RETURN_IF_ERROR(ds->IterBegin(epoch, 0, worker, o.workers_per_rank));
    for (bool more = true; more;) {
      size_t have = 0;
      uint64_t bytes = 0;
      while (have < batch) {
        SLUICE_ASSIGN_OR_RETURN(size_t n, ds->NextBatch(batch - have, ids.data(), &fields));
        if (n == 0) {
          more = false;
          break;
        }
        if (slot->first_sample_ns < 0) slot->first_sample_ns = NsSince(t0);
        for (size_t k = 0; k < n; ++k) {
          for (std::string_view f : fields[k].fields) {
            for (char c : f) checksum += static_cast<unsigned char>(c);  // the consumer reads it all
            bytes += f.size();
          }
        }
        have += n;
      }
      if (have == 0) break;
      Clock::time_point ready = Clock::now();
      stalls->push_back(ready > due ? static_cast<uint64_t>((ready - due).count()) : 0);
      slot->samples += have;
      slot->sample_bytes += bytes;
      Publish(*ds, slot);
      Clock::time_point taken = std::max(ready, due);
      if (period.count() > 0) std::this_thread::sleep_until(taken);
      due = taken + period;
    }
  }
  Publish(*ds, slot);
  std::snprintf(slot->diagnosis, sizeof slot->diagnosis, "%s", Diagnose(ds->Metrics()).c_str());
  slot->done_ns = NsSince(t0);
  if (checksum == 1) std::fputc(' ', stderr);  // keeps the reads from being optimised away
  return Status::Ok();
}

struct SharedSlots {
  Slot* slots = nullptr;
  size_t count = 0;
  ~SharedSlots() {
    if (slots) ::munmap(slots, sizeof(Slot) * count);
  }
};

void SaveStalls(const std::string& path, const std::vector<uint64_t>& stalls) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(stalls.data()),
            static_cast<std::streamsize>(stalls.size() * sizeof(uint64_t)));
}

std::vector<uint64_t> LoadStalls(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<uint64_t> v;
  for (uint64_t x; in.read(reinterpret_cast<char*>(&x), sizeof x);) v.push_back(x);
  return v;
}

}  // namespace

Result<BenchReport> RunBench(const BenchOptions& given) {
  // Stall files, and the cache when none is given.
  SLUICE_ASSIGN_OR_RETURN(ScratchFolder scratch, ScratchFolder::Create("sluice-bench-"));
  BenchOptions o = given;
  if (o.cache_dir.empty()) o.cache_dir = scratch.path() + "/cache";
  const int64_t procs = o.processes();

  // Plan in this process: a bad URL or bad planning options fail here, not
  // in a child; the index is then in each node's cache folder.
  BenchReport r;
  r.mode = "run";
  SLUICE_ASSIGN_OR_RETURN(JobPlan plan, LoadJobPlan(o));
  DescribeJob(o, plan, &r);

  SharedSlots shared;
  void* mem = ::mmap(nullptr, sizeof(Slot) * static_cast<size_t>(procs), PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return IoError(std::string("cannot map the bench's counters: ") + std::strerror(errno));
  shared.slots = new (mem) Slot[static_cast<size_t>(procs)];
  shared.count = static_cast<size_t>(procs);
  Slot* slots = shared.slots;

  std::fflush(nullptr);  // nothing buffered is written twice by the children
  const Clock::time_point t0 = Clock::now();
  std::vector<pid_t> pids;
  for (int64_t p = 0; p < procs; ++p) {
    const int64_t node = p / (o.ranks_per_node * o.workers_per_rank);
    const int64_t rank = (p / o.workers_per_rank) % o.ranks_per_node;
    const int64_t worker = p % o.workers_per_rank;
    pid_t pid = ::fork();
    if (pid < 0) {
      for (pid_t c : pids) ::kill(c, SIGKILL), ::waitpid(c, nullptr, 0);
      return IoError(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
      std::vector<uint64_t> stalls;
      Status st;
      try {  // the parent sees an exception as this worker's error
        st = Worker(o, node, rank, worker, t0, &slots[p], &stalls);
      } catch (const std::exception& e) {
        st = InternalError(std::string("exception: ") + e.what());
      } catch (...) {
        st = InternalError("unknown exception");
      }
      if (!st.ok()) {
        std::string text = "process " + std::to_string(p) + " (node " + std::to_string(node) +
                           ", rank " + std::to_string(rank) + ", worker " + std::to_string(worker) +
                           "): " + st.message();
        std::snprintf(slots[p].error, sizeof slots[p].error, "%s", text.c_str());
        slots[p].code = static_cast<int>(st.code());
        slots[p].failed = 1;
      } else {
        SaveStalls(scratch.path() + "/stalls." + std::to_string(p), stalls);
      }
      ::_exit(st.ok() ? 0 : 1);
    }
    pids.push_back(pid);
  }

  std::vector<rusage> usage(static_cast<size_t>(procs));
  const auto interval = std::chrono::duration<double>(o.interval_s);
  auto sample = [&] {
    SeriesPoint pt;
    pt.t = static_cast<double>(NsSince(t0)) / 1e9;
    for (int64_t p = 0; p < procs; ++p) {
      pt.samples += slots[p].samples, pt.sample_bytes += slots[p].sample_bytes;
      pt.bytes_downloaded += slots[p].bytes_downloaded;
    }
    for (int64_t n = 0; n < o.nodes; ++n) {
      uint64_t bytes = 0;
      for (size_t s = 0; s < o.dataset.streams.size(); ++s) bytes += CachedBytes(o.CacheFolder(n, s));
      pt.cache_bytes.push_back(bytes);
    }
    r.series.push_back(std::move(pt));
  };
  bool failed = false;
  for (size_t alive = pids.size(); alive > 0;) {
    std::this_thread::sleep_for(interval);
    sample();
    alive = 0;
    for (size_t p = 0; p < pids.size(); ++p) {
      if (pids[p] <= 0) continue;
      int status = 0;
      pid_t got = ::wait4(pids[p], &status, WNOHANG, &usage[p]);
      if (got == 0) {
        ++alive;
        continue;
      }
      pids[p] = -1;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = true;
    }
    if (failed) {  // one worker's error ends the run: the others would wait on its shards
      for (pid_t& pid : pids) {
        if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0), pid = -1;
      }
      break;
    }
  }
  if (failed) {
    for (int64_t p = 0; p < procs; ++p) {
      if (slots[p].failed) return Status(static_cast<StatusCode>(slots[p].code.load()), slots[p].error);
    }
    return InternalError("a bench worker process ended abnormally (killed or crashed)");
  }

  r.per_node.assign(static_cast<size_t>(o.nodes), {});
  // The run ends when the last worker read its last sample (not when this
  // process next polled).
  for (int64_t p = 0; p < procs; ++p) r.wall_s = std::max(r.wall_s, static_cast<double>(slots[p].done_ns.load()) / 1e9);
  std::vector<uint64_t> stalls;
  double first_min = -1, first_max = 0;
  uint64_t most_wait = 0;
  for (int64_t p = 0; p < procs; ++p) {
    const Slot& s = slots[p];
    if (r.diagnosis.empty() || s.wait_ns.load() > most_wait) {
      most_wait = s.wait_ns.load();
      r.diagnosis = s.diagnosis;
    }
    NodeStats& n = r.per_node[static_cast<size_t>(p / (o.ranks_per_node * o.workers_per_rank))];
    n.bytes_downloaded += s.bytes_downloaded, n.shards_downloaded += s.shards_downloaded;
    n.cache_hits += s.cache_hits, n.shards_evicted += s.shards_evicted;
    r.samples += s.samples, r.sample_bytes += s.sample_bytes;
    r.consumer_wait_s += static_cast<double>(s.wait_ns.load()) / 1e9;
    if (s.first_sample_ns >= 0) {
      double f = static_cast<double>(s.first_sample_ns.load()) / 1e9;
      first_min = first_min < 0 ? f : std::min(first_min, f);
      first_max = std::max(first_max, f);
    }
    auto mine = LoadStalls(scratch.path() + "/stalls." + std::to_string(p));
    stalls.insert(stalls.end(), mine.begin(), mine.end());
    const rusage& u = usage[static_cast<size_t>(p)];
    r.cpu_s += static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
               static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
    r.peak_rss_bytes = std::max<uint64_t>(r.peak_rss_bytes, static_cast<uint64_t>(u.ru_maxrss) * 1024);
  }
  sample();  // the caches as the run left them
  for (const SeriesPoint& pt : r.series) {
    for (size_t n = 0; n < pt.cache_bytes.size(); ++n) {
      r.per_node[n].peak_cache_bytes = std::max(r.per_node[n].peak_cache_bytes, pt.cache_bytes[n]);
    }
  }
  for (const NodeStats& n : r.per_node) {
    r.bytes_downloaded += n.bytes_downloaded, r.shards_downloaded += n.shards_downloaded;
    r.cache_hits += n.cache_hits, r.shards_evicted += n.shards_evicted;
  }
  const uint64_t acquired = r.cache_hits + r.shards_downloaded;
  r.cache_hit_ratio = acquired ? static_cast<double>(r.cache_hits) / static_cast<double>(acquired) : 0;
  r.egress_ratio = r.dataset_stored_bytes
                       ? static_cast<double>(r.bytes_downloaded) / static_cast<double>(o.nodes) /
                             static_cast<double>(r.dataset_stored_bytes)
                       : 0;
  r.first_sample_s = std::max(0.0, first_min), r.first_sample_max_s = first_max;
  r.batches = stalls.size();
  for (uint64_t s : stalls) r.stall_total_s += static_cast<double>(s) / 1e9;
  r.stall_ms = SpreadMs(std::move(stalls));
  r.samples_per_s = r.wall_s > 0 ? static_cast<double>(r.samples) / r.wall_s : 0;
  r.gb_per_s = r.wall_s > 0 ? static_cast<double>(r.sample_bytes) / 1e9 / r.wall_s : 0;
  r.cpu_s_per_gb = r.sample_bytes ? r.cpu_s / (static_cast<double>(r.sample_bytes) / 1e9) : 0;
  return r;
}

}  // namespace sluice::bench
