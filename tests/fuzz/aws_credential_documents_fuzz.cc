// The documents AWS credential endpoints answer with
// (stores/credentials/aws_credential_documents.h). Layout: the first byte
// picks the parser (0: credential_process JSON, 1: container / EC2 metadata
// JSON, 2: STS AssumeRole XML, 3: an ISO 8601 time), the rest is the
// document. Checks: no secret (SecretAccessKey, SessionToken, Token) appears
// in an error; what parses has a key id and a secret key, and a time that
// parses round-trips through its own formatting.
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "base/iso8601.h"
#include "stores/credentials/aws_credential_documents.h"
#include "tests/fuzz/fuzz_util.h"
#include "tests/fuzz/secret_scan.h"

namespace {

sluice::Result<sluice::Credential> Parse(uint8_t kind, std::string_view doc) {
  switch (kind % 3) {
    case 0: return sluice::ParseAwsCredentialJson(doc, sluice::AwsCredentialJson::kProcess, "p");
    case 1: return sluice::ParseAwsCredentialJson(doc, sluice::AwsCredentialJson::kEndpoint, "e");
    default: return sluice::ParseStsCredentialsXml(doc, "AssumeRole", "sts");
  }
}

// The secret values a document carries: JSON members, or XML elements.
std::vector<std::string> Secrets(std::string_view doc) {
  std::vector<std::string> out;
  for (const char* name : {"SecretAccessKey", "SessionToken", "Token"}) {
    for (std::string& s : sluice::fuzz::JsonStringSecrets(doc, name)) out.push_back(std::move(s));
    const std::string open = std::string("<") + name + ">";
    const std::string close = std::string("</") + name + ">";
    size_t a = doc.find(open);
    size_t b = a == std::string_view::npos ? a : doc.find(close, a);
    if (b != std::string_view::npos && b - a - open.size() >= 8) {
      std::string value(doc.substr(a + open.size(), b - a - open.size()));
      if (doc.find(value) == doc.rfind(value)) out.push_back(std::move(value));
    }
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0];
  std::string_view doc(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (kind % 4 == 3) {
    auto t = sluice::ParseIso8601(doc);
    if (t.ok() && *t >= 0 && *t < int64_t{253402300800}) {  // years 1970-9999
      std::time_t secs = static_cast<std::time_t>(*t);
      std::tm parts{};
      gmtime_r(&secs, &parts);
      char text[32];
      std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
      auto again = sluice::ParseIso8601(text);
      FUZZ_CHECK(again.ok() && *again == *t, "%s does not round-trip", text);
    }
    return 0;
  }
  auto parsed = Parse(kind, doc);
  if (!parsed.ok()) {
    for (const std::string& secret : Secrets(doc)) {
      auto other = Parse(kind, sluice::fuzz::RotateSecret(doc, secret));
      FUZZ_CHECK(!sluice::fuzz::Echoes(parsed.status(), other.status(), secret),
                 "error shows a secret: %s", parsed.status().message().c_str());
    }
    return 0;
  }
  FUZZ_CHECK(!parsed->keys.access_key_id.empty() && !parsed->keys.secret_access_key.empty(),
             "a credential without its keys");
  return 0;
}
