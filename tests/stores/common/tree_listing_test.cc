// ListTree over an in-memory key set whose listings take a few
// milliseconds on a real event loop: the answer equals a plain listing's,
// folders are listed concurrently within the bound, levels with few folders
// are descended, small folders fall back to one sequence, errors come back.
#include <algorithm>
#include <chrono>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <gtest/gtest.h>

#include "engine/runtime/event_loop.h"
#include "stores/common/tree_listing.h"

namespace sluice {
namespace {

namespace asio = boost::asio;
using asio::awaitable;

struct FakeBucket {
  std::set<std::string> keys;
  std::string failing_prefix = "\x01";  // a listing of it fails
  int in_flight = 0;
  int max_in_flight = 0;
  std::vector<std::string> delimited;  // the prefixes listed with '/'
  std::vector<std::string> plain;      // and without

  awaitable<Status> List(const std::string& prefix, std::vector<ObjectInfo>* objects,
                         std::vector<std::string>* sub_prefixes) {
    (sub_prefixes ? delimited : plain).push_back(prefix);
    ++in_flight;
    max_in_flight = std::max(max_in_flight, in_flight);
    asio::steady_timer timer(co_await asio::this_coro::executor, std::chrono::milliseconds(5));
    co_await timer.async_wait(asio::use_awaitable);
    --in_flight;
    if (prefix == failing_prefix) co_return IoError("listing " + prefix + " refused");
    for (const std::string& key : keys) {
      if (key.compare(0, prefix.size(), prefix) != 0) continue;
      size_t slash = key.find('/', prefix.size());
      if (sub_prefixes == nullptr || slash == std::string::npos) {
        objects->push_back({key, key.size()});
      } else if (std::string sub = key.substr(0, slash + 1);
                 sub_prefixes->empty() || sub_prefixes->back() != sub) {
        sub_prefixes->push_back(sub);
      }
    }
    co_return Status::Ok();
  }

  Result<std::vector<ObjectInfo>> ListTree(const std::string& prefix, int concurrency,
                                           size_t min_keys_per_folder = 1) {
    EventLoop loop;
    return loop.Run(sluice::ListTree(
        prefix, concurrency, min_keys_per_folder,
        [this](const std::string& p, std::vector<ObjectInfo>* objects,
               std::vector<std::string>* sub_prefixes) { return List(p, objects, sub_prefixes); }));
  }

  std::vector<std::string> KeysStartingWith(const std::string& prefix) const {
    std::vector<std::string> out;
    for (const std::string& key : keys) {
      if (key.compare(0, prefix.size(), prefix) == 0) out.push_back(key);
    }
    return out;
  }
};

std::vector<std::string> KeysOf(const Result<std::vector<ObjectInfo>>& listed) {
  std::vector<std::string> out;
  if (listed.ok()) {
    for (const ObjectInfo& object : *listed) out.push_back(object.key);
  }
  return out;
}

TEST(TreeListingTest, FoldersAreListedConcurrentlyWithinTheBound) {
  FakeBucket bucket;
  bucket.keys = {"index.txt", "readme"};
  for (int c = 0; c < 12; ++c) {
    std::string folder = "train/c" + std::to_string(c) + "/";
    for (const char* name : {"a.jpg", "b.jpg", "deep/c.jpg"}) bucket.keys.insert(folder + name);
  }
  auto listed = bucket.ListTree("", 4);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(KeysOf(listed), bucket.KeysStartingWith(""));
  // "" holds two objects and one folder, too few to fan out over: train/ is
  // listed delimited too, and its 12 class folders then 4 at once.
  EXPECT_EQ(bucket.delimited, (std::vector<std::string>{"", "train/"}));
  EXPECT_EQ(bucket.plain.size(), 12u);
  EXPECT_EQ(bucket.plain.front(), "train/c0/");
  EXPECT_EQ(bucket.max_in_flight, 4);

  FakeBucket classes = bucket;
  classes.delimited.clear();
  classes.plain.clear();
  classes.max_in_flight = 0;
  auto train = classes.ListTree("train/", 4);
  ASSERT_TRUE(train.ok()) << train.status().ToString();
  EXPECT_EQ(KeysOf(train), classes.KeysStartingWith("train/"));
  EXPECT_EQ(classes.delimited, (std::vector<std::string>{"train/"}));
  EXPECT_EQ(classes.plain.size(), 12u);  // one sequence per class folder
  EXPECT_EQ(classes.max_in_flight, 4);
}

TEST(TreeListingTest, LevelsAreDescendedUntilTheyHoldEnoughFoldersAndAPartialPrefixWorks) {
  FakeBucket bucket;
  for (const char* key : {"ds/v1/x/1", "ds/v1/y/2", "ds/v1/z", "ds/v10/w", "other"}) {
    bucket.keys.insert(key);
  }
  auto listed = bucket.ListTree("ds/", 8);
  ASSERT_TRUE(listed.ok()) << listed.status().ToString();
  EXPECT_EQ(KeysOf(listed), bucket.KeysStartingWith("ds/"));
  // Two folders, then two more below v1/: each level listed delimited.
  EXPECT_EQ(bucket.delimited, (std::vector<std::string>{"ds/", "ds/v1/", "ds/v10/", "ds/v1/x/",
                                                        "ds/v1/y/"}));
  EXPECT_TRUE(bucket.plain.empty());

  FakeBucket chain;
  chain.keys = {"a/b/c/1/f", "a/b/c/2/g", "a/b/c/2/h"};
  auto deep = chain.ListTree("a", 8);
  ASSERT_TRUE(deep.ok()) << deep.status().ToString();
  EXPECT_EQ(KeysOf(deep), chain.KeysStartingWith("a"));
  EXPECT_EQ(chain.delimited, (std::vector<std::string>{"a", "a/", "a/b/", "a/b/c/"}));
  std::sort(chain.plain.begin(), chain.plain.end());
  EXPECT_EQ(chain.plain, (std::vector<std::string>{"a/b/c/1/", "a/b/c/2/"}));

  FakeBucket partial;
  partial.keys = {"p/q1/a", "p/q2/b", "p/qr", "p/r/c"};
  auto q = partial.ListTree("p/q", 8);
  EXPECT_EQ(KeysOf(q), (std::vector<std::string>{"p/q1/a", "p/q2/b", "p/qr"}));
}

TEST(TreeListingTest, AFlatFolderOrSmallFoldersAreOneSequence) {
  FakeBucket flat;
  for (int i = 0; i < 50; ++i) flat.keys.insert("f" + std::to_string(i));
  auto listed = flat.ListTree("", 8);
  EXPECT_EQ(KeysOf(listed), flat.KeysStartingWith(""));
  EXPECT_EQ(flat.delimited.size(), 1u);
  EXPECT_TRUE(flat.plain.empty());

  FakeBucket small;  // folders of 3 keys, fewer than 4
  for (int i = 0; i < 30; ++i) {
    for (const char* name : {"/x", "/y", "/z/w"}) small.keys.insert("d" + std::to_string(i) + name);
  }
  small.keys.insert("top");
  auto all = small.ListTree("", 8, 4);
  EXPECT_EQ(KeysOf(all), small.KeysStartingWith(""));
  EXPECT_EQ(small.delimited, (std::vector<std::string>{""}));
  EXPECT_EQ(small.plain, (std::vector<std::string>{"d0/", ""}));  // the first folder, then all
  FakeBucket big = small;  // the same folders of 3 keys, 3 or more wanted
  big.delimited.clear();
  big.plain.clear();
  auto fanned = big.ListTree("", 8, 3);
  EXPECT_EQ(KeysOf(fanned), big.KeysStartingWith(""));
  EXPECT_EQ(big.plain.size(), 30u);
  EXPECT_EQ(big.max_in_flight, 8);
}

TEST(TreeListingTest, TheFirstErrorIsReturned) {
  FakeBucket bucket;
  for (int c = 0; c < 6; ++c) bucket.keys.insert("c" + std::to_string(c) + "/x");
  bucket.failing_prefix = "c3/";
  auto listed = bucket.ListTree("", 2);
  EXPECT_EQ(listed.status().code(), StatusCode::kIoError);
  EXPECT_NE(listed.status().message().find("listing c3/ refused"), std::string::npos);
  FakeBucket root;
  root.keys = {"a"};
  root.failing_prefix = "";
  EXPECT_EQ(root.ListTree("", 2).status().code(), StatusCode::kIoError);
}

}  // namespace
}  // namespace sluice
