// sluice_bench_run: the `sluice bench` rig (bindings/cli/bench) behind the C ABI.
#include <cstdlib>
#include <cstring>

#include "bindings/c/c_api_internal.h"
#include "bindings/cli/bench/bench.h"

using sluice::capi::Fail;
using sluice::capi::Guard;
using sluice::capi::NullArgument;

extern "C" {

sluice_status sluice_bench_run(const char* options_json, char** out_json) {
  return Guard("sluice_bench_run", [&] {
    if (options_json == nullptr) return NullArgument("sluice_bench_run", "options_json");
    if (out_json == nullptr) return NullArgument("sluice_bench_run", "out_json");
    *out_json = nullptr;
    auto json = sluice::bench::BenchJson(options_json);
    if (!json.ok()) return Fail(json.status());
    char* out = static_cast<char*>(std::malloc(json->size() + 1));
    if (out == nullptr) return Fail(sluice::InternalError("sluice_bench_run: out of memory"));
    std::memcpy(out, json->c_str(), json->size() + 1);
    *out_json = out;
    return SLUICE_OK;
  });
}

}  // extern "C"
