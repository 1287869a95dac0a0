// The first process of a node opening a pretraining-size index.json (issue
// 38), beside simdjson's own parse rate: see meson.build for how to run it.
//
//   dom FILE     simdjson's DOM parse of FILE alone (the file is read into
//                memory first, not timed): the rate to compare with
//   build DIR    LoadStreamIndex of the index.json folder DIR as the node's
//                first process: index.json read, parsed into the shard
//                table, index.bin written and mapped (any index.bin an
//                earlier run left is removed first, so every run builds)
//   phases DIR   the same steps one by one (parse, checksum, write, map
//                and check), each's CPU seconds
//
// Prints one line: the wall and CPU seconds of the timed part (the rate is
// per CPU second), and the process's peak resident memory so far
// (getrusage). Synthetic indexes:
// bench/python/synthetic_index.py.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <simdjson.h>

#include "base/file.h"
#include "base/mapped_file.h"
#include "base/page_cache_write.h"
#include "formats/index/shard_table.h"
#include "engine/cache/state_dir.h"
#include "engine/dataset/stream_index.h"

namespace {

// CPU seconds (user + system) of this process so far: on a machine shared
// with other work, what a step costs is clearer than its wall time.
double CpuSeconds() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double PeakMb() {
  struct rusage u {};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

int Dom(const char* file) {
  simdjson::padded_string text;
  if (auto err = simdjson::padded_string::load(file).get(text); err) {
    std::fprintf(stderr, "%s: %s\n", file, simdjson::error_message(err));
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(text).get(doc); err) {
    std::fprintf(stderr, "%s: %s\n", file, simdjson::error_message(err));
    return 1;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  std::printf("dom %s: %zu bytes, %.3f s wall, %.3f s CPU (%.0f MB/s), peak RSS %.0f MB\n", file,
              text.size(), s, cpu, static_cast<double>(text.size()) / cpu / 1e6, PeakMb());
  return 0;
}

int Build(const char* dir) {
  auto state = sluice::CacheStateDir(dir);
  if (!state.ok()) {
    std::fprintf(stderr, "%s\n", state.status().ToString().c_str());
    return 1;
  }
  const std::string bin = *state + "/index.bin";
  std::remove(bin.c_str());
  sluice::StreamOptions stream;
  stream.local = dir;
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = CpuSeconds();
  uint64_t json_bytes = 0;
  auto table = sluice::LoadStreamIndex(stream, nullptr, std::chrono::seconds(600), &json_bytes,
                                       /*binary_index_from_bytes=*/0);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = CpuSeconds() - cpu0;
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
    return 1;
  }
  auto bin_bytes = sluice::FileSize(bin);
  std::printf("build %s: %zu shards from %llu bytes, index.bin %llu bytes, %.3f s wall, "
              "%.3f s CPU (%.0f MB/s), peak RSS %.0f MB\n",
              dir, table->size(), static_cast<unsigned long long>(json_bytes),
              static_cast<unsigned long long>(bin_bytes.ok() ? *bin_bytes : 0), s, cpu,
              static_cast<double>(json_bytes) / cpu / 1e6, PeakMb());
  return 0;
}

// The first process's steps one by one, each's CPU seconds: where the
// build's time goes (what `build` times as one).
int Phases(const char* dir) {
  const std::string json = std::string(dir) + "/index.json";
  const std::string bin = std::string(dir) + "/phases.bin";
  double cpu = CpuSeconds();
  auto step = [&cpu](const char* what) {
    const double now = CpuSeconds();
    std::printf("  %-28s %.3f s CPU\n", what, now - cpu);
    cpu = now;
  };
  auto map = sluice::MappedFile::Open(json);
  if (!map.ok()) return 1;
  const size_t readable = (map->size() + 4095) / 4096 * 4096;
  step("map index.json");
  auto table = sluice::ShardTable::FromIndexJson(map->data(), json, readable);
  if (!table.ok()) {
    std::fprintf(stderr, "%s\n", table.status().ToString().c_str());
    return 1;
  }
  step("parse into the table");
  std::string scratch;
  const auto pieces = table->SerializedPieces(1, &scratch);
  step("header and checksum");
  auto tmp = sluice::TempFile::Create(bin);
  if (!tmp.ok()) return 1;
  uint64_t offset = 0;
  for (std::string_view piece : pieces) {
    if (!sluice::WriteInPageCacheBlocks(*tmp, piece, &offset).ok()) return 1;
  }
  if (!tmp->Commit().ok()) return 1;
  step("write index.bin");
  auto mapped = sluice::MappedFile::Open(bin);
  if (!mapped.ok()) return 1;
  auto owner = std::make_shared<sluice::MappedFile>(std::move(*mapped));
  auto checked = sluice::ShardTable::FromBytes(owner, owner->data(), 1, bin);
  if (!checked.ok()) return 1;
  step("map and check index.bin");
  table = sluice::ShardTable();
  step("free the parsed table");
  std::remove(bin.c_str());
  std::printf("phases %s: %zu shards, peak RSS %.0f MB\n", dir, checked->size(), PeakMb());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "dom") == 0) return Dom(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "build") == 0) return Build(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "phases") == 0) return Phases(argv[2]);
  std::fputs("usage: index_open_bench dom FILE | build DIR | phases DIR\n", stderr);
  return 2;
}
