#include "stores/signing/oci_signature.h"

#include <ctime>

#include "stores/signing/digest.h"
#include "stores/signing/jwt_rs256.h"

namespace sluice {

std::string OciHttpDate(int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  static const char* const kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static const char* const kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                        "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  char buf[40];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d GMT", kDays[tm.tm_wday],
                tm.tm_mday, kMonths[tm.tm_mon], tm.tm_year + 1900, tm.tm_hour, tm.tm_min,
                tm.tm_sec);
  return buf;
}

namespace {

std::string Lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

}  // namespace

std::string OciSigningString(const OciRequestToSign& r) {
  std::string s = "date: " + r.date + "\n(request-target): " + Lower(r.method) + " " + r.target;
  if (r.sign_host) s += "\nhost: " + r.host;
  if (r.sign_body) {
    s += "\ncontent-length: " + std::to_string(r.content_length) +
         "\ncontent-type: " + r.content_type + "\nx-content-sha256: " + r.content_sha256_b64;
  }
  return s;
}

Result<std::string> OciAuthorization(const OciRequestToSign& request, const OciApiKey& key) {
  SLUICE_ASSIGN_OR_RETURN(std::string sig, RsaSha256Sign(OciSigningString(request),
                                                         key.private_key_pem, key.what,
                                                         key.passphrase));
  std::string headers = request.sign_host ? "date (request-target) host" : "date (request-target)";
  if (request.sign_body) headers += " content-length content-type x-content-sha256";
  return std::string("Signature algorithm=\"rsa-sha256\",headers=\"") + headers + "\",keyId=\"" +
         key.key_id + "\",signature=\"" + Base64Encode(sig) + "\",version=\"1\"";
}

}  // namespace sluice
