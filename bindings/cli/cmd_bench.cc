// sluice bench DATASET [options]: streams a dataset as a simulated job would
// and reports what it measured (bindings/cli/bench/); a thin layer over the
// rig that sluice_bench_run also runs.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "base/file.h"
#include "bindings/cli/bench/bench.h"
#include "bindings/cli/bench_plot_script.h"
#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "bindings/cli/temp_folder.h"
#include "formats/json/py_json.h"

namespace sluice::cli {
namespace {

constexpr const char* kBenchUsage =
    "usage: sluice bench DATASET [options]\n"
    "  DATASET                 folder or store URL (the remote; read through a cache per node)\n"
    "  --cache DIR             root of the nodes' cache folders (default: a temporary, cold one)\n"
    "  --cache-limit SIZE      per-node cache_limit, e.g. 64mb\n"
    "  --predownload N         samples each worker prefetches\n"
    "  --batch-size N          samples per batch (default 1)\n"
    "  --shuffle               shuffle (--shuffle-algo NAME, --seed N, --shuffle-block-size N)\n"
    "  --nodes N --ranks N --workers N   the simulated job (ranks per node, workers per rank)\n"
    "  --epochs N              epochs to stream (default 1)\n"
    "  --step-time S           seconds of training per batch (or --rate SAMPLES_PER_S per rank)\n"
    "  --interval S            seconds between time-series points (default 0.1)\n"
    "  --plan-only             predict per-node egress, cache occupancy and waits from the\n"
    "                          planner alone (downloads index.json only)\n"
    "  --bandwidth BYTES       per-node link bandwidth per second for --plan-only, e.g. 100mb\n"
    "  --plan-nodes N          --plan-only plans at most N nodes spread over the job and scales\n"
    "                          the totals from them (default 16)\n"
    "  --set KEY=JSON          any other dataset option under Mosaic's name\n"
    "  --json                  the report as JSON\n"
    "  --csv FILE              the time series as CSV\n"
    "  --plot FILE.png         throughput and cache occupancy over time (needs python3-matplotlib)\n";

// Flag -> option key; the value is a JSON number when it reads as one, else
// a string (the rig's parser names the key when the type is wrong).
const std::map<std::string, std::string>& ValueFlags() {
  static const std::map<std::string, std::string> m = {
      {"cache", "cache_dir"},         {"cache-limit", "cache_limit"},
      {"predownload", "predownload"}, {"batch-size", "batch_size"},
      {"shuffle-algo", "shuffle_algo"}, {"seed", "shuffle_seed"},
      {"shuffle-block-size", "shuffle_block_size"},
      {"nodes", "nodes"},             {"ranks", "ranks_per_node"},
      {"workers", "workers_per_rank"}, {"epochs", "epochs"},
      {"step-time", "step_time"},     {"rate", "consumer_rate"},
      {"interval", "interval"},        {"bandwidth", "link_bandwidth"},
      {"plan-nodes", "plan_nodes"}};
  return m;
}

JsonValue FlagValue(const std::string& key, const std::string& text) {
  if (key != "cache_dir" && key != "shuffle_algo" && key != "link_bandwidth") {
    auto v = ParsePyJson(text);
    if (v.ok() && (std::holds_alternative<int64_t>(v->v) || std::holds_alternative<double>(v->v))) {
      return *v;
    }
  }
  return JsonValue{text};
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs bench/plot_bench.py (compiled in) on the report with Debian's python3
// (SLUICE_PYTHON overrides it), so matplotlib comes from python3-matplotlib.
Status Plot(const std::string& report_json, const std::string& png) {
  SLUICE_ASSIGN_OR_RETURN(auto tmp, TempFolder::Create());
  std::string script = tmp->path() + "/plot_bench.py", json_path = tmp->path() + "/report.json";
  SLUICE_RETURN_IF_ERROR(WriteFileAtomic(script, kBenchPlotScript));
  SLUICE_RETURN_IF_ERROR(WriteFileAtomic(json_path, report_json));
  const char* env = std::getenv("SLUICE_PYTHON");
  std::string python = env && *env ? env : (::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3");
  std::string cmd = ShellQuote(python) + " " + ShellQuote(script) + " " + ShellQuote(json_path) + " " + ShellQuote(png);
  std::fflush(nullptr);
  int rc = std::system(cmd.c_str());
  if (rc != 0) {
    return IoError("--plot " + png + ": " + python + " plot_bench.py failed (exit status " +
                   std::to_string(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1) + "; its message is above)");
  }
  return Status::Ok();
}

}  // namespace

int RunBench(const Args& args) {
  std::set<std::string> values = {"csv", "plot", "set"};
  for (const auto& [flag, key] : ValueFlags()) values.insert(flag);
  // --set may repeat: ParseFlags keeps one value per name, so take them out first.
  Args rest;
  JsonValue::Object options;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i];
    if (a == "--set" || a.rfind("--set=", 0) == 0) {
      std::string kv = a == "--set" ? (i + 1 < args.size() ? args[++i] : "") : a.substr(6);
      size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Error("bench", InvalidArgumentError("--set needs KEY=JSON, got '" + kv + "'"), 2);
      }
      auto v = ParsePyJson(kv.substr(eq + 1));
      if (!v.ok()) {
        return Error("bench", InvalidArgumentError("--set " + kv.substr(0, eq) + ": " + v.status().message()), 2);
      }
      options.emplace_back(kv.substr(0, eq), std::move(*v));
      continue;
    }
    rest.push_back(a);
  }
  auto flags = ParseFlags(rest, values, {"json", "shuffle", "plan-only", "help"});
  if (!flags.ok()) return Error("bench", flags.status(), 2);
  if (flags->Has("help")) {
    std::fputs(kBenchUsage, stdout);
    return 0;
  }
  if (flags->positional.size() != 1) {
    std::fputs(kBenchUsage, stderr);
    return 2;
  }
  options.emplace_back("remote", JsonValue{flags->positional[0]});
  if (flags->Has("shuffle")) options.emplace_back("shuffle", JsonValue{true});
  if (flags->Has("plan-only")) options.emplace_back("plan_only", JsonValue{true});
  for (const auto& [flag, key] : ValueFlags()) {
    if (auto v = flags->Get(flag)) options.emplace_back(key, FlagValue(key, *v));
  }
  auto text = DumpPyJson(JsonValue{std::move(options)}, false);
  if (!text.ok()) return Error("bench", text.status(), 2);
  auto parsed = bench::ParseBenchOptions(*text);
  if (!parsed.ok()) return Error("bench", parsed.status(), 2);
  // A cold cache of our own, removed also when the command is interrupted.
  std::unique_ptr<TempFolder> cache;
  if (parsed->cache_dir.empty()) {
    auto folder = TempFolder::Create();
    if (!folder.ok()) return Error("bench", folder.status());
    cache = std::move(*folder);
    parsed->cache_dir = cache->path();
  }
  auto report = bench::Bench(*parsed);
  if (!report.ok()) return Error("bench", report.status());
  auto json = bench::ReportJson(*report);
  if (!json.ok()) return Error("bench", json.status());
  if (auto csv = flags->Get("csv")) {
    if (Status st = WriteFileAtomic(*csv, bench::SeriesCsv(*report)); !st.ok()) return Error("bench", st);
  }
  if (auto png = flags->Get("plot")) {
    if (Status st = Plot(*json, *png); !st.ok()) return Error("bench", st);
  }
  if (flags->Has("json")) {
    std::printf("%s\n", json->c_str());
  } else {
    std::fputs(bench::ReportTable(*report).c_str(), stdout);
  }
  return 0;
}

}  // namespace sluice::cli
