// Local MDS read throughput (issue 2, Benchmark): every sample of a dataset
// read through DatasetReader::Read, every byte touched, against `cat` of the
// same shard files from the page cache.
//
// Usage: read_bench [DIR] [--scale=F] [--passes=N]
//   DIR      where the datasets live (default /tmp/sluice-bench-read); each
//            dataset is written once into DIR/<name> and reused when its
//            index.json already exists.
//   --scale  multiplies the sample counts (default 1: 1M x 1 KiB and
//            20k x 256 KiB), for quick runs.
//   --passes timed warm passes per dataset (default 3; the median is shown).
//
// Per dataset: one untimed `cat` to put the shard files in the page cache,
// one first pass (maps raw shards / reads and decompresses zstd shards),
// N warm passes (shards already loaded), then N timed `cat` runs.
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/file.h"
#include "base/status.h"
#include "bench/common/time_cat.h"
#include "formats/dataset/dataset_reader.h"
#include "formats/mds/mds_writer.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;
using bench::TimeCat;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct DatasetSpec {
  std::string name;
  uint64_t samples;
  uint64_t sample_bytes;
  bool zstd;
};

// Fast, deterministic filler (splitmix64); content is incompressible.
void FillRandom(uint64_t* state, char* out, size_t n) {
  for (size_t i = 0; i < n; i += 8) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    std::memcpy(out + i, &z, std::min<size_t>(8, n - i));
  }
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

Status WriteDataset(const std::string& dir, const DatasetSpec& spec) {
  ShardedWriterOptions options;  // size_limit: the default (64 MiB)
  if (spec.zstd) options.compression = "zstd";
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<MdsWriter> writer,
                          MdsWriter::Create(dir, {{"bytes", "bytes"}}, options));
  std::string buf(spec.sample_bytes, '\0');
  uint64_t state = 0x5EED0000 + spec.sample_bytes;
  std::vector<std::string_view> fields(1);
  for (uint64_t i = 0; i < spec.samples; ++i) {
    FillRandom(&state, buf.data(), buf.size());
    fields[0] = buf;
    SLUICE_RETURN_IF_ERROR(writer->WriteFields(fields));
  }
  return writer->Finish();
}

// One pass over every sample; returns a checksum of every byte so the
// reads cannot be optimized away.
Result<uint64_t> ReadAll(DatasetReader* reader, uint64_t* bytes) {
  SampleFields sample;
  uint64_t sum = 0, total = 0;
  const uint64_t n = reader->num_samples();
  for (uint64_t i = 0; i < n; ++i) {
    SLUICE_RETURN_IF_ERROR(reader->Read(i, &sample));
    std::string_view f = sample.fields[0];
    const char* p = f.data();
    size_t len = f.size();
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t j = 0;
    for (; j + 32 <= len; j += 32) {
      uint64_t w[4];
      std::memcpy(w, p + j, 32);
      a += w[0];
      b ^= w[1];
      c += w[2];
      d ^= w[3];
    }
    for (; j < len; ++j) a += static_cast<unsigned char>(p[j]);
    sum = sum * 31 + (a ^ b) + (c ^ d) + len;
    total += len;
  }
  *bytes = total;
  return sum;
}

struct Row {
  std::string dataset, pass;
  uint64_t samples = 0;
  double seconds = 0, payload_gb = 0, file_gb = 0, cat_seconds = 0;
};

void PrintRow(const Row& r) {
  double gbps = r.payload_gb / r.seconds;
  double cat_gbps = r.file_gb / r.cat_seconds;
  std::printf("%-16s %-10s %10.3f %14.0f %8.2f %9.3f %9.2f %9.2f\n", r.dataset.c_str(),
              r.pass.c_str(), r.seconds, r.samples / r.seconds, gbps, r.cat_seconds, cat_gbps,
              r.seconds / r.cat_seconds);
  std::fflush(stdout);
}

int Run(int argc, char** argv) {
  std::string root = "/tmp/sluice-bench-read";
  double scale = 1.0;
  int passes = 3;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a.rfind("--scale=", 0) == 0) {
      scale = std::atof(argv[i] + 8);
    } else if (a.rfind("--passes=", 0) == 0) {
      passes = std::atoi(argv[i] + 9);
    } else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: read_bench [DIR] [--scale=F] [--passes=N]\n");
      return 2;
    } else {
      root = std::string(a);
    }
  }
  if (scale <= 0 || passes < 1) {
    std::fprintf(stderr, "--scale must be > 0 and --passes >= 1\n");
    return 2;
  }
  auto count = [&](uint64_t n) { return std::max<uint64_t>(1, static_cast<uint64_t>(n * scale)); };
  const uint64_t small_n = count(1000000), large_n = count(20000);
  std::vector<DatasetSpec> specs = {
      {"", small_n, 1024, false},
      {"", small_n, 1024, true},
      {"", large_n, 256 * 1024, false},
      {"", large_n, 256 * 1024, true},
  };
  for (DatasetSpec& s : specs) {
    s.name = std::to_string(s.samples) + "x" + std::to_string(s.sample_bytes / 1024) + "KiB-" +
             (s.zstd ? "zstd" : "raw");
  }

  std::printf("read_bench: %s, %d warm passes (median), cat median of %d\n", root.c_str(),
              passes, passes);
  for (const DatasetSpec& s : specs) {
    std::string dir = JoinPath(root, s.name);
    if (Exists(JoinPath(dir, "index.json"))) continue;
    std::printf("writing %s ...", dir.c_str());
    std::fflush(stdout);
    auto t0 = Clock::now();
    Status st = WriteDataset(dir, s);
    if (!st.ok()) {
      std::fprintf(stderr, "\nwriting %s failed: %s\n", dir.c_str(), st.ToString().c_str());
      return 1;
    }
    double secs = Seconds(t0, Clock::now());
    std::printf(" %.1f s (%.2f GB/s of samples)\n", secs,
                s.samples * s.sample_bytes / 1e9 / secs);
  }

  std::printf("\n%-16s %-10s %10s %14s %8s %9s %9s %9s\n", "dataset", "pass", "seconds",
              "samples/s", "GB/s", "cat s", "cat GB/s", "t/t_cat");
  for (const DatasetSpec& s : specs) {
    std::string dir = JoinPath(root, s.name);
    auto reader_or = DatasetReader::Open(dir);
    if (!reader_or.ok()) {
      std::fprintf(stderr, "%s\n", reader_or.status().ToString().c_str());
      return 1;
    }
    std::unique_ptr<DatasetReader> reader = std::move(*reader_or);
    if (reader->num_samples() != s.samples) {
      std::fprintf(stderr, "%s holds %" PRIu64 " samples, expected %" PRIu64
                   " (remove the folder to rewrite it)\n",
                   dir.c_str(), reader->num_samples(), s.samples);
      return 1;
    }
    std::vector<std::string> files;
    uint64_t file_bytes = 0;
    for (const ShardEntry& e : reader->index().shards) {
      const FileInfo& f = e.zip_data ? *e.zip_data : e.raw_data;
      files.push_back(JoinPath(dir, f.basename));
      file_bytes += f.bytes;
    }
    if (TimeCat(files) < 0) {  // warm the page cache
      std::fprintf(stderr, "cat failed on %s\n", dir.c_str());
      return 1;
    }

    Row row;
    row.dataset = s.name;
    row.samples = s.samples;
    row.file_gb = file_bytes / 1e9;
    uint64_t bytes = 0;
    auto t0 = Clock::now();
    Result<uint64_t> first = ReadAll(reader.get(), &bytes);
    double first_s = Seconds(t0, Clock::now());
    if (!first.ok()) {
      std::fprintf(stderr, "%s\n", first.status().ToString().c_str());
      return 1;
    }
    row.payload_gb = bytes / 1e9;
    std::vector<double> warm;
    for (int p = 0; p < passes; ++p) {
      t0 = Clock::now();
      Result<uint64_t> sum = ReadAll(reader.get(), &bytes);
      warm.push_back(Seconds(t0, Clock::now()));
      if (!sum.ok() || *sum != *first) {
        std::fprintf(stderr, "pass %d over %s: checksum differs or read failed\n", p,
                     dir.c_str());
        return 1;
      }
    }
    std::vector<double> cats;
    for (int p = 0; p < passes; ++p) {
      double c = TimeCat(files);
      if (c < 0) {
        std::fprintf(stderr, "cat failed on %s\n", dir.c_str());
        return 1;
      }
      cats.push_back(c);
    }
    row.cat_seconds = Median(cats);
    row.pass = s.zstd ? "first(dec)" : "first";
    row.seconds = first_s;
    PrintRow(row);
    row.pass = "warm";
    row.seconds = Median(warm);
    PrintRow(row);
    std::printf("%-16s checksum %016" PRIx64 ", %.3f GB payload, %.3f GB in %zu shard files\n",
                "", *first, row.payload_gb, row.file_gb, files.size());
  }
  std::printf(
      "\nGB/s: sample payload bytes / s for the reader; shard file bytes / s for cat.\n"
      "t/t_cat: reader seconds / cat seconds over the same shard files.\n");
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Run(argc, argv); }
