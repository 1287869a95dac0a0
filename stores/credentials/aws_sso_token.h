// The access token of an AWS IAM Identity Center (SSO) session, from the
// cache `aws sso login` writes (~/.aws/sso/cache/<sha1 of the session
// name>.json), refreshed as botocore does: when it expires within 15
// minutes and the cache holds the client registration (clientId,
// clientSecret, registrationExpiresAt, still valid) and a refreshToken,
// SSO-OIDC CreateToken (POST <oidc>/token, grantType refresh_token) gives a
// new one, which is written back in the CLI's format (file mode 0600). A
// failed refresh keeps the old token while it is valid. Only sso-session
// profiles refresh; legacy ones (sso_start_url in the profile) do not.
// Blocking (see blocking_http.h); thread-safe, but two processes refreshing
// at once may both call CreateToken (the later one re-reads the cache when
// its own refresh is refused). Errors name the cache file and the profile,
// never a token or the client secret.
#pragma once

#include <cstdint>
#include <string>

#include "base/env.h"
#include "base/status.h"

namespace sluice {

struct SsoTokenSettings {
  std::string profile;       // for errors ("run 'aws sso login --profile P'")
  std::string session_name;  // "" for legacy profiles: no refresh
  std::string start_url;     // written back with a refreshed token
  std::string sso_region;    // of the OIDC endpoint, written back too
  std::string cache_path;
  // Reads the cache and writes a refreshed token back (not owned; outlives
  // the call). A test gives one that fails a chosen call (FaultEnv).
  Env* env = Env::Default();
};

// The OIDC endpoint: AWS_ENDPOINT_URL_SSO_OIDC, else
// https://oidc.<sso_region>.amazonaws.com.
std::string SsoOidcBase(const std::string& sso_region);

// A valid access token at unix time `now`. kPermissionDenied when the
// cache is missing or unreadable, or the token has expired and could not
// be refreshed (saying why, and to log in again).
Result<std::string> AwsSsoAccessToken(const SsoTokenSettings& settings, int64_t now);

}  // namespace sluice
