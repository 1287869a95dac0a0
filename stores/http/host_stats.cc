#include "stores/http/host_stats.h"

#include <map>
#include <memory>
#include <mutex>

namespace sluice {
namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<HostStats>> hosts;
};

// Never destroyed: clients on other threads may count during exit.
Registry& TheRegistry() {
  static Registry* r = new Registry;
  return *r;
}

}  // namespace

const char* HttpErrorKindName(HttpErrorKind kind) {
  switch (kind) {
    case HttpErrorKind::kTimeout: return "timeout";
    case HttpErrorKind::kConnection: return "connection";
    case HttpErrorKind::kThrottled: return "throttled";
    case HttpErrorKind::kServer: return "server";
    case HttpErrorKind::kClient: return "client";
    case HttpErrorKind::kOther:
    case HttpErrorKind::kCount: break;
  }
  return "other";
}

HostStats* HostStatsFor(const std::string& host) {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::unique_ptr<HostStats>& entry = r.hosts[host];
  if (!entry) entry = std::make_unique<HostStats>();
  return entry.get();
}

std::vector<HostStatsSnapshot> SnapshotHostStats() {
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<HostStatsSnapshot> out;
  out.reserve(r.hosts.size());
  constexpr auto kRelaxed = std::memory_order_relaxed;
  for (const auto& [host, s] : r.hosts) {
    HostStatsSnapshot o;
    o.host = host;
    o.requests = s->requests.load(kRelaxed);
    o.attempts = s->attempts.load(kRelaxed);
    o.retries = s->retries.load(kRelaxed);
    o.failed = s->failed.load(kRelaxed);
    o.throttles_429 = s->throttles_429.load(kRelaxed);
    o.throttles_503 = s->throttles_503.load(kRelaxed);
    for (size_t k = 0; k < o.errors.size(); ++k) o.errors[k] = s->errors[k].load(kRelaxed);
    o.bytes = s->bytes.load(kRelaxed);
    o.in_flight = s->in_flight.load(kRelaxed);
    o.busy_us = s->busy_us.load(kRelaxed);
    o.first_byte = s->first_byte.Snapshot();
    o.transfer = s->transfer.Snapshot();
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace sluice
