// OAuth2 bearer tokens for GCS from the metadata server of a Google Compute
// Engine VM or GKE node (the VM's or workload's service account), as Google's
// client libraries find them when no key is configured:
//   GET http://HOST/computeMetadata/v1/instance/service-accounts/default/token?scopes=SCOPE
//   Metadata-Flavor: Google
// HOST is $GCE_METADATA_HOST when set, else metadata.google.internal.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "stores/credentials/credential_source.h"

namespace sluice {

// The file whose content starts with "Google" on Compute Engine and GKE.
inline constexpr std::string_view kGceProductNameFile = "/sys/class/dmi/id/product_name";

// The metadata server's host[:port] when one is expected: $GCE_METADATA_HOST
// if set, else metadata.google.internal if `product_name_file` says this
// machine runs on Google Compute Engine; nullopt otherwise (so machines off
// Google's cloud get an error at open, not a DNS wait at the first read).
std::optional<std::string> MetadataServerHost(
    std::string_view product_name_file = kGceProductNameFile);

// The source "metadata server": each Fetch asks the server at `host` for a
// token (blocking, SendBlocking). Any failure is kPermissionDenied naming
// the host and the settings that would avoid it (no credentials usable).
std::unique_ptr<CredentialSource> MakeGcsMetadataServerSource(std::string host);

}  // namespace sluice
