// Runs a program that prints a credential (AWS credential_process, a Google
// external_account executable, the Azure CLI): no shell, stdout captured
// (stderr stays the caller's unless asked for: such programs may prompt
// there), bounded in size and time.
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
// What is kept of a program's stderr when the caller asks for it.
inline constexpr size_t kMaxCredentialProgramStderr = size_t{64} << 10;

// Where `name` runs from: itself when it holds a '/', else the first
// executable regular file of that name in $PATH's folders (an empty entry is
// the current folder; PATH unset: /bin:/usr/bin, as posix_spawnp).
// nullopt when there is none.
std::optional<std::string> FindProgram(const std::string& name);

// A login program the user runs (the Azure CLI): $`variable` when set (a
// test's or a user's own copy), else `name`, as FindProgram finds it. What
// to run (the variable's value or `name`, as given) or kNotFound (the
// source does not apply) saying where it was looked for: "'az' not found on
// PATH", "'/x/az' (SLUICE_AZURE_CLI) not found".
Result<std::string> FindLoginProgram(const char* variable, const char* name);

// The first non-empty line of what a program wrote to stderr, trailing
// blanks dropped, at most 300 characters: login programs' errors are one
// sentence ("ERROR: ...") and they never write a token there.
std::string FirstErrorLine(const std::string& text);

// Runs argv (argv[0] found by FindProgram) with the process's environment
// plus `extra_env` ("NAME=value", replacing a variable of the same name)
// and returns its stdout when it exits 0. With `stderr_text`, the program's
// stderr is captured there too (its first 64 KiB, whatever the outcome);
// without, it stays the caller's. Errors (kPermissionDenied unless
// said) name argv[0], never the output: "cannot run 'x': why", "'x' exited
// with status N", "'x' was killed by a signal", "'x' wrote more than 1 MiB";
// kDeadlineExceeded "'x' did not finish within N ms" (it is killed) when
// `timeout_ms` is set and passes.
Result<std::string> RunCredentialProgram(const std::vector<std::string>& argv,
                                         const std::vector<std::string>& extra_env = {},
                                         std::optional<int64_t> timeout_ms = std::nullopt,
                                         std::string* stderr_text = nullptr);

}  // namespace sluice
