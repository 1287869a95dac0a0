// OAuth2 bearer tokens for GCS from the metadata server of a Google Compute
// Engine VM or GKE node (the VM's or workload's service account), as Google's
// client libraries find them when no key is configured:
//   GET http://HOST/computeMetadata/v1/instance/service-accounts/default/token
//   Metadata-Flavor: Google
// HOST is $GCE_METADATA_HOST when set, else metadata.google.internal.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "stores/credentials/bearer_token_source.h"

namespace sluice {

// The file whose content starts with "Google" on Compute Engine and GKE.
inline constexpr std::string_view kGceProductNameFile = "/sys/class/dmi/id/product_name";

// The metadata server's host[:port] when one is expected: $GCE_METADATA_HOST
// if set, else metadata.google.internal if `product_name_file` says this
// machine runs on Google Compute Engine; nullopt otherwise (so machines off
// Google's cloud get an error at open, not a DNS wait at the first read).
std::optional<std::string> MetadataServerHost(
    std::string_view product_name_file = kGceProductNameFile);

// A token source over the metadata server at `host`, caching each token until
// a minute before it expires. Used from the store's executor only (not
// thread-safe). `clock` (unix seconds) is for tests.
std::shared_ptr<BearerTokenSource> MakeMetadataServerTokenSource(std::string host,
                                                                 int64_t (*clock)() = nullptr);

}  // namespace sluice
