// Percent-encoding as AWS SigV4 (and GCS V4, Azure) define it: every byte
// outside the RFC 3986 unreserved set A-Z a-z 0-9 '-' '.' '_' '~' becomes
// "%XY" with upper-case hex. Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace sluice {

// Encodes every byte of `s` outside the unreserved set, '/' included.
// For query names and values: UriEncode("a/b c") == "a%2Fb%20c".
std::string UriEncode(std::string_view s);

// Like UriEncode but keeps '/' as is: for paths and object keys.
// EncodeUriPath("/my key/x") == "/my%20key/x".
std::string EncodeUriPath(std::string_view path);

// Decodes "%XY" escapes (either hex case); other bytes are copied, '+' stays
// '+'. A '%' not followed by two hex digits is kept literally, as servers
// and Python's urllib.parse.unquote do (hf:// revisions).
std::string PercentDecode(std::string_view s);

// PercentDecode for text that must be well formed (file:// URLs, SAS
// fields, form bodies): kInvalidArgument naming the text when a '%' is not
// followed by two hex digits. Not for secrets (the error quotes `s`).
Result<std::string> StrictPercentDecode(std::string_view s);

// RFC 3986 section 5.2.4 dot-segment removal plus collapsing of empty
// segments, as SigV4 normalizes paths for services other than S3:
// "/a/./b/../c" -> "/a/c", "//x//" -> "/x/", "/x/.." -> "/". The result
// always starts with '/'; a trailing '/' is kept when the input ended with
// '/' (or with a "." or ".." segment that leaves a folder).
std::string NormalizeUriPath(std::string_view path);

}  // namespace sluice
