#include "stores/http/url.h"

#include <gtest/gtest.h>


namespace sluice {
namespace {

TEST(UrlTest, ParsesSchemeHostPortTarget) {
  Result<Url> u = ParseUrl("HTTPS://Example.COM:8443/a/b.bin?x=1&y=2#frag");
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_EQ(u->scheme, "https");
  EXPECT_EQ(u->host, "example.com");
  EXPECT_EQ(u->port, 8443);
  EXPECT_EQ(u->target, "/a/b.bin?x=1&y=2");
  EXPECT_EQ(u->Authority(), "example.com:8443");
  EXPECT_EQ(u->PoolKey(), "https://example.com:8443");
  EXPECT_EQ(u->ToString(), "https://example.com:8443/a/b.bin?x=1&y=2");
}

TEST(UrlTest, DefaultPortsAndEmptyPath) {
  EXPECT_EQ(ParseUrl("http://h")->port, 80);
  EXPECT_EQ(ParseUrl("http://h")->target, "/");
  EXPECT_EQ(ParseUrl("https://h")->port, 443);
  EXPECT_EQ(ParseUrl("https://h?q=1")->target, "/?q=1");
  EXPECT_EQ(ParseUrl("https://h")->Authority(), "h");
}

TEST(UrlTest, Ipv6Literals) {
  Result<Url> u = ParseUrl("http://[::1]:8080/x");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->host, "::1");
  EXPECT_TRUE(u->is_ipv6_literal());
  EXPECT_EQ(u->Authority(), "[::1]:8080");
  EXPECT_EQ(u->PoolKey(), "http://[::1]:8080");
  EXPECT_EQ(ParseUrl("https://[2001:DB8::7]/")->host, "2001:db8::7");
}

TEST(UrlTest, MalformedUrlsAreSpecificErrors) {
  auto error = [](const char* url) { return ParseUrl(url).status().message(); };
  EXPECT_EQ(error("ftp://h/x"), "malformed URL 'ftp://h/x': scheme 'ftp' is not http or https");
  EXPECT_EQ(error("h/x"), "malformed URL 'h/x': expected scheme://host/path");
  EXPECT_EQ(error("http:///x"), "malformed URL 'http:///x': empty host");
  EXPECT_EQ(error("http://h:99999/"), "malformed URL 'http://h:99999/': port 99999 is out of range 1-65535");
  EXPECT_EQ(error("http://h:0/"), "malformed URL 'http://h:0/': port 0 is out of range 1-65535");
  EXPECT_EQ(error("http://h:8a/"), "malformed URL 'http://h:8a/': port '8a' is not a number");
  EXPECT_EQ(error("http://h:/"), "malformed URL 'http://h:/': empty port");
  EXPECT_EQ(error("http://[::1/"), "malformed URL 'http://[::1/': unterminated IPv6 literal");
  EXPECT_EQ(error("http://[zz::1]/"), "malformed URL 'http://[zz::1]/': 'zz::1' is not an IPv6 address");
  EXPECT_EQ(error("http://a b/"), "malformed URL 'http://a b/': contains a space or control character (percent-encode it)");
  EXPECT_EQ(error("http://h$x/"), "malformed URL 'http://h$x/': invalid host name 'h$x'");
  EXPECT_EQ(ParseUrl("http://h/x").status().code(), StatusCode::kOk);
  EXPECT_EQ(ParseUrl("ftp://h/x").status().code(), StatusCode::kInvalidArgument);
}

// Found by tests/fuzz/url_fuzz: without a scheme of its own, everything
// before a "://" in the query was quoted as "the scheme", secrets included.
TEST(UrlTest, AMissingSchemeIsNotQuotedWithTheQuery) {
  Result<Url> u = ParseUrl("bucket/data/index.json?sig=SECRETVALUE&next=https://h/x");
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().message().find("secretvalue"), std::string::npos) << u.status().ToString();
  EXPECT_EQ(u.status().message().find("SECRETVALUE"), std::string::npos) << u.status().ToString();
  Result<Url> ftp = ParseUrl("ftp://h/x");
  ASSERT_FALSE(ftp.ok());
  EXPECT_NE(ftp.status().message().find("scheme 'ftp' is not http or https"), std::string::npos);
}

TEST(UrlTest, UserInfoIsRefusedWithoutEchoingIt) {
  Status s = ParseUrl("https://user:hunter2@h/x").status();
  EXPECT_EQ(s.message(),
            "malformed URL 'https://REDACTED@h/x': user info in URLs is not supported "
            "(pass credentials separately)");
}

TEST(UrlTest, RedactionHidesSecretQueryValues) {
  EXPECT_EQ(RedactUrl("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                      "&X-Amz-Credential=AKIA%2F20240101&X-Amz-Signature=abc123&partNumber=2"),
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&partNumber=2");
  EXPECT_EQ(RedactUrl("https://a.blob.core.windows.net/c/b?sv=2021&se=2030&sp=r&sig=SECRET"),
            "https://a.blob.core.windows.net/c/b?sv=2021&se=2030&sp=r&sig=REDACTED");
  EXPECT_EQ(RedactUrl("https://h/x?access_token=t0k"), "https://h/x?access_token=REDACTED");
  EXPECT_EQ(RedactUrl("no scheme?token=abc"), "no scheme?token=REDACTED");
}

TEST(UrlTest, RedactionKeepsHarmlessQueryParameters) {
  // Listing and paging parameters, SAS metadata and the non-secret parts of
  // a presigned URL stay readable; only credential-bearing values go.
  EXPECT_EQ(RedactUrl("http://h/b?list-type=2&max-keys=1000&prefix=a%2Fb&delimiter=%2F"
                      "&continuation-token=1AbC&start-after=k&marker=m&pageToken=p"),
            "http://h/b?list-type=2&max-keys=1000&prefix=a%2Fb&delimiter=%2F"
            "&continuation-token=1AbC&start-after=k&marker=m&pageToken=p");
  EXPECT_EQ(RedactUrl("https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                      "&X-Amz-Date=20240101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
                      "&X-Amz-Security-Token=FQo&X-Amz-Signature=ff&uploadId=u1&partNumber=3"),
            "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Date=20240101T000000Z&X-Amz-Expires=900&X-Amz-SignedHeaders=host"
            "&X-Amz-Security-Token=REDACTED&X-Amz-Signature=REDACTED&uploadId=u1&partNumber=3");
  EXPECT_EQ(RedactUrl("https://s.googleapis.com/b/o?X-Goog-Credential=c&X-Goog-Signature=s"
                      "&GoogleAccessId=g&Signature=v&Expires=1&key=AIza&alt=media"),
            "https://s.googleapis.com/b/o?X-Goog-Credential=REDACTED&X-Goog-Signature=REDACTED"
            "&GoogleAccessId=REDACTED&Signature=REDACTED&Expires=1&key=REDACTED&alt=media");
  EXPECT_EQ(RedactUrl("https://a.blob.core.windows.net/c?restype=container&comp=list"
                      "&maxresults=5&sv=2021-08-06&ss=b&srt=sco&sp=rl&se=2030-01-01"
                      "&spr=https&skoid=o&sig=abc%3D"),
            "https://a.blob.core.windows.net/c?restype=container&comp=list"
            "&maxresults=5&sv=2021-08-06&ss=b&srt=sco&sp=rl&se=2030-01-01"
            "&spr=https&skoid=o&sig=REDACTED");
  EXPECT_EQ(RedactUrl("https://h/cb?state=xyz&code=4%2F0Ad&id_token=e&refresh_token=r"
                      "&client_secret=s&hf_token=t&db_password=p&session=1"),
            "https://h/cb?state=xyz&code=REDACTED&id_token=REDACTED&refresh_token=REDACTED"
            "&client_secret=REDACTED&hf_token=REDACTED&db_password=REDACTED&session=1");
  // Names match case-insensitively; a parameter without '=' is kept as is.
  EXPECT_EQ(RedactUrl("http://h/x?SIG=1&Access_Token=2&flag&Max-Keys=3"),
            "http://h/x?SIG=REDACTED&Access_Token=REDACTED&flag&Max-Keys=3");
}

TEST(UrlTest, RedactionHidesEveryValueNotKnownToBeHarmless) {
  // A credential under a name no list foresaw stays hidden.
  EXPECT_EQ(RedactUrl("https://api.example/v1/data?apikey2=SECRET&vendor_auth=S2&v=3"),
            "https://api.example/v1/data?apikey2=REDACTED&vendor_auth=REDACTED&v=REDACTED");
  EXPECT_EQ(RedactUrl("http://h/x?X-Amz-Credential=AKID&X-Amz-Date=20261126T000000Z"),
            "http://h/x?X-Amz-Credential=REDACTED&X-Amz-Date=20261126T000000Z");
  // Unparsable text is redacted the same way.
  EXPECT_EQ(RedactUrl("no scheme?apikey2=SECRET&prefix=a"), "no scheme?apikey2=REDACTED&prefix=a");
}

TEST(UrlTest, ResolvesRedirectTargets) {
  Url base = *ParseUrl("http://h:81/dir/file?q=1");
  EXPECT_EQ(ResolveRedirect(base, "https://o/x")->ToString(), "https://o/x");
  EXPECT_EQ(ResolveRedirect(base, "//o2/y")->ToString(), "http://o2/y");
  EXPECT_EQ(ResolveRedirect(base, "/abs?z")->ToString(), "http://h:81/abs?z");
  EXPECT_EQ(ResolveRedirect(base, "rel")->ToString(), "http://h:81/dir/rel");
  EXPECT_EQ(ResolveRedirect(base, "").status().message(), "empty Location header");
}

}  // namespace
}  // namespace sluice
