// The OCI region table and its rules against the hosts the OCI SDK builds
// (oci.regions.endpoint_for('object_storage' / 'auth', region) of oci
// 2.189.0; tests/sdk_oracle/oci_oracle.py checks the same against the SDK).
#include "stores/credentials/oci_regions.h"

#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "tests/common/scoped_env.h"

namespace sluice {
namespace {

std::string Canonical(std::string_view region) {
  auto r = CanonicalOciRegion(region, "a test");
  return r.ok() ? *r : "error: " + r.status().ToString();
}

TEST(OciRegions, ShortCodesNameTheirRegion) {
  EXPECT_EQ(Canonical("phx"), "us-phoenix-1");
  EXPECT_EQ(Canonical("IAD"), "us-ashburn-1");
  EXPECT_EQ(Canonical("fra"), "eu-frankfurt-1");
  EXPECT_EQ(Canonical("lfi"), "us-langley-1");
  EXPECT_EQ(Canonical("nja"), "ap-chiyoda-1");
}

TEST(OciRegions, NamesPassAsTheyAreLowerCased) {
  EXPECT_EQ(Canonical("us-phoenix-1"), "us-phoenix-1");
  EXPECT_EQ(Canonical("US-Ashburn-1"), "us-ashburn-1");
  EXPECT_EQ(Canonical("xx-newregion-7"), "xx-newregion-7");  // newer than the table
}

TEST(OciRegions, UnknownShortCodeIsRefusedNamingItsOrigin) {
  auto r = CanonicalOciRegion("zzq", "the region of profile DEFAULT in /h/.oci/config");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().ToString(),
            "invalid argument: OCI region 'zzq' from the region of profile DEFAULT in "
            "/h/.oci/config is neither a region name (such as us-phoenix-1) nor a known short "
            "code (such as phx)");
}

TEST(OciRegions, EndpointHostsAreTheSdks) {
  testing::ScopedEnv realm("OCI_DEFAULT_REALM", std::nullopt);
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "us-phoenix-1"),
            "https://objectstorage.us-phoenix-1.oraclecloud.com");
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "us-langley-1"),
            "https://objectstorage.us-langley-1.oraclegovcloud.com");
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "uk-gov-london-1"),
            "https://objectstorage.uk-gov-london-1.oraclegovcloud.uk");
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "eu-frankfurt-2"),
            "https://objectstorage.eu-frankfurt-2.oraclecloud.eu");
  EXPECT_EQ(OciServiceEndpoint("auth", "ap-chiyoda-1"), "https://auth.ap-chiyoda-1.oraclecloud8.com");
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "xx-newregion-7"),
            "https://objectstorage.xx-newregion-7.oraclecloud.com");
  testing::ScopedEnv other("OCI_DEFAULT_REALM", "example-realm.test");
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "xx-newregion-7"),
            "https://objectstorage.xx-newregion-7.example-realm.test");
  EXPECT_EQ(OciServiceEndpoint("objectstorage", "us-phoenix-1"),
            "https://objectstorage.us-phoenix-1.oraclecloud.com");
}

TEST(OciRegions, TableIsSortedWithUniqueCodes) {
  auto table = OciRegionTable();
  ASSERT_EQ(table.size(), 85u);
  std::set<std::string_view> codes;
  for (size_t i = 0; i < table.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(table[i - 1].name, table[i].name);
    }
    EXPECT_TRUE(codes.insert(table[i].short_code).second) << table[i].short_code;
    EXPECT_EQ(table[i].short_code.size(), 3u) << table[i].name;
  }
}

}  // namespace
}  // namespace sluice
