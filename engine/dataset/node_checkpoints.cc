#include "engine/dataset/node_checkpoints.h"

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

}  // namespace

void SetCheckpointsWriteHookForTesting(std::function<void()> hook) { WriteHook() = std::move(hook); }

Result<std::string> NodeCheckpointsPath(const std::string& root, int64_t epoch, Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::string state_dir, CacheStateDir(root, env));
  return JoinPath(state_dir, "plan_checkpoints." + std::to_string(epoch) + ".bin");
}

Result<std::shared_ptr<const planner::EpochCheckpoints>> NodeEpochCheckpoints(const NodeCheckpointsPlace& place,
                                                                              const planner::PlanRequest& request,
                                                                              bool* made) {
  if (made != nullptr) *made = false;
  if (!planner::CheckpointsApply(request.config)) return std::shared_ptr<const planner::EpochCheckpoints>();
  Env* env = place.env;
  SLUICE_ASSIGN_OR_RETURN(const std::string path, NodeCheckpointsPath(place.root, request.epoch, env));
  SLUICE_ASSIGN_OR_RETURN(const uint64_t key, planner::CheckpointsKey(request));
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
    (void)WriteCheckpointsFile(path, planner::SerializeCheckpoints(computed, key), env);
    out = std::make_shared<const planner::EpochCheckpoints>(std::move(computed));
    return Status::Ok();
  };
  SLUICE_ASSIGN_OR_RETURN(const std::string state_dir, CacheStateDir(place.root, env));
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
