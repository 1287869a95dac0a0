#include "stores/credentials/aws_sts_endpoint.h"

#include <array>
#include <string_view>

#include "stores/common/store_keys.h"

namespace sluice {
namespace {

// The regions whose STS calls went to the global endpoint before regional
// endpoints existed; only these go there under "legacy".
constexpr std::array<std::string_view, 16> kLegacyGlobalRegions = {
    "ap-northeast-1", "ap-south-1", "ap-southeast-1", "ap-southeast-2", "aws-global",
    "ca-central-1",   "eu-central-1", "eu-north-1",   "eu-west-1",      "eu-west-2",
    "eu-west-3",      "sa-east-1",    "us-east-1",    "us-east-2",      "us-west-1",
    "us-west-2"};

bool IsLegacyGlobal(std::string_view region) {
  for (std::string_view r : kLegacyGlobalRegions) {
    if (r == region) return true;
  }
  return false;
}

std::string DnsSuffix(std::string_view region) {
  return region.rfind("cn-", 0) == 0 ? "amazonaws.com.cn" : "amazonaws.com";
}

bool PlausibleRegion(std::string_view r) {
  if (r.empty() || r.size() > 32) return false;
  for (char c : r) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

Result<StsEndpoint> ResolveStsEndpoint(const StsEndpointSettings& s) {
  const std::string& mode = s.regional_endpoints;
  if (!mode.empty() && mode != "regional" && mode != "legacy") {
    return InvalidArgumentError(s.regional_endpoints_origin + " is '" + mode +
                                "'; expected 'regional' or 'legacy'");
  }
  if (!PlausibleRegion(s.region)) {
    return InvalidArgumentError("region '" + s.region + "' makes no STS host name");
  }
  // The global endpoint, and the name of the global region, sign for
  // us-east-1; an override is signed for the client's region.
  const bool global_region = s.region == "aws-global";
  const bool global = global_region || (mode == "legacy" && IsLegacyGlobal(s.region));
  StsEndpoint out;
  if (!s.endpoint_url.empty()) {
    out.signing_region = global_region ? "us-east-1" : s.region;
    auto url = ParseUrl(s.endpoint_url);
    if (!url.ok()) {
      return InvalidArgumentError(s.endpoint_url_origin + " is not an http(s) URL: " +
                                  url.status().message());
    }
    out.url = *url;
    return out;
  }
  out.signing_region = global ? "us-east-1" : s.region;
  auto url = ParseUrl(global ? std::string("https://sts.amazonaws.com")
                             : "https://sts." + s.region + "." + DnsSuffix(s.region));
  if (!url.ok()) return InvalidArgumentError("region '" + s.region + "' makes no STS host name");
  out.url = *url;
  return out;
}

StsEndpointSettings StsEndpointSettingsOf(const AwsSettings& aws) {
  StsEndpointSettings s;
  s.region = aws.region;
  if (auto v = GetEnv("AWS_STS_REGIONAL_ENDPOINTS"); v && !v->empty()) {
    s.regional_endpoints = *v;
  } else if (std::string p = aws.files.ConfigValue(aws.profile(), "sts_regional_endpoints");
             !p.empty()) {
    s.regional_endpoints = p;
    s.regional_endpoints_origin = "sts_regional_endpoints of profile '" + aws.profile() + "' in " +
                                  aws.files.config_path;
  }
  for (const char* var : {"AWS_ENDPOINT_URL_STS", "AWS_ENDPOINT_URL"}) {
    if (auto v = GetEnv(var); v && !v->empty()) {
      s.endpoint_url = *v;
      s.endpoint_url_origin = var;
      break;
    }
  }
  return s;
}

Result<StsEndpoint> AwsStsEndpoint(const AwsSettings& aws) {
  return ResolveStsEndpoint(StsEndpointSettingsOf(aws));
}

}  // namespace sluice
