// sluice plan FILE: Mosaic's sample partition for a configuration, as
// {"work": [...], "work_shape": [...]} or {"error": {"message", "type"}}.
// With --world, one worker's samples of a dataset (cmd_plan_worker.cc).
#include <cstdio>
#include <iostream>
#include <iterator>

#include "base/file.h"
#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "engine/planner/plan.h"
#include "engine/planner/plan_json.h"

namespace sluice::cli {

int RunPlan(const Args& args) {
  for (const std::string& a : args)
    if (a == "--world" || a.starts_with("--world=")) return RunPlanWorker(args);
  auto flags = ParseFlags(args, {}, {});
  if (!flags.ok()) return Error("plan", flags.status(), 2);
  if (flags->positional.size() != 1) {
    std::fputs("usage: sluice plan FILE   (FILE '-' reads standard input)\n"
               "       sluice plan DATASET --world NODES:RANKS:WORKERS --rank R --worker W ... (one worker)\n",
               stderr);
    return 2;
  }
  std::string text;
  if (flags->positional[0] == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  } else {
    auto file = ReadFile(flags->positional[0], uint64_t{1} << 30);
    if (!file.ok()) return Error("plan", file.status());
    text = std::move(*file);
  }
  auto request = planner::ParsePlanRequest(text);
  Result<planner::WorkArray> work =
      request.ok() ? planner::PlanEpoch(*request) : Result<planner::WorkArray>(request.status());
  if (!work.ok()) {
    std::printf("%s\n", planner::RenderError(work.status()).c_str());
    return 1;
  }
  std::string out = planner::RenderWork(*work);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fputc('\n', stdout);
  return 0;
}

}  // namespace sluice::cli
