#include "engine/dataset/node_checkpoints.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>

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

// Removes `digest`'s files of epochs before `epoch` - 1 from `state_dir`
// (node_checkpoints.h, "Lifetime"), and the files of the unnamed layout
// (plan_checkpoints.<E>.bin), which nothing reads any more. Best effort: a
// file left behind is only disk, and another process's removal of the
// same file is no error.
void RemoveOlderEpochs(const std::string& state_dir, uint64_t digest, int64_t epoch, Env* env) {
  Result<std::vector<std::string>> names = env->ListFolder(state_dir);
  if (!names.ok()) return;
  const std::string prefix = PlanPrefix(digest);
  for (const std::string& name : *names) {
    const int64_t mine = EpochOfName(name, prefix);
    if ((mine >= 0 && mine < epoch - 1) || EpochOfName(name, kCheckpointsPrefix) >= 0) {
      (void)env->Remove(JoinPath(state_dir, name));
    }
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
      RemoveOlderEpochs(state_dir, digest, request.epoch, env);
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
