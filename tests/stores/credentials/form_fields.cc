#include "tests/stores/credentials/form_fields.h"

#include "base/status.h"
#include "stores/signing/uri_encoding.h"

namespace sluice::testing {
namespace {

std::string FormDecoded(std::string_view part) {
  std::string s(part);
  for (char& c : s) {
    if (c == '+') c = ' ';
  }
  Result<std::string> decoded = StrictPercentDecode(s);
  return decoded.ok() ? *decoded : "<malformed>";
}

}  // namespace

std::map<std::string, std::string> FormFields(std::string_view text) {
  std::map<std::string, std::string> out;
  while (!text.empty()) {
    const size_t amp = text.find('&');
    const std::string_view pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view() : text.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    out[FormDecoded(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : FormDecoded(pair.substr(eq + 1));
  }
  return out;
}

}  // namespace sluice::testing
