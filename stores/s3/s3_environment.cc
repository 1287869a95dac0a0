// s3:// and oci:// configured from the environment (see s3_store.h), and
// `sluice whoami`'s account of that configuration.
#include "stores/s3/s3_store.h"

#include "stores/common/store_keys.h"
#include "stores/credentials/aws_credential_chain.h"
#include "stores/s3/bucket_region.h"
#include "stores/s3/s3_requests.h"

namespace sluice {
namespace {

Result<S3StoreConfig> BaseConfig(std::string_view url, std::string_view scheme) {
  S3StoreConfig config;
  config.scheme = std::string(scheme);
  // A query would become part of the key prefix and be echoed in every
  // error (it may be a presigned signature); Mosaic's urlparse drops it.
  if (url.find('?') != std::string_view::npos) {
    return InvalidArgumentError(UrlForErrors(url) + ": a " + std::string(scheme) +
                                ":// URL takes no query");
  }
  SLUICE_ASSIGN_OR_RETURN(BucketPath bp,
                          SplitBucketPath(url, url.substr(scheme.size() + 3)));
  config.bucket = bp.bucket;
  config.prefix = bp.path;
  return config;
}

Result<Url> ParseEndpoint(const std::string& value, const char* variable) {
  auto url = ParseUrl(value);
  if (!url.ok()) {
    return InvalidArgumentError(std::string(variable) + " is not an http(s) URL: " +
                                url.status().message());
  }
  return url;
}

// Credentials (or unsigned) and requester-pays for S3 and OCI.
Status ApplyAwsAuth(const AwsSettings& settings, const std::string& url, S3StoreConfig* config) {
  auto auth = ChooseRequestAuth({"S3_UNSIGNED", "AWS_NO_SIGN_REQUEST"},
                                AwsSharedCredential(settings));
  if (!auth.ok()) return auth.status().WithContext(url);
  if (auth->credential) {
    config->auth = S3Auth::kSigV4;
    config->credential = std::move(auth->credential);
  } else {
    config->auth = S3Auth::kNone;
    config->unsigned_reason = std::move(auth->unsigned_reason);
  }
  if (auto payers = GetEnv("MOSAICML_STREAMING_AWS_REQUESTER_PAYS")) {
    for (const std::string& b : SplitAny(*payers, ", \t")) {
      if (b == config->bucket) config->extra_headers.emplace_back("x-amz-request-payer", "requester");
    }
  }
  return Status::Ok();
}

// The configuration of s3://bucket[/prefix] from the environment (see s3_store.h).
Result<S3StoreConfig> S3ConfigFromEnvironment(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, BaseConfig(url, "s3"));
  auto loaded = LoadAwsSettings();
  if (!loaded.ok()) return loaded.status().WithContext(UrlForErrors(url));
  AwsSettings settings = std::move(*loaded);
  config.sigv4 = S3SigV4Config(settings.region);
  std::optional<std::string> endpoint;
  const char* endpoint_var = nullptr;
  for (const char* var : {"S3_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"}) {
    if ((endpoint = GetEnv(var))) {
      endpoint_var = var;
      break;
    }
  }
  if (endpoint) {
    SLUICE_ASSIGN_OR_RETURN(config.endpoint, ParseEndpoint(*endpoint, endpoint_var));
    config.path_style = true;
  } else {
    SLUICE_ASSIGN_OR_RETURN(config.endpoint,
                            ParseUrl("https://s3." + settings.region + ".amazonaws.com"));
    config.path_style = config.bucket.find('.') != std::string::npos;
    config.regional_aws_endpoint = true;
  }
  // A region S3 named for this bucket earlier in this process wins.
  if (auto learned = LearnedBucketRegion(S3BucketKey(config))) config.sigv4.region = *learned;
  if (auto style = GetEnv("S3_ADDRESSING_STYLE")) {
    if (*style == "path") {
      config.path_style = true;
    } else if (*style == "virtual") {
      config.path_style = false;
    } else if (*style != "auto") {
      return InvalidArgumentError("S3_ADDRESSING_STYLE is '" + *style +
                                  "'; expected path, virtual or auto");
    }
  }
  SLUICE_RETURN_IF_ERROR(ApplyAwsAuth(settings, UrlForErrors(url), &config));
  return config;
}

}  // namespace

Result<std::unique_ptr<Store>> OpenS3Store(std::string_view url,
                                           boost::asio::any_io_executor executor,
                                           const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, S3ConfigFromEnvironment(url));
  return OpenS3CompatibleStore(std::move(config), std::move(executor), options);
}

Result<std::string> DescribeS3Auth(std::string_view url) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, S3ConfigFromEnvironment(url));
  std::string out = config.scheme + "://" + config.bucket + "\n";
  out += "  region: " + config.sigv4.region + "\n";
  out += "  endpoint: " + config.endpoint.Redacted() + "\n";
  if (!config.credential) {
    out += "  requests: unsigned (" + config.unsigned_reason + ")\n";
    return out;
  }
  SLUICE_ASSIGN_OR_RETURN(Credential current, config.credential->Get());
  const std::string& id = current.keys.access_key_id;
  // Only the key id's last 4 characters, as `aws configure list` shows it.
  std::string masked = id.size() > 4 ? "****" + id.substr(id.size() - 4) : "****";
  return out + config.credential->DescribeInUse(
                   current, "access key " + masked +
                                (current.keys.session_token.empty() ? "" : ", with a session token"));
}

Result<std::unique_ptr<Store>> OpenOciStore(std::string_view url,
                                            boost::asio::any_io_executor executor,
                                            const StoreOptions& options) {
  SLUICE_ASSIGN_OR_RETURN(S3StoreConfig config, BaseConfig(url, "oci"));
  auto loaded = LoadAwsSettings();
  if (!loaded.ok()) return loaded.status().WithContext(UrlForErrors(url));
  AwsSettings settings = std::move(*loaded);
  auto region = GetEnv("OCI_REGION");
  if (!region) {
    return InvalidArgumentError("oci:// needs OCI_REGION (e.g. us-ashburn-1) for " +
                                UrlForErrors(url));
  }
  config.sigv4 = S3SigV4Config(*region);
  if (auto endpoint = GetEnv("OCI_ENDPOINT_URL")) {
    SLUICE_ASSIGN_OR_RETURN(config.endpoint, ParseEndpoint(*endpoint, "OCI_ENDPOINT_URL"));
  } else {
    auto ns = GetEnv("OCI_NAMESPACE");
    if (!ns) {
      return InvalidArgumentError(
          "oci:// needs OCI_NAMESPACE (the tenancy's object storage namespace) for " +
          UrlForErrors(url));
    }
    auto ep = ParseUrl("https://" + *ns + ".compat.objectstorage." + *region +
                       ".oraclecloud.com");
    if (!ep.ok()) {
      return InvalidArgumentError("OCI_NAMESPACE or OCI_REGION does not make a valid host name");
    }
    config.endpoint = *ep;
  }
  config.path_style = true;
  SLUICE_RETURN_IF_ERROR(ApplyAwsAuth(settings, UrlForErrors(url), &config));
  return OpenS3CompatibleStore(std::move(config), std::move(executor), options);
}

}  // namespace sluice
