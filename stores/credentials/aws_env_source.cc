#include "base/iso8601.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/aws_sources.h"

namespace sluice {
namespace {

class AwsEnvSource final : public CredentialSource {
 public:
  std::string name() const override { return "environment"; }

  Result<Credential> Fetch(int64_t /*now*/) override {
    auto key_id = GetEnv("AWS_ACCESS_KEY_ID");
    auto secret = GetEnv("AWS_SECRET_ACCESS_KEY");
    if (key_id && key_id->empty()) key_id.reset();
    if (secret && secret->empty()) secret.reset();
    if (!key_id && !secret) return NotFoundError("AWS_ACCESS_KEY_ID not set");
    if (!key_id || !secret) {
      return PermissionDeniedError(
          "only one of AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY is set; set both");
    }
    Credential out;
    out.source = "environment (AWS_ACCESS_KEY_ID)";
    out.keys = SigV4Credentials{*key_id, *secret, GetEnv("AWS_SESSION_TOKEN").value_or("")};
    if (auto exp = GetEnv("AWS_CREDENTIAL_EXPIRATION"); exp && !exp->empty()) {
      auto t = ParseIso8601(*exp);
      if (!t.ok())
        return InvalidArgumentError("AWS_CREDENTIAL_EXPIRATION is " + t.status().message());
      out.expires_at = *t;
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<CredentialSource> MakeAwsEnvSource() { return std::make_unique<AwsEnvSource>(); }

}  // namespace sluice
