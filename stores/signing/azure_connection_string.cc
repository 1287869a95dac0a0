#include "stores/signing/azure_connection_string.h"

#include <set>

#include "base/ascii.h"
#include "stores/signing/digest.h"
#include "stores/signing/signing_request.h"

namespace sluice {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' ||
                        s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

// An explicit BlobEndpoint is the base of every blob URL: it must name a
// scheme the client speaks and a host, else requests would go nowhere (or be
// read as a path). Not quoted in the error: it may carry a SAS query.
bool IsBlobEndpoint(std::string_view endpoint) {
  std::string_view rest;
  if (AsciiStartsWithIgnoreCase(endpoint, "https://")) {
    rest = endpoint.substr(8);
  } else if (AsciiStartsWithIgnoreCase(endpoint, "http://")) {
    rest = endpoint.substr(7);
  } else {
    return false;
  }
  return !rest.empty() && rest.front() != '/' && rest.front() != '?' && rest.front() != '#';
}

}  // namespace

Result<AzureConnectionString> ParseAzureConnectionString(std::string_view text) {
  AzureConnectionString out;
  std::string blob_endpoint;
  std::set<std::string> seen;
  size_t position = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find(';', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view setting = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    if (setting.empty()) continue;
    ++position;
    const size_t eq = setting.find('=');
    if (eq == std::string_view::npos) {
      return InvalidArgumentError("Azure connection string: setting " +
                                  std::to_string(position) + " has no '='");
    }
    const std::string key = std::string(Trim(setting.substr(0, eq)));
    const std::string_view value = Trim(setting.substr(eq + 1));
    if (key.empty()) {
      return InvalidArgumentError("Azure connection string: setting " +
                                  std::to_string(position) + " has an empty name");
    }
    if (!seen.insert(AsciiToLower(key)).second) {
      return InvalidArgumentError("Azure connection string: " + key + " is given twice");
    }
    if (AsciiEqualsIgnoreCase(key, "AccountName")) {
      out.account_name = value;
    } else if (AsciiEqualsIgnoreCase(key, "AccountKey")) {
      std::string decoded;
      if (value.empty() || !Base64Decode(value, &decoded)) {
        return InvalidArgumentError(
            "Azure connection string: AccountKey is not valid base64 (" +
            std::to_string(value.size()) + " characters)");
      }
      out.account_key = value;
    } else if (AsciiEqualsIgnoreCase(key, "SharedAccessSignature")) {
      std::string_view sas = value;
      if (!sas.empty() && sas.front() == '?') sas.remove_prefix(1);
      out.sas_token = sas;
    } else if (AsciiEqualsIgnoreCase(key, "BlobEndpoint")) {
      if (!IsBlobEndpoint(value)) {
        return InvalidArgumentError(
            "Azure connection string: BlobEndpoint is not an http:// or https:// URL with a "
            "host");
      }
      blob_endpoint = value;
    } else if (AsciiEqualsIgnoreCase(key, "DefaultEndpointsProtocol")) {
      if (!AsciiEqualsIgnoreCase(value, "http") && !AsciiEqualsIgnoreCase(value, "https")) {
        return InvalidArgumentError("Azure connection string: DefaultEndpointsProtocol \"" +
                                    std::string(value) + "\" is neither http nor https");
      }
      out.protocol = AsciiToLower(value);
    } else if (AsciiEqualsIgnoreCase(key, "EndpointSuffix")) {
      out.endpoint_suffix = value;
    } else if (AsciiEqualsIgnoreCase(key, "UseDevelopmentStorage")) {
      if (!AsciiEqualsIgnoreCase(value, "true")) {
        return InvalidArgumentError(
            "Azure connection string: UseDevelopmentStorage must be \"true\" when given");
      }
      out.development_storage = true;
    }
    // Other settings (QueueEndpoint, TableEndpoint, ...) do not concern blobs.
  }

  if (out.protocol.empty()) out.protocol = out.development_storage ? "http" : "https";
  if (out.endpoint_suffix.empty()) out.endpoint_suffix = "core.windows.net";
  if (out.development_storage) {
    if (out.account_name.empty()) out.account_name = kAzuriteAccountName;
    if (out.account_key.empty() && out.sas_token.empty()) out.account_key = kAzuriteAccountKey;
    if (blob_endpoint.empty()) blob_endpoint = "http://127.0.0.1:10000/" + out.account_name;
  }
  if (blob_endpoint.empty()) {
    if (out.account_name.empty()) {
      return InvalidArgumentError(
          "Azure connection string: neither BlobEndpoint nor AccountName is given");
    }
    blob_endpoint = out.protocol + "://" + out.account_name + ".blob." + out.endpoint_suffix;
  }
  while (!blob_endpoint.empty() && blob_endpoint.back() == '/') blob_endpoint.pop_back();
  out.blob_endpoint = std::move(blob_endpoint);
  return out;
}

}  // namespace sluice
