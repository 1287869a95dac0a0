// The first process of a node opening a pretraining-size index.json (issue
// 38), beside simdjson's own parse rate: see meson.build for how to run it.
//
//   dom FILE     simdjson's DOM parse of FILE alone (the file is read into
//                memory first, not timed): the rate to compare with
//   build DIR    LoadStreamIndex of the index.json folder DIR as the node's
//                first process: index.json read, parsed into the shard
//                table, index.bin written and mapped (any index.bin an
//                earlier run left is removed first, so every run builds)
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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "dom") == 0) return Dom(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "build") == 0) return Build(argv[2]);
  std::fputs("usage: index_open_bench dom FILE | build DIR\n", stderr);
  return 2;
}
