#include "io/raw_tensor.h"

#include <gtest/gtest.h>

#include "io/io_test_util.h"

namespace kiln::io {
namespace {

using testing::ScratchDir;

TEST(RawTensor, ReadsNativeBytes) {
  ScratchDir dir;
  // 1.0f and -2.0f, little-endian as on x86.
  testing::write_bytes(dir / "in.bin", std::string("\x00\x00\x80\x3f\x00\x00\x00\xc0", 8));
  Result<Tensor> t = read_raw(dir / "in.bin", DType::kF32, {2, 1});
  ASSERT_TRUE(t.is_ok()) << t.status().to_string();
  EXPECT_EQ(t->desc(), "float32[2x1]");
  EXPECT_EQ(t->data<float>()[0], 1.0f);
  EXPECT_EQ(t->data<float>()[1], -2.0f);
}

TEST(RawTensor, RoundTripsWithWriteRaw) {
  ScratchDir dir;
  const Tensor t = Tensor::from_vector<int64_t>({3}, {-1, 0, int64_t{1} << 40});
  ASSERT_TRUE(write_raw(dir / "x.bin", t).is_ok());
  EXPECT_EQ(std::filesystem::file_size(dir / "x.bin"), 24u);
  Result<Tensor> back = read_raw(dir / "x.bin", DType::kI64, {3});
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->to_int64_vector(), t.to_int64_vector());
}

TEST(RawTensor, ReadsEmptyAndScalarTensors) {
  ScratchDir dir;
  testing::write_bytes(dir / "empty.bin", "");
  Result<Tensor> empty = read_raw(dir / "empty.bin", DType::kF16, {4, 0});
  ASSERT_TRUE(empty.is_ok()) << empty.status().to_string();
  EXPECT_EQ(empty->desc(), "float16[4x0]");
  testing::write_bytes(dir / "scalar.bin", "\x07");
  Result<Tensor> scalar = read_raw(dir / "scalar.bin", DType::kU8, {});
  ASSERT_TRUE(scalar.is_ok());
  EXPECT_EQ(scalar->value_as_int(0), 7);
}

TEST(RawTensor, SizeMismatchNamesBothByteCounts) {
  ScratchDir dir;
  testing::write_bytes(dir / "in.bin", std::string(12, '\0'));
  for (const Dims& dims : {Dims{2, 2}, Dims{2, 1}}) {
    Result<Tensor> t = read_raw(dir / "in.bin", DType::kF32, dims);
    ASSERT_FALSE(t.is_ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    const std::string expected =
        fmt::format("file is 12 bytes but float32[{}] needs exactly {} bytes", dims_to_string(dims),
                    dims_numel(dims) * 4);
    EXPECT_NE(t.status().message().find(expected), std::string::npos) << t.status().message();
    EXPECT_NE(t.status().message().find("in.bin"), std::string::npos);
  }
}

TEST(RawTensor, RejectsBadRequests) {
  ScratchDir dir;
  testing::write_bytes(dir / "in.bin", "abcd");
  EXPECT_EQ(read_raw(dir / "absent.bin", DType::kF32, {1}).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(read_raw(dir / "in.bin", DType::kF32, {-1}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(read_raw(dir / "in.bin", DType::kString, {1}).status().code(),
            StatusCode::kUnsupported);
  EXPECT_EQ(read_raw(dir.path(), DType::kU8, {4}).status().code(), StatusCode::kInvalidArgument);
}

TEST(RawTensor, NormalisesBoolBytes) {
  ScratchDir dir;
  testing::write_bytes(dir / "b.bin", std::string("\x00\x05\x01", 3));
  Result<Tensor> t = read_raw(dir / "b.bin", DType::kBool, {3});
  ASSERT_TRUE(t.is_ok());
  const auto* b = static_cast<const unsigned char*>(t->raw_data());
  EXPECT_EQ(b[0], 0);
  EXPECT_EQ(b[1], 1);
  EXPECT_EQ(b[2], 1);
}

}  // namespace
}  // namespace kiln::io
