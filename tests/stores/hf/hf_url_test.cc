// hf:// URLs parsed as huggingface_hub's parse_hf_uri does (stores/hf/hf_url.h).
#include "stores/hf/hf_url.h"

#include <gtest/gtest.h>

#include "stores/hf/hf_store.h"

namespace sluice {
namespace {

HfRepoPath Parse(const char* url) {
  auto got = ParseHfUrl(url);
  EXPECT_TRUE(got.ok()) << url << ": " << got.status().ToString();
  return got.ok() ? *got : HfRepoPath{};
}

TEST(HfUrlTest, TypeRepositoryRevisionAndPath) {
  HfRepoPath p = Parse("hf://datasets/org/name@v1.0/data/train/");
  EXPECT_EQ(p.repo_type, "dataset");
  EXPECT_EQ(p.repo_id, "org/name");
  EXPECT_EQ(p.revision, "v1.0");
  EXPECT_EQ(p.path, "data/train");
  EXPECT_EQ(p.UrlPrefix(), "datasets/");
  p = Parse("hf://org/model");
  EXPECT_EQ(p.repo_type, "model");
  EXPECT_EQ(p.revision, "main");
  EXPECT_EQ(p.path, "");
  EXPECT_EQ(p.UrlPrefix(), "");
  p = Parse("hf://models/org/model/sub/x.bin");
  EXPECT_EQ(p.repo_type, "model");
  EXPECT_EQ(p.repo_id, "org/model");
  EXPECT_EQ(p.path, "sub/x.bin");
  EXPECT_EQ(Parse("hf://spaces/org/app").UrlPrefix(), "spaces/");
}

TEST(HfUrlTest, SpecialRefsWithOrWithoutTheirSlashesEncoded) {
  HfRepoPath p = Parse("hf://datasets/org/name@refs/convert/parquet/default/train");
  EXPECT_EQ(p.revision, "refs/convert/parquet");
  EXPECT_EQ(p.path, "default/train");
  p = Parse("hf://datasets/org/name@refs%2Fconvert%2Fparquet/default");
  EXPECT_EQ(p.revision, "refs/convert/parquet");
  EXPECT_EQ(p.path, "default");
  p = Parse("hf://datasets/org/name@refs/pr/12");
  EXPECT_EQ(p.revision, "refs/pr/12");
  EXPECT_EQ(p.path, "");
  // An '@' past ORG/NAME is part of a file name.
  p = Parse("hf://datasets/org/name/dir/file@1.txt");
  EXPECT_EQ(p.revision, "main");
  EXPECT_EQ(p.path, "dir/file@1.txt");
}

TEST(HfUrlTest, MalformedUrlsSayWhy) {
  auto s = ParseHfUrl("hf://datasets/onlyorg").status();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "malformed Hugging Face URL 'hf://datasets/onlyorg': the repository must be ORG/NAME "
            "(expected hf://[datasets/|spaces/|models/]ORG/NAME[@REVISION][/PATH])");
  EXPECT_EQ(ParseHfUrl("hf://datasets/o/n@/x").status().message(),
            "malformed Hugging Face URL 'hf://datasets/o/n@/x': empty revision after '@' "
            "(expected hf://[datasets/|spaces/|models/]ORG/NAME[@REVISION][/PATH])");
  EXPECT_EQ(ParseHfUrl("hf://datasets/o/n/../x").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHfUrl("hf://datasets/o/n?x=1").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseHfUrl("hf://buckets/o/n").status().code(), StatusCode::kUnimplemented);
}

TEST(HfUrlTest, NextPageLinkFindsRelNext) {
  EXPECT_EQ(NextPageLink("<https://huggingface.co/api/datasets/o/n/tree/main?cursor=abc>; rel=\"next\""),
            "https://huggingface.co/api/datasets/o/n/tree/main?cursor=abc");
  EXPECT_EQ(NextPageLink("<http://a/1>; rel=\"prev\", <http://a/3>; rel=\"next\""), "http://a/3");
  EXPECT_EQ(NextPageLink("<http://a/1>; rel=\"prev\""), "");
  EXPECT_EQ(NextPageLink(""), "");
  EXPECT_EQ(NextPageLink("<http://a/1"), "");
}

}  // namespace
}  // namespace sluice
