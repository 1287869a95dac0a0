// The sluice CLI's subcommands. Each takes its arguments after the command
// name and returns the process exit status (0 success, 1 failure such as a
// failed verification, 2 usage error). Errors go to stderr.
#pragma once

#include <string>
#include <vector>

#include "base/env.h"

namespace sluice::cli {

using Args = std::vector<std::string>;

int RunInspect(const Args& args);
int RunVerify(const Args& args);
int RunCat(const Args& args);
int RunConvert(const Args& args);
int RunPlan(const Args& args);
// plan DATASET --world ...: one worker's samples (RunPlan hands over to it).
int RunPlanWorker(const Args& args);
int RunDemo(const Args& args);
int RunWhoami(const Args& args);
// `env` (not owned) is the file system of everything ls reads or writes;
// main gives Env::Default(), a test a FaultEnv.
int RunLs(const Args& args, Env* env);
int RunBench(const Args& args);

}  // namespace sluice::cli
