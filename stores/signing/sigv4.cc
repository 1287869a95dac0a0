#include "stores/signing/sigv4.h"

#include <algorithm>
#include <utility>

#include "base/bytes.h"
#include "stores/signing/digest.h"
#include "stores/signing/signing_time.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {

SigV4Scheme AwsSigV4Scheme() { return SigV4Scheme{}; }

SigV4Scheme GcsHmacScheme() {
  return SigV4Scheme{"GOOG4-HMAC-SHA256", "GOOG4", "goog4_request", "X-Goog-"};
}

SigV4Config S3SigV4Config(std::string region) {
  SigV4Config c;
  c.region = std::move(region);
  c.service = "s3";
  c.uri_rules = CanonicalUriRules{/*double_encode=*/false, /*normalize=*/false};
  c.add_content_sha256_header = true;
  return c;
}

SigV4Config GcsHmacConfig(std::string region) {
  SigV4Config c = S3SigV4Config(std::move(region));
  c.scheme = GcsHmacScheme();
  c.service = "storage";
  return c;
}

SigV4Config ServiceSigV4Config(std::string region, std::string service) {
  SigV4Config c;
  c.region = std::move(region);
  c.service = std::move(service);
  return c;
}

std::string DeriveSigV4SigningKey(const SigV4Scheme& scheme, std::string_view secret,
                                  std::string_view date, std::string_view region,
                                  std::string_view service) {
  std::string key = scheme.key_prefix;
  key += secret;
  std::string k = HmacSha256(key, date);
  k = HmacSha256(k, region);
  k = HmacSha256(k, service);
  k = HmacSha256(k, scheme.scope_terminator);
  // Best effort: do not leave the prefixed secret in freed memory.
  std::fill(key.begin(), key.end(), '\0');
  return k;
}

std::string EncodeQueryString(const std::vector<SigningQueryParam>& params) {
  std::string out;
  for (const SigningQueryParam& p : params) {
    if (!out.empty()) out += '&';
    out += UriEncode(p.name);
    out += '=';
    out += UriEncode(p.value);
  }
  return out;
}

namespace {

bool IsScopePart(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (c <= ' ' || c >= 0x7f || c == '/') return false;
  }
  return true;
}

Status ValidateInputs(const SigningRequest& request, const SigV4Credentials& credentials,
                      const SigV4Config& config, int64_t unix_time) {
  if (!IsScopePart(credentials.access_key_id)) {
    return InvalidArgumentError(
        "SigV4: access key id is empty or holds whitespace, '/' or non-ASCII bytes");
  }
  if (credentials.secret_access_key.empty()) {
    return InvalidArgumentError("SigV4: secret access key is empty");
  }
  if (!IsScopePart(config.region)) {
    return InvalidArgumentError("SigV4: region \"" + config.region +
                                "\" is empty or holds whitespace or '/'");
  }
  if (!IsScopePart(config.service)) {
    return InvalidArgumentError("SigV4: service \"" + config.service +
                                "\" is empty or holds whitespace or '/'");
  }
  if (!IsSigningTimeValid(unix_time)) {
    return InvalidArgumentError("SigV4: signing time " + std::to_string(unix_time) +
                                " is outside 1970..9999");
  }
  if (request.payload_hash.empty()) {
    return InvalidArgumentError(
        "SigV4: payload hash is empty (set Sha256Hex(body) or UNSIGNED-PAYLOAD)");
  }
  if (request.method.empty()) return InvalidArgumentError("SigV4: request method is empty");
  for (unsigned char c : request.method) {
    if (c <= ' ' || c >= 0x7f) {
      return InvalidArgumentError("SigV4: request method holds whitespace or non-ASCII bytes");
    }
  }
  if (!HasHeader(request, "host")) {
    return InvalidArgumentError("SigV4: request has no Host header; it must be signed");
  }
  return Status::Ok();
}

struct Scope {
  std::string amz_date;  // 20150830T123600Z
  std::string scope;     // 20150830/us-east-1/service/aws4_request
};

Scope MakeScope(const SigV4Config& config, int64_t unix_time) {
  Scope s;
  s.amz_date = FormatAmzDate(unix_time);
  s.scope = s.amz_date.substr(0, 8) + "/" + config.region + "/" + config.service + "/" +
            config.scheme.scope_terminator;
  return s;
}

// Fills canonical_request, string_to_sign and signature of `out`.
Status Compute(const SigningRequest& request, const std::vector<SigningQueryParam>& query,
               const std::vector<SigningHeader>& headers, const SigV4Credentials& credentials,
               const SigV4Config& config, const Scope& scope, SigV4Signature* out) {
  SLUICE_ASSIGN_OR_RETURN(std::string uri, CanonicalUri(request.path, config.uri_rules));
  SLUICE_ASSIGN_OR_RETURN(CanonicalHeaders canonical_headers, MakeCanonicalHeaders(headers));
  out->signed_headers = canonical_headers.signed_headers;
  std::string& cr = out->canonical_request;
  cr = request.method;
  cr += '\n';
  cr += uri;
  cr += '\n';
  cr += CanonicalQueryString(query);
  cr += '\n';
  cr += canonical_headers.block;
  cr += '\n';
  cr += canonical_headers.signed_headers;
  cr += '\n';
  cr += request.payload_hash;

  std::string& sts = out->string_to_sign;
  sts = config.scheme.algorithm;
  sts += '\n';
  sts += scope.amz_date;
  sts += '\n';
  sts += scope.scope;
  sts += '\n';
  sts += Sha256Hex(cr);

  std::string key = DeriveSigV4SigningKey(config.scheme, credentials.secret_access_key,
                                          scope.amz_date.substr(0, 8), config.region,
                                          config.service);
  out->signature = HexEncode(HmacSha256(key, sts));
  std::fill(key.begin(), key.end(), '\0');
  return Status::Ok();
}

Status RejectPresent(const SigningRequest& request, const std::string& name) {
  if (HasHeader(request, name)) {
    return InvalidArgumentError("SigV4: request already has a " + name +
                                " header; the signer sets it");
  }
  return Status::Ok();
}

}  // namespace

Result<SigV4Signature> SignSigV4Headers(const SigningRequest& request,
                                        const SigV4Credentials& credentials,
                                        const SigV4Config& config, int64_t unix_time) {
  SLUICE_RETURN_IF_ERROR(ValidateInputs(request, credentials, config, unix_time));
  const std::string& prefix = config.scheme.param_prefix;
  const std::string date_header = prefix + "Date";
  const std::string token_header = prefix + "Security-Token";
  const std::string content_header = AsciiToLower(prefix) + "content-sha256";
  SLUICE_RETURN_IF_ERROR(RejectPresent(request, "Authorization"));
  SLUICE_RETURN_IF_ERROR(RejectPresent(request, date_header));
  if (!credentials.session_token.empty()) {
    SLUICE_RETURN_IF_ERROR(RejectPresent(request, token_header));
  }
  if (config.add_content_sha256_header) {
    SLUICE_RETURN_IF_ERROR(RejectPresent(request, content_header));
  }

  const Scope scope = MakeScope(config, unix_time);
  SigV4Signature out;
  if (!credentials.session_token.empty()) {
    out.headers_to_add.push_back({token_header, credentials.session_token});
  }
  out.headers_to_add.push_back({date_header, scope.amz_date});
  if (config.add_content_sha256_header) {
    out.headers_to_add.push_back({content_header, request.payload_hash});
  }

  std::vector<SigningHeader> signed_headers = request.headers;
  for (const SigningHeader& h : out.headers_to_add) {
    if (h.name == token_header && !config.sign_session_token) continue;
    signed_headers.push_back(h);
  }
  SLUICE_RETURN_IF_ERROR(
      Compute(request, request.query, signed_headers, credentials, config, scope, &out));
  out.headers_to_add.push_back(
      {"Authorization", config.scheme.algorithm + " Credential=" + credentials.access_key_id +
                            "/" + scope.scope + ", SignedHeaders=" + out.signed_headers +
                            ", Signature=" + out.signature});
  return out;
}

Result<SigV4Signature> PresignSigV4(const SigningRequest& request,
                                    const SigV4Credentials& credentials,
                                    const SigV4Config& config, int64_t unix_time,
                                    int64_t expires_seconds) {
  SLUICE_RETURN_IF_ERROR(ValidateInputs(request, credentials, config, unix_time));
  if (expires_seconds < 1 || expires_seconds > kMaxPresignSeconds) {
    return InvalidArgumentError("SigV4: presign expiry " + std::to_string(expires_seconds) +
                                " s is outside [1, " + std::to_string(kMaxPresignSeconds) +
                                "]");
  }
  const std::string& prefix = config.scheme.param_prefix;
  for (const SigningQueryParam& p : request.query) {
    if (p.name.size() > prefix.size() &&
        AsciiEqualsIgnoreCase(std::string_view(p.name).substr(0, prefix.size()), prefix)) {
      for (const char* suffix : {"Algorithm", "Credential", "Date", "Expires", "SignedHeaders",
                                 "Security-Token", "Signature"}) {
        if (AsciiEqualsIgnoreCase(std::string_view(p.name).substr(prefix.size()), suffix)) {
          return InvalidArgumentError("SigV4: request query already has " + p.name +
                                      "; the signer sets it");
        }
      }
    }
  }

  const Scope scope = MakeScope(config, unix_time);
  SLUICE_ASSIGN_OR_RETURN(CanonicalHeaders headers, MakeCanonicalHeaders(request.headers));
  SigV4Signature out;
  std::vector<SigningQueryParam>& add = out.query_to_add;
  add.push_back({prefix + "Algorithm", config.scheme.algorithm});
  add.push_back({prefix + "Credential", credentials.access_key_id + "/" + scope.scope});
  add.push_back({prefix + "Date", scope.amz_date});
  add.push_back({prefix + "SignedHeaders", headers.signed_headers});
  add.push_back({prefix + "Expires", std::to_string(expires_seconds)});
  std::vector<SigningQueryParam> query = request.query;
  query.insert(query.end(), add.begin(), add.end());
  if (!credentials.session_token.empty()) {
    add.push_back({prefix + "Security-Token", credentials.session_token});
    if (config.sign_session_token) query.push_back(add.back());
  }
  SLUICE_RETURN_IF_ERROR(
      Compute(request, query, request.headers, credentials, config, scope, &out));
  add.push_back({prefix + "Signature", out.signature});
  return out;
}

}  // namespace sluice
