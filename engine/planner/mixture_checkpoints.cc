// The process's sequencer checkpoints, keyed by the phases' exact form.
#include "engine/planner/mixture_checkpoints.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <utility>

namespace sluice::planner {
namespace {

constexpr int64_t kMinSpacing = 4096;
// Phase lists whose tables are kept at once (datasets of one process).
constexpr size_t kKeptTables = 4;

// Every value that decides the sequence: each phase's start, rule,
// interpolation, points and shares.
std::string PhasesKey(const std::vector<MixturePhase>& phases) {
  std::string key;
  const auto put = [&key](int64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
  for (const MixturePhase& p : phases) {
    put(p.from);
    put(int64_t(p.mixture.rule));
    put(int64_t(p.mixture.interpolation));
    put(int64_t(p.mixture.at.size()));
    put(p.mixture.num_streams());
    for (int64_t at : p.mixture.at) put(at);
    for (const auto& share : p.mixture.share) {
      for (int64_t q : share) put(q);
    }
  }
  return key;
}

struct Kept {
  std::mutex mu;
  std::vector<std::pair<std::string, std::shared_ptr<const MixtureCheckpoints>>> tables;  // newest last
};

Kept& TheKept();

// A process forked while a planning thread holds the lock (a DataLoader's
// workers) gets it unlocked.
void LockKeptForFork() { TheKept().mu.lock(); }
void UnlockKeptAfterFork() { TheKept().mu.unlock(); }

Kept& TheKept() {
  static Kept* kept = [] {
    auto* k = new Kept;  // never destroyed: planning threads and fork handlers may outlive statics
    ::pthread_atfork(LockKeptForFork, UnlockKeptAfterFork, UnlockKeptAfterFork);
    return k;
  }();
  return *kept;
}

}  // namespace

MixtureCheckpoints::MixtureCheckpoints(int64_t streams, int64_t end)
    : streams_(streams),
      capacity_(std::clamp<int64_t>(kMaxMixtureTableBytes / (16 * std::max<int64_t>(streams, 1)), 1,
                                    kMaxMixtureCheckpoints)),
      spacing_(std::max(kMinSpacing, (std::max<int64_t>(end, 0) + capacity_ - 1) / capacity_)) {}

void MixtureCheckpoints::Append(const MixtureRun::State& state) {
  rows_.insert(rows_.end(), state.counts.begin(), state.counts.end());
  rows_.insert(rows_.end(), state.phase_counts.begin(), state.phase_counts.end());
  ++size_;
}

std::optional<MixtureRun::State> MixtureCheckpoints::Latest(int64_t after, int64_t at_most) const {
  const int64_t k = std::min(at_most / spacing_, size_);  // checkpoint k is at k * spacing
  if (k < 1 || k * spacing_ <= after) return std::nullopt;
  const auto row = rows_.begin() + (k - 1) * 2 * streams_;
  MixtureRun::State out;
  out.position = k * spacing_;
  out.counts.assign(row, row + streams_);
  out.phase_counts.assign(row + streams_, row + 2 * streams_);
  return out;
}

std::shared_ptr<const MixtureCheckpoints> SharedMixtureCheckpoints(const std::vector<MixturePhase>& phases) {
  const std::string key = PhasesKey(phases);
  Kept& kept = TheKept();
  std::lock_guard<std::mutex> lock(kept.mu);
  for (const auto& [k, table] : kept.tables) {
    if (k == key) return table;
  }
  return nullptr;
}

void KeepMixtureCheckpoints(const std::vector<MixturePhase>& phases, std::shared_ptr<const MixtureCheckpoints> table) {
  std::string key = PhasesKey(phases);
  Kept& kept = TheKept();
  std::lock_guard<std::mutex> lock(kept.mu);
  auto it = std::find_if(kept.tables.begin(), kept.tables.end(), [&](const auto& e) { return e.first == key; });
  if (it != kept.tables.end()) {
    if (it->second->size() >= table->size()) return;
    kept.tables.erase(it);
  }
  if (kept.tables.size() == kKeptTables) kept.tables.erase(kept.tables.begin());
  kept.tables.emplace_back(std::move(key), std::move(table));
}

void DropMixtureCheckpoints() {
  Kept& kept = TheKept();
  std::lock_guard<std::mutex> lock(kept.mu);
  kept.tables.clear();
}

}  // namespace sluice::planner
