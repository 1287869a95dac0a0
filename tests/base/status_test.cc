#include "base/status.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

Result<int> Half(int x) {
  if (x % 2 != 0) return InvalidArgumentError("odd value " + std::to_string(x));
  return x / 2;
}

Result<int> Quarter(int x) {
  SLUICE_ASSIGN_OR_RETURN(int h, Half(x));
  SLUICE_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckQuarter(int x) {
  SLUICE_RETURN_IF_ERROR(Quarter(x).status());
  return Status::Ok();
}

TEST(StatusTest, OkAndErrorText) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "ok");
  Status s = CorruptError("shard.00001.mds: offset 9 past end");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kCorrupt);
  EXPECT_EQ(s.ToString(), "corrupt: shard.00001.mds: offset 9 past end");
  EXPECT_EQ(s.WithContext("dataset /d").ToString(),
            "corrupt: dataset /d: shard.00001.mds: offset 9 past end");
  EXPECT_TRUE(Status::Ok().WithContext("x").ok());
}

TEST(StatusTest, AMarkSurvivesContextAndNeverMarksOk) {
  Status s = CorruptError("x: the object is 9 bytes").WithMark(StatusMark::kSourceChanged);
  EXPECT_EQ(s.mark(), StatusMark::kSourceChanged);
  EXPECT_EQ(s.WithContext("shard 3").mark(), StatusMark::kSourceChanged);
  EXPECT_EQ(s.WithContext("shard 3").ToString(), "corrupt: shard 3: x: the object is 9 bytes");
  EXPECT_EQ(CorruptError("x").mark(), StatusMark::kNone);
  EXPECT_EQ(Status::Ok().WithMark(StatusMark::kSourceChanged).mark(), StatusMark::kNone);
  Status errno_kept = Status(StatusCode::kIoError, "open", 2).WithMark(StatusMark::kSourceChanged);
  EXPECT_EQ(errno_kept.WithContext("f").os_error(), 2);
}

TEST(StatusTest, ResultPropagation) {
  EXPECT_EQ(*Quarter(12), 3);
  Result<int> r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "odd value 3");
  EXPECT_TRUE(CheckQuarter(8).ok());
  EXPECT_EQ(CheckQuarter(2).message(), "odd value 1");
}

}  // namespace
}  // namespace sluice
