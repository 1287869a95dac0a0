// Mosaic's errors keep their Python type at the very start of the message,
// where bindings read it; other errors get their context as usual.
#include "engine/planner/mosaic_error.h"

#include <gtest/gtest.h>

namespace sluice::planner {
namespace {

TEST(MosaicError, TypeStartsTheMessage) {
  Status s = MosaicError("RuntimeError", "No `remote` provided", StatusCode::kNotFound);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "RuntimeError: No `remote` provided");
  EXPECT_EQ(MosaicValueError("bad").ToString(), "invalid argument: ValueError: bad");
}

TEST(MosaicError, RecognisedOnlyAtTheStart) {
  EXPECT_TRUE(IsMosaicError(MosaicValueError("x")));
  EXPECT_TRUE(IsMosaicError(MosaicKeyError("name")));
  EXPECT_FALSE(IsMosaicError(MosaicValueError("x").WithContext("stream 0")));
  EXPECT_FALSE(IsMosaicError(NotFoundError("/data/a: ValueError: b/shard: missing")));
  EXPECT_FALSE(IsMosaicError(InvalidArgumentError("ValueError:no space")));
  EXPECT_TRUE(IsMosaicError(InvalidArgumentError("ValueError: ")));  // an empty text
  EXPECT_FALSE(IsMosaicError(InvalidArgumentError("shard: 3 is bad")));
}

TEST(MosaicError, ContextOnlyForOtherErrors) {
  EXPECT_EQ(WithContextUnlessMosaic(MosaicValueError("x"), "stream 0").message(), "ValueError: x");
  EXPECT_EQ(WithContextUnlessMosaic(IoError("disk"), "stream 0").message(), "stream 0: disk");
  EXPECT_TRUE(WithContextUnlessMosaic(Status::Ok(), "stream 0").ok());
}

}  // namespace
}  // namespace sluice::planner
