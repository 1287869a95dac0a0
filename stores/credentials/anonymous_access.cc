#include "stores/credentials/anonymous_access.h"

#include "base/ascii.h"
#include "stores/common/store_keys.h"

namespace sluice {

bool EnvFlag(const char* name) {
  auto v = GetEnv(name);
  if (!v) return false;
  std::string s = AsciiToLower(*v);
  return s == "1" || s == "true" || s == "yes" || s == "on";
}

Result<RequestAuth> ChooseRequestAuth(const std::vector<const char*>& unsigned_switches,
                                      std::shared_ptr<SharedCredential> credential) {
  for (const char* name : unsigned_switches) {
    if (EnvFlag(name)) return RequestAuth{nullptr, std::string(name) + " is set"};
  }
  auto got = credential->Get();
  if (got.ok()) return RequestAuth{std::move(credential), ""};
  if (IsNotFound(got.status())) return RequestAuth{nullptr, got.status().message()};
  return got.status();
}

}  // namespace sluice
