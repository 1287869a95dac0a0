// How the credential fakes read what a client sends to a token service.
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace sluice::testing {

// The fields of an application/x-www-form-urlencoded text (a token
// request's body, or a URL's query): '+' is a space and %XX escapes are
// decoded in names and values, as STS, Entra ID and Google's token endpoint
// read them. A field without '=' has an empty value; a malformed escape
// reads as "<malformed>", so a test sees it rather than a guess.
std::map<std::string, std::string> FormFields(std::string_view text);

}  // namespace sluice::testing
