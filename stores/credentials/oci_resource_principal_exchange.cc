#include "stores/credentials/oci_resource_principal_exchange.h"

#include <utility>
#include <vector>

#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/blocking_http.h"
#include "stores/credentials/credential_chain.h"
#include "stores/credentials/jwt_expiry.h"
#include "stores/credentials/oci_config.h"
#include "stores/credentials/oci_instance_principal.h"
#include "stores/credentials/oci_regions.h"
#include "stores/credentials/oci_resource_principal.h"
#include "stores/http/url.h"
#include "stores/signing/digest.h"
#include "stores/signing/oci_signature.h"
#include "stores/signing/x509_certificate.h"

namespace sluice {
namespace {

constexpr int64_t kRpExchangeTimeoutMs = 10000;
constexpr char kLeafSuffix[] = "_FOR_LEAF_RESOURCE";

// A bought (or, for 2.2, handed over) token and the session key it is for.
struct RpSession {
  std::string token;  // secret
  RsaKeyPair session; // secret
  std::string parent_rpt_url;  // opc-parent-rpt-url of the RPT answer, if any
};

OciApiKey RpSessionSigner(const RpSession& s, const std::string& what) {
  OciApiKey key;
  key.key_id = "ST$" + s.token;
  key.private_key_pem = s.session.private_pem;
  key.what = "the session key of " + what;
  return key;
}

// `method` `url` signed by `key` as the SDK's BaseClient signs: "date
// (request-target) host", and for a body its three headers.
Result<HttpResponse> RpSendSigned(HttpMethod method, const std::string& url, std::string body,
                                const HttpHeaders& extra, const OciApiKey& key, int64_t now,
                                const std::string& what) {
  SLUICE_ASSIGN_OR_RETURN(Url parsed, ParseUrl(url));
  OciRequestToSign r;
  r.method = method == HttpMethod::kPost ? "POST" : "GET";
  r.host = parsed.Authority();
  r.target = parsed.target;
  r.date = OciHttpDate(now);
  HttpRequest req;
  req.method = method;
  req.url = url;
  if (method == HttpMethod::kPost) {
    r.sign_body = true;
    r.content_length = body.size();
    r.content_type = "application/json";
    r.content_sha256_b64 = Base64Encode(Sha256(body));
  }
  SLUICE_ASSIGN_OR_RETURN(std::string auth, OciAuthorization(r, key));
  req.headers = {{"date", r.date}, {"authorization", std::move(auth)}};
  if (method == HttpMethod::kPost) {
    req.headers.emplace_back("content-type", r.content_type);
    req.headers.emplace_back("x-content-sha256", r.content_sha256_b64);
  }
  for (const auto& h : extra) req.headers.push_back(h);
  req.body = std::move(body);
  HttpClientOptions options = CredentialEndpointOptions(kRpExchangeTimeoutMs);
  options.error_detail = OciErrorDetail;
  auto resp = SendBlocking(std::move(req), options);
  if (!resp.ok()) return resp.status().WithContext(what);
  return resp;
}

// The two requests of one exchange (see the header), signed by `signer`,
// for `session`.
Result<RpSession> RpExchange(const std::string& rpt_url, std::string rpst_endpoint,
                           const HttpHeaders& rpt_headers, const OciApiKey& signer,
                           RsaKeyPair session, int64_t now) {
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse rpt_answer,
      RpSendSigned(HttpMethod::kGet, rpt_url, "", rpt_headers, signer, now,
                 "OCI resource principal token from " + rpt_url));
  auto rpt_json = ParsePyJson(rpt_answer.body);
  const std::string rpt = rpt_json.ok() ? JsonStringMember(*rpt_json, "resourcePrincipalToken") : "";
  const std::string spst =
      rpt_json.ok() ? JsonStringMember(*rpt_json, "servicePrincipalSessionToken") : "";
  if (rpt.empty() || spst.empty()) {
    return CorruptError("OCI resource principal token from " + rpt_url +
                        ": the answer has no resourcePrincipalToken and servicePrincipalSessionToken");
  }
  // The body as the SDK's json.dumps writes it.
  std::string body = "{\"resourcePrincipalToken\": ";
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, rpt));
  body += ", \"servicePrincipalSessionToken\": ";
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, spst));
  body += ", \"sessionPublicKey\": ";
  SLUICE_RETURN_IF_ERROR(AppendPyJsonString(body, OciPemBody(session.public_pem)));
  body += "}";
  const std::string rpst_url = rpst_endpoint + "/v1/resourcePrincipalSessionToken";
  SLUICE_ASSIGN_OR_RETURN(
      HttpResponse rpst_answer,
      RpSendSigned(HttpMethod::kPost, rpst_url, std::move(body), {}, signer, now,
                 "OCI resource principal session token from " + rpst_url));
  auto rpst_json = ParsePyJson(rpst_answer.body);
  RpSession out;
  out.token = rpst_json.ok() ? JsonStringMember(*rpst_json, "token") : "";
  if (out.token.empty()) {
    return CorruptError("OCI resource principal session token from " + rpst_url + ": the answer has no token");
  }
  out.session = std::move(session);
  out.parent_rpt_url = rpt_answer.Header("opc-parent-rpt-url");
  return out;
}

std::string RpEnv(const std::string& name) { return GetEnv(name.c_str()).value_or(""); }

// "OCI_RESOURCE_PRINCIPAL_VERSION=2.1 but X, Y are not set", or OK.
Status RpRequireSet(const std::string& version_variable, const std::string& version,
                  const std::vector<std::string>& names) {
  std::string missing;
  for (const std::string& name : names) {
    if (RpEnv(name).empty()) missing += (missing.empty() ? "" : ", ") + name;
  }
  if (missing.empty()) return Status::Ok();
  return InvalidArgumentError(version_variable + "=" + version + " but " + missing +
                              (missing.find(',') == std::string::npos ? " is" : " are") + " not set");
}

// One resource principal: how it comes by its token and session key.
class RpLevel {
 public:
  virtual ~RpLevel() = default;
  virtual Result<RpSession> Session(int64_t now) = 0;
  virtual std::string Describe() const = 0;
  virtual std::string Region() const = 0;
};

// 2.2 (only as the leaf of a 3.0): the platform's token and key.
class HandedOverLevel final : public RpLevel {
 public:
  explicit HandedOverLevel(OciResourcePrincipal rp) : rp_(std::move(rp)) {}
  Result<RpSession> Session(int64_t /*now*/) override {
    SLUICE_ASSIGN_OR_RETURN(OciApiKey key, OciResourcePrincipalKey(rp_));
    RpSession out;
    out.token = key.key_id.substr(3);
    SLUICE_ASSIGN_OR_RETURN(out.session, OpenRsaKeyPair(key.private_key_pem, key.what, key.passphrase));
    return out;
  }
  std::string Describe() const override { return DescribeOciResourcePrincipal(rp_); }
  std::string Region() const override { return rp_.region; }

 private:
  OciResourcePrincipal rp_;
};

// 2.1, 2.1.1, 2.1.2: the resource's own key signs and is the session key.
class OwnKeyLevel final : public RpLevel {
 public:
  static Result<std::unique_ptr<RpLevel>> Make(const std::string& version, const std::string& suffix) {
    std::vector<std::string> required = {std::string("OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT") + suffix, std::string("OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT") + suffix,
                                         std::string("OCI_RESOURCE_PRINCIPAL_RESOURCE_ID") + suffix, std::string("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM") + suffix};
    if (version != "2.1") required.push_back(std::string("OCI_RESOURCE_PRINCIPAL_TENANCY_ID") + suffix);
    SLUICE_RETURN_IF_ERROR(RpRequireSet(std::string("OCI_RESOURCE_PRINCIPAL_VERSION") + suffix, version, required));
    auto level = std::unique_ptr<OwnKeyLevel>(new OwnKeyLevel());
    level->version_ = version;
    level->suffix_ = suffix;
    level->rpt_endpoint_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT") + suffix);
    level->rpst_endpoint_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT") + suffix);
    level->resource_id_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RESOURCE_ID") + suffix);
    level->tenancy_id_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_TENANCY_ID") + suffix);
    level->private_pem_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM") + suffix);
    level->passphrase_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE") + suffix);
    if (std::string region = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_REGION") + suffix); !region.empty()) {
      SLUICE_ASSIGN_OR_RETURN(level->region_,
                              CanonicalOciRegion(region, std::string("OCI_RESOURCE_PRINCIPAL_REGION") + suffix));
    }
    level->key_id_ = version == "2.1" ? "resource/v2.1/" + level->resource_id_
                                      : "resource/v" + version + "/" + level->tenancy_id_ + "/" +
                                            level->resource_id_;
    std::string path = "/20180711/resourcePrincipalTokenV2/" + level->resource_id_;
    if (version == "2.1.2") {
      const std::string custom = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPT_PATH") + suffix);
      if (custom.empty()) {
        path = "/20180711/resourcePrincipalTokenV212/" + level->resource_id_;
      } else if (custom.size() >= 2 && custom.compare(custom.size() - 2, 2, "{}") == 0) {
        path.clear();
        for (size_t i = 0; i < custom.size();) {
          if (custom.compare(i, 2, "{}") == 0) {
            path += level->resource_id_;
            i += 2;
          } else {
            path += custom[i++];
          }
        }
      } else {
        path = custom + (custom.back() == '/' ? "" : "/") + level->resource_id_;
      }
      const std::string context = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_SECURITY_CONTEXT") + suffix);
      if (!context.empty()) level->rpt_headers_.emplace_back("security-context", context);
    }
    level->rpt_url_ = level->rpt_endpoint_ + path;
    SLUICE_RETURN_IF_ERROR(level->Key().status());  // said now, not at the first fetch
    return std::unique_ptr<RpLevel>(std::move(level));
  }

  Result<RpSession> Session(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(OciApiKey key, Key());
    SLUICE_ASSIGN_OR_RETURN(RsaKeyPair pair, OpenRsaKeyPair(key.private_key_pem, key.what, key.passphrase));
    key.private_key_pem = pair.private_pem;
    key.passphrase.clear();
    return RpExchange(rpt_url_, rpst_endpoint_, rpt_headers_, key, std::move(pair), now);
  }

  std::string Describe() const override {
    return "resource principal " + version_ + " (key id " + key_id_ + ", RPT from " + rpt_url_ +
           ", RPST from " + rpst_endpoint_ + ")";
  }
  std::string Region() const override { return region_; }

 private:
  OwnKeyLevel() = default;
  Result<OciApiKey> Key() const {
    SLUICE_ASSIGN_OR_RETURN(OciApiKey key, OciResourcePrincipalOwnKey(private_pem_, passphrase_, suffix_));
    key.key_id = key_id_;
    return key;
  }

  std::string version_, suffix_, rpt_endpoint_, rpst_endpoint_, resource_id_, tenancy_id_;
  std::string private_pem_, passphrase_, region_, key_id_, rpt_url_;
  HttpHeaders rpt_headers_;
};

// 1.1: the instance principal signs; a new session key per token.
class InstanceSignedLevel final : public RpLevel {
 public:
  static Result<std::unique_ptr<RpLevel>> Make(const std::string& suffix) {
    SLUICE_RETURN_IF_ERROR(RpRequireSet(std::string("OCI_RESOURCE_PRINCIPAL_VERSION") + suffix, "1.1", {std::string("OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT") + suffix}));
    auto level = std::unique_ptr<InstanceSignedLevel>(new InstanceSignedLevel());
    level->endpoints_ = OciInstancePrincipalEndpointsFromEnv();
    level->rpt_endpoint_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT") + suffix);
    level->rpst_endpoint_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT") + suffix);
    level->rpt_path_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPT_PATH") + suffix);
    if (level->rpt_path_.empty()) level->rpt_path_ = "/20180711/resourcePrincipalToken/{id}";
    level->rpt_id_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPT_ID") + suffix);
    return std::unique_ptr<RpLevel>(std::move(level));
  }

  Result<RpSession> Session(int64_t now) override {
    if (region_.empty()) {
      SLUICE_ASSIGN_OR_RETURN(region_, FetchOciInstanceRegion(endpoints_.metadata));
    }
    // Held here: the process-wide credential lives as long as someone holds it.
    if (!instance_) {
      instance_ = OciInstancePrincipalCredential(endpoints_.metadata, OciFederationEndpoint(endpoints_, region_));
    }
    SLUICE_ASSIGN_OR_RETURN(Credential ip, instance_->Get());
    std::string id = rpt_id_;
    if (id.empty()) {
      SLUICE_ASSIGN_OR_RETURN(id, FetchOciInstanceId(endpoints_.metadata));
    }
    std::string path;
    for (size_t i = 0; i < rpt_path_.size();) {  // str.format(id=...) of the template
      if (rpt_path_.compare(i, 4, "{id}") == 0) {
        path += id;
        i += 4;
      } else {
        path += rpt_path_[i++];
      }
    }
    rpt_url_ = rpt_endpoint_ + path;
    const std::string rpst = rpst_endpoint_.empty() ? OciServiceEndpoint("auth", region_)
                                                    : rpst_endpoint_;
    SLUICE_ASSIGN_OR_RETURN(RsaKeyPair session, GenerateRsaKeyPair(2048));
    return RpExchange(rpt_url_, rpst, {}, OciSessionKey(ip), std::move(session), now);
  }

  std::string Describe() const override {
    return "resource principal 1.1 (signed by the OCI instance principal, metadata " +
           endpoints_.metadata + ", RPT from " + (rpt_url_.empty() ? rpt_endpoint_ : rpt_url_) + ")";
  }
  std::string Region() const override { return region_; }

 private:
  InstanceSignedLevel() = default;
  OciInstancePrincipalEndpoints endpoints_;
  std::string rpt_endpoint_, rpst_endpoint_, rpt_path_, rpt_id_, region_, rpt_url_;
  std::shared_ptr<SharedCredential> instance_;
};

Result<std::unique_ptr<RpLevel>> MakeRpLevel(const std::string& version, const std::string& suffix) {
  if (version == "2.1" || version == "2.1.1" || version == "2.1.2") return OwnKeyLevel::Make(version, suffix);
  if (version == "1.1") return InstanceSignedLevel::Make(suffix);
  if (version == "2.2" && !suffix.empty()) {
    SLUICE_ASSIGN_OR_RETURN(OciResourcePrincipal rp, LoadOciResourcePrincipalV22(suffix));
    return std::unique_ptr<RpLevel>(std::make_unique<HandedOverLevel>(std::move(rp)));
  }
  const std::string variable = "OCI_RESOURCE_PRINCIPAL_VERSION" + suffix;
  return InvalidArgumentError(variable + (version.empty() ? " is not set" : "=" + version + " is not supported") +
                              (suffix.empty() ? "" : " (1.1, 2.1, 2.1.1, 2.1.2 and 2.2 are, for the leaf of 3.0)"));
}

// 3.0: the leaf's token buys its parent's (and that one, its parent's).
class NestedLevel final : public RpLevel {
 public:
  static Result<std::unique_ptr<RpLevel>> Make() {
    SLUICE_RETURN_IF_ERROR(RpRequireSet(std::string("OCI_RESOURCE_PRINCIPAL_VERSION"), "3.0",
                                      {std::string("OCI_RESOURCE_PRINCIPAL_VERSION") + kLeafSuffix, std::string("OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE"),
                                       std::string("OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE")}));
    auto level = std::unique_ptr<NestedLevel>(new NestedLevel());
    SLUICE_ASSIGN_OR_RETURN(level->leaf_, MakeRpLevel(RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_VERSION") + kLeafSuffix), kLeafSuffix));
    level->rpt_url_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE"));
    level->rpst_endpoint_ = RpEnv(std::string("OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE"));
    return std::unique_ptr<RpLevel>(std::move(level));
  }

  Result<RpSession> Session(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(RpSession leaf, leaf_->Session(now));
    RsaKeyPair key = leaf.session;
    SLUICE_ASSIGN_OR_RETURN(RpSession parent,
                            RpExchange(rpt_url_, rpst_endpoint_, {}, RpSessionSigner(leaf, "the leaf resource"),
                                     std::move(key), now));
    if (parent.parent_rpt_url.empty()) return parent;
    if (parent.parent_rpt_url == rpt_url_) {
      return PermissionDeniedError("OCI resource principal token from " + rpt_url_ +
                                   ": its opc-parent-rpt-url names itself (a cycle)");
    }
    // As the SDK: one parent further, whose own opc-parent-rpt-url is not followed.
    key = parent.session;
    const std::string grandparent = parent.parent_rpt_url;
    return RpExchange(grandparent, rpst_endpoint_, {}, RpSessionSigner(parent, "the parent resource"),
                    std::move(key), now);
  }

  std::string Describe() const override {
    return "resource principal 3.0 (parent RPT from " + rpt_url_ + ", RPST from " + rpst_endpoint_ +
           "; leaf " + leaf_->Describe() + ")";
  }
  std::string Region() const override { return leaf_->Region(); }

 private:
  NestedLevel() = default;
  std::unique_ptr<RpLevel> leaf_;
  std::string rpt_url_, rpst_endpoint_;
};

class OciRpExchangeSource final : public CredentialSource {
 public:
  explicit OciRpExchangeSource(std::unique_ptr<RpLevel> level) : level_(std::move(level)) {}
  std::string name() const override { return "OCI resource principal"; }

  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(RpSession s, level_->Session(now));
    Credential out;
    out.source = "OCI " + level_->Describe();
    out.expires_at = JwtExpiry(s.token);
    out.bearer = std::move(s.token);
    out.session_key_pem = std::move(s.session.private_pem);
    return out;
  }

 private:
  std::unique_ptr<RpLevel> level_;
};

Result<std::unique_ptr<RpLevel>> MakeTopRpLevel(const std::string& version) {
  if (version == "3.0") return NestedLevel::Make();
  if (!IsOciRpExchangeVersion(version)) {
    return InvalidArgumentError("OCI_RESOURCE_PRINCIPAL_VERSION=" + version +
                                " does not buy its token (1.1, 2.1, 2.1.1, 2.1.2 and 3.0 do)");
  }
  return MakeRpLevel(version, "");
}

}  // namespace

bool IsOciRpExchangeVersion(std::string_view version) {
  return version == "1.1" || version == "2.1" || version == "2.1.1" || version == "2.1.2" ||
         version == "3.0";
}

Result<std::unique_ptr<CredentialSource>> MakeOciRpExchangeSource(const std::string& version) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<RpLevel> level, MakeTopRpLevel(version));
  return std::unique_ptr<CredentialSource>(std::make_unique<OciRpExchangeSource>(std::move(level)));
}

std::string OciRpExchangeRegion(const std::string& version) {
  auto level = MakeTopRpLevel(version);
  return level.ok() ? (*level)->Region() : "";
}

Result<std::shared_ptr<SharedCredential>> OciRpExchangeCredential(const std::string& version) {
  // Keyed by every variable the versions read: another environment is
  // another principal.
  std::string material = "oci-resource-principal-exchange\n" + version;
  for (const char* name :
       {"OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT", "OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT",
        "OCI_RESOURCE_PRINCIPAL_RPT_PATH", "OCI_RESOURCE_PRINCIPAL_RPT_ID",
        "OCI_RESOURCE_PRINCIPAL_RESOURCE_ID", "OCI_RESOURCE_PRINCIPAL_TENANCY_ID",
        "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", "OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE",
        "OCI_RESOURCE_PRINCIPAL_SECURITY_CONTEXT", "OCI_RESOURCE_PRINCIPAL_REGION",
        "OCI_RESOURCE_PRINCIPAL_RPST", "OCI_RESOURCE_PRINCIPAL_VERSION"}) {
    material += "\n" + RpEnv(name) + "\n" + RpEnv(std::string(name) + kLeafSuffix);
  }
  for (const char* name : {"OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE",
                           "OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE",
                           "OCI_METADATA_BASE_URL", "SLUICE_OCI_FEDERATION_ENDPOINT"}) {
    material += "\n" + RpEnv(name);
  }
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<CredentialSource> source, MakeOciRpExchangeSource(version));
  auto shared = SharedCredentialFor(Sha256Hex(material), [&] {
    std::vector<std::unique_ptr<CredentialSource>> sources;
    sources.push_back(std::move(source));
    SharedCredentialOptions options;
    // A request signed with a token about to expire could arrive after it
    // (the SDK renews 60 s ahead too).
    options.min_validity_s = 60;
    options.retry_first_fetch = true;
    return std::make_shared<SharedCredential>(
        std::make_unique<CredentialChain>("OCI resource principal credentials", std::move(sources)),
        options);
  });
  return shared;
}

}  // namespace sluice
