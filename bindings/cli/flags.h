// A small parser for "POS... --name value --name=value --switch" arguments.
// Not thread-safe; one per command invocation.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"

namespace sluice::cli {

struct Flags {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;  // --name value
  std::set<std::string> switches;             // --name (listed in `switch_names`)

  std::optional<std::string> Get(const std::string& name) const {
    auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
  bool Has(const std::string& name) const { return switches.count(name) > 0; }
};

// `value_names` take a value; `switch_names` do not. Anything else starting
// with "--" is an error naming it.
Result<Flags> ParseFlags(const std::vector<std::string>& args,
                         const std::set<std::string>& value_names,
                         const std::set<std::string>& switch_names = {});

// Parses a non-negative integer argument; errors name the flag.
Result<uint64_t> ParseCount(const std::string& text, const std::string& what);

// Prints "sluice <command>: <message>" to stderr and returns `exit_code`.
int Error(const std::string& command, const Status& status, int exit_code = 1);

}  // namespace sluice::cli
