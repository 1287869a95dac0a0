#include "stores/signing/canonical_request.h"

#include <algorithm>
#include <map>
#include <utility>

#include "stores/signing/uri_encoding.h"

namespace sluice {

namespace {

bool IsWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsTokenChar(unsigned char c) {
  if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) return true;
  switch (c) {
    case '!': case '#': case '$': case '%': case '&': case '\'': case '*': case '+':
    case '-': case '.': case '^': case '_': case '`': case '|': case '~':
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<std::string> CanonicalUri(std::string_view path, const CanonicalUriRules& rules) {
  if (path.empty()) path = "/";
  if (path.front() != '/') {
    return InvalidArgumentError("request path must start with '/', got \"" +
                                std::string(path.substr(0, 200)) + "\"");
  }
  std::string out(path);
  if (rules.normalize) out = NormalizeUriPath(out);
  if (rules.double_encode) out = EncodeUriPath(out);
  return out;
}

std::string CanonicalQueryString(const std::vector<SigningQueryParam>& params) {
  std::vector<std::pair<std::string, std::string>> encoded;
  encoded.reserve(params.size());
  for (const SigningQueryParam& p : params) encoded.emplace_back(UriEncode(p.name), UriEncode(p.value));
  std::sort(encoded.begin(), encoded.end());
  std::string out;
  for (const auto& [name, value] : encoded) {
    if (!out.empty()) out += '&';
    out += name;
    out += '=';
    out += value;
  }
  return out;
}

std::string CanonicalHeaderValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  bool pending_space = false;
  for (char c : value) {
    if (IsWhitespace(c)) {
      pending_space = !out.empty();
      continue;
    }
    if (pending_space) out += ' ';
    pending_space = false;
    out += c;
  }
  return out;
}

Result<CanonicalHeaders> MakeCanonicalHeaders(const std::vector<SigningHeader>& headers) {
  std::map<std::string, std::string> merged;  // sorted by lower-case name
  for (size_t i = 0; i < headers.size(); ++i) {
    const std::string& name = headers[i].name;
    if (name.empty()) {
      return InvalidArgumentError("header " + std::to_string(i) + " has an empty name");
    }
    for (unsigned char c : name) {
      if (!IsTokenChar(c)) {
        return InvalidArgumentError("header " + std::to_string(i) +
                                    " has a name with a character not allowed in HTTP "
                                    "header names (byte " + std::to_string(int(c)) + ")");
      }
    }
    auto [it, inserted] = merged.try_emplace(AsciiToLower(name));
    if (!inserted) it->second += ',';
    it->second += CanonicalHeaderValue(headers[i].value);
  }
  CanonicalHeaders out;
  for (const auto& [name, value] : merged) {
    out.block += name;
    out.block += ':';
    out.block += value;
    out.block += '\n';
    if (!out.signed_headers.empty()) out.signed_headers += ';';
    out.signed_headers += name;
  }
  return out;
}

}  // namespace sluice
