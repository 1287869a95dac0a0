// Azure Blob SharedKey signing. Expected strings to sign and Authorization
// values from gen_azure_vectors.py (stdlib-only Python written from the
// "Authorize with Shared Key" spec, independent of this code).
#include <gtest/gtest.h>

#include "stores/signing/azure_connection_string.h"
#include "stores/signing/azure_shared_key.h"
#include "stores/signing/digest.h"

namespace sluice {
namespace {

constexpr char kDate[] = "Sat, 30 Aug 2025 12:36:00 GMT";

std::string OtherKey() {
  std::string bytes;
  for (int i = 0; i < 64; ++i) bytes += char(i);
  return Base64Encode(bytes);
}

SigningRequest Request(std::string method, std::string path) {
  SigningRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  return r;
}

TEST(AzureSharedKey, AzuritePathStyleRangedGet) {
  // Path style against Azurite: the path as sent starts with the account, so
  // the canonical resource holds it twice.
  SigningRequest r = Request("GET", "/devstoreaccount1/container/dir/blob%20name.mds");
  r.headers = {{"x-ms-date", kDate}, {"x-ms-version", "2021-10-04"}, {"Range", "bytes=0-99"}};
  Result<AzureSharedKeySignature> sig =
      SignAzureSharedKey(r, kAzuriteAccountName, kAzuriteAccountKey);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->string_to_sign,
            "GET\n\n\n\n\n\n\n\n\n\n\n"
            "bytes=0-99\n"
            "x-ms-date:Sat, 30 Aug 2025 12:36:00 GMT\n"
            "x-ms-version:2021-10-04\n"
            "/devstoreaccount1/devstoreaccount1/container/dir/blob%20name.mds");
  EXPECT_EQ(sig->authorization,
            "SharedKey devstoreaccount1:tiLIlzwaXY0TXgdW4/hKzCXm2DeUfgjdqGofeirfi8k=");
  EXPECT_EQ(sig->signature, "tiLIlzwaXY0TXgdW4/hKzCXm2DeUfgjdqGofeirfi8k=");
}

TEST(AzureSharedKey, ListBlobsQueryCanonicalization) {
  SigningRequest r = Request("GET", "/devstoreaccount1/container");
  r.query = {{"restype", "container"}, {"comp", "list"},       {"prefix", "train data/"},
             {"Marker", "abc"},        {"include", "snapshots"}, {"include", "metadata"},
             {"maxresults", "10"}};
  r.headers = {{"x-ms-date", kDate}, {"x-ms-version", "2021-10-04"}};
  Result<AzureSharedKeySignature> sig =
      SignAzureSharedKey(r, kAzuriteAccountName, kAzuriteAccountKey);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->string_to_sign,
            "GET\n\n\n\n\n\n\n\n\n\n\n\n"
            "x-ms-date:Sat, 30 Aug 2025 12:36:00 GMT\n"
            "x-ms-version:2021-10-04\n"
            "/devstoreaccount1/devstoreaccount1/container\n"
            "comp:list\n"
            "include:metadata,snapshots\n"
            "marker:abc\n"
            "maxresults:10\n"
            "prefix:train data/\n"
            "restype:container");
  EXPECT_EQ(sig->authorization,
            "SharedKey devstoreaccount1:B2ht8QvlAIw+IdG9G42c27xEiYJeM0ftKRojW4KFz4c=");
}

TEST(AzureSharedKey, PutBlockBlobHeaders) {
  SigningRequest r = Request("PUT", "/devstoreaccount1/container/shard.00000.mds");
  r.headers = {{"Content-Length", "11"},
               {"Content-Type", "application/octet-stream"},
               {"x-ms-blob-type", "BlockBlob"},
               {"X-MS-Meta-Note", "  two   spaces\there "},
               {"x-ms-date", kDate},
               {"x-ms-version", "2021-10-04"}};
  Result<AzureSharedKeySignature> sig =
      SignAzureSharedKey(r, kAzuriteAccountName, kAzuriteAccountKey);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->string_to_sign,
            "PUT\n\n\n11\n\napplication/octet-stream\n\n\n\n\n\n\n"
            "x-ms-blob-type:BlockBlob\n"
            "x-ms-date:Sat, 30 Aug 2025 12:36:00 GMT\n"
            "x-ms-meta-note:two spaces here\n"
            "x-ms-version:2021-10-04\n"
            "/devstoreaccount1/devstoreaccount1/container/shard.00000.mds");
  EXPECT_EQ(sig->authorization,
            "SharedKey devstoreaccount1:/BA13ZL30XOgRAAKEqAJyQYG/8oWk/cdRbrD4/sSz1k=");
}

TEST(AzureSharedKey, ZeroContentLengthIsSignedEmpty) {
  SigningRequest r = Request("PUT", "/container/empty");
  r.headers = {{"Content-Length", "0"},
               {"x-ms-blob-type", "BlockBlob"},
               {"x-ms-date", kDate},
               {"x-ms-version", "2021-10-04"}};
  Result<AzureSharedKeySignature> sig = SignAzureSharedKey(r, "myaccount", OtherKey());
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->string_to_sign,
            "PUT\n\n\n\n\n\n\n\n\n\n\n\n"
            "x-ms-blob-type:BlockBlob\n"
            "x-ms-date:Sat, 30 Aug 2025 12:36:00 GMT\n"
            "x-ms-version:2021-10-04\n"
            "/myaccount/container/empty");
  EXPECT_EQ(sig->authorization,
            "SharedKey myaccount:crRjXv3zwWvs3mdeNf+bO5bYgBBXu1jIRTWvGHEGe8Y=");
}

TEST(AzureSharedKey, EveryStandardHeaderInItsSlot) {
  SigningRequest r = Request("HEAD", "/container/blob");
  r.query = {{"snapshot", "2025-08-30T12:00:00Z"}};
  r.headers = {{"If-Match", "\"0x8D\""},
               {"If-None-Match", "\"0x8E\""},
               {"If-Modified-Since", "Fri, 29 Aug 2025 00:00:00 GMT"},
               {"If-Unmodified-Since", "Sun, 31 Aug 2025 00:00:00 GMT"},
               {"Content-Encoding", "gzip"},
               {"Content-Language", "en"},
               {"Content-MD5", "abc=="},
               {"x-ms-date", kDate},
               {"x-ms-version", "2021-10-04"}};
  Result<AzureSharedKeySignature> sig = SignAzureSharedKey(r, "myaccount", OtherKey());
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->string_to_sign,
            "HEAD\n"
            "gzip\n"
            "en\n"
            "\n"
            "abc==\n"
            "\n"
            "\n"
            "Fri, 29 Aug 2025 00:00:00 GMT\n"
            "\"0x8D\"\n"
            "\"0x8E\"\n"
            "Sun, 31 Aug 2025 00:00:00 GMT\n"
            "\n"
            "x-ms-date:Sat, 30 Aug 2025 12:36:00 GMT\n"
            "x-ms-version:2021-10-04\n"
            "/myaccount/container/blob\n"
            "snapshot:2025-08-30T12:00:00Z");
  EXPECT_EQ(sig->authorization,
            "SharedKey myaccount:AUm1SefYIcppz6zjxAsRli4Pqzv7y9hX1YSBgjEI4tk=");
}

TEST(AzureSharedKey, Errors) {
  SigningRequest r = Request("GET", "/container/blob");
  r.headers = {{"x-ms-date", kDate}};
  const std::string bad_key = "not*base64*secret";
  Result<AzureSharedKeySignature> sig = SignAzureSharedKey(r, "myaccount", bad_key);
  ASSERT_FALSE(sig.ok());
  EXPECT_EQ(sig.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sig.status().message(),
            "Azure SharedKey: account key for account \"myaccount\" is not valid base64 "
            "(17 characters)");
  EXPECT_EQ(sig.status().message().find(bad_key), std::string::npos);

  EXPECT_EQ(SignAzureSharedKey(r, "", OtherKey()).status().message(),
            "Azure SharedKey: account name is empty");

  SigningRequest no_date = Request("GET", "/container/blob");
  EXPECT_EQ(SignAzureSharedKey(no_date, "myaccount", OtherKey()).status().message(),
            "Azure SharedKey: request has neither x-ms-date nor Date");

  SigningRequest signed_already = r;
  signed_already.headers.push_back({"Authorization", "SharedKey x:y"});
  EXPECT_EQ(SignAzureSharedKey(signed_already, "myaccount", OtherKey()).status().message(),
            "Azure SharedKey: request already has an Authorization header; the signer sets it");

  SigningRequest relative = Request("GET", "container/blob");
  relative.headers = r.headers;
  EXPECT_EQ(SignAzureSharedKey(relative, "myaccount", OtherKey()).status().message(),
            "Azure SharedKey: request path must start with '/', got \"container/blob\"");
}

}  // namespace
}  // namespace sluice
