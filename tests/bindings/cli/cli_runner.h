// Runs the sluice binary as a user does (through the shell, with this
// process's environment) and captures what it prints. Not thread-safe.
#pragma once

#include <string>

namespace sluice::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

// `sluice ARGS 2>&1`; ARGS is shell text (quote what needs it).
CliRun Sluice(const std::string& args);

// The whole content of a local file ("" when it cannot be read).
std::string Slurp(const std::string& path);

}  // namespace sluice::testing
