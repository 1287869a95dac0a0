// Reading every row of a dataset through DatasetReader, decoding included:
// each timed pass opens the dataset afresh (a Parquet file's row groups are
// decoded when first read, an MDS shard mapped), reads every row and
// touches every byte of every field. Used by
// bench/python/parquet_read_bench.py to put Sluice's Parquet reader beside
// its MDS path, pyarrow and DuckDB on the same rows.
//
// Usage: parquet_read_bench PATH [--passes=N] [--lasting | --pieces]
//   PATH       a Parquet file or folder, or an MDS dataset folder
//   --lasting  views that last until the reader is destroyed (DatasetReader's
//              default: a large snappy value that straddles literals is
//              copied into its row group's buffer); without it, views valid
//              until the next read, as the engine's batches hand out
//              (SampleFields::until_next_read: the value is copied into a
//              small scratch instead)
//   --pieces   a value that would be copied is read from its pieces
//              (SampleFields::wants_pieces: views of the file), as a
//              consumer that copies every value anyway reads it: no copy
// Prints one JSON line: {"path", "rows", "bytes", "seconds": [...],
// "cpu_seconds": [...]}: one untimed warm-up pass (page cache), then N timed
// passes (default 3), each's wall-clock time and the process's CPU time
// (user and system: page faults count), which a loaded machine disturbs
// far less.

#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/parquet/pass_measure.h"
#include "formats/dataset/dataset_reader.h"

namespace sluice {
namespace {

using Clock = std::chrono::steady_clock;

using bench::CpuSeconds;
using bench::Touch;

enum class Views { kLasting, kUntilNextRead, kPieces };

// One pass: open, read every row, touch every field's bytes (a field in
// pieces: each piece's, as the one pass a copying consumer makes).
Result<uint64_t> Pass(const std::string& path, Views views, uint64_t* rows, uint64_t* bytes) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<DatasetReader> reader, DatasetReader::Open(path));
  SampleFields sample;
  sample.until_next_read = views == Views::kUntilNextRead;
  sample.wants_pieces = views == Views::kPieces;
  uint64_t sum = 0, total = 0;
  const uint64_t n = reader->num_samples();
  for (uint64_t i = 0; i < n; ++i) {
    SLUICE_RETURN_IF_ERROR(reader->Read(i, &sample));
    for (std::string_view f : sample.fields) {
      const parquet::PiecedField* p = nullptr;
      for (const parquet::PiecedField& q : sample.pieced) {
        if (q.field.data() == f.data()) p = &q;
      }
      if (p == nullptr) {
        sum = sum * 31 + Touch(f);
      } else {
        uint64_t t = 0;
        for (std::string_view piece : p->pieces) t ^= Touch(piece);
        sum = sum * 31 + t;
      }
      total += f.size();
    }
  }
  *rows = n;
  *bytes = total;
  return sum;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: parquet_read_bench PATH [--passes=N] [--lasting | --pieces]\n");
    return 2;
  }
  const std::string path = argv[1];
  int passes = 3;
  Views views = Views::kUntilNextRead;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--passes=", 9) == 0) passes = std::atoi(argv[i] + 9);
    if (std::strcmp(argv[i], "--lasting") == 0) views = Views::kLasting;
    if (std::strcmp(argv[i], "--pieces") == 0) views = Views::kPieces;
  }
  uint64_t rows = 0, bytes = 0, check = 0;
  std::vector<double> seconds, cpu_seconds;
  for (int p = 0; p <= passes; ++p) {
    const auto start = Clock::now();
    const double cpu_start = CpuSeconds();
    Result<uint64_t> sum = Pass(path, views, &rows, &bytes);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu = CpuSeconds() - cpu_start;
    if (!sum.ok()) {
      std::fprintf(stderr, "%s\n", sum.status().ToString().c_str());
      return 1;
    }
    check = *sum;  // every pass's is the same
    if (p > 0) {
      seconds.push_back(s);
      cpu_seconds.push_back(cpu);
    }
  }
  std::printf("{\"path\": \"%s\", \"rows\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"check\": %" PRIu64
              ", \"seconds\": [",
              path.c_str(), rows, bytes, check);
  for (size_t i = 0; i < seconds.size(); ++i) std::printf("%s%.6f", i ? ", " : "", seconds[i]);
  std::printf("], \"cpu_seconds\": [");
  for (size_t i = 0; i < cpu_seconds.size(); ++i) {
    std::printf("%s%.6f", i ? ", " : "", cpu_seconds[i]);
  }
  std::printf("]}\n");
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
