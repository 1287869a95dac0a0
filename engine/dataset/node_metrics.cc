#include "engine/dataset/node_metrics.h"

#include <cstdio>
#include <string_view>
#include <vector>

#include "base/file.h"
#include "engine/cache/state_dir.h"

namespace sluice {
namespace {

// A record: the magic, the dataset instance, then CountFields() in order,
// each 8 bytes little-endian. The magic names the version: a record of
// another length or magic is not summed.
constexpr std::string_view kRecordMagic = "SLNODE01";
constexpr std::string_view kRecordSuffix = ".rec";

void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetU64(std::string_view in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(static_cast<unsigned char>(in[i])) << (8 * i);
  return v;
}

size_t RecordSize() { return kRecordMagic.size() + 8 + 8 * CountFields().size(); }

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
  std::string record(kRecordMagic);
  record.reserve(RecordSize());
  PutU64(&record, dataset);
  for (CountField f : CountFields()) PutU64(&record, CountOf(f, m));
  return WriteFileAtomic(JoinPath(dir, NodeRecordName(dataset)), record, env);
}

Result<DatasetMetrics> SumNodeRecords(const std::string& dir, std::optional<uint64_t> only,
                                      Env* env) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> names, env->ListFolder(dir));
  DatasetMetrics sum;
  sum.processes = 0;
  const size_t size = RecordSize();
  for (const std::string& name : names) {
    if (name.size() <= kRecordSuffix.size() ||
        name.compare(name.size() - kRecordSuffix.size(), kRecordSuffix.size(), kRecordSuffix) != 0) {
      continue;  // a temporary on its way in, or a foreign file
    }
    auto text = ReadFile(JoinPath(dir, name), size, env);
    if (!text.ok()) {
      // Deleted meanwhile, or longer than a record: not one.
      if (IsNotFound(text.status()) || text.status().code() == StatusCode::kOutOfRange) continue;
      return text.status();
    }
    if (text->size() != size || std::string_view(*text).substr(0, kRecordMagic.size()) != kRecordMagic) {
      continue;
    }
    std::string_view in(*text);
    in.remove_prefix(kRecordMagic.size());
    if (only && GetU64(in) != *only) continue;
    in.remove_prefix(8);
    for (CountField f : CountFields()) {
      f(sum) += GetU64(in);
      in.remove_prefix(8);
    }
    ++sum.processes;
  }
  return sum;
}

}  // namespace sluice
