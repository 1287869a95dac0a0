// The read every Databricks credential test starts with: open a
// dbfs:/Volumes URL's store and read its index.json, which the tests'
// FakeDatabricksFiles serves as {"shards": []}. One place for it, so that
// each test says only what its credential source does differently.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string_view>

#include "engine/runtime/event_loop.h"
#include "stores/store.h"

namespace sluice::testing {

// Success when the store of `url` opens and its index.json reads back as
// {"shards": []}; else a failure naming the step and the status. `store`,
// when given, receives the open store, which the tests hold for their whole
// body as before the helper (dropping it at once changed how often their
// credential was fetched).
::testing::AssertionResult ReadsEmptyIndex(std::string_view url, EventLoop& loop,
                                           std::unique_ptr<Store>* store = nullptr);

}  // namespace sluice::testing
