// CredentialChain: order, what each source said, stop at a broken source.
#include "stores/credentials/credential_chain.h"

#include <gtest/gtest.h>

#include "tests/stores/credentials/fake_credential_source.h"

namespace sluice {
namespace {

using testing::NumberedCredential;
using testing::ScriptedSource;

std::unique_ptr<CredentialSource> Absent(const std::string& name, const std::string& why) {
  return std::make_unique<ScriptedSource>(
      name, [why](int, int64_t) -> Result<Credential> { return NotFoundError(why); });
}

std::unique_ptr<CredentialSource> Gives(const std::string& name) {
  return std::make_unique<ScriptedSource>(name,
                                          [name](int call, int64_t now) -> Result<Credential> {
                                            return NumberedCredential("", call, now, -1);
                                          });
}

TEST(CredentialChainTest, FirstSourceThatAppliesWinsAndLaterOnesAreNotAsked) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(Absent("one", "ONE not set"));
  sources.push_back(Gives("two"));
  auto* three = new ScriptedSource(
      "three", [](int, int64_t) -> Result<Credential> { return NotFoundError("never asked"); });
  sources.emplace_back(three);
  CredentialChain chain("test credentials", std::move(sources));
  auto got = chain.Fetch(100);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->source, "two");  // a source that names none gets its own name
  EXPECT_EQ(got->keys.access_key_id, "key-1");
  EXPECT_EQ(three->calls(), 0);
  EXPECT_EQ(chain.DescribeAttempts(), "one (ONE not set), two (used)");
}

TEST(CredentialChainTest, NoneAppliesListsEverySourceInOrder) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(Absent("one", "ONE not set"));
  sources.push_back(Absent("two", "no file"));
  CredentialChain chain("test credentials", std::move(sources));
  auto got = chain.Fetch(0);
  EXPECT_EQ(got.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(got.status().message(),
            "no test credentials found; tried: one (ONE not set), two (no file)");
  ASSERT_EQ(chain.attempts().size(), 2u);
  EXPECT_EQ(chain.attempts()[1].source, "two");
}

TEST(CredentialChainTest, BrokenSourceStopsTheChainAndSaysWhatWasTriedBefore) {
  std::vector<std::unique_ptr<CredentialSource>> sources;
  sources.push_back(Absent("one", "ONE not set"));
  sources.push_back(std::make_unique<ScriptedSource>("two", [](int, int64_t) -> Result<Credential> {
    return PermissionDeniedError("the token file is empty");
  }));
  sources.push_back(Gives("three"));
  CredentialChain chain("test credentials", std::move(sources));
  auto got = chain.Fetch(0);
  EXPECT_EQ(got.status().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(got.status().message(),
            "two: the token file is empty (tried before: one (ONE not set))");
}

}  // namespace
}  // namespace sluice
