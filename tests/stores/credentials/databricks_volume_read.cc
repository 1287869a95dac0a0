#include "tests/stores/credentials/databricks_volume_read.h"

#include <string>
#include <utility>

namespace sluice::testing {

::testing::AssertionResult ReadsEmptyIndex(std::string_view url, EventLoop& loop,
                                           std::unique_ptr<Store>* store) {
  auto opened = OpenStore(url, loop.executor());
  if (!opened.ok()) {
    return ::testing::AssertionFailure() << "opening " << url << ": " << opened.status().ToString();
  }
  auto got = loop.Run((*opened)->Get("index.json"));
  if (!got.ok()) {
    return ::testing::AssertionFailure() << "reading " << url << "/index.json: "
                                         << got.status().ToString();
  }
  if (*got != "{\"shards\": []}") {
    return ::testing::AssertionFailure() << url << "/index.json is '" << *got
                                         << "', expected '{\"shards\": []}'";
  }
  if (store != nullptr) *store = std::move(*opened);
  return ::testing::AssertionSuccess();
}

}  // namespace sluice::testing
