// sluice whoami URL: which credentials a store URL would use, and why.
#include <cstdio>

#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "stores/azure/azure_store.h"
#include "stores/dbfs/dbfs_store.h"
#include "stores/gcs/gcs_store.h"
#include "stores/hf/hf_store.h"
#include "stores/oci/oci_native_store.h"
#include "stores/s3/s3_store.h"
#include "stores/store.h"

namespace sluice::cli {

int RunWhoami(const Args& args) {
  auto flags = ParseFlags(args, {});
  if (!flags.ok()) return Error("whoami", flags.status(), 2);
  if (flags->positional.size() != 1) {
    std::fputs("usage: sluice whoami URL   (s3://, gs://, azure://, azure-dl://, dbfs:/Volumes/...,\n"
               "                            hf://, oci://BUCKET@NAMESPACE)\n",
               stderr);
    return 2;
  }
  const std::string& url = flags->positional[0];
  // The scheme by the stores' one rule; the URL itself is not echoed (its
  // query may hold a signature).
  const std::string scheme = StoreUrlScheme(url);
  Result<std::string> described = std::string();
  if (scheme == "s3") {
    described = DescribeS3Auth(url);
  } else if (scheme == "oci" && WantsOciNativeApi(url)) {
    described = DescribeOciNativeAuth(url);
  } else if (scheme == "gs") {
    described = DescribeGcsAuth(url);
  } else if (scheme == "azure" || scheme == "azure-dl") {
    described = DescribeAzureAuth(url);
  } else if (scheme == "dbfs") {
    described = DescribeDbfsAuth(url);
  } else if (scheme == "hf") {
    described = DescribeHfAuth(url);
  } else {
    return Error("whoami",
                 UnimplementedError("only s3://, gs://, azure://, azure-dl://, dbfs:, hf:// and "
                                    "native-API oci:// URLs so far, not " +
                                    (scheme.empty() ? std::string("a path") : scheme + "://")),
                 2);
  }
  if (!described.ok()) return Error("whoami", described.status());
  std::fputs(described->c_str(), stdout);
  return 0;
}

}  // namespace sluice::cli
