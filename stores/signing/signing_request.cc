#include "stores/signing/signing_request.h"

namespace sluice {

namespace {
char LowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }
}  // namespace

std::string AsciiToLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = LowerAscii(c);
  return out;
}

bool AsciiEqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (LowerAscii(a[i]) != LowerAscii(b[i])) return false;
  }
  return true;
}

std::vector<std::string_view> FindHeaderValues(const SigningRequest& request,
                                               std::string_view name) {
  std::vector<std::string_view> out;
  for (const SigningHeader& h : request.headers) {
    if (AsciiEqualsIgnoreCase(h.name, name)) out.push_back(h.value);
  }
  return out;
}

bool HasHeader(const SigningRequest& request, std::string_view name) {
  for (const SigningHeader& h : request.headers) {
    if (AsciiEqualsIgnoreCase(h.name, name)) return true;
  }
  return false;
}

}  // namespace sluice
