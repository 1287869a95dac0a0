// When a JWT someone handed us expires, read from its claims without
// verifying it (the service that issued it judges it): OCI session tokens
// and RPSTs, Google ID tokens. Pure function; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace sluice {

// The "exp" claim (unix seconds) of a JWT, nullopt when `token` is not one
// or has no integer "exp".
std::optional<int64_t> JwtExpiry(std::string_view token);

}  // namespace sluice
