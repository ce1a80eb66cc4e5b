#include "base/tensor.h"

#include <gtest/gtest.h>

namespace kiln {
namespace {

TEST(Half, RoundTripsEveryFiniteValue) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const Half h = Half::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    if (f != f) continue;  // NaN payloads are not preserved bit-exactly
    EXPECT_EQ(Half(f).bits, h.bits) << "bits " << b;
  }
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, Half(1.0f).bits);  // halfway, rounds to even
  EXPECT_EQ(static_cast<float>(Half(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(65520.0f))));
  EXPECT_EQ(static_cast<float>(Half(5.96046448e-8f)), 5.96046448e-8f);  // smallest subnormal
  EXPECT_EQ(Half(2.9e-8f).bits, 0u);
}

TEST(Tensor, CastFollowsOnnxSemantics) {
  Tensor t = Tensor::from_vector<float>({4}, {-1.7f, 0.0f, 2.5f, 3e10f});
  auto i = cast_tensor(t, DType::kI32);
  ASSERT_TRUE(i.is_ok());
  EXPECT_EQ(i->data<int32_t>()[0], -1);
  EXPECT_EQ(i->data<int32_t>()[2], 2);
  auto b = cast_tensor(t, DType::kBool);
  ASSERT_TRUE(b.is_ok());
  EXPECT_FALSE(b->data<bool>()[1]);
  EXPECT_TRUE(b->data<bool>()[0]);
}

TEST(Tensor, CheckDimsRejectsNegativeAndOverflow) {
  EXPECT_FALSE(check_dims(std::vector<int64_t>{1, -3}, DType::kF32, "x").is_ok());
  EXPECT_FALSE(
      check_dims(std::vector<int64_t>{1 << 30, 1 << 30, 1 << 30}, DType::kF32, "x").is_ok());
  EXPECT_TRUE(check_dims(std::vector<int64_t>{1, 3, 224, 224}, DType::kF32, "x").is_ok());
}

}  // namespace
}  // namespace kiln
