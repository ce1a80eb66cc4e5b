#include "io/file_util.h"

#include <gtest/gtest.h>

#include <vector>

#include "io/io_test_util.h"

namespace kiln::io {
namespace {

using testing::read_bytes;
using testing::ScratchDir;

TEST(FileUtil, AtomicWriteOfPiecesConcatenatesThem) {
  ScratchDir dir;
  const std::vector<std::string_view> pieces = {"head", "", "-", std::string_view("\0x", 2)};
  ASSERT_TRUE(write_file_atomic(dir / "f", pieces).is_ok());
  EXPECT_EQ(read_bytes(dir / "f"), std::string("head-\0x", 7));
  ASSERT_TRUE(write_file_atomic(dir / "f", std::vector<std::string_view>{}).is_ok());
  EXPECT_EQ(read_bytes(dir / "f"), "");
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"f"});
}

TEST(FileUtil, FailedAtomicWriteLeavesNothing) {
  ScratchDir dir;
  const Status s = write_file_atomic(dir / "missing" / "f", "data");
  ASSERT_FALSE(s.is_ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find((dir / "missing").string()), std::string::npos) << s.message();
  EXPECT_TRUE(dir.entries().empty());
  EXPECT_EQ(write_file_atomic(dir.path() / "", "x").code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::io
