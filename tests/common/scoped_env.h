// Environment variables set (or, with nullopt, unset) for one scope and
// restored on destruction: the tests' one way to tamper with the
// environment. Header-only, so every test executable can use it; not
// thread-safe (setenv), so tests use it from the test thread only.
#pragma once

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace sluice::testing {

class ScopedEnv {
 public:
  explicit ScopedEnv(const std::map<std::string, std::optional<std::string>>& vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
      Set(name, value);
    }
  }
  ScopedEnv(const std::string& name, std::optional<std::string> value)
      : ScopedEnv(std::map<std::string, std::optional<std::string>>{{name, std::move(value)}}) {}
  ~ScopedEnv() {
    for (const auto& [name, value] : saved_) Set(name, value);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void Set(const std::string& name, const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }

  std::map<std::string, std::optional<std::string>> saved_;
};

}  // namespace sluice::testing
