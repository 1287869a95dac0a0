// The instance principal source (stores/credentials/oci_instance_principal.h)
// against FakeOciIdentity, which checks the federation request as OCI's auth
// service does; and its refresh ahead of expiry by the shared refresher, on
// a fake clock.
#include "stores/credentials/oci_instance_principal.h"

#include <openssl/evp.h>
#include <openssl/pem.h>

#include <gtest/gtest.h>

#include <atomic>
#include <ctime>

#include "stores/credentials/credential_chain.h"
#include "stores/credentials/jwt_expiry.h"
#include "stores/credentials/oci_resource_principal.h"
#include "stores/credentials/shared_credential.h"
#include "stores/signing/jwt_rs256.h"
#include "tests/common/scoped_env.h"
#include "tests/stores/common/fake_oci_identity.h"

namespace sluice {
namespace {

using testing::FakeOciIdentity;

// True when `private_pem` is the private half of `public_pem`.
bool KeyPairMatches(const std::string& private_pem, const std::string& public_pem) {
  auto sig = RsaSha256Sign("probe", private_pem, "session key");
  if (!sig.ok()) return false;
  BIO* bio = BIO_new_mem_buf(public_pem.data(), static_cast<int>(public_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PUBKEY(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const bool ok = key != nullptr &&
                  EVP_DigestVerifyInit(ctx, nullptr, EVP_sha256(), nullptr, key) == 1 &&
                  EVP_DigestVerify(ctx, reinterpret_cast<const unsigned char*>(sig->data()),
                                   sig->size(),
                                   reinterpret_cast<const unsigned char*>("probe"), 5) == 1;
  EVP_MD_CTX_free(ctx);
  EVP_PKEY_free(key);
  return ok;
}

TEST(OciInstancePrincipalTest, TheTokenIsRefreshedAheadOfItsExpiryWithANewSessionKey) {
  FakeOciIdentity identity("ocid1.tenancy.oc1..ip", "eu-frankfurt-1", 1200);
  std::atomic<int64_t> now{static_cast<int64_t>(std::time(nullptr))};
  SharedCredentialOptions options;
  options.clock = [&] { return now.load(); };
  options.background = false;
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(MakeOciInstancePrincipalSource(identity.metadata_url(), identity.federation_url()));
  SharedCredential credential(std::make_unique<CredentialChain>("OCI", std::move(sources)), options);

  auto first = credential.Get();
  ASSERT_TRUE(first.ok()) << first.status().ToString() << " / " << identity.last_refusal();
  EXPECT_EQ(first->bearer, identity.last_token());
  EXPECT_EQ(first->expires_at, JwtExpiry(identity.last_token()));
  EXPECT_TRUE(KeyPairMatches(first->session_key_pem, identity.last_session_public_pem()));
  EXPECT_EQ(first->source, "OCI instance principal (metadata " + identity.metadata_url() +
                               ", tenancy ocid1.tenancy.oc1..ip)");
  EXPECT_FALSE(credential.RefreshIfDue());
  EXPECT_EQ(identity.tokens_issued(), 1);

  now = *first->expires_at - 200;  // inside the 300 s refresh window
  EXPECT_TRUE(credential.RefreshIfDue());
  auto second = credential.Get();
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_EQ(identity.tokens_issued(), 2);
  EXPECT_NE(second->bearer, first->bearer);
  EXPECT_EQ(second->bearer, identity.last_token());
  EXPECT_NE(second->session_key_pem, first->session_key_pem);  // a key pair per token
  EXPECT_TRUE(KeyPairMatches(second->session_key_pem, identity.last_session_public_pem()));
  EXPECT_EQ(identity.refused(), 0) << identity.last_refusal();
}

TEST(OciInstancePrincipalTest, EndpointsAndRegionComeFromTheMetadataServiceUnlessSet) {
  FakeOciIdentity identity("ocid1.tenancy.oc1..ip", "US-Phoenix-1\n");
  testing::ScopedEnv env({{"OCI_METADATA_BASE_URL", identity.metadata_url() + "/"},
                          {"SLUICE_OCI_FEDERATION_ENDPOINT", std::nullopt}});
  const OciInstancePrincipalEndpoints endpoints = OciInstancePrincipalEndpointsFromEnv();
  EXPECT_EQ(endpoints.metadata, identity.metadata_url());
  auto region = FetchOciInstanceRegion(endpoints.metadata);
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  EXPECT_EQ(*region, "us-phoenix-1");
  EXPECT_EQ(OciFederationEndpoint(endpoints, *region),
            "https://auth.us-phoenix-1.oraclecloud.com/v1/x509");
  testing::ScopedEnv unset("OCI_METADATA_BASE_URL", std::nullopt);
  EXPECT_EQ(OciInstancePrincipalEndpointsFromEnv().metadata, "http://169.254.169.254/opc/v2");
}

// Older instances answer their region's short code, as the SDK expects
// ("phx" is us-phoenix-1; a government realm has its own domain); one the
// table does not know is refused naming the metadata address.
TEST(OciInstancePrincipalTest, AShortCodeFromTheMetadataNamesItsRegion) {
  FakeOciIdentity identity("ocid1.tenancy.oc1..ip", "PHX\n");
  auto region = FetchOciInstanceRegion(identity.metadata_url());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  EXPECT_EQ(*region, "us-phoenix-1");
  FakeOciIdentity gov("ocid1.tenancy.oc2..ip", "lfi");
  testing::ScopedEnv env("SLUICE_OCI_FEDERATION_ENDPOINT", std::nullopt);
  region = FetchOciInstanceRegion(gov.metadata_url());
  ASSERT_TRUE(region.ok()) << region.status().ToString();
  EXPECT_EQ(OciFederationEndpoint(OciInstancePrincipalEndpoints{}, *region),
            "https://auth.us-langley-1.oraclegovcloud.com/v1/x509");
  FakeOciIdentity unknown("ocid1.tenancy.oc1..ip", "zzq");
  EXPECT_EQ(FetchOciInstanceRegion(unknown.metadata_url()).status().ToString(),
            "invalid argument: OCI region 'zzq' from OCI instance metadata " + unknown.metadata_url() +
                "/instance/region is neither a region name (such as us-phoenix-1) nor a known short "
                "code (such as phx)");
}

}  // namespace
}  // namespace sluice
