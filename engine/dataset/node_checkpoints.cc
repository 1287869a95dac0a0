#include "engine/dataset/node_checkpoints.h"

#include <sys/stat.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "base/file.h"
#include "base/mapped_file.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/node_file.h"
#include "engine/planner/checkpoints_file.h"

namespace sluice {
namespace {

std::function<void()>& WriteHook() {
  static std::function<void()> hook;
  return hook;
}

Status WriteCheckpointsFile(const std::string& path, std::string_view bytes, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(TempFile tmp, TempFile::Create(path, env));
  const size_t half = bytes.size() / 2;
  SLUICE_RETURN_IF_ERROR(tmp.Write(bytes.substr(0, half)));
  if (const auto& hook = WriteHook()) hook();
  SLUICE_RETURN_IF_ERROR(tmp.Write(bytes.substr(half)));
  return tmp.Commit();
}

constexpr char kCheckpointsPrefix[] = "plan_checkpoints.";

std::string PlanPrefix(uint64_t digest) {
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64, digest);
  return kCheckpointsPrefix + std::string(hex) + ".";
}

std::string FileIn(const std::string& state_dir, uint64_t digest, int64_t epoch) {
  return JoinPath(state_dir, PlanPrefix(digest) + std::to_string(epoch) + ".bin");
}

// The epoch of `name` when it is `prefix`<decimal>.bin; else -1.
int64_t EpochOfName(const std::string& name, const std::string& prefix) {
  constexpr std::string_view kSuffix = ".bin";
  if (name.size() <= prefix.size() + kSuffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0) {
    return -1;
  }
  const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 18 || digits.find_first_not_of("0123456789") != std::string::npos) {
    return -1;
  }
  return std::strtoll(digits.c_str(), nullptr, 10);
}

// The plan prefix ("plan_checkpoints.<16 hex>.") of a named epoch file,
// or "" when `name` is not one.
std::string PlanPrefixOfName(const std::string& name) {
  constexpr size_t kHex = 16;
  const size_t at = sizeof(kCheckpointsPrefix) - 1;
  if (name.size() <= at + kHex + 1 || name.compare(0, at, kCheckpointsPrefix) != 0 || name[at + kHex] != '.' ||
      name.find_first_not_of("0123456789abcdef", at) != at + kHex) {
    return "";
  }
  const std::string prefix = name.substr(0, at + kHex + 1);
  return EpochOfName(name, prefix) >= 0 ? prefix : "";
}

// Removes from `state_dir` (node_checkpoints.h, "Lifetime") `digest`'s
// files of epochs before `epoch` - 1; the files of every other plan none of
// whose files was written in the last kOtherPlansIdle; and the files of
// the unnamed layout (plan_checkpoints.<E>.bin), which nothing reads any
// more. Best effort: a file left behind is only disk, and another
// process's removal of the same file is no error.
void RemoveOldFiles(const std::string& state_dir, uint64_t digest, int64_t epoch, Env* env) {
  Result<std::vector<std::string>> names = env->ListFolder(state_dir);
  if (!names.ok()) return;
  const std::string mine = PlanPrefix(digest);
  std::map<std::string, std::vector<std::string>> others;  // plan prefix -> its files
  std::map<std::string, int64_t> newest;                   // plan prefix -> newest mtime, seconds
  for (const std::string& name : *names) {
    const std::string path = JoinPath(state_dir, name);
    const int64_t e = EpochOfName(name, mine);
    if ((e >= 0 && e < epoch - 1) || EpochOfName(name, kCheckpointsPrefix) >= 0) {
      (void)env->Remove(path);
      continue;
    }
    const std::string plan = PlanPrefixOfName(name);
    if (plan.empty() || plan == mine) continue;
    Result<struct stat> st = env->Stat(path, /*follow_links=*/false);
    if (!st.ok()) continue;
    others[plan].push_back(path);
    auto [it, fresh] = newest.try_emplace(plan, int64_t(st->st_mtime));
    if (!fresh) it->second = std::max(it->second, int64_t(st->st_mtime));
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::seconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (const auto& [plan, paths] : others) {
    if (now - newest[plan] < kOtherPlansIdle.count()) continue;
    for (const std::string& path : paths) (void)env->Remove(path);
  }
}

}  // namespace

void SetCheckpointsWriteHookForTesting(std::function<void()> hook) { WriteHook() = std::move(hook); }

Result<uint64_t> NodePlanDigest(const planner::PlanRequest& request) {
  planner::PlanRequest first = request;
  first.epoch = 0;
  return planner::CheckpointsKey(first);
}

Result<std::string> NodeCheckpointsPath(const std::string& root, const planner::PlanRequest& request, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(const uint64_t digest, NodePlanDigest(request));
  SLUICE_ASSIGN_OR_RETURN(std::string state_dir, CacheStateDir(root, env));
  return FileIn(state_dir, digest, request.epoch);
}

Result<std::shared_ptr<const planner::EpochCheckpoints>> NodeEpochCheckpoints(const NodeCheckpointsPlace& place,
                                                                              const planner::PlanRequest& request,
                                                                              bool* made) {
  if (made != nullptr) *made = false;
  if (!planner::CheckpointsApply(request.config)) return std::shared_ptr<const planner::EpochCheckpoints>();
  Env* env = place.env;
  SLUICE_ASSIGN_OR_RETURN(const uint64_t key, planner::CheckpointsKey(request));
  SLUICE_ASSIGN_OR_RETURN(const uint64_t digest, NodePlanDigest(request));
  SLUICE_ASSIGN_OR_RETURN(const std::string state_dir, CacheStateDir(place.root, env));
  const std::string path = FileIn(state_dir, digest, request.epoch);
  std::shared_ptr<const planner::EpochCheckpoints> out;
  auto current = [&] {
    Result<MappedFile> map = MappedFile::Open(path, env);
    if (!map.ok()) return false;
    Result<planner::EpochCheckpoints> read = planner::CheckpointsFromBytes(map->data(), key, path);
    if (!read.ok()) return false;
    out = std::make_shared<const planner::EpochCheckpoints>(std::move(*read));
    return true;
  };
  auto make = [&]() -> Status {
    SLUICE_ASSIGN_OR_RETURN(planner::EpochCheckpoints computed, planner::PlanCheckpoints(request));
    if (made != nullptr) *made = true;
    // Unwritable: this process keeps what it computed.
    if (WriteCheckpointsFile(path, planner::SerializeCheckpoints(computed, key), env).ok()) {
      RemoveOldFiles(state_dir, digest, request.epoch, env);
    }
    out = std::make_shared<const planner::EpochCheckpoints>(std::move(computed));
    return Status::Ok();
  };
  SLUICE_RETURN_IF_ERROR(
      MakeOncePerNode(path, state_dir, "plan_checkpoints.lock", place.wait_timeout, make, current, env));
  return out;
}

std::shared_ptr<const planner::EpochCheckpoints> SharedEpochCheckpoints(const NodeCheckpointsPlace& place,
                                                                        const planner::PlanRequest& request) {
  Result<std::shared_ptr<const planner::EpochCheckpoints>> got = NodeEpochCheckpoints(place, request);
  return got.ok() ? std::move(*got) : nullptr;
}

}  // namespace sluice
