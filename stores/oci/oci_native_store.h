// oci:// through OCI Object Storage's native API, every request signed with
// the API key of an OCI config profile (stores/credentials/oci_config.h,
// stores/signing/oci_signature.h), as the OCI SDK's ObjectStorageClient
// does (and Mosaic with oci.config.from_file()), or with a session token,
// a resource principal or an instance principal (the sources and their order
// are oci_config.h's). Put is one PUT, signed as the SDK signs PutObject (its body
// unsigned); PutFile above StoreOptions::part_size a multipart upload
// (stores/oci/oci_multipart.h).
//
// Which oci:// URLs come here (OpenStore decides with WantsOciNativeApi):
//   oci://BUCKET@NAMESPACE/PATH always;
//   oci://BUCKET/PATH when nothing configures the S3-compatible API
//     (OCI_NAMESPACE, OCI_ENDPOINT_URL, AWS_ACCESS_KEY_ID unset) and an OCI
//     config file exists or OCI_RESOURCE_PRINCIPAL_VERSION or OCI_CLI_AUTH
//     is set; the namespace is then asked of the API (GET /n/).
// The endpoint is https://objectstorage.<region>.<realm domain>
// (stores/credentials/oci_regions.h: short codes such as "phx" name their
// region), or SLUICE_OCI_OBJECT_STORAGE_ENDPOINT. Objects: /n/NS/b/BUCKET/o/NAME (NAME
// percent-encoded, '/' included, as the SDK sends it); listings:
// /n/NS/b/BUCKET/o?prefix=...&fields=name,size, paged by nextStartWith.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/any_io_executor.hpp>

#include "base/status.h"
#include "stores/store.h"

namespace sluice {

// True when `url` (oci://...) goes to the native API by the rules above.
bool WantsOciNativeApi(std::string_view url);

Result<std::unique_ptr<Store>> OpenOciNativeStore(std::string_view url,
                                                  boost::asio::any_io_executor executor,
                                                  const StoreOptions& options);

// What `sluice whoami` prints for such a URL: the endpoint, the namespace
// and the source that signs (the profile and its key id or token file, the
// resource principal's files, or the instance principal's metadata service,
// tenancy and federation endpoint; never a key or a token). Blocks: may
// fetch an instance principal's first token.
Result<std::string> DescribeOciNativeAuth(std::string_view url);

}  // namespace sluice
