// The STS endpoint chosen per region and setting, as boto3 resolves it
// (pure: nothing is sent).
#include <gtest/gtest.h>

#include "base/file.h"
#include "stores/credentials/aws_sts_endpoint.h"
#include "tests/stores/common/node_servers.h"
#include "tests/stores/credentials/aws_test_env.h"
#include "tests/stores/http/test_servers.h"

namespace sluice {
namespace {

using testing::ScopedEnv;
using testing::TempDir;

struct Case {
  std::string region, mode, override_url;
  std::string url, signing_region;  // expected
};

TEST(AwsStsEndpointTest, UrlPerRegionAndSetting) {
  const Case cases[] = {
      // Regional by default, and with "regional", in every partition.
      {"us-east-1", "", "", "https://sts.us-east-1.amazonaws.com", "us-east-1"},
      {"eu-west-1", "regional", "", "https://sts.eu-west-1.amazonaws.com", "eu-west-1"},
      {"af-south-1", "", "", "https://sts.af-south-1.amazonaws.com", "af-south-1"},
      {"cn-north-1", "", "", "https://sts.cn-north-1.amazonaws.com.cn", "cn-north-1"},
      {"cn-northwest-1", "regional", "", "https://sts.cn-northwest-1.amazonaws.com.cn",
       "cn-northwest-1"},
      {"us-gov-west-1", "", "", "https://sts.us-gov-west-1.amazonaws.com", "us-gov-west-1"},
      // "legacy": the global endpoint for the regions that had it, signed for us-east-1.
      {"us-east-1", "legacy", "", "https://sts.amazonaws.com", "us-east-1"},
      {"us-west-2", "legacy", "", "https://sts.amazonaws.com", "us-east-1"},
      {"eu-central-1", "legacy", "", "https://sts.amazonaws.com", "us-east-1"},
      {"ap-southeast-2", "legacy", "", "https://sts.amazonaws.com", "us-east-1"},
      {"sa-east-1", "legacy", "", "https://sts.amazonaws.com", "us-east-1"},
      // ... and regional for the others.
      {"ap-east-1", "legacy", "", "https://sts.ap-east-1.amazonaws.com", "ap-east-1"},
      {"eu-south-1", "legacy", "", "https://sts.eu-south-1.amazonaws.com", "eu-south-1"},
      {"cn-north-1", "legacy", "", "https://sts.cn-north-1.amazonaws.com.cn", "cn-north-1"},
      {"us-gov-east-1", "legacy", "", "https://sts.us-gov-east-1.amazonaws.com", "us-gov-east-1"},
      // The global region's name.
      {"aws-global", "", "", "https://sts.amazonaws.com", "us-east-1"},
      // An override wins over both, and is signed for the region.
      {"eu-west-1", "legacy", "http://127.0.0.1:4566", "http://127.0.0.1:4566", "eu-west-1"},
      {"cn-north-1", "", "https://sts.example.internal:8443",
       "https://sts.example.internal:8443", "cn-north-1"},
  };
  for (const Case& c : cases) {
    StsEndpointSettings s;
    s.region = c.region;
    s.regional_endpoints = c.mode;
    s.endpoint_url = c.override_url;
    auto got = ResolveStsEndpoint(s);
    ASSERT_TRUE(got.ok()) << c.region << " " << c.mode << ": " << got.status().ToString();
    const Url& u = got->url;
    std::string url = u.scheme + "://" + u.host + (u.explicit_port ? ":" + std::to_string(u.port) : "");
    EXPECT_EQ(url, c.url) << c.region << " " << c.mode << " " << c.override_url;
    EXPECT_EQ(got->signing_region, c.signing_region) << c.region << " " << c.mode;
  }
}

TEST(AwsStsEndpointTest, BadSettingsAreNamed) {
  StsEndpointSettings s;
  s.region = "us-east-1";
  s.regional_endpoints = "global";
  EXPECT_EQ(ResolveStsEndpoint(s).status().ToString(),
            "invalid argument: AWS_STS_REGIONAL_ENDPOINTS is 'global'; expected 'regional' or "
            "'legacy'");
  s.regional_endpoints = "";
  s.endpoint_url = "ftp://sts.example";
  std::string bad_url = ResolveStsEndpoint(s).status().ToString();
  EXPECT_EQ(bad_url.rfind("invalid argument: AWS_ENDPOINT_URL_STS is not an http(s) URL: ", 0), 0u)
      << bad_url;
  s.endpoint_url = "";
  s.region = "eu-west-1/evil.example";
  EXPECT_EQ(ResolveStsEndpoint(s).status().ToString(),
            "invalid argument: region 'eu-west-1/evil.example' makes no STS host name");
}

// Where the settings come from: the environment over the profile.
TEST(AwsStsEndpointTest, SettingsFromEnvironmentAndProfile) {
  TempDir dir;
  ScopedEnv env(testing::AwsCleanEnv(dir.path()));
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/config",
                              "[default]\nregion = eu-west-2\nsts_regional_endpoints = legacy\n")
                  .ok());
  auto aws = LoadAwsSettings();
  ASSERT_TRUE(aws.ok()) << aws.status().ToString();
  auto got = AwsStsEndpoint(*aws);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->url.host, "sts.amazonaws.com");
  {
    ScopedEnv regional("AWS_STS_REGIONAL_ENDPOINTS", "regional");
    EXPECT_EQ(AwsStsEndpoint(*aws)->url.host, "sts.eu-west-2.amazonaws.com");
  }
  {
    ScopedEnv generic("AWS_ENDPOINT_URL", "http://127.0.0.1:9");
    EXPECT_EQ(AwsStsEndpoint(*aws)->url.port, 9);
    ScopedEnv specific("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:10");
    EXPECT_EQ(AwsStsEndpoint(*aws)->url.port, 10);
  }
  ASSERT_TRUE(WriteFileAtomic(dir.path() + "/config",
                              "[default]\nsts_regional_endpoints = sometimes\n")
                  .ok());
  aws = LoadAwsSettings();
  ASSERT_TRUE(aws.ok());
  EXPECT_EQ(AwsStsEndpoint(*aws).status().ToString(),
            "invalid argument: sts_regional_endpoints of profile 'default' in " + dir.path() +
                "/config is 'sometimes'; expected 'regional' or 'legacy'");
}

}  // namespace
}  // namespace sluice
