// GCS XML API V4 signing with HMAC keys (GOOG4-HMAC-SHA256): the SigV4 code
// with Google's names. Expected strings from gen_gcs_vectors.py (stdlib-only
// Python written from Google's V4 signing pages, independent of this code).
#include <gtest/gtest.h>

#include "stores/signing/sigv4.h"

namespace sluice {
namespace {

constexpr int64_t kHmacTime = 1756557360;  // 2025-08-30T12:36:00Z

SigV4Credentials HmacCreds() {
  return SigV4Credentials{"GOOG1EXAMPLEACCESSID", "bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ", ""};
}

TEST(GcsHmac, ConfigNames) {
  SigV4Config c = GcsHmacConfig();
  EXPECT_EQ(c.scheme.algorithm, "GOOG4-HMAC-SHA256");
  EXPECT_EQ(c.scheme.key_prefix, "GOOG4");
  EXPECT_EQ(c.scheme.scope_terminator, "goog4_request");
  EXPECT_EQ(c.region, "auto");
  EXPECT_EQ(c.service, "storage");
  EXPECT_FALSE(c.uri_rules.double_encode);
  EXPECT_FALSE(c.uri_rules.normalize);
}

TEST(GcsHmac, HeaderSigning) {
  SigningRequest r;
  r.method = "GET";
  r.path = "/my-bucket/dir/shard.00000.mds.zstd";
  r.headers = {{"Host", "storage.googleapis.com"}, {"Range", "bytes=0-1023"}};
  r.payload_hash = "UNSIGNED-PAYLOAD";
  Result<SigV4Signature> sig = SignSigV4Headers(r, HmacCreds(), GcsHmacConfig(), kHmacTime);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/my-bucket/dir/shard.00000.mds.zstd\n"
            "\n"
            "host:storage.googleapis.com\n"
            "range:bytes=0-1023\n"
            "x-goog-content-sha256:UNSIGNED-PAYLOAD\n"
            "x-goog-date:20250830T123600Z\n"
            "\n"
            "host;range;x-goog-content-sha256;x-goog-date\n"
            "UNSIGNED-PAYLOAD");
  EXPECT_EQ(sig->string_to_sign,
            "GOOG4-HMAC-SHA256\n"
            "20250830T123600Z\n"
            "20250830/auto/storage/goog4_request\n"
            "e100ff5c94910acbd357754a249ab3170ab7b4e2f5ccd36ac985940f46ea171a");
  EXPECT_EQ(sig->signature, "70a1e197affac3744d19551b652d1f39915f603aa7646e7f400b676aeea58bec");
  ASSERT_EQ(sig->headers_to_add.size(), 3u);
  EXPECT_EQ(sig->headers_to_add[0].name, "X-Goog-Date");
  EXPECT_EQ(sig->headers_to_add[1].name, "x-goog-content-sha256");
  EXPECT_EQ(sig->headers_to_add[2].name, "Authorization");
  EXPECT_EQ(sig->headers_to_add[2].value,
            "GOOG4-HMAC-SHA256 Credential=GOOG1EXAMPLEACCESSID/20250830/auto/storage/"
            "goog4_request, SignedHeaders=host;range;x-goog-content-sha256;x-goog-date, "
            "Signature=70a1e197affac3744d19551b652d1f39915f603aa7646e7f400b676aeea58bec");
}

TEST(GcsHmac, SignedUrl) {
  SigningRequest r;
  r.method = "GET";
  r.path = "/my-bucket/index.json";
  r.headers = {{"Host", "storage.googleapis.com"}};
  r.payload_hash = "UNSIGNED-PAYLOAD";
  Result<SigV4Signature> sig = PresignSigV4(r, HmacCreds(), GcsHmacConfig(), kHmacTime, 900);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request,
            "GET\n"
            "/my-bucket/index.json\n"
            "X-Goog-Algorithm=GOOG4-HMAC-SHA256&X-Goog-Credential=GOOG1EXAMPLEACCESSID%2F20250830"
            "%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20250830T123600Z&X-Goog-Expires=900&"
            "X-Goog-SignedHeaders=host\n"
            "host:storage.googleapis.com\n"
            "\n"
            "host\n"
            "UNSIGNED-PAYLOAD");
  EXPECT_EQ(sig->signature, "904fefa320fca498c1a314574678cc7f384c2efd8569593588ebee9260b7e8dd");
  EXPECT_EQ(EncodeQueryString(sig->query_to_add),
            "X-Goog-Algorithm=GOOG4-HMAC-SHA256&X-Goog-Credential=GOOG1EXAMPLEACCESSID%2F20250830"
            "%2Fauto%2Fstorage%2Fgoog4_request&X-Goog-Date=20250830T123600Z&"
            "X-Goog-SignedHeaders=host&X-Goog-Expires=900&"
            "X-Goog-Signature=904fefa320fca498c1a314574678cc7f384c2efd8569593588ebee9260b7e8dd");
}

}  // namespace
}  // namespace sluice
