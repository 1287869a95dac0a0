// sluice whoami URL: which credentials a store URL would use, and why.
#include <cstdio>

#include "bindings/cli/commands.h"
#include "bindings/cli/flags.h"
#include "stores/gcs/gcs_store.h"
#include "stores/s3/s3_store.h"
#include "stores/store.h"

namespace sluice::cli {

int RunWhoami(const Args& args) {
  auto flags = ParseFlags(args, {});
  if (!flags.ok()) return Error("whoami", flags.status(), 2);
  if (flags->positional.size() != 1) {
    std::fputs("usage: sluice whoami URL   (s3:// or gs://)\n", stderr);
    return 2;
  }
  const std::string& url = flags->positional[0];
  // The scheme by the stores' one rule; the URL itself is not echoed (its
  // query may hold a signature).
  const std::string scheme = StoreUrlScheme(url);
  if (scheme != "s3" && scheme != "gs") {
    return Error("whoami",
                 UnimplementedError("only s3:// and gs:// URLs so far, not " +
                                    (scheme.empty() ? std::string("a path") : scheme + "://")),
                 2);
  }
  auto described = scheme == "gs" ? DescribeGcsAuth(url) : DescribeS3Auth(url);
  if (!described.ok()) return Error("whoami", described.status());
  std::fputs(described->c_str(), stdout);
  return 0;
}

}  // namespace sluice::cli
