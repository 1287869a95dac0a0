// AWS shared credentials / config files (stores/credentials/aws_settings.h ParseIni).
// Checks: no value (secret keys, session tokens) appears in an error, which
// names only the file and line; parsed keys are lower case and trimmed,
// values trimmed; a parsed file re-rendered as INI parses to the same map.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>

#include "stores/credentials/aws_settings.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/secret_scan.h"

namespace {

// ParseIni trims spaces, tabs and CR (Python's configparser also strips
// \v and \f; a value ending in one is odd but not a secret's problem).
bool IsTrimmedSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool Trimmed(const std::string& s) {
  return s.empty() || (!IsTrimmedSpace(s.front()) && !IsTrimmedSpace(s.back()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto ini = sluice::ParseIni(text, "~/.aws/credentials");
  if (!ini.ok()) {
    for (const std::string& secret :
         sluice::fuzz::SettingSecrets(text, '=', "\n", {"secret", "token", "key"})) {
      auto other = sluice::ParseIni(sluice::fuzz::RotateSecret(text, secret), "~/.aws/credentials");
      FUZZ_CHECK(!sluice::fuzz::Echoes(ini.status(), other.status(), secret),
                 "error shows a value: %s", ini.status().message().c_str());
    }
    return 0;
  }
  std::string rendered;
  for (const auto& [section, settings] : *ini) {
    FUZZ_CHECK(Trimmed(section));
    for (const auto& [key, value] : settings) {
      FUZZ_CHECK(Trimmed(key) && Trimmed(value), "untrimmed key or value");
      for (char c : key) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'), "key not lower case");
    }
  }
  // Re-render the parts that can be written back unambiguously.
  for (const auto& [section, settings] : *ini) {
    if (section.find_first_of("]\n\r") != std::string::npos || section.empty()) return 0;
    rendered += "[" + section + "]\n";
    for (const auto& [key, value] : settings) {
      if (key.empty() || key.find_first_of("=\n\r#;[") != std::string::npos ||
          value.find_first_of("\n\r") != std::string::npos) {
        return 0;
      }
      rendered += key + " = " + value + "\n";
    }
  }
  auto again = sluice::ParseIni(rendered, "rendered");
  FUZZ_CHECK(again.ok(), "%s", again.status().message().c_str());
  FUZZ_CHECK(*again == *ini, "re-rendered INI parses differently");
  return 0;
}
