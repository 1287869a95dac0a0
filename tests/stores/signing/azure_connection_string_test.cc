// Azure connection string parsing: endpoints, defaults, Azurite, SAS, and
// errors that never quote a secret.
#include <gtest/gtest.h>

#include "stores/signing/azure_connection_string.h"

namespace sluice {
namespace {

constexpr char kKey[] = "c2VjcmV0LWtleS1ieXRlcw==";  // base64("secret-key-bytes")

TEST(AzureConnectionString, PublicCloudDefaults) {
  Result<AzureConnectionString> cs = ParseAzureConnectionString(
      std::string("DefaultEndpointsProtocol=https;AccountName=myaccount;AccountKey=") + kKey +
      ";EndpointSuffix=core.windows.net");
  ASSERT_TRUE(cs.ok()) << cs.status().ToString();
  EXPECT_EQ(cs->account_name, "myaccount");
  EXPECT_EQ(cs->account_key, kKey);
  EXPECT_EQ(cs->protocol, "https");
  EXPECT_EQ(cs->endpoint_suffix, "core.windows.net");
  EXPECT_EQ(cs->blob_endpoint, "https://myaccount.blob.core.windows.net");
  EXPECT_EQ(cs->sas_token, "");
  EXPECT_FALSE(cs->development_storage);
}

TEST(AzureConnectionString, SovereignSuffixHttpAndCaseInsensitiveKeys) {
  Result<AzureConnectionString> cs = ParseAzureConnectionString(
      "defaultendpointsprotocol=HTTP; accountname=acct ;ENDPOINTSUFFIX=core.chinacloudapi.cn;");
  ASSERT_TRUE(cs.ok()) << cs.status().ToString();
  EXPECT_EQ(cs->blob_endpoint, "http://acct.blob.core.chinacloudapi.cn");
  EXPECT_EQ(cs->protocol, "http");
}

TEST(AzureConnectionString, ExplicitBlobEndpointAndSas) {
  Result<AzureConnectionString> cs = ParseAzureConnectionString(
      "BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1/;"
      "SharedAccessSignature=?sv=2021-10-04&ss=b&sig=abc%2Bdef%3D;"
      "QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1");
  ASSERT_TRUE(cs.ok()) << cs.status().ToString();
  EXPECT_EQ(cs->blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  EXPECT_EQ(cs->sas_token, "sv=2021-10-04&ss=b&sig=abc%2Bdef%3D");
  EXPECT_EQ(cs->account_name, "");
  EXPECT_EQ(cs->account_key, "");
}

TEST(AzureConnectionString, DevelopmentStorage) {
  Result<AzureConnectionString> cs = ParseAzureConnectionString("UseDevelopmentStorage=true");
  ASSERT_TRUE(cs.ok()) << cs.status().ToString();
  EXPECT_TRUE(cs->development_storage);
  EXPECT_EQ(cs->account_name, "devstoreaccount1");
  EXPECT_EQ(cs->account_key, kAzuriteAccountKey);
  EXPECT_EQ(cs->blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  EXPECT_EQ(cs->protocol, "http");
}

TEST(AzureConnectionString, AzuriteFullForm) {
  // The form Azurite's documentation gives.
  Result<AzureConnectionString> cs = ParseAzureConnectionString(
      "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
      "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/"
      "K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;");
  ASSERT_TRUE(cs.ok()) << cs.status().ToString();
  EXPECT_EQ(cs->account_name, "devstoreaccount1");
  EXPECT_EQ(cs->account_key, kAzuriteAccountKey);
  EXPECT_EQ(cs->blob_endpoint, "http://127.0.0.1:10000/devstoreaccount1");
}

void ExpectError(const std::string& text, const std::string& message) {
  Result<AzureConnectionString> cs = ParseAzureConnectionString(text);
  ASSERT_FALSE(cs.ok()) << text;
  EXPECT_EQ(cs.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(cs.status().message(), message);
}

TEST(AzureConnectionString, Errors) {
  ExpectError("", "Azure connection string: neither BlobEndpoint nor AccountName is given");
  ExpectError("AccountName=a;garbage", "Azure connection string: setting 2 has no '='");
  ExpectError("=x", "Azure connection string: setting 1 has an empty name");
  ExpectError("AccountName=a;accountname=b", "Azure connection string: accountname is given twice");
  ExpectError("AccountName=a;DefaultEndpointsProtocol=ftp",
              "Azure connection string: DefaultEndpointsProtocol \"ftp\" is neither http nor https");
  ExpectError("UseDevelopmentStorage=false",
              "Azure connection string: UseDevelopmentStorage must be \"true\" when given");
  // Found by the fuzzer: "BlobEndpoint=/" left an empty endpoint.
  for (const char* endpoint : {"/", "", "127.0.0.1:10000/a", "ftp://host", "https://", "http:///a",
                               "https://?sig=x"}) {
    ExpectError(std::string("BlobEndpoint=") + endpoint,
                "Azure connection string: BlobEndpoint is not an http:// or https:// URL with a "
                "host");
  }
}

TEST(AzureConnectionString, ErrorsNeverQuoteSecrets) {
  const std::string bad_key = "TopSecret!Key";
  Result<AzureConnectionString> cs =
      ParseAzureConnectionString("AccountName=a;AccountKey=" + bad_key);
  ASSERT_FALSE(cs.ok());
  EXPECT_EQ(cs.status().message(),
            "Azure connection string: AccountKey is not valid base64 (13 characters)");

  // A secret in a malformed setting, or given twice, is not echoed either.
  const std::string sas = "sv=2021&sig=SuperSecretSignature";
  cs = ParseAzureConnectionString("AccountName=a;SharedAccessSignature=" + sas +
                                  ";SharedAccessSignature=" + sas);
  ASSERT_FALSE(cs.ok());
  EXPECT_EQ(cs.status().message().find("SuperSecret"), std::string::npos);
  cs = ParseAzureConnectionString("AccountName=a;" + bad_key);
  ASSERT_FALSE(cs.ok());
  EXPECT_EQ(cs.status().message().find(bad_key), std::string::npos);
}

}  // namespace
}  // namespace sluice
