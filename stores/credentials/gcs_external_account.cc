#include "stores/credentials/gcs_external_account.h"

#include <vector>

#include "base/file.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/credential_program.h"
#include "stores/credentials/gcs_access_token.h"
#include "stores/credentials/gcs_token_flows.h"
#include "stores/http/url.h"
#include "stores/signing/digest.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

constexpr std::string_view kStsUrl = "https://sts.googleapis.com/v1/token";
// Subject tokens are JWTs or SAML assertions of a few KiB; this only caps
// a hostile file, URL or program.
constexpr uint64_t kMaxSubjectToken = uint64_t{1} << 20;

struct Where {
  const std::string& path;
  std::string Prefix() const { return "external_account credentials in " + path + ": "; }
};

// The token in `content` per credential_source.format.
Result<std::string> FormattedToken(const JsonValue& source, const std::string& content,
                                   const std::string& from, const Where& where) {
  const JsonValue* format = JsonMember(source, "format");
  std::string type = format ? JsonStringMember(*format, "type") : "";
  if (type.empty() || type == "text") {
    if (content.empty()) return PermissionDeniedError(where.Prefix() + from + " is empty");
    return content;
  }
  if (type != "json") {
    return InvalidArgumentError(where.Prefix() + "format.type must be 'text' or 'json'");
  }
  std::string field = JsonStringMember(*format, "subject_token_field_name");
  if (field.empty()) {
    return InvalidArgumentError(where.Prefix() + "format has no 'subject_token_field_name'");
  }
  auto parsed = ParsePyJson(content);
  std::string token = parsed.ok() ? JsonStringMember(*parsed, field) : "";
  if (token.empty()) {
    return PermissionDeniedError(where.Prefix() + from + " is not JSON with a string '" +
                                 field + "'");
  }
  return token;
}

Result<std::string> TokenFromFile(const JsonValue& source, const Where& where) {
  std::string file = JsonStringMember(source, "file");
  auto content = ReadFile(file, kMaxSubjectToken);
  if (!content.ok()) {
    return PermissionDeniedError(where.Prefix() + "cannot read the subject token file: " +
                                 content.status().message());
  }
  return FormattedToken(source, *content, "subject token file " + file, where);
}

Result<std::string> TokenFromUrl(const JsonValue& source, const Where& where) {
  HttpRequest req;
  req.url = JsonStringMember(source, "url");
  if (const JsonValue* headers = JsonMember(source, "headers")) {
    if (const auto* obj = std::get_if<JsonValue::Object>(&headers->v)) {
      for (const auto& [name, value] : *obj) {
        if (const auto* s = std::get_if<std::string>(&value.v)) req.headers.emplace_back(name, *s);
      }
    }
  }
  std::string shown = RedactUrl(req.url);
  auto resp = SendBlocking(std::move(req), GoogleEndpointOptions());
  if (!resp.ok()) {
    return PermissionDeniedError(where.Prefix() + "no subject token from " + shown + ": " +
                                 resp.status().message());
  }
  return FormattedToken(source, resp->body, "the answer of " + shown, where);
}

// The subject token of an executable's answer; kNotFound when `cached` and
// the answer is not a usable cache (expired, failed, unparsable).
Result<std::string> ExecutableAnswerToken(const std::string& text, const std::string& from,
                                          bool cached, int64_t now, const Where& where) {
  auto parsed = ParsePyJson(text);
  auto fail = [&](const std::string& why) -> Status {
    if (cached) return NotFoundError(why);
    return PermissionDeniedError(where.Prefix() + from + " " + why);
  };
  if (!parsed.ok()) return fail("is not JSON");
  const JsonValue* version = JsonMember(*parsed, "version");
  const JsonValue* success = JsonMember(*parsed, "success");
  if (version == nullptr || !std::holds_alternative<int64_t>(version->v) ||
      std::get<int64_t>(version->v) != 1) {
    return fail("has no \"version\": 1");
  }
  if (success == nullptr || !std::holds_alternative<bool>(success->v)) {
    return fail("has no boolean \"success\"");
  }
  if (!std::get<bool>(success->v)) {
    // The program's own code and message are its report, not a secret.
    return fail("reported failure: code " + JsonStringMember(*parsed, "code") + ", message " +
                JsonStringMember(*parsed, "message"));
  }
  const JsonValue* expiration = JsonMember(*parsed, "expiration_time");
  if (expiration != nullptr) {
    const auto* t = std::get_if<int64_t>(&expiration->v);
    if (t == nullptr || *t < now) return fail("gave an expired subject token");
  } else if (cached) {
    return fail("has no expiration_time");
  }
  std::string type = JsonStringMember(*parsed, "token_type");
  std::string token;
  if (type == "urn:ietf:params:oauth:token-type:jwt" ||
      type == "urn:ietf:params:oauth:token-type:id_token") {
    token = JsonStringMember(*parsed, "id_token");
  } else if (type == "urn:ietf:params:oauth:token-type:saml2") {
    token = JsonStringMember(*parsed, "saml_response");
  } else {
    return fail("gave an unsupported token_type");
  }
  if (token.empty()) return fail("gave no subject token");
  return token;
}

Result<std::string> TokenFromExecutable(const JsonValue& info, const JsonValue& executable,
                                        int64_t now, const Where& where) {
  if (GetEnv("GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES").value_or("") != "1") {
    return PermissionDeniedError(where.Prefix() +
                                 "executable sources run only with "
                                 "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES=1");
  }
  std::string command = JsonStringMember(executable, "command");
  std::vector<std::string> argv = SplitAny(command, " \t\n");
  if (argv.empty()) return InvalidArgumentError(where.Prefix() + "executable has no 'command'");
  int64_t timeout_ms = 30000;
  if (const JsonValue* t = JsonMember(executable, "timeout_millis")) {
    const auto* ms = std::get_if<int64_t>(&t->v);
    if (ms == nullptr || *ms < 5000 || *ms > 120000) {
      return InvalidArgumentError(where.Prefix() + "timeout_millis must be 5000..120000");
    }
    timeout_ms = *ms;
  }
  std::string output_file = JsonStringMember(executable, "output_file");
  if (!output_file.empty()) {
    if (auto cached = ReadFile(output_file, kMaxSubjectToken); cached.ok()) {
      auto token = ExecutableAnswerToken(*cached, output_file, true, now, where);
      if (token.ok()) return token;
    }
  }
  std::vector<std::string> env = {
      "GOOGLE_EXTERNAL_ACCOUNT_AUDIENCE=" + JsonStringMember(info, "audience"),
      "GOOGLE_EXTERNAL_ACCOUNT_TOKEN_TYPE=" + JsonStringMember(info, "subject_token_type"),
      "GOOGLE_EXTERNAL_ACCOUNT_INTERACTIVE=0"};
  std::string impersonation = JsonStringMember(info, "service_account_impersonation_url");
  if (!impersonation.empty()) {
    if (auto email = ImpersonationTarget(impersonation); email.ok()) {
      env.push_back("GOOGLE_EXTERNAL_ACCOUNT_IMPERSONATED_EMAIL=" + *email);
    }
  }
  if (!output_file.empty()) env.push_back("GOOGLE_EXTERNAL_ACCOUNT_OUTPUT_FILE=" + output_file);
  auto out = RunCredentialProgram(argv, env, timeout_ms);
  if (!out.ok()) {
    return Status(out.status().code(), where.Prefix() + out.status().message(), out.status().os_error());
  }
  return ExecutableAnswerToken(*out, "the output of '" + argv[0] + "'", false, now, where);
}

Result<std::string> SubjectToken(const JsonValue& info, int64_t now, const Where& where) {
  const JsonValue* source = JsonMember(info, "credential_source");
  if (source == nullptr || !std::holds_alternative<JsonValue::Object>(source->v)) {
    return InvalidArgumentError(where.Prefix() + "no 'credential_source' object");
  }
  if (!JsonStringMember(*source, "environment_id").empty() ||
      JsonMember(*source, "certificate") != nullptr) {
    return UnimplementedError(where.Prefix() +
                              "AWS and certificate credential sources are not supported; "
                              "use a file, url or executable source");
  }
  if (const JsonValue* executable = JsonMember(*source, "executable")) {
    return TokenFromExecutable(info, *executable, now, where);
  }
  if (!JsonStringMember(*source, "file").empty()) return TokenFromFile(*source, where);
  if (!JsonStringMember(*source, "url").empty()) return TokenFromUrl(*source, where);
  return InvalidArgumentError(where.Prefix() +
                              "credential_source has no 'file', 'url' or 'executable'");
}

}  // namespace

Result<Credential> FetchExternalAccountToken(const JsonValue& info, const std::string& path,
                                             std::string_view scope, int64_t now) {
  Where where{path};
  std::string audience = JsonStringMember(info, "audience");
  std::string token_type = JsonStringMember(info, "subject_token_type");
  if (audience.empty() || token_type.empty()) {
    return InvalidArgumentError(where.Prefix() + "needs 'audience' and 'subject_token_type'");
  }
  std::string token_url = JsonStringMember(info, "token_url");
  if (token_url.empty()) token_url = std::string(kStsUrl);
  std::string impersonation_url = JsonStringMember(info, "service_account_impersonation_url");
  SLUICE_ASSIGN_OR_RETURN(std::string subject_token, SubjectToken(info, now, where));

  std::vector<std::pair<std::string, std::string>> headers;
  std::string client_id = JsonStringMember(info, "client_id");
  std::string client_secret = JsonStringMember(info, "client_secret");
  if (!client_id.empty()) {
    headers.emplace_back("authorization",
                         "Basic " + Base64Encode(client_id + ":" + client_secret));
  }
  std::string options;
  std::string user_project = JsonStringMember(info, "workforce_pool_user_project");
  if (!user_project.empty() && client_id.empty()) {
    SLUICE_ASSIGN_OR_RETURN(std::string project, [&]() -> Result<std::string> {
      std::string out;
      SLUICE_RETURN_IF_ERROR(AppendPyJsonString(out, user_project));
      return out;
    }());
    // google-auth percent-encodes the JSON before form-encoding it.
    options = UriEncode("{\"userProject\": " + project + "}");
  }
  // The STS token itself buys the impersonation: google-auth scopes it to IAM.
  std::string sts_scope = impersonation_url.empty() ? std::string(scope)
                                                    : std::string(kGoogleIamScope);
  const std::string name = "external account (audience " + audience + ")";
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse resp,
      PostToGoogle(token_url,
                   FormBody({{"grant_type", "urn:ietf:params:oauth:grant-type:token-exchange"},
                             {"audience", audience},
                             {"scope", sts_scope},
                             {"requested_token_type",
                              "urn:ietf:params:oauth:token-type:access_token"},
                             {"subject_token", subject_token},
                             {"subject_token_type", token_type},
                             {"options", options}}),
                   "STS token exchange of " + name + " at " + RedactUrl(token_url),
                   std::move(headers)));
  SLUICE_ASSIGN_OR_RETURN(AccessToken token,
                          ParseAccessTokenResponse(resp.body, "STS at " + RedactUrl(token_url)));
  if (impersonation_url.empty()) return BearerCredential(name, std::move(token), now);

  ImpersonationRequest request;
  request.url = impersonation_url;
  request.scopes.emplace_back(scope);
  if (const JsonValue* sai = JsonMember(info, "service_account_impersonation")) {
    if (const JsonValue* lifetime = JsonMember(*sai, "token_lifetime_seconds")) {
      const auto* s = std::get_if<int64_t>(&lifetime->v);
      if (s == nullptr || *s < 600 || *s > 43200) {
        return InvalidArgumentError(where.Prefix() +
                                    "token_lifetime_seconds must be 600..43200");
      }
      request.lifetime_s = *s;
    }
  }
  return GenerateAccessToken(request, token.token, name);
}

}  // namespace sluice
