// The engine's batch path over a local dataset folder (Parquet or MDS),
// through the C ABI as Python's batch mode drives it: each timed pass opens
// the stream afresh (a Parquet row group is decoded when its shard opens,
// an MDS shard mapped), walks the epoch in order with
// sluice_stream_next_batch, copies every column of every batch into one
// reused buffer with sluice_stream_batch_column and touches its bytes.
//
// Usage: stream_batch_bench PATH [--passes=N] [--batch=N] [--pieces]
//   PATH      a folder of Parquet files, or an MDS dataset folder
//   --batch   samples a next_batch call asks for (default 64)
//   --pieces  sluice_stream_read_pieces(s, 1): a large snappy value that
//             straddles literals is copied once, from its pieces, into the
//             column's buffer; without it, it is first copied into the
//             engine's scratch (SampleFields::until_next_read)
// Prints one JSON line: {"path", "rows", "bytes", "check", "seconds": [...],
// "cpu_seconds": [...]}: one untimed warm-up pass (page cache), then N timed
// passes (default 3): wall-clock and the process's CPU time (user and
// system; the engine's threads count).
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "bench/parquet/pass_measure.h"
#include "sluice.h"

namespace {

using Clock = std::chrono::steady_clock;

using sluice::bench::CpuSeconds;
using sluice::bench::Touch;

struct Totals {
  uint64_t rows = 0, bytes = 0, check = 0;
};

// One pass; false (the error printed) when a call fails.
bool Pass(const std::string& path, uint32_t batch, bool pieces, std::vector<uint8_t>* buffer,
          Totals* t) {
  const std::string config = "{\"local\": \"" + path + "\", \"shuffle\": false}";
  sluice_stream* s = nullptr;
  const auto fail = [&](const char* what) {
    std::fprintf(stderr, "%s: %s\n", what, sluice_last_error());
    if (s != nullptr) sluice_stream_close(s);
    return false;
  };
  if (sluice_stream_open(config.c_str(), &s) != SLUICE_OK) return fail("sluice_stream_open");
  if (sluice_stream_read_pieces(s, pieces ? 1 : 0) != SLUICE_OK) return fail("read_pieces");
  if (sluice_stream_iter_begin(s, 0, 0, 0, 1) != SLUICE_OK) return fail("iter_begin");
  const uint32_t n = sluice_stream_num_columns(s);
  std::vector<int64_t> ids(batch);
  std::vector<sluice_bytes> fields(static_cast<size_t>(batch) * n);
  std::vector<uint64_t> offsets(batch + 1);
  *t = Totals{};
  while (true) {
    uint32_t count = 0;
    if (sluice_stream_next_batch(s, batch, ids.data(), fields.data(), &count) != SLUICE_OK) {
      return fail("next_batch");
    }
    if (count == 0) break;
    for (uint32_t c = 0; c < n; ++c) {
      uint64_t needed = 0;
      sluice_status st = sluice_stream_batch_column(s, c, 0, buffer->data(), buffer->size(),
                                                    offsets.data(), &needed);
      if (st == SLUICE_ERANGE && needed > buffer->size()) {
        buffer->resize(needed);
        st = sluice_stream_batch_column(s, c, 0, buffer->data(), buffer->size(), offsets.data(),
                                        &needed);
      }
      if (st != SLUICE_OK) return fail("batch_column");
      t->check = t->check * 31 + Touch(std::string_view(reinterpret_cast<const char*>(buffer->data()), needed));
      t->bytes += needed;
    }
    t->rows += count;
  }
  sluice_stream_close(s);
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stream_batch_bench PATH [--passes=N] [--batch=N] [--pieces]\n");
    return 2;
  }
  const std::string path = argv[1];
  int passes = 3;
  uint32_t batch = 64;
  bool pieces = false;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--passes=", 9) == 0) passes = std::atoi(argv[i] + 9);
    if (std::strncmp(argv[i], "--batch=", 8) == 0) batch = static_cast<uint32_t>(std::atoi(argv[i] + 8));
    if (std::strcmp(argv[i], "--pieces") == 0) pieces = true;
  }
  if (batch == 0) batch = 1;
  std::vector<uint8_t> buffer(1 << 20);
  Totals t;
  uint64_t check = 0;
  std::vector<double> seconds, cpu_seconds;
  for (int p = 0; p <= passes; ++p) {
    const auto start = Clock::now();
    const double cpu_start = CpuSeconds();
    if (!Pass(path, batch, pieces, &buffer, &t)) return 1;
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    const double cpu = CpuSeconds() - cpu_start;
    check = t.check;  // every pass's is the same
    if (p > 0) {
      seconds.push_back(s);
      cpu_seconds.push_back(cpu);
    }
  }
  std::printf("{\"path\": \"%s\", \"rows\": %" PRIu64 ", \"bytes\": %" PRIu64 ", \"check\": %" PRIu64
              ", \"seconds\": [",
              path.c_str(), t.rows, t.bytes, check);
  for (size_t i = 0; i < seconds.size(); ++i) std::printf("%s%.6f", i ? ", " : "", seconds[i]);
  std::printf("], \"cpu_seconds\": [");
  for (size_t i = 0; i < cpu_seconds.size(); ++i) std::printf("%s%.6f", i ? ", " : "", cpu_seconds[i]);
  std::printf("]}\n");
  return 0;
}
