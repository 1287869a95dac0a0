// The check every HTTP store's GetRangeOnly passes (Store::GetRangeOnly,
// SendRangedGet): through a FaultProxy in front of the store's server, a
// first answer that is a 200 (a server ignoring Range) whose 64 MiB body
// never comes ends at its head with kUnimplemented (reading the body would
// wait for the store's read_timeout), and the next request reaches the
// server and gets the range's exact bytes. Header-only; test thread only.
#pragma once

#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "engine/runtime/event_loop.h"
#include "stores/store.h"
#include "tests/stores/http/fault_proxy.h"

namespace sluice::testing {

// `store` reaches its server through `proxy` and must have been opened with
// a read_timeout_s of 30 s (waiting for the body would take that; the bound
// is 10 s, room for a slow sanitizer build); object `key` holds `data`
// (over 1008 bytes).
inline void ExpectGetRangeOnlyStopsAtTheHeadOfA200(EventLoop& loop, Store& store,
                                                   FaultProxy& proxy, const std::string& key,
                                                   const std::string& data) {
  ASSERT_GT(data.size(), 1008u);
  proxy.Schedule({Fault::RawThenDrop("HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n" +
                                     data.substr(0, 1000))});
  const auto start = std::chrono::steady_clock::now();
  auto whole = loop.Run(store.GetRangeOnly(key, 1000, 8));
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(whole.status().code(), StatusCode::kUnimplemented) << whole.status().ToString();
  EXPECT_NE(whole.status().message().find(
                key + ": the server ignored Range (200, the whole object) for bytes 1000..1008; "
                      "not read"),
            std::string::npos)
      << whole.status().ToString();
  EXPECT_LT(took, std::chrono::seconds(10));  // not the 30 s of reading the body
  EXPECT_EQ(proxy.connections(), 1);

  auto ranged = loop.Run(store.GetRangeOnly(key, 1000, 8));
  ASSERT_TRUE(ranged.ok()) << ranged.status().ToString();
  EXPECT_TRUE(*ranged == data.substr(1000, 8));
  EXPECT_EQ(proxy.connections(), 2);
}

}  // namespace sluice::testing
