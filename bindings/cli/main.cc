// sluice: inspect, verify, read, convert and plan Mosaic-compatible datasets,
// in folders or behind any store URL.
#include <cstdio>
#include <cstring>
#include <string>

#include "bindings/cli/commands.h"

namespace {

constexpr const char* kMainUsage =
    "usage: sluice <command> [arguments]\n"
    "\n"
    "commands:\n"
    "  inspect DATASET          columns, shards, sizes, compression of a dataset\n"
    "  verify DATASET           check every hash and decode every sample (exit 1 on failure)\n"
    "  cat DATASET INDEX        one sample as JSON (encoding, value, raw_hex per column)\n"
    "  convert IN OUT [opts]    JSONL/CSV/TSV or MDS into MDS (see sluice convert --help)\n"
    "  plan FILE                plan an epoch from a Mosaic-style config JSON ('-' = stdin)\n"
    "  plan DATASET --world N:R:W --rank R --worker W --batch-size B [opts]\n"
    "                           the samples (stream, shard, index) one worker reads\n"
    "  demo [--files] [DATASET] write a sample dataset (--files: raw files), then stream it\n"
    "                           through caches\n"
    "  whoami URL               which credentials (source, region) a store URL would use\n"
    "  ls DATASET [opts]        the files a raw-file dataset over DATASET holds (see sluice ls)\n"
    "  bench DATASET [opts]     stream it as a simulated job and measure (see sluice bench --help)\n"
    "\n"
    "DATASET is a folder or a store URL: s3://, oci://, gs://, azure://, azure-dl://,\n"
    "dbfs:/, http(s)://, file://; credentials come from the environment (AWS_*,\n"
    "S3_ENDPOINT_URL, GCS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_*, DATABRICKS_*).\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kMainUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  sluice::cli::Args args(argv + 2, argv + argc);
  if (cmd == "inspect") return sluice::cli::RunInspect(args);
  if (cmd == "verify") return sluice::cli::RunVerify(args);
  if (cmd == "cat") return sluice::cli::RunCat(args);
  if (cmd == "convert") return sluice::cli::RunConvert(args);
  if (cmd == "plan") return sluice::cli::RunPlan(args);
  if (cmd == "demo") return sluice::cli::RunDemo(args);
  if (cmd == "whoami") return sluice::cli::RunWhoami(args);
  if (cmd == "ls") return sluice::cli::RunLs(args, sluice::Env::Default());
  if (cmd == "bench") return sluice::cli::RunBench(args);
  std::fprintf(stderr, "sluice: unknown command '%s'\n\n%s", cmd.c_str(), kMainUsage);
  return 2;
}
