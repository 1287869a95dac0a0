// Footer decoding: Sluice's own Thrift compact decoder
// (formats/parquet/metadata_decoder.h, DecodeFileMetaData) beside Apache
// Thrift's C++ library (Debian's libthrift-dev: TCompactProtocol reading
// into the FileMetaData that the `thrift` compiler generated from Apache's
// parquet.thrift), on the same footer bytes, one thread (issue 34: which
// decoder the reader uses). libthrift decodes as Arrow's Parquet reader
// does it: a TMemoryBuffer observing the bytes, one per footer.
//
// Usage: thrift_footer_bench FILE.parquet... [--min-seconds=S]
// For each file: its footer's size, then per decoder footers and MB (of
// footer bytes) per second of the thread's CPU time, the median of 3 runs
// of at least S CPU seconds (0.2 by default; the decoders' runs in turn),
// each run decoding the footer again and again. Both decoders
// must accept the footer (and agree on its rows and row groups) or the
// program stops with the error.
#include <algorithm>
#include <ctime>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <thrift/protocol/TCompactProtocol.h>
#include <thrift/transport/TBufferTransports.h>

#include "base/bytes.h"
#include "base/file.h"
#include "formats/parquet/metadata_decoder.h"
#include "parquet_types.h"  // generated from parquet.thrift (meson option parquet_thrift)

namespace sluice {
namespace {

// The thread's CPU time: a machine shared with other work disturbs it far
// less than the wall clock.
double CpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

struct Decoded {
  int64_t rows = 0;
  size_t row_groups = 0;
};

Result<Decoded> Ours(std::string_view footer) {
  SLUICE_ASSIGN_OR_RETURN(parquet::FileMetaData m, parquet::DecodeFileMetaData(footer));
  return Decoded{m.num_rows, m.row_groups.size()};
}

Result<Decoded> Libthrift(std::string_view footer) {
  using apache::thrift::transport::TMemoryBuffer;
  try {
    auto buffer = std::make_shared<TMemoryBuffer>(
        reinterpret_cast<uint8_t*>(const_cast<char*>(footer.data())), static_cast<uint32_t>(footer.size()),
        TMemoryBuffer::OBSERVE);
    apache::thrift::protocol::TCompactProtocolT<TMemoryBuffer> protocol(buffer);
    ::parquet::FileMetaData m;
    m.read(&protocol);
    return Decoded{m.num_rows, m.row_groups.size()};
  } catch (const std::exception& e) {
    return CorruptError(std::string("libthrift: ") + e.what());
  }
}

// One run: footers decoded per CPU second, over at least min_seconds.
template <class Decode>
Result<double> FootersPerSecond(std::string_view footer, double min_seconds, Decode decode) {
  uint64_t n = 0;
  const double start = CpuSeconds();
  double s = 0;
  do {
    for (int i = 0; i < 4; ++i) {
      SLUICE_ASSIGN_OR_RETURN(Decoded d, decode(footer));
      n += d.row_groups > 0 || d.rows >= 0;
    }
    s = CpuSeconds() - start;
  } while (s < min_seconds);
  return static_cast<double>(n) / s;
}

double Median3(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[1];
}

Result<std::string> FooterOf(const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::string file, ReadFile(path));
  if (file.size() < 12 || file.compare(file.size() - 4, 4, "PAR1") != 0) {
    return CorruptError(path + ": no PAR1 at the end");
  }
  const uint32_t length = LoadLE<uint32_t>(file.data() + file.size() - 8);
  if (length > file.size() - 12) return CorruptError(path + ": footer length larger than the file");
  return file.substr(file.size() - 8 - length, length);
}

int Main(int argc, char** argv) {
  double min_seconds = 0.2;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--min-seconds=", 14) == 0) {
      min_seconds = std::atof(argv[i] + 14);
    } else {
      paths.push_back(argv[i]);
    }
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: thrift_footer_bench FILE.parquet... [--min-seconds=S]\n");
    return 2;
  }
  std::printf("%-44s %9s %6s %12s %12s %9s %9s %6s\n", "file", "footer B", "groups", "ours f/s",
              "thrift f/s", "ours MB/s", "thr MB/s", "ratio");
  for (const std::string& path : paths) {
    Result<std::string> footer = FooterOf(path);
    Result<Decoded> a = footer.ok() ? Ours(*footer) : footer.status();
    Result<Decoded> b = footer.ok() ? Libthrift(*footer) : footer.status();
    if (!a.ok() || !b.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), (!a.ok() ? a : b).status().ToString().c_str());
      return 1;
    }
    if (a->rows != b->rows || a->row_groups != b->row_groups) {
      std::fprintf(stderr, "%s: the decoders disagree\n", path.c_str());
      return 1;
    }
    // Runs taken in turn (ours, libthrift, ours, ...): a swing in the
    // machine's load falls on both.
    std::vector<double> our_runs, their_runs;
    for (int run = 0; run < 3; ++run) {
      Result<double> x = FootersPerSecond(*footer, min_seconds, Ours);
      Result<double> y = FootersPerSecond(*footer, min_seconds, Libthrift);
      if (!x.ok() || !y.ok()) return 1;
      our_runs.push_back(*x);
      their_runs.push_back(*y);
    }
    const double ours = Median3(our_runs), theirs = Median3(their_runs);
    const double mb = static_cast<double>(footer->size()) / 1e6;
    std::string name = path.substr(path.find_last_of('/') + 1);
    if (name.size() > 44) name = name.substr(0, 41) + "...";
    std::printf("%-44s %9zu %6zu %12.0f %12.0f %9.1f %9.1f %5.2fx\n", name.c_str(), footer->size(),
                a->row_groups, ours, theirs, ours * mb, theirs * mb, ours / theirs);
  }
  return 0;
}

}  // namespace
}  // namespace sluice

int main(int argc, char** argv) { return sluice::Main(argc, argv); }
