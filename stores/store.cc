// OpenStore: picks the backend by URL scheme.
#include "stores/store.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "stores/azure/azure_store.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/file/file_store.h"
#include "stores/gcs/gcs_store.h"
#include "stores/hf/hf_store.h"
#include "stores/oci/oci_native_store.h"
#include "stores/s3/s3_store.h"
#include "stores/web/web_store.h"

namespace sluice {
namespace {

constexpr std::string_view kKnownSchemes[] = {"file", "s3",    "oci",   "gs",
                                              "azure", "azure-dl", "http", "https", "dbfs", "hf"};

Status UnknownScheme(std::string_view url, std::string_view scheme) {
  return InvalidArgumentError("unknown store URL scheme '" + std::string(scheme) + "' in '" +
                              std::string(url.substr(0, url.find('?'))) +
                              "' (known: file, s3, oci, gs, azure, azure-dl, http, https, dbfs, hf, "
                              "or a local path)");
}

}  // namespace

boost::asio::awaitable<Result<uint64_t>> Store::GetRangeOnlyInto(std::string key,
                                                                 uint64_t offset, uint64_t length,
                                                                 ObjectVersion version,
                                                                 char* into,
                                                                 IntoProgress* progress) {
  (void)progress;  // the caller reports the bytes when this returns
  Result<std::string> got =
      co_await GetRangeOnlyOfVersion(std::move(key), offset, length, std::move(version));
  if (!got.ok()) co_return got.status();
  const size_t n = std::min<size_t>(got->size(), static_cast<size_t>(length));
  std::memcpy(into, got->data(), n);
  co_return uint64_t{n};
}

std::string StoreUrlScheme(std::string_view url) {
  size_t colon = url.find(':');
  if (colon == std::string_view::npos || colon == 0 ||
      !std::isalpha(static_cast<unsigned char>(url[0]))) {
    return "";
  }
  std::string scheme;
  for (size_t i = 0; i < colon; ++i) {
    char c = url[i];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.')) {
      return "";  // a path that happens to hold ':'
    }
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  // "dbfs:/..." has no "//"; every other scheme needs it.
  if (scheme == "dbfs") return scheme;
  if (url.substr(colon, 3) != "://") return "";
  return scheme;
}

bool IsStoreUrl(std::string_view url) {
  std::string scheme = StoreUrlScheme(url);
  return !scheme.empty() && scheme != "file";
}

Status CheckStoreScheme(std::string_view url) {
  std::string scheme = StoreUrlScheme(url);
  if (scheme.empty()) return Status::Ok();
  for (std::string_view known : kKnownSchemes) {
    if (scheme == known) return Status::Ok();
  }
  return UnknownScheme(url, scheme);
}

Result<std::unique_ptr<Store>> OpenStore(std::string_view url,
                                         boost::asio::any_io_executor executor,
                                         const StoreOptions& options) {
  if (url.empty()) return InvalidArgumentError("empty store URL");
  std::string scheme = StoreUrlScheme(url);
  if (scheme.empty() || scheme == "file") return OpenFileStore(url, options.env);
  if (scheme == "s3") return OpenS3Store(url, std::move(executor), options);
  if (scheme == "azure" || scheme == "azure-dl") {
    return OpenAzureStore(url, std::move(executor), options);
  }
  if (scheme == "http" || scheme == "https") {
    return OpenWebStore(url, std::move(executor), options);
  }
  if (scheme == "dbfs") return OpenDbfsStore(url, std::move(executor), options);
  if (scheme == "gs") return OpenGcsStore(url, std::move(executor), options);
  if (scheme == "hf") return OpenHfStore(url, std::move(executor), options);
  if (scheme == "oci") {
    if (WantsOciNativeApi(url)) return OpenOciNativeStore(url, std::move(executor), options);
    return OpenOciStore(url, std::move(executor), options);
  }
  return UnknownScheme(url, scheme);
}

}  // namespace sluice
