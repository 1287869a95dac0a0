#include "stores/credentials/gcs_adc.h"

#include <vector>

#include "base/file.h"
#include "formats/json/py_json.h"
#include "stores/common/store_keys.h"
#include "stores/credentials/gcs_credential.h"
#include "stores/credentials/gcs_external_account.h"
#include "stores/credentials/gcs_service_account.h"
#include "stores/credentials/gcs_token_flows.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

// Credentials files are a few KiB; the bound only caps a hostile one.
constexpr uint64_t kMaxCredentialsFile = uint64_t{1} << 20;

Result<Credential> FetchFromFile(const std::string& path, std::string_view scope, int64_t now) {
  auto text = ReadFile(path, kMaxCredentialsFile);
  if (!text.ok()) {
    // google-auth refuses a named file that cannot be read rather than
    // going on to the next source.
    return InvalidArgumentError("cannot read credentials file: " + text.status().message());
  }
  auto got = FetchGcsFileCredential(*text, path, now, scope);
  // Every error names the file (the flows' own texts name it when they
  // come from its contents, not when an endpoint refused).
  if (!got.ok() && got.status().message().find(path) == std::string::npos) {
    return got.status().WithContext(path);
  }
  return got;
}

// Each source's test of whether it applies: the file or host it would use,
// or kNotFound saying why not. Shared by Fetch() and GcsAdcAbsence().
Result<std::string> EnvironmentFile() {
  auto path = GetEnv("GOOGLE_APPLICATION_CREDENTIALS");
  if (!path || path->empty()) return NotFoundError("not set");
  return *path;
}

Result<std::string> GcloudFile() {
  std::string path = GcloudAdcPath();
  if (path.empty()) return NotFoundError("neither CLOUDSDK_CONFIG nor HOME is set");
  if (!FileExists(path)) return NotFoundError("no file " + path);
  return path;
}

Result<std::string> MetadataHost(const std::string& product_name_file) {
  auto host = MetadataServerHost(product_name_file);
  if (!host) return NotFoundError("not on Google Compute Engine and GCE_METADATA_HOST not set");
  return *host;
}

constexpr const char* kEnvironmentFileName = "GOOGLE_APPLICATION_CREDENTIALS";
constexpr const char* kGcloudFileName = "gcloud application default credentials";
constexpr const char* kMetadataName = "metadata server";

class EnvironmentFileSource final : public CredentialSource {
 public:
  explicit EnvironmentFileSource(std::string scope) : scope_(std::move(scope)) {}
  std::string name() const override { return kEnvironmentFileName; }
  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(std::string path, EnvironmentFile());
    return FetchFromFile(path, scope_, now);
  }

 private:
  std::string scope_;
};

class GcloudFileSource final : public CredentialSource {
 public:
  explicit GcloudFileSource(std::string scope) : scope_(std::move(scope)) {}
  std::string name() const override { return kGcloudFileName; }
  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(std::string path, GcloudFile());
    return FetchFromFile(path, scope_, now);
  }

 private:
  std::string scope_;
};

class AdcMetadataSource final : public CredentialSource {
 public:
  explicit AdcMetadataSource(std::string product_name_file)
      : product_name_file_(std::move(product_name_file)) {}
  std::string name() const override { return kMetadataName; }
  Result<Credential> Fetch(int64_t now) override {
    SLUICE_ASSIGN_OR_RETURN(std::string host, MetadataHost(product_name_file_));
    return MakeGcsMetadataServerSource(host)->Fetch(now);
  }

 private:
  std::string product_name_file_;
};

bool PlainTypeName(const std::string& s) {
  return !s.empty() && s.size() <= 40 &&
         s.find_first_not_of("abcdefghijklmnopqrstuvwxyz_") == std::string::npos;
}

}  // namespace

std::string GcloudAdcPath() {
  constexpr std::string_view kFile = "application_default_credentials.json";
  if (auto dir = GetEnv("CLOUDSDK_CONFIG"); dir && !dir->empty()) return JoinPath(*dir, kFile);
  if (auto home = GetEnv("HOME"); home && !home->empty()) {
    return JoinPath(JoinPath(*home, ".config/gcloud"), kFile);
  }
  return "";
}

Result<Credential> FetchGcsFileCredential(std::string_view json, const std::string& path,
                                          int64_t now, std::string_view scope) {
  auto parsed = ParsePyJson(json);
  if (!parsed.ok()) return InvalidArgumentError("credentials file " + path + " is not JSON");
  std::string type = JsonStringMember(*parsed, "type");
  if (type == "service_account") {
    SLUICE_ASSIGN_OR_RETURN(ServiceAccountKey key, ParseServiceAccountKey(json, path));
    return MakeGcsServiceAccountSource(std::move(key), scope)->Fetch(now);
  }
  if (type == "authorized_user") {
    // google-auth does not rescope user credentials: no scope is sent.
    return FetchAuthorizedUserToken(*parsed, path, "", now);
  }
  if (type == "external_account") return FetchExternalAccountToken(*parsed, path, scope, now);
  if (type == "impersonated_service_account") {
    return FetchImpersonatedServiceAccountToken(*parsed, path, scope, now);
  }
  // A mangled file may hold key material in any member: only a plain word
  // is quoted.
  return InvalidArgumentError(
      "credentials file " + path + " has " +
      (PlainTypeName(type) ? "type '" + type + "'" : std::string("no known type")) +
      ", expected one of service_account, authorized_user, external_account, "
      "impersonated_service_account");
}

std::string GcsAdcAbsence(const GcsAdcOptions& options) {
  auto env = EnvironmentFile();
  auto gcloud = GcloudFile();
  auto metadata = MetadataHost(options.product_name_file);
  if (env.ok() || gcloud.ok() || metadata.ok()) return "";
  return std::string("no GCS credentials found; tried: ") + kEnvironmentFileName + " (" +
         env.status().message() + "), " + kGcloudFileName + " (" + gcloud.status().message() +
         "), " + kMetadataName + " (" + metadata.status().message() + ")";
}

std::unique_ptr<CredentialChain> MakeGcsAdcChain(const GcsAdcOptions& options) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(std::make_unique<EnvironmentFileSource>(options.scope));
  sources.push_back(std::make_unique<GcloudFileSource>(options.scope));
  sources.push_back(std::make_unique<AdcMetadataSource>(options.product_name_file));
  return std::make_unique<CredentialChain>("GCS credentials", std::move(sources));
}

std::shared_ptr<SharedCredential> GcsAdcCredential(const GcsAdcOptions& options) {
  // What decides the token: the variables the sources read and the files'
  // contents. Hashed: the files hold secrets.
  std::string material = "gcs adc\n" + options.product_name_file + "\n" + options.scope + "\n";
  for (const char* var : {"GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG", "HOME",
                          "GCE_METADATA_HOST", "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES"}) {
    material += std::string(var) + "=" + GetEnv(var).value_or("") + "\n";
  }
  for (const std::string& path :
       {GetEnv("GOOGLE_APPLICATION_CREDENTIALS").value_or(""), GcloudAdcPath()}) {
    if (path.empty()) continue;
    auto text = ReadFile(path, kMaxCredentialsFile);
    material += path + "\n" + (text.ok() ? *text : std::string("(unreadable)")) + "\n";
  }
  return SharedCredentialFor(Sha256Hex(material), [&] {
    return std::make_shared<SharedCredential>(MakeGcsAdcChain(options), GcsTokenOptions());
  });
}

}  // namespace sluice
