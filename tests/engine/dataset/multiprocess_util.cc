#include "tests/engine/dataset/multiprocess_util.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "base/bytes.h"
#include "base/file.h"
#include "stores/store.h"
#include "tests/engine/dataset/dataset_test_util.h"

namespace sluice::testing {

Status WriteResult(const std::string& path, const std::vector<int64_t>& ids,
                   const std::vector<std::string>& bytes, const DatasetCounters& c) {
  std::string out;
  AppendLE<uint64_t>(out, c.shards_downloaded);
  AppendLE<uint64_t>(out, c.shards_evicted);
  AppendLE<uint64_t>(out, c.cache_hits);
  AppendLE<uint64_t>(out, c.bytes_downloaded);
  AppendLE<uint64_t>(out, ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    AppendLE<uint64_t>(out, static_cast<uint64_t>(ids[i]));
    AppendLE<uint64_t>(out, bytes[i].size());
    out += bytes[i];
  }
  return WriteFileAtomic(path, out);
}

WorkerResult ReadResult(const std::string& path) {
  WorkerResult r;
  auto text = ReadFile(path);
  EXPECT_TRUE(text.ok()) << path;
  if (!text.ok()) return r;
  std::string_view s = *text;
  size_t at = 0;
  auto next = [&] {
    uint64_t v = LoadLE<uint64_t>(s.data() + at);
    at += 8;
    return v;
  };
  r.counters.shards_downloaded = next();
  r.counters.shards_evicted = next();
  r.counters.cache_hits = next();
  r.counters.bytes_downloaded = next();
  uint64_t n = next();
  for (uint64_t i = 0; i < n; ++i) {
    r.ids.push_back(static_cast<int64_t>(next()));
    uint64_t len = next();
    r.bytes.emplace_back(s.substr(at, len));
    at += len;
  }
  return r;
}

int RunWorker(DatasetOptions o, int64_t worker, int64_t num_workers, const std::string& out,
              int64_t sample_in_epoch) {
  auto ds = StreamingDataset::Open(std::move(o));
  if (!ds.ok()) {
    fprintf(stderr, "open: %s\n", ds.status().message().c_str());
    return 2;
  }
  if (Status s = (*ds)->IterBegin(0, sample_in_epoch, worker, num_workers); !s.ok()) {
    fprintf(stderr, "iter: %s\n", s.message().c_str());
    return 3;
  }
  std::vector<int64_t> all, ids(16);
  std::vector<std::string> bytes;
  std::vector<SampleFields> fields;
  while (true) {
    auto n = (*ds)->NextBatch(16, ids.data(), &fields);
    if (!n.ok()) {
      fprintf(stderr, "next: %s\n", n.status().message().c_str());
      return 4;
    }
    if (*n == 0) break;
    for (size_t k = 0; k < *n; ++k) {
      all.push_back(ids[k]);
      bytes.push_back(FieldBytes(fields[k]));
    }
  }
  return WriteResult(out, all, bytes, (*ds)->counters()).ok() ? 0 : 5;
}

int UploadTree(const std::string& url, const std::string& dir,
               const std::function<Status(EventLoop&)>& before) {
  return WaitExit(Fork([&] {
    EventLoop loop;
    if (before && !before(loop).ok()) return 2;
    auto store = OpenStore(url, loop.executor(), StoreOptions{});
    if (!store.ok()) return 3;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
      if (!e.is_regular_file()) continue;
      std::string key = std::filesystem::relative(e.path(), dir).string();
      if (!loop.Run((*store)->Put(key, *ReadFile(e.path().string()))).ok()) return 4;
    }
    loop.Shutdown();
    return 0;
  }));
}

pid_t Fork(const std::function<int()>& body) {
  pid_t pid = fork();
  if (pid == 0) _exit(body());
  return pid;
}

int WaitExit(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace sluice::testing
