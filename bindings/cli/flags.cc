#include "bindings/cli/flags.h"

#include <cstdio>

namespace sluice::cli {

Result<Flags> ParseFlags(const std::vector<std::string>& args,
                         const std::set<std::string>& value_names,
                         const std::set<std::string>& switch_names) {
  Flags f;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.size() < 3 || a.compare(0, 2, "--") != 0) {
      f.positional.push_back(a);
      continue;
    }
    std::string name = a.substr(2), value;
    bool has_value = false;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (switch_names.count(name)) {
      if (has_value) return InvalidArgumentError("--" + name + " takes no value");
      f.switches.insert(name);
    } else if (value_names.count(name)) {
      if (!has_value) {
        if (i + 1 >= args.size()) return InvalidArgumentError("--" + name + " needs a value");
        value = args[++i];
      }
      f.values[name] = value;
    } else {
      return InvalidArgumentError("unknown option --" + name);
    }
  }
  return f;
}

Result<uint64_t> ParseCount(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgumentError(what + " must be a non-negative integer, got '" + text + "'");
  }
  return std::stoull(text);
}

int Error(const std::string& command, const Status& status, int exit_code) {
  std::fprintf(stderr, "sluice %s: %s\n", command.c_str(), status.ToString().c_str());
  return exit_code;
}

}  // namespace sluice::cli
