// The AWS SigV4 test suite (tests/data/aws-sigv4/, the aws-c-auth layout):
// every case reproduces the canonical request, string to sign, signature and
// signed request exactly, for header signing and for query (presigned)
// signing. request.txt is parsed here; nothing is skipped.
//
// The suite's paths are given as the raw path on the request line (e.g.
// "/example space/") and its expected canonical URIs encode that path once
// for both normalize=true and normalize=false, so the suite runs with
// CanonicalUriRules{double_encode=true, normalize=<context.json normalize>}.
// S3's own rules (no second encoding, no normalization) are checked against
// botocore in s3_botocore_test.cc.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "base/file.h"
#include "stores/signing/digest.h"
#include "stores/signing/sigv4.h"
#include "stores/signing/uri_encoding.h"

namespace sluice {
namespace {

const std::string kSuiteDir = std::string(SLUICE_TEST_DATA_DIR) + "/aws-sigv4";

std::string Slurp(const std::string& path) {
  Result<std::string> r = ReadFile(path);
  EXPECT_TRUE(r.ok()) << path << ": " << r.status().ToString();
  return r.ok() ? *r : std::string();
}

std::vector<std::string> SplitLines(const std::string& text) {
  std::vector<std::string> lines;
  size_t pos = 0;
  while (true) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) {
      lines.push_back(text.substr(pos));
      return lines;
    }
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
}

// request.txt, parsed into the signing model plus the raw pieces needed to
// re-render the signed request byte for byte.
struct SuiteRequest {
  std::string method;
  std::string raw_path;
  std::string raw_query;  // after '?', as written
  std::vector<std::string> raw_header_lines;
  std::string body;
  SigningRequest request;
};

SuiteRequest ParseRequestTxt(const std::string& text) {
  SuiteRequest out;
  std::vector<std::string> lines = SplitLines(text);
  // Request line: METHOD SP target SP HTTP/1.1, where the target may itself
  // hold spaces ("/example space/").
  const std::string& first = lines.at(0);
  size_t sp1 = first.find(' ');
  size_t sp2 = first.rfind(' ');
  out.method = first.substr(0, sp1);
  std::string target = first.substr(sp1 + 1, sp2 - sp1 - 1);
  size_t q = target.find('?');
  out.raw_path = target.substr(0, q);
  if (q != std::string::npos) out.raw_query = target.substr(q + 1);

  size_t i = 1;
  for (; i < lines.size() && !lines[i].empty(); ++i) {
    const std::string& line = lines[i];
    out.raw_header_lines.push_back(line);
    if (line[0] == ' ' || line[0] == '\t') {
      // Obsolete line folding: the value continues, whitespace and all; the
      // signer must collapse it.
      out.request.headers.back().value += "\n" + line;
      continue;
    }
    size_t colon = line.find(':');
    out.request.headers.push_back({line.substr(0, colon), line.substr(colon + 1)});
  }
  std::string body;
  for (size_t j = i + 1; j < lines.size(); ++j) {
    if (j > i + 1) body += '\n';
    body += lines[j];
  }
  out.body = body;

  out.request.method = out.method;
  out.request.path = out.raw_path;
  if (!out.raw_query.empty()) {
    size_t pos = 0;
    while (pos <= out.raw_query.size()) {
      size_t amp = out.raw_query.find('&', pos);
      if (amp == std::string::npos) amp = out.raw_query.size();
      std::string pair = out.raw_query.substr(pos, amp - pos);
      size_t eq = pair.find('=');
      std::string name = pair.substr(0, eq);
      std::string value = eq == std::string::npos ? "" : pair.substr(eq + 1);
      out.request.query.push_back({PercentDecode(name), PercentDecode(value)});
      pos = amp + 1;
    }
  }
  out.request.payload_hash = Sha256Hex(out.body);
  return out;
}

struct SuiteContext {
  SigV4Credentials credentials;
  SigV4Config config;
  int64_t time = 0;
  int64_t expires = 0;
};

int64_t ParseTimestamp(const std::string& ts) {
  int y, mo, d, h, mi, s;
  EXPECT_EQ(std::sscanf(ts.c_str(), "%d-%d-%dT%d:%d:%dZ", &y, &mo, &d, &h, &mi, &s), 6) << ts;
  using namespace std::chrono;
  const sys_days date = year{y} / month{unsigned(mo)} / day{unsigned(d)};
  return date.time_since_epoch().count() * 86400 + h * 3600 + mi * 60 + s;
}

SuiteContext ParseContext(const std::string& path) {
  SuiteContext out;
  simdjson::dom::parser parser;
  simdjson::padded_string json(Slurp(path));
  simdjson::dom::element root = parser.parse(json);
  simdjson::dom::element creds = root["credentials"];
  out.credentials.access_key_id = std::string(std::string_view(creds["access_key_id"]));
  out.credentials.secret_access_key =
      std::string(std::string_view(creds["secret_access_key"]));
  std::string_view token;
  if (creds["token"].get(token) == simdjson::SUCCESS) out.credentials.session_token = token;
  out.config = ServiceSigV4Config(std::string(std::string_view(root["region"])),
                                  std::string(std::string_view(root["service"])));
  out.config.uri_rules.double_encode = true;
  out.config.uri_rules.normalize = bool(root["normalize"]);
  out.config.add_content_sha256_header = bool(root["sign_body"]);
  bool omit = false;
  if (root["omit_session_token"].get(omit) == simdjson::SUCCESS) {
    out.config.sign_session_token = !omit;
  }
  out.time = ParseTimestamp(std::string(std::string_view(root["timestamp"])));
  out.expires = int64_t(root["expiration_in_seconds"]);
  return out;
}

std::string RenderHeadersAndBody(const SuiteRequest& req,
                                 const std::vector<SigningHeader>& added) {
  std::string out;
  for (const std::string& line : req.raw_header_lines) out += line + "\n";
  for (const SigningHeader& h : added) out += h.name + ":" + h.value + "\n";
  out += "\n";
  out += req.body;
  return out;
}

std::vector<std::string> SuiteCases() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(kSuiteDir)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AwsSigV4Suite, HasEveryCase) { EXPECT_EQ(SuiteCases().size(), 38u); }

class AwsSigV4SuiteTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::string File(const std::string& name) const {
    return Slurp(kSuiteDir + "/" + GetParam() + "/" + name);
  }
};

TEST_P(AwsSigV4SuiteTest, HeaderSigning) {
  SuiteRequest req = ParseRequestTxt(File("request.txt"));
  SuiteContext ctx = ParseContext(kSuiteDir + "/" + GetParam() + "/context.json");
  Result<SigV4Signature> sig =
      SignSigV4Headers(req.request, ctx.credentials, ctx.config, ctx.time);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request, File("header-canonical-request.txt"));
  EXPECT_EQ(sig->string_to_sign, File("header-string-to-sign.txt"));
  EXPECT_EQ(sig->signature, File("header-signature.txt"));
  std::string rendered = req.method + " " + req.raw_path +
                         (req.raw_query.empty() ? "" : "?" + req.raw_query) + " HTTP/1.1\n" +
                         RenderHeadersAndBody(req, sig->headers_to_add);
  EXPECT_EQ(rendered, File("header-signed-request.txt"));
}

TEST_P(AwsSigV4SuiteTest, QuerySigning) {
  SuiteRequest req = ParseRequestTxt(File("request.txt"));
  SuiteContext ctx = ParseContext(kSuiteDir + "/" + GetParam() + "/context.json");
  Result<SigV4Signature> sig =
      PresignSigV4(req.request, ctx.credentials, ctx.config, ctx.time, ctx.expires);
  ASSERT_TRUE(sig.ok()) << sig.status().ToString();
  EXPECT_EQ(sig->canonical_request, File("query-canonical-request.txt"));
  EXPECT_EQ(sig->string_to_sign, File("query-string-to-sign.txt"));
  EXPECT_EQ(sig->signature, File("query-signature.txt"));
  std::string query = req.raw_query;
  if (!query.empty()) query += "&";
  query += EncodeQueryString(sig->query_to_add);
  std::string rendered = req.method + " " + req.raw_path + "?" + query + " HTTP/1.1\n" +
                         RenderHeadersAndBody(req, {});
  EXPECT_EQ(rendered, File("query-signed-request.txt"));
}

INSTANTIATE_TEST_SUITE_P(Cases, AwsSigV4SuiteTest, ::testing::ValuesIn(SuiteCases()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace sluice
