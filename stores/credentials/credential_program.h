// Runs a program that prints a credential (AWS credential_process, a Google
// external_account executable): no shell, stdout captured (stderr stays the
// caller's: such programs may prompt there), bounded in size and time.
// Blocks the calling thread; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"

namespace sluice {

// Programs print a JSON document of a few KiB; this only caps a hostile one.
inline constexpr size_t kMaxCredentialProgramOutput = size_t{1} << 20;

// Runs argv (argv[0] looked up in PATH) with the process's environment plus
// `extra_env` ("NAME=value", replacing a variable of the same name) and
// returns its stdout when it exits 0. Errors (kPermissionDenied unless
// said) name argv[0], never the output: "cannot run 'x': why", "'x' exited
// with status N", "'x' was killed by a signal", "'x' wrote more than 1 MiB";
// kDeadlineExceeded "'x' did not finish within N ms" (it is killed) when
// `timeout_ms` is set and passes.
Result<std::string> RunCredentialProgram(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& extra_env = {},
                                         std::optional<int64_t> timeout_ms = std::nullopt);

}  // namespace sluice
