#include "stores/signing/signing_request.h"

namespace sluice {

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
