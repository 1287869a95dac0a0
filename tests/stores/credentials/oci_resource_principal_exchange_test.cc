// The OCI resource principal versions that buy their token
// (stores/credentials/oci_resource_principal_exchange.h) against loopback
// fakes of the RPT and identity services (oci_rp_fakes.h) and, for 1.1, of
// the instance metadata and X.509 federation services (fake_oci_identity.h).
#include "stores/credentials/oci_resource_principal_exchange.h"

#include <gtest/gtest.h>

#include <ctime>
#include <map>
#include <optional>

#include "stores/credentials/jwt_expiry.h"
#include "stores/credentials/oci_resource_principal.h"
#include "stores/signing/jwt_rs256.h"
#include "stores/signing/x509_certificate.h"
#include "tests/common/scoped_env.h"
#include "tests/stores/common/fake_oci_identity.h"
#include "tests/stores/credentials/oci_rp_fakes.h"

namespace sluice {
namespace {

using testing::FakeOciRpService;
using testing::PublicPemOf;
using testing::ScopedEnv;

// Every variable the versions read, unset, so that the machine's own never
// leak into a test.
std::map<std::string, std::optional<std::string>> NoRpEnvironment() {
  std::map<std::string, std::optional<std::string>> out;
  for (const char* name :
       {"VERSION", "RPT_ENDPOINT", "RPST_ENDPOINT", "RPT_PATH", "RPT_ID", "RESOURCE_ID", "TENANCY_ID",
        "PRIVATE_PEM", "PRIVATE_PEM_PASSPHRASE", "SECURITY_CONTEXT", "REGION", "RPST"}) {
    out.emplace(std::string("OCI_RESOURCE_PRINCIPAL_") + name, std::nullopt);
    out.emplace(std::string("OCI_RESOURCE_PRINCIPAL_") + name + "_FOR_LEAF_RESOURCE", std::nullopt);
  }
  out.emplace("OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE", std::nullopt);
  out.emplace("OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE", std::nullopt);
  out.emplace("OCI_METADATA_BASE_URL", std::nullopt);
  out.emplace("SLUICE_OCI_FEDERATION_ENDPOINT", std::nullopt);
  return out;
}

// True when `private_pem` and `public_pem` are one key pair.
bool SamePair(const std::string& private_pem, const std::string& public_pem) {
  return !public_pem.empty() && PublicPemOf(private_pem) == public_pem;
}

std::string Jwt(const std::string& claims) {
  return Base64UrlEncode("{\"alg\": \"RS256\"}") + "." + Base64UrlEncode(claims) + ".c2ln";
}

class OciRpExchangeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto key = GenerateRsaKeyPair(2048);
    ASSERT_TRUE(key.ok());
    key_ = *key;
  }
  ScopedEnv clean_{NoRpEnvironment()};
  FakeOciRpService rp_;
  RsaKeyPair key_;
};

TEST_F(OciRpExchangeTest, Version21SignsWithTheResourceKeyWhichIsTheSessionKey) {
  rp_.AddKey("resource/v2.1/ocid1.datasciencejob.oc1..res", key_.public_pem);
  ScopedEnv env({{"OCI_RESOURCE_PRINCIPAL_VERSION", "2.1"},
                 {"OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT", rp_.url()},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT", rp_.url()},
                 {"OCI_RESOURCE_PRINCIPAL_RESOURCE_ID", "ocid1.datasciencejob.oc1..res"},
                 {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", key_.private_pem},
                 {"OCI_RESOURCE_PRINCIPAL_REGION", "us-ashburn-1"}});
  EXPECT_EQ(OciRpExchangeRegion("2.1"), "us-ashburn-1");
  auto source = MakeOciRpExchangeSource("2.1");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  auto credential = (*source)->Fetch(static_cast<int64_t>(std::time(nullptr)));
  ASSERT_TRUE(credential.ok()) << credential.status().ToString() << " / " << rp_.last_refusal();
  EXPECT_EQ(credential->bearer, rp_.last_token());
  EXPECT_EQ(credential->expires_at, JwtExpiry(rp_.last_token()));
  EXPECT_TRUE(SamePair(credential->session_key_pem, rp_.last_session_public_pem()));
  EXPECT_EQ(rp_.last_session_public_pem(), key_.public_pem);
  EXPECT_EQ(rp_.log(), (std::vector<std::string>{
                           "GET /20180711/resourcePrincipalTokenV2/ocid1.datasciencejob.oc1..res "
                           "key=resource/v2.1/ocid1.datasciencejob.oc1..res",
                           "POST /v1/resourcePrincipalSessionToken key=resource/v2.1/ocid1.datasciencejob.oc1..res"}));
  EXPECT_EQ(credential->source, "OCI resource principal 2.1 (key id resource/v2.1/ocid1.datasciencejob.oc1..res, "
                                "RPT from " + rp_.url() + "/20180711/resourcePrincipalTokenV2/"
                                "ocid1.datasciencejob.oc1..res, RPST from " + rp_.url() + ")");
  EXPECT_EQ(rp_.refused(), 0);
}

TEST_F(OciRpExchangeTest, Version211And212NameTheTenancyAndVersion212ItsPathAndSecurityContext) {
  ScopedEnv env({{"OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT", rp_.url()},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT", rp_.url()},
                 {"OCI_RESOURCE_PRINCIPAL_RESOURCE_ID", "ocid1.res"},
                 {"OCI_RESOURCE_PRINCIPAL_TENANCY_ID", "ocid1.tenancy"},
                 {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", key_.private_pem}});
  rp_.AddKey("resource/v2.1.1/ocid1.tenancy/ocid1.res", key_.public_pem);
  rp_.AddKey("resource/v2.1.2/ocid1.tenancy/ocid1.res", key_.public_pem);
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  for (const char* version : {"2.1.1", "2.1.2"}) {
    auto source = MakeOciRpExchangeSource(version);
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    ASSERT_TRUE((*source)->Fetch(now).ok()) << rp_.last_refusal();
  }
  {
    ScopedEnv custom({{"OCI_RESOURCE_PRINCIPAL_RPT_PATH", "/custom/{}/rpt/{}"},
                      {"OCI_RESOURCE_PRINCIPAL_SECURITY_CONTEXT", "ctx-1"}});
    ASSERT_TRUE((*MakeOciRpExchangeSource("2.1.2"))->Fetch(now).ok()) << rp_.last_refusal();
  }
  {
    ScopedEnv custom("OCI_RESOURCE_PRINCIPAL_RPT_PATH", "/custom");
    ASSERT_TRUE((*MakeOciRpExchangeSource("2.1.2"))->Fetch(now).ok()) << rp_.last_refusal();
  }
  const std::string post = "POST /v1/resourcePrincipalSessionToken key=";
  EXPECT_EQ(rp_.log(),
            (std::vector<std::string>{
                "GET /20180711/resourcePrincipalTokenV2/ocid1.res key=resource/v2.1.1/ocid1.tenancy/ocid1.res",
                post + "resource/v2.1.1/ocid1.tenancy/ocid1.res",
                "GET /20180711/resourcePrincipalTokenV212/ocid1.res key=resource/v2.1.2/ocid1.tenancy/ocid1.res",
                post + "resource/v2.1.2/ocid1.tenancy/ocid1.res",
                "GET /custom/ocid1.res/rpt/ocid1.res key=resource/v2.1.2/ocid1.tenancy/ocid1.res "
                "security-context=ctx-1",
                post + "resource/v2.1.2/ocid1.tenancy/ocid1.res",
                "GET /custom/ocid1.res key=resource/v2.1.2/ocid1.tenancy/ocid1.res",
                post + "resource/v2.1.2/ocid1.tenancy/ocid1.res"}));
}

TEST_F(OciRpExchangeTest, Version11IsSignedByTheInstancePrincipalForANewSessionKey) {
  testing::FakeOciIdentity identity("ocid1.tenancy.oc1..ip", "us-phoenix-1");
  ScopedEnv env({{"OCI_RESOURCE_PRINCIPAL_VERSION", "1.1"},
                 {"OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT", rp_.url()},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT", rp_.url()},
                 {"OCI_METADATA_BASE_URL", identity.metadata_url()},
                 {"SLUICE_OCI_FEDERATION_ENDPOINT", identity.federation_url()}});
  EXPECT_EQ(OciRpExchangeRegion("1.1"), "");  // asked of the metadata service
  auto source = MakeOciRpExchangeSource("1.1");
  ASSERT_TRUE(source.ok()) << source.status().ToString();
  // The instance principal's token is known to the identity service once issued.
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto first = (*source)->Fetch(now);
  ASSERT_FALSE(first.ok());  // its key is not registered yet
  EXPECT_EQ(rp_.last_refusal(), "unknown key id");
  EXPECT_EQ(identity.tokens_issued(), 1);
  rp_.AddKey("ST$" + identity.last_token(), identity.last_session_public_pem());
  auto credential = (*source)->Fetch(now);
  ASSERT_TRUE(credential.ok()) << credential.status().ToString() << " / " << rp_.last_refusal();
  EXPECT_EQ(credential->bearer, rp_.last_token());
  EXPECT_TRUE(SamePair(credential->session_key_pem, rp_.last_session_public_pem()));
  EXPECT_NE(rp_.last_session_public_pem(), identity.last_session_public_pem());
  EXPECT_EQ(rp_.log(), (std::vector<std::string>{
                           "GET /20180711/resourcePrincipalToken/ocid1.instance.oc1..fake key=ST$<token 1>",
                           "POST /v1/resourcePrincipalSessionToken key=ST$<token 1>"}));
  EXPECT_EQ(credential->source, "OCI resource principal 1.1 (signed by the OCI instance principal, metadata " +
                                    identity.metadata_url() + ", RPT from " + rp_.url() +
                                    "/20180711/resourcePrincipalToken/ocid1.instance.oc1..fake)");
  ScopedEnv custom({{"OCI_RESOURCE_PRINCIPAL_RPT_PATH", "/rpt/{id}/token"},
                    {"OCI_RESOURCE_PRINCIPAL_RPT_ID", "ocid1.fn"}});
  ASSERT_TRUE((*MakeOciRpExchangeSource("1.1"))->Fetch(now).ok()) << rp_.last_refusal();
  EXPECT_EQ(rp_.log()[2], "GET /rpt/ocid1.fn/token key=ST$<token 1>");
}

TEST_F(OciRpExchangeTest, Version30BuysTheParentsTokenWithTheLeafsAndFollowsOneFurtherParent) {
  const std::string leaf_rpst =
      Jwt("{\"sub\": \"ocid1.leaf\", \"exp\": " + std::to_string(std::time(nullptr) + 3600) + "}");
  rp_.AddKey("ST$" + leaf_rpst, key_.public_pem);
  ScopedEnv env({{"OCI_RESOURCE_PRINCIPAL_VERSION", "3.0"},
                 {"OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE", "2.2"},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_FOR_LEAF_RESOURCE", leaf_rpst},
                 {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_FOR_LEAF_RESOURCE", key_.private_pem},
                 {"OCI_RESOURCE_PRINCIPAL_REGION_FOR_LEAF_RESOURCE", "eu-frankfurt-1"},
                 {"OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE", rp_.url() + "/parent/rpt"},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE", rp_.url()}});
  EXPECT_EQ(OciRpExchangeRegion("3.0"), "eu-frankfurt-1");
  const int64_t now = static_cast<int64_t>(std::time(nullptr));
  auto parent = (*MakeOciRpExchangeSource("3.0"))->Fetch(now);
  ASSERT_TRUE(parent.ok()) << parent.status().ToString() << " / " << rp_.last_refusal();
  EXPECT_EQ(parent->bearer, rp_.last_token());
  EXPECT_EQ(rp_.last_session_public_pem(), key_.public_pem);  // the leaf's key is the session key
  EXPECT_TRUE(SamePair(parent->session_key_pem, key_.public_pem));

  rp_.SetParent("/parent/rpt", rp_.url() + "/grandparent/rpt");
  rp_.SetParent("/grandparent/rpt", rp_.url() + "/great-grandparent/rpt");  // not followed, as the SDK
  auto grandparent = (*MakeOciRpExchangeSource("3.0"))->Fetch(now);
  ASSERT_TRUE(grandparent.ok()) << grandparent.status().ToString() << " / " << rp_.last_refusal();
  EXPECT_EQ(grandparent->bearer, rp_.last_token());
  const std::string post = "POST /v1/resourcePrincipalSessionToken key=";
  EXPECT_EQ(rp_.log(), (std::vector<std::string>{"GET /parent/rpt key=ST$<token 1>", post + "ST$<token 1>",
                                                 "GET /parent/rpt key=ST$<token 1>", post + "ST$<token 1>",
                                                 "GET /grandparent/rpt key=ST$<token 3>",
                                                 post + "ST$<token 3>"}));
  EXPECT_EQ(grandparent->source,
            "OCI resource principal 3.0 (parent RPT from " + rp_.url() + "/parent/rpt, RPST from " + rp_.url() +
                "; leaf resource principal (OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE 2.2, RPST from "
                "the environment, private key from the environment, region eu-frankfurt-1, request signatures))");

  rp_.SetParent("/parent/rpt", rp_.url() + "/parent/rpt");
  auto cycle = (*MakeOciRpExchangeSource("3.0"))->Fetch(now);
  EXPECT_EQ(cycle.status().message(), "OCI resource principal token from " + rp_.url() +
                                          "/parent/rpt: its opc-parent-rpt-url names itself (a cycle)");
}

TEST_F(OciRpExchangeTest, Version30ReadsA21LeafWithItsSuffixedVariables) {
  rp_.AddKey("resource/v2.1/ocid1.leaf", key_.public_pem);
  ScopedEnv env({{"OCI_RESOURCE_PRINCIPAL_VERSION", "3.0"},
                 {"OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE", "2.1"},
                 {"OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT_FOR_LEAF_RESOURCE", rp_.url() + "/leaf"},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_LEAF_RESOURCE", rp_.url()},
                 {"OCI_RESOURCE_PRINCIPAL_RESOURCE_ID_FOR_LEAF_RESOURCE", "ocid1.leaf"},
                 {"OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_FOR_LEAF_RESOURCE", key_.private_pem},
                 {"OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE", rp_.url() + "/parent/rpt"},
                 {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE", rp_.url()}});
  auto credential = (*MakeOciRpExchangeSource("3.0"))->Fetch(static_cast<int64_t>(std::time(nullptr)));
  ASSERT_TRUE(credential.ok()) << credential.status().ToString() << " / " << rp_.last_refusal();
  EXPECT_EQ(rp_.log(), (std::vector<std::string>{
                           "GET /leaf/20180711/resourcePrincipalTokenV2/ocid1.leaf key=resource/v2.1/ocid1.leaf",
                           "POST /v1/resourcePrincipalSessionToken key=resource/v2.1/ocid1.leaf",
                           "GET /parent/rpt key=ST$<token 1>",
                           "POST /v1/resourcePrincipalSessionToken key=ST$<token 1>"}));
  EXPECT_TRUE(SamePair(credential->session_key_pem, key_.public_pem));
}

TEST_F(OciRpExchangeTest, MissingVariablesAndUnknownVersionsAreNamedAndNoSecretIsShown) {
  ScopedEnv key("OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM", key_.private_pem);
  auto v21 = MakeOciRpExchangeSource("2.1");
  EXPECT_EQ(v21.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(v21.status().message(),
            "OCI_RESOURCE_PRINCIPAL_VERSION=2.1 but OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT, "
            "OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT, OCI_RESOURCE_PRINCIPAL_RESOURCE_ID are not set");
  EXPECT_EQ(MakeOciRpExchangeSource("1.1").status().message(),
            "OCI_RESOURCE_PRINCIPAL_VERSION=1.1 but OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT is not set");
  ScopedEnv partial({{"OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT", rp_.url()},
                     {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT", rp_.url()},
                     {"OCI_RESOURCE_PRINCIPAL_RESOURCE_ID", "ocid1.res"}});
  EXPECT_EQ(MakeOciRpExchangeSource("2.1.1").status().message(),
            "OCI_RESOURCE_PRINCIPAL_VERSION=2.1.1 but OCI_RESOURCE_PRINCIPAL_TENANCY_ID is not set");
  EXPECT_EQ(MakeOciRpExchangeSource("3.0").status().message(),
            "OCI_RESOURCE_PRINCIPAL_VERSION=3.0 but OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE, "
            "OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE, "
            "OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE are not set");
  ScopedEnv nested({{"OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE", "3.0"},
                    {"OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE", rp_.url()},
                    {"OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE", rp_.url()}});
  EXPECT_EQ(MakeOciRpExchangeSource("3.0").status().message(),
            "OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE=3.0 is not supported (1.1, 2.1, 2.1.1, "
            "2.1.2 and 2.2 are, for the leaf of 3.0)");
  EXPECT_EQ(MakeOciRpExchangeSource("2.2").status().message(),
            "OCI_RESOURCE_PRINCIPAL_VERSION=2.2 does not buy its token (1.1, 2.1, 2.1.1, 2.1.2 and 3.0 do)");
  // The service refuses (the key is unknown): the error names the URL, not the key.
  auto refused = (*MakeOciRpExchangeSource("2.1"))->Fetch(static_cast<int64_t>(std::time(nullptr)));
  EXPECT_EQ(refused.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("OCI resource principal token from " + rp_.url() +
                                            "/20180711/resourcePrincipalTokenV2/ocid1.res"),
            std::string::npos)
      << refused.status().message();
  EXPECT_EQ(refused.status().message().find("PRIVATE KEY"), std::string::npos);
}

}  // namespace
}  // namespace sluice
