#include "stores/signing/azure_shared_key.h"

#include <algorithm>
#include <map>
#include <vector>

#include "stores/signing/canonical_request.h"
#include "stores/signing/digest.h"

namespace sluice {

namespace {

// The standard headers of the string to sign, in order.
constexpr const char* kStandardHeaders[] = {
    "Content-Encoding", "Content-Language", "Content-Length",      "Content-MD5",
    "Content-Type",     "Date",             "If-Modified-Since",   "If-Match",
    "If-None-Match",    "If-Unmodified-Since", "Range"};

std::string JoinedValue(const SigningRequest& request, std::string_view name) {
  std::string out;
  bool first = true;
  for (std::string_view v : FindHeaderValues(request, name)) {
    if (!first) out += ',';
    out += v;
    first = false;
  }
  return out;
}

}  // namespace

Result<AzureSharedKeySignature> SignAzureSharedKey(const SigningRequest& request,
                                                   std::string_view account_name,
                                                   std::string_view account_key) {
  if (account_name.empty()) {
    return InvalidArgumentError("Azure SharedKey: account name is empty");
  }
  for (unsigned char c : account_name) {
    if (c <= ' ' || c >= 0x7f || c == '/' || c == ':') {
      return InvalidArgumentError(
          "Azure SharedKey: account name holds whitespace, '/', ':' or non-ASCII bytes");
    }
  }
  std::string key;
  if (account_key.empty() || !Base64Decode(account_key, &key) || key.empty()) {
    return InvalidArgumentError("Azure SharedKey: account key for account \"" +
                                std::string(account_name) + "\" is not valid base64 (" +
                                std::to_string(account_key.size()) + " characters)");
  }
  if (request.method.empty()) {
    return InvalidArgumentError("Azure SharedKey: request method is empty");
  }
  if (!HasHeader(request, "x-ms-date") && !HasHeader(request, "date")) {
    return InvalidArgumentError("Azure SharedKey: request has neither x-ms-date nor Date");
  }
  if (HasHeader(request, "authorization")) {
    return InvalidArgumentError(
        "Azure SharedKey: request already has an Authorization header; the signer sets it");
  }
  if (request.path.empty() || request.path.front() != '/') {
    return InvalidArgumentError("Azure SharedKey: request path must start with '/', got \"" +
                                request.path.substr(0, 200) + "\"");
  }

  AzureSharedKeySignature out;
  std::string& sts = out.string_to_sign;
  sts = request.method;
  sts += '\n';
  for (const char* name : kStandardHeaders) {
    std::string value = JoinedValue(request, name);
    // Since 2015-02-21 a zero Content-Length is signed as empty.
    if (AsciiEqualsIgnoreCase(name, "Content-Length") && value == "0") value.clear();
    sts += value;
    sts += '\n';
  }

  // Canonicalized x-ms- headers: lower-case names, sorted, repeated names
  // joined with ',', values unfolded and trimmed.
  std::map<std::string, std::string> ms_headers;
  for (const SigningHeader& h : request.headers) {
    std::string name = AsciiToLower(h.name);
    if (name.rfind("x-ms-", 0) != 0) continue;
    auto [it, inserted] = ms_headers.try_emplace(std::move(name));
    if (!inserted) it->second += ',';
    it->second += CanonicalHeaderValue(h.value);
  }
  for (const auto& [name, value] : ms_headers) {
    sts += name;
    sts += ':';
    sts += value;
    sts += '\n';
  }

  // Canonicalized resource.
  sts += '/';
  sts += account_name;
  sts += request.path;
  std::map<std::string, std::vector<std::string>> params;
  for (const SigningQueryParam& p : request.query) {
    params[AsciiToLower(p.name)].push_back(p.value);
  }
  for (auto& [name, values] : params) {
    std::sort(values.begin(), values.end());
    sts += '\n';
    sts += name;
    sts += ':';
    for (size_t i = 0; i < values.size(); ++i) {
      if (i > 0) sts += ',';
      sts += values[i];
    }
  }

  out.signature = Base64Encode(HmacSha256(key, sts));
  std::fill(key.begin(), key.end(), '\0');
  out.authorization = "SharedKey " + std::string(account_name) + ":" + out.signature;
  return out;
}

}  // namespace sluice
