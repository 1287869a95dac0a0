// Where STS calls go, as boto3 resolves it: AWS_ENDPOINT_URL_STS, else
// AWS_ENDPOINT_URL, else the regional endpoint https://sts.<region>.<dns
// suffix> (amazonaws.com, amazonaws.com.cn in the China regions), except
// with sts_regional_endpoints = legacy for the regions that used the global
// endpoint before regional ones existed: https://sts.amazonaws.com, signed
// for us-east-1. An override is signed for the client's region.
#pragma once

#include <string>

#include "base/status.h"
#include "stores/credentials/aws_settings.h"
#include "stores/http/url.h"

namespace sluice {

struct StsEndpoint {
  Url url;
  std::string signing_region;  // the region requests to `url` are signed for
};

// What the resolution depends on, with where each came from for errors.
struct StsEndpointSettings {
  std::string region;               // the client's region
  std::string regional_endpoints;   // "regional", "legacy" or "" (= regional)
  std::string regional_endpoints_origin = "AWS_STS_REGIONAL_ENDPOINTS";
  std::string endpoint_url;         // an override; "" = none
  std::string endpoint_url_origin = "AWS_ENDPOINT_URL_STS";
};

// Pure. kInvalidArgument naming the setting when regional_endpoints is
// neither value, the override is not an http(s) URL, or the region makes
// no host name.
Result<StsEndpoint> ResolveStsEndpoint(const StsEndpointSettings& settings);

// The settings of `aws`: AWS_STS_REGIONAL_ENDPOINTS, else the profile's
// sts_regional_endpoints; AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL.
// Reads the environment; thread-safe as LoadAwsSettings.
StsEndpointSettings StsEndpointSettingsOf(const AwsSettings& aws);

// ResolveStsEndpoint(StsEndpointSettingsOf(aws)).
Result<StsEndpoint> AwsStsEndpoint(const AwsSettings& aws);

}  // namespace sluice
