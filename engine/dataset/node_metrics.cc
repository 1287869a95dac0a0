#include "engine/dataset/node_metrics.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <map>
#include <string_view>
#include <tuple>
#include <vector>

#include "base/file.h"
#include "engine/cache/state_dir.h"

namespace sluice {
namespace {

// A record (all integers 8 bytes little-endian): the magic, the dataset
// instance, CountFields() in order, the four leads (LeadFields), the number
// of hosts, then per host its name's length, its name, its HostFields and
// its two histograms' buckets. The magic names the version: a record of
// another magic, or one that does not end where its last host does, is not
// summed.
constexpr std::string_view kRecordMagic = "SLNODE03";
constexpr std::string_view kRecordSuffix = ".rec";
constexpr const char* kRetentionVar = "SLUICE_METRICS_RETENTION_S";

using HostField = uint64_t HostStatsSnapshot::*;

// A host's counts in the record's order (its errors by kind and its
// histograms follow them).
constexpr HostField kHostFields[] = {
    &HostStatsSnapshot::requests,      &HostStatsSnapshot::attempts,
    &HostStatsSnapshot::retries,       &HostStatsSnapshot::failed,
    &HostStatsSnapshot::throttles_429, &HostStatsSnapshot::throttles_503,
    &HostStatsSnapshot::bytes,         &HostStatsSnapshot::busy_us};

constexpr uint64_t DatasetMetrics::*kLeadFields[] = {
    &DatasetMetrics::prefetch_lead_samples, &DatasetMetrics::prefetch_lead_shards,
    &DatasetMetrics::lead_samples_min, &DatasetMetrics::lead_shards_min};

constexpr LeadMinima DatasetMetrics::*kLeadMinimaFields[] = {
    &DatasetMetrics::lead_samples_steps, &DatasetMetrics::lead_shards_steps};

// A host's integers after its name.
constexpr size_t kHostWords = std::size(kHostFields) +
                              std::tuple_size_v<decltype(HostStatsSnapshot::errors)> +
                              2 * LogHistogram::kBuckets;

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads the next 8 bytes of `in`; false when fewer are left.
bool TakeU64(std::string_view* in, uint64_t* v) {
  if (in->size() < 8) return false;
  *v = 0;
  for (int i = 0; i < 8; ++i) {
    *v |= static_cast<uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
  }
  in->remove_prefix(8);
  return true;
}

size_t HeaderSize() {
  return kRecordMagic.size() + 8 + 8 * CountFields().size() + 8 * std::size(kLeadFields) +
         std::size(kLeadMinimaFields) * (8 + 16 * LeadMinima::kMaxSteps) + 8;
}
// The longest record: every host and "other" with the longest names.
size_t MaxRecordSize() {
  return HeaderSize() + (kNodeRecordHosts + 1) * (8 + kNodeRecordHostName + 8 * kHostWords);
}

void AddHost(HostStatsSnapshot* to, const HostStatsSnapshot& h) {
  for (HostField f : kHostFields) to->*f += h.*f;
  for (size_t k = 0; k < h.errors.size(); ++k) to->errors[k] += h.errors[k];
  to->first_byte.Add(h.first_byte);
  to->transfer.Add(h.transfer);
}

// The hosts a record keeps: the busiest kNodeRecordHosts with names within
// bounds, by name, then the rest summed as kOtherHosts (when any).
std::vector<HostStatsSnapshot> RecordHosts(const std::vector<HostStatsSnapshot>& hosts) {
  std::vector<const HostStatsSnapshot*> named;
  HostStatsSnapshot other;
  other.host = kOtherHosts;
  bool has_other = false;
  for (const HostStatsSnapshot& h : hosts) {
    if (h.host.size() <= kNodeRecordHostName && h.host != kOtherHosts) {
      named.push_back(&h);
    } else {
      AddHost(&other, h);
      has_other = true;
    }
  }
  if (named.size() > kNodeRecordHosts) {
    std::stable_sort(named.begin(), named.end(),
                     [](const auto* a, const auto* b) { return a->requests > b->requests; });
    for (size_t k = kNodeRecordHosts; k < named.size(); ++k) AddHost(&other, *named[k]);
    has_other = true;
    named.resize(kNodeRecordHosts);
  }
  std::vector<HostStatsSnapshot> kept;
  for (const HostStatsSnapshot* h : named) kept.push_back(*h);
  std::sort(kept.begin(), kept.end(),
            [](const auto& a, const auto& b) { return a.host < b.host; });
  if (has_other) kept.push_back(std::move(other));
  return kept;
}

// One record's contents.
struct NodeRecordContents {
  uint64_t dataset = 0;
  DatasetMetrics m;
};

// `in` as a record; nullopt when it is not a whole one of this version.
std::optional<NodeRecordContents> ParseRecord(std::string_view in) {
  if (in.substr(0, kRecordMagic.size()) != kRecordMagic) return std::nullopt;
  in.remove_prefix(kRecordMagic.size());
  NodeRecordContents r;
  if (!TakeU64(&in, &r.dataset)) return std::nullopt;
  for (CountField f : CountFields()) {
    if (!TakeU64(&in, &f(r.m))) return std::nullopt;
  }
  for (auto f : kLeadFields) {
    if (!TakeU64(&in, &(r.m.*f))) return std::nullopt;
  }
  for (auto f : kLeadMinimaFields) {
    uint64_t count = 0;
    if (!TakeU64(&in, &count) || count > LeadMinima::kMaxSteps) return std::nullopt;
    std::vector<LeadStep> steps(count);
    for (LeadStep& step : steps) {
      if (!TakeU64(&in, &step.batches) || !TakeU64(&in, &step.least)) return std::nullopt;
    }
    std::optional<LeadMinima> minima = LeadMinima::FromSteps(std::move(steps));
    if (!minima) return std::nullopt;
    r.m.*f = std::move(*minima);
  }
  uint64_t hosts = 0;
  if (!TakeU64(&in, &hosts) || hosts > kNodeRecordHosts + 1) return std::nullopt;
  for (uint64_t k = 0; k < hosts; ++k) {
    HostStatsSnapshot h;
    uint64_t length = 0;
    if (!TakeU64(&in, &length) || length > kNodeRecordHostName || in.size() < length) {
      return std::nullopt;
    }
    h.host = std::string(in.substr(0, length));
    in.remove_prefix(length);
    bool whole = true;
    for (HostField f : kHostFields) whole = whole && TakeU64(&in, &(h.*f));
    for (uint64_t& e : h.errors) whole = whole && TakeU64(&in, &e);
    for (uint64_t& b : h.first_byte.buckets) whole = whole && TakeU64(&in, &b);
    for (uint64_t& b : h.transfer.buckets) whole = whole && TakeU64(&in, &b);
    if (!whole) return std::nullopt;
    r.m.hosts.push_back(std::move(h));
  }
  if (!in.empty()) return std::nullopt;
  return r;
}

// The process a record file is named by; nullopt for a name not made by
// NodeRecordName.
std::optional<TempOwner> RecordOwner(std::string_view name) {
  name.remove_suffix(kRecordSuffix.size());
  TempOwner owner;
  const char* p = name.data();
  const char* end = name.data() + name.size();
  auto r = std::from_chars(p, end, owner.pid);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.') return std::nullopt;
  r = std::from_chars(r.ptr + 1, end, owner.start);
  if (r.ec != std::errc() || r.ptr == end || *r.ptr != '.') return std::nullopt;
  uint64_t dataset = 0;
  r = std::from_chars(r.ptr + 1, end, dataset, 16);
  if (r.ec != std::errc() || r.ptr != end) return std::nullopt;
  return owner;
}

// For the record at `path` of an ended process: false when it is gone or
// was last written longer than `retention` before `now` (then deleted).
Result<bool> KeepEndedRecord(const std::string& path, int64_t now, std::chrono::seconds retention,
                             Env* env) {
  auto st = env->Stat(path);
  if (!st.ok()) {
    if (IsNotFound(st.status())) return false;  // deleted meanwhile
    return st.status();
  }
  if (now - static_cast<int64_t>(st->st_mtim.tv_sec) <= retention.count()) return true;
  Status removed = env->Remove(path);
  if (!removed.ok() && !IsNotFound(removed)) {
    return removed.WithContext("deleting an expired metrics record");
  }
  return false;
}

bool IsRecordName(const std::string& name) {
  return name.size() > kRecordSuffix.size() &&
         name.compare(name.size() - kRecordSuffix.size(), kRecordSuffix.size(), kRecordSuffix) == 0;
}

int64_t NowSeconds() {
  timespec t{};
  ::clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<int64_t>(t.tv_sec);
}

}  // namespace

Result<std::string> NodeMetricsDir(const std::string& local, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::string state, CacheStateDir(local, env));
  std::string dir = JoinPath(state, "metrics");
  SLUICE_RETURN_IF_ERROR(env->MakeFolder(dir));
  return dir;
}

std::string NodeRecordName(uint64_t dataset) {
  const TempOwner me = ThisProcessTempOwner();
  char name[80];
  std::snprintf(name, sizeof name, "%u.%llu.%016llx", me.pid,
                static_cast<unsigned long long>(me.start), static_cast<unsigned long long>(dataset));
  return std::string(name) + std::string(kRecordSuffix);
}

Status WriteNodeRecord(const std::string& dir, uint64_t dataset, const DatasetMetrics& m,
                       Env* env) {
  const std::vector<HostStatsSnapshot> hosts = RecordHosts(m.hosts);
  std::string record(kRecordMagic);
  record.reserve(HeaderSize() + hosts.size() * (8 + 64 + 8 * kHostWords));
  PutU64(&record, dataset);
  for (CountField f : CountFields()) PutU64(&record, CountOf(f, m));
  for (auto f : kLeadFields) PutU64(&record, m.*f);
  for (auto f : kLeadMinimaFields) {
    const std::vector<LeadStep>& steps = (m.*f).steps();
    PutU64(&record, steps.size());
    for (const LeadStep& step : steps) {
      PutU64(&record, step.batches);
      PutU64(&record, step.least);
    }
  }
  PutU64(&record, hosts.size());
  for (const HostStatsSnapshot& h : hosts) {
    PutU64(&record, h.host.size());
    record += h.host;
    for (HostField f : kHostFields) PutU64(&record, h.*f);
    for (uint64_t e : h.errors) PutU64(&record, e);
    for (uint64_t b : h.first_byte.buckets) PutU64(&record, b);
    for (uint64_t b : h.transfer.buckets) PutU64(&record, b);
  }
  return WriteFileAtomic(JoinPath(dir, NodeRecordName(dataset)), record, env);
}

Result<std::chrono::seconds> NodeRecordRetention(std::optional<int64_t> option) {
  if (option) return std::chrono::seconds(*option);
  const char* v = std::getenv(kRetentionVar);
  if (v == nullptr || *v == '\0') return std::chrono::seconds(std::chrono::hours(24));
  const std::string_view text(v);
  int64_t s = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), s);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || s < 0) {
    return InvalidArgumentError(std::string("environment variable ") + kRetentionVar + " '" +
                                v + "': expected a number of seconds (a decimal integer)");
  }
  return std::chrono::seconds(s);
}

Status PruneNodeRecords(const std::string& dir, Env* env, std::optional<int64_t> retention_s) {
  SLUICE_ASSIGN_OR_RETURN(const std::chrono::seconds retention, NodeRecordRetention(retention_s));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListFolder(dir));
  const int64_t now = NowSeconds();
  for (const std::string& name : names) {
    if (!IsRecordName(name)) continue;
    const std::optional<TempOwner> owner = RecordOwner(name);
    if (!owner || !TempOwnerGone(*owner)) continue;
    SLUICE_RETURN_IF_ERROR(KeepEndedRecord(JoinPath(dir, name), now, retention, env).status());
  }
  return Status::Ok();
}

Result<DatasetMetrics> SumNodeRecords(const std::string& dir, std::optional<uint64_t> only,
                                      Env* env, std::optional<int64_t> retention_s,
                                      NodeLeadWindow* window) {
  SLUICE_ASSIGN_OR_RETURN(const std::chrono::seconds retention, NodeRecordRetention(retention_s));
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListFolder(dir));
  DatasetMetrics sum;
  sum.processes = 0;
  // Per process (its pid and start, or the record's name when it has none),
  // per host: the process-wide counters as its fullest record saw them.
  std::map<std::string, std::map<std::string, HostStatsSnapshot>> process_hosts;
  bool has_min = false;
  std::optional<uint64_t> window_samples_min, window_shards_min;
  std::map<std::string, uint64_t> seen;
  uint64_t readers = 0;
  const int64_t now = NowSeconds();
  for (const std::string& name : names) {
    if (!IsRecordName(name)) continue;  // a temporary on its way in, or a foreign file
    const std::string path = JoinPath(dir, name);
    const std::optional<TempOwner> owner = RecordOwner(name);
    const bool gone = owner && TempOwnerGone(*owner);
    if (gone) {
      SLUICE_ASSIGN_OR_RETURN(const bool kept, KeepEndedRecord(path, now, retention, env));
      if (!kept) continue;
    }
    auto text = ReadFile(path, MaxRecordSize(), env);
    if (!text.ok()) {
      // Deleted meanwhile, or longer than a record: not one.
      if (IsNotFound(text.status()) || text.status().code() == StatusCode::kOutOfRange) continue;
      return text.status();
    }
    std::optional<NodeRecordContents> r = ParseRecord(*text);
    if (!r || (only && r->dataset != *only)) continue;
    for (CountField f : CountFields()) f(sum) += f(r->m);
    if (!gone) {
      sum.prefetch_lead_samples += r->m.prefetch_lead_samples;
      sum.prefetch_lead_shards += r->m.prefetch_lead_shards;
    }
    if (r->m.batches > 0) {
      sum.lead_samples_min =
          has_min ? std::min(sum.lead_samples_min, r->m.lead_samples_min) : r->m.lead_samples_min;
      sum.lead_shards_min =
          has_min ? std::min(sum.lead_shards_min, r->m.lead_shards_min) : r->m.lead_shards_min;
      has_min = true;
    }
    if (window) {
      // The batches after the record this window last summed (all of them
      // for a record it did not see, or one whose counts began again).
      auto last = window->seen.find(name);
      const uint64_t after =
          last == window->seen.end() || last->second > r->m.batches ? 0 : last->second;
      auto lower = [](std::optional<uint64_t>* to, std::optional<uint64_t> v) {
        if (v && (!*to || *v < **to)) *to = v;
      };
      lower(&window_samples_min, r->m.lead_samples_steps.After(after));
      lower(&window_shards_min, r->m.lead_shards_steps.After(after));
      seen[name] = r->m.batches;
      if (r->m.batches > after) ++readers;
    }
    // A host's counters are the process's, not the dataset's: two datasets
    // of one process each record them, from their own open (or fork) to
    // their last write. Counted once per process, from the record that saw
    // the most of them (the counters only grow).
    std::map<std::string, HostStatsSnapshot>& own =
        process_hosts[owner ? std::to_string(owner->pid) + "." + std::to_string(owner->start)
                            : name];
    for (const HostStatsSnapshot& h : r->m.hosts) {
      auto [it, added] = own.try_emplace(h.host, h);
      if (!added && std::tie(h.requests, h.attempts, h.bytes) >
                        std::tie(it->second.requests, it->second.attempts, it->second.bytes)) {
        it->second = h;
      }
    }
    ++sum.processes;
  }
  std::map<std::string, HostStatsSnapshot> hosts;
  for (const auto& [process, own] : process_hosts) {
    for (const auto& [name, h] : own) {
      HostStatsSnapshot& to = hosts[name];
      to.host = name;
      AddHost(&to, h);
    }
  }
  for (auto& [name, h] : hosts) sum.hosts.push_back(std::move(h));
  SetHttpTotals(&sum);
  if (window) {
    window->seen = std::move(seen);
    window->lead_samples_min = window_samples_min.value_or(0);
    window->lead_shards_min = window_shards_min.value_or(0);
    window->readers = readers;
  }
  return sum;
}

}  // namespace sluice
