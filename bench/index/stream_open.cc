// The node's first open of a remote Parquet (or raw-file) folder through the
// C ABI alone, for callgrind and /usr/bin/time (issue 38): opens
// {"streams": [{"remote": FOLDER, "local": CACHE}], "batch_size": 1} and
// closes it. No timing of its own: measure it from outside, e.g.
//   rm -rf CACHE && valgrind --tool=callgrind build-rel/bench/index/stream_open FOLDER CACHE
// Against another build's library: LD_LIBRARY_PATH=OTHER/bindings/c (the
// same soname). Paths are put in the JSON as given: no quote or backslash.
#include <cstdio>
#include <string>

#include "sluice.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s REMOTE_FOLDER CACHE_FOLDER\n", argv[0]);
    return 2;
  }
  const std::string config = std::string(R"({"streams": [{"remote": ")") + argv[1] +
                             R"(", "local": ")" + argv[2] + R"("}], "batch_size": 1})";
  sluice_stream* s = nullptr;
  if (sluice_stream_open(config.c_str(), &s) != SLUICE_OK) {
    std::fprintf(stderr, "open: %s\n", sluice_last_error());
    return 1;
  }
  // The shards are the row groups: a reference reader's count checks them.
  std::printf("%llu samples, %llu shards\n",
              static_cast<unsigned long long>(sluice_stream_num_samples(s)),
              static_cast<unsigned long long>(sluice_stream_num_shards(s)));
  sluice_stream_close(s);
  return 0;
}
