#include "bindings/cli/bench/bench_plan.h"

#include <algorithm>
#include <list>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "bindings/cli/bench/job_plan.h"
#include "bindings/cli/bench/scratch_folder.h"

namespace sluice::bench {
namespace {

// One sample read by one worker, and whether its shard is asked for ahead.
struct Request {
  int64_t ask_step;   // when the prefetcher asks for it
  int64_t need_step;  // when the batch needing it is due
  int64_t rank_in_node, worker;
  size_t process;
  int64_t batch;  // the worker's batch that needs it
  uint32_t shard;
  bool asks;  // the prefetcher asks for the shard ahead of this read (else it is only read)
};

// After each request of a node: the step, its cache bytes and downloads so far.
struct NodePoint {
  int64_t step;
  uint64_t cache_bytes, bytes_downloaded;
};

// v * num / den, rounded to nearest.
uint64_t Scaled(uint64_t v, int64_t num, int64_t den) {
  const unsigned __int128 n = static_cast<unsigned __int128>(v) * static_cast<uint64_t>(num);
  return static_cast<uint64_t>((n + static_cast<uint64_t>(den) / 2) / static_cast<uint64_t>(den));
}

// The job's totals from `planned` of its `nodes` nodes (each node reads a
// like share: the planner deals every node the same number of samples).
// Ratios, per-node figures and the stall spread stay the planned nodes'.
void ScaleToJob(int64_t planned, int64_t nodes, BenchReport* r) {
  if (planned == nodes) return;
  for (uint64_t* v : {&r->planned_samples, &r->shards_touched, &r->samples, &r->batches, &r->bytes_downloaded,
                      &r->shards_downloaded, &r->cache_hits, &r->shards_evicted}) {
    *v = Scaled(*v, nodes, planned);
  }
  r->stall_total_s = r->stall_total_s * static_cast<double>(nodes) / static_cast<double>(planned);
  for (SeriesPoint& pt : r->series) {
    pt.samples = Scaled(pt.samples, nodes, planned);
    pt.bytes_downloaded = Scaled(pt.bytes_downloaded, nodes, planned);
  }
}

int64_t StepOf(int64_t position, int64_t batch, int64_t workers, int64_t worker) {
  return (position / batch) * workers + worker;
}

// A node's LRU cache of raw shard bytes. A shard asked for and not read yet
// is pinned (the prefetcher holds it); only unpinned ones are evicted.
class LruCache {
 public:
  LruCache(std::optional<uint64_t> limit, const std::vector<ShardBytes>& shards)
      : limit_(limit), shards_(shards) {}
  bool Has(uint32_t shard) const { return where_.count(shard) > 0; }
  void Touch(uint32_t shard) { order_.splice(order_.end(), order_, where_.at(shard)); }
  void Pin(uint32_t shard) { ++pins_[shard]; }
  void Unpin(uint32_t shard) {
    auto it = pins_.find(shard);
    if (it != pins_.end() && --it->second == 0) pins_.erase(it);
  }
  // Evicts unpinned shards (any, when `force`: a read goes before the
  // prefetches), least recently used first, until `bytes` more fit under the
  // limit; false (nothing evicted) when they cannot.
  bool MakeRoom(uint64_t bytes, uint64_t* evicted, bool force = false) {
    if (!limit_) return true;
    uint64_t freeable = 0;
    for (uint32_t s : order_) freeable += pins_.count(s) && !force ? 0 : shards_[s].cached;
    if (used_ + bytes > *limit_ + freeable) return false;
    for (auto it = order_.begin(); it != order_.end() && used_ + bytes > *limit_;) {
      if (pins_.count(*it) && !force) {
        ++it;
        continue;
      }
      used_ -= shards_[*it].cached;
      where_.erase(*it);
      it = order_.erase(it);
      ++*evicted;
    }
    return true;
  }
  void Add(uint32_t shard) {
    order_.push_back(shard);
    where_[shard] = std::prev(order_.end());
    used_ += shards_[shard].cached;
  }
  uint64_t used() const { return used_; }

 private:
  std::optional<uint64_t> limit_;
  const std::vector<ShardBytes>& shards_;
  std::list<uint32_t> order_;  // least recently used first
  std::unordered_map<uint32_t, std::list<uint32_t>::iterator> where_;
  std::unordered_map<uint32_t, int> pins_;
  uint64_t used_ = 0;
};

}  // namespace

Result<BenchReport> PredictBench(const BenchOptions& given) {
  BenchOptions o = given;
  std::optional<ScratchFolder> scratch;  // for the index files only
  if (o.cache_dir.empty()) {
    SLUICE_ASSIGN_OR_RETURN(ScratchFolder folder, ScratchFolder::Create("sluice-bench-plan-"));
    scratch.emplace(std::move(folder));
    o.cache_dir = scratch->path();
  }
  auto plan = LoadJobPlan(o);
  if (!plan.ok()) return plan.status();
  BenchReport r;
  r.mode = "plan";
  DescribeJob(o, *plan, &r);
  r.samples = r.planned_samples;

  const int64_t B = o.dataset.batch_size(), W = o.workers_per_rank;
  const int64_t window = std::max<int64_t>(1, o.dataset.predownload_samples());
  const int64_t per_node = o.ranks_per_node * W;
  const double step_s = o.step_time_s;
  const std::vector<ShardBytes>& shards = plan->shards;
  const size_t planned = plan->nodes.size();
  std::vector<std::vector<NodePoint>> points(planned);
  // [process][batch] -> seconds late (every batch reads a sample, so every one is set)
  std::vector<std::vector<double>> lateness(plan->ids.size());
  if (o.link_bandwidth) {
    for (size_t p = 0; p < plan->ids.size(); ++p) lateness[p].resize((plan->ids[p].size() + size_t(B) - 1) / size_t(B));
  }
  r.per_node.assign(planned, {});
  int64_t last_step = 0;

  for (size_t at = 0; at < planned; ++at) {  // the at-th planned node
    std::vector<Request> requests;
    for (int64_t q = 0; q < per_node; ++q) {
      const size_t p = at * static_cast<size_t>(per_node) + static_cast<size_t>(q);
      const int64_t worker = q % W;
      const std::vector<int64_t>& ids = plan->ids[p];
      std::unordered_map<uint32_t, int64_t> last_read;  // shard -> last position read
      for (int64_t i = 0; i < static_cast<int64_t>(ids.size()); ++i) {
        const uint32_t shard =
            static_cast<uint32_t>(plan->locator->Locate(static_cast<uint64_t>(ids[static_cast<size_t>(i)])).first);
        auto it = last_read.find(shard);
        const bool asks = it == last_read.end() || i - it->second > window;
        requests.push_back({StepOf(std::max<int64_t>(0, i - window), B, W, worker), StepOf(i, B, W, worker),
                            q / W, worker, p, i / B, shard, asks});
        last_read[shard] = i;
      }
      if (!ids.empty()) last_step = std::max(last_step, StepOf(static_cast<int64_t>(ids.size()) - 1, B, W, worker));
    }
    // The prefetcher's asks (fetch when absent), and every sample's read
    // (touch; fetch again when evicted since: the thrash of a window whose
    // shards do not fit in the cache).
    struct Event {
      int64_t step;
      bool read;
      const Request* q;
    };
    std::vector<Event> events;
    for (const Request& q : requests) {
      if (q.asks) events.push_back({q.ask_step, false, &q});
      events.push_back({q.need_step, true, &q});
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
      return std::tie(a.step, a.q->rank_in_node, a.q->worker, a.read) <
             std::tie(b.step, b.q->rank_in_node, b.q->worker, b.read);
    });
    LruCache cache(o.dataset.cache_limit, shards);
    NodeStats& n = r.per_node[at];
    double link_free = 0;
    std::vector<char> pinned(requests.size(), 0);
    for (const Event& e : events) {
      const Request& q = *e.q;
      const size_t k = static_cast<size_t>(e.q - requests.data());
      double arrived = static_cast<double>(e.step) * step_s;
      bool fetch = false;
      if (!e.read) {  // the ask: fetch and pin when there is room, else leave it to the read
        if (cache.Has(q.shard)) {
          ++n.cache_hits;
          cache.Touch(q.shard);
          cache.Pin(q.shard), pinned[k] = 1;
        } else if (cache.MakeRoom(shards[q.shard].cached, &n.shards_evicted)) {
          fetch = true;
          cache.Pin(q.shard), pinned[k] = 1;
        }
      } else {
        if (pinned[k]) cache.Unpin(q.shard);
        if (cache.Has(q.shard)) {
          cache.Touch(q.shard);
          if (q.asks && !pinned[k]) ++n.cache_hits;  // the ask waited; another worker fetched it meanwhile
        } else {
          cache.MakeRoom(shards[q.shard].cached, &n.shards_evicted, /*force=*/true);
          fetch = true;
        }
      }
      if (fetch) {
        const ShardBytes& s = shards[q.shard];
        n.bytes_downloaded += s.stored;
        ++n.shards_downloaded;
        cache.Add(q.shard);
        if (o.link_bandwidth) {
          link_free = std::max(link_free, arrived) + static_cast<double>(s.stored) / static_cast<double>(*o.link_bandwidth);
          arrived = link_free;
        }
      }
      n.peak_cache_bytes = std::max(n.peak_cache_bytes, cache.used());
      if (o.link_bandwidth) {
        double& late = lateness[q.process][static_cast<size_t>(q.batch)];
        late = std::max(late, arrived - static_cast<double>(q.need_step) * step_s);
      }
      points[at].push_back({e.step, cache.used(), n.bytes_downloaded});
    }
  }
  for (const NodeStats& n : r.per_node) {
    r.bytes_downloaded += n.bytes_downloaded, r.shards_downloaded += n.shards_downloaded;
    r.cache_hits += n.cache_hits, r.shards_evicted += n.shards_evicted;
  }
  const uint64_t acquired = r.cache_hits + r.shards_downloaded;
  r.cache_hit_ratio = acquired ? static_cast<double>(r.cache_hits) / static_cast<double>(acquired) : 0;
  r.egress_ratio = r.dataset_stored_bytes ? static_cast<double>(r.bytes_downloaded) / static_cast<double>(planned) /
                                                static_cast<double>(r.dataset_stored_bytes)
                                          : 0;
  std::vector<uint64_t> late_ns;
  for (const std::vector<int64_t>& ids : plan->ids) r.batches += (ids.size() + static_cast<size_t>(B) - 1) / static_cast<size_t>(B);
  double first_min = -1;
  for (const std::vector<double>& process : lateness) {
    for (size_t batch = 0; batch < process.size(); ++batch) {
      const double late = process[batch];
      if (batch == 0) {  // a worker's first batch: the start-up, not a stall
        first_min = first_min < 0 ? std::max(0.0, late) : std::min(first_min, std::max(0.0, late));
        r.first_sample_max_s = std::max(r.first_sample_max_s, late);
        continue;
      }
      if (late > 0) {
        r.stall_total_s += late;
        late_ns.push_back(static_cast<uint64_t>(late * 1e9));
      }
    }
  }
  late_ns.resize(std::max<size_t>(late_ns.size(), static_cast<size_t>(r.batches)), 0);  // on time: 0
  r.stall_ms = SpreadMs(std::move(late_ns));
  r.first_sample_s = std::max(0.0, first_min);
  r.consumer_waits = o.link_bandwidth && r.stall_total_s > 0;

  r.series_unit = step_s > 0 ? "s" : "step";
  // The series: at most ~200 steps, each node's cache after its last
  // request at or before the step, samples due by then.
  const int64_t every = std::max<int64_t>(1, (last_step + 1) / 200);
  for (int64_t s = 0;; s = std::min(s + every, last_step)) {
    SeriesPoint pt;
    pt.t = step_s > 0 ? static_cast<double>(s) * step_s : static_cast<double>(s);
    for (size_t p = 0; p < plan->ids.size(); ++p) {
      const int64_t w = static_cast<int64_t>(p) % W;
      if (s < w) continue;
      const uint64_t batches = static_cast<uint64_t>((s - w) / W + 1);
      pt.samples += std::min<uint64_t>(plan->ids[p].size(), batches * static_cast<uint64_t>(B));
    }
    for (const auto& node_points : points) {
      auto it = std::upper_bound(node_points.begin(), node_points.end(), s,
                                 [](int64_t step, const NodePoint& q) { return step < q.step; });
      const NodePoint* last = it == node_points.begin() ? nullptr : &*std::prev(it);
      pt.cache_bytes.push_back(last ? last->cache_bytes : 0);
      pt.bytes_downloaded += last ? last->bytes_downloaded : 0;
    }
    r.series.push_back(std::move(pt));
    if (s == last_step) break;
  }
  ScaleToJob(static_cast<int64_t>(planned), o.nodes, &r);
  return r;
}

}  // namespace sluice::bench
