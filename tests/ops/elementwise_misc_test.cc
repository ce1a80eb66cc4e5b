// Clip, Cast, CastLike, Where, Identity, Dropout. Expected values are computed by hand.
#include <cmath>
#include <limits>

#include "elementwise_test_util.h"

namespace kiln::testing {
namespace elementwise_misc_test {

using namespace ew;
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

OpCase with_optional(OpCase c, size_t index) {  // leaves input `index` out
  c.inputs[index].tensor.reset();
  return c;
}

TEST(ElementwiseMisc, ClipInputs) {
  const Tensor x = t<float>({5}, {-3, -1, 0, 2, kNaN});
  const Tensor lo = t<float>({}, {-1.5f});
  const Tensor hi = t<float>({}, {1});
  expect_op(op("Clip", {x, lo, hi}, 13), t<float>({5}, {-1.5f, -1, 0, 1, kNaN}));
  expect_op(with_optional(op("Clip", {x, lo, hi}, 13), 1), t<float>({5}, {-3, -1, 0, 1, kNaN}));
  expect_op(op("Clip", {x, lo}, 13), t<float>({5}, {-1.5f, -1, 0, 2, kNaN}));
  expect_op(op("Clip", {x}, 13), x);
  // min > max: every element becomes max.
  expect_op(op("Clip", {x, t<float>({}, {2}), t<float>({}, {1})}, 13),
            t<float>({5}, {1, 1, 1, 1, kNaN}));
  // Integers from opset 12.
  expect_op(
      op("Clip", {t<int8_t>({3}, {-128, 0, 127}), t<int8_t>({}, {-5}), t<int8_t>({}, {5})}, 12),
      t<int8_t>({3}, {-5, 0, 5}));
  expect_op(op("Clip", {f16({2}, {-2, 2}), f16({}, {-1}), f16({}, {1})}, 13), f16({2}, {-1, 1}));
  expect_error(op("Clip", {t<int32_t>({1}, {1})}, 11), StatusCode::kUnsupported, "int32");
  expect_error(op("Clip", {x, t<float>({2}, {0, 1})}, 13), StatusCode::kInvalidModel, "scalar");
  expect_error(op("Clip", {x, t<double>({}, {0})}, 13), StatusCode::kInvalidModel, "dtype");
}

TEST(ElementwiseMisc, ClipAttributes) {
  const Tensor x = t<float>({3}, {-3, 0, 3});
  expect_op(op("Clip", {x}, 6, attrs({{"min", -1.0f}, {"max", 2.0f}})), t<float>({3}, {-1, 0, 2}));
  expect_op(op("Clip", {x}, 6, attrs({{"max", 2.0f}})), t<float>({3}, {-3, 0, 2}));
  expect_error(op("Clip", {x}, 13, attrs({{"min", -1.0f}})), StatusCode::kInvalidModel, "min");
}

ir::Attributes to(int64_t onnx_type) { return attrs({{"to", onnx_type}}); }

TEST(ElementwiseMisc, Cast) {
  const Tensor x = t<float>({4}, {-1.7f, 0.0f, 2.5f, 300.0f});
  expect_op(op("Cast", {x}, 13, to(6)), t<int32_t>({4}, {-1, 0, 2, 300}));
  expect_op(op("Cast", {x}, 13, to(9)), b({4}, {1, 0, 1, 1}));
  expect_op(op("Cast", {x}, 13, to(10)), f16({4}, {-1.7f, 0.0f, 2.5f, 300.0f}));
  expect_op(op("Cast", {x}, 13, to(11)), t<double>({4}, {-1.7f, 0.0f, 2.5f, 300.0f}));
  expect_op(op("Cast", {b({2}, {1, 0})}, 13, to(1)), t<float>({2}, {1, 0}));
  expect_op(op("Cast", {t<int64_t>({2}, {-1, 70000})}, 13, to(5)),
            t<int16_t>({2}, {-1, 4464}));  // 70000 mod 2^16
  expect_op(op("Cast", {f16({2}, {0.5f, -2})}, 13, to(1)), t<float>({2}, {0.5f, -2}));
  // saturate (opset 19) is accepted; it only matters for float8.
  expect_op(op("Cast", {x}, 19, attrs({{"to", int64_t{7}}, {"saturate", int64_t{0}}})),
            t<int64_t>({4}, {-1, 0, 2, 300}));
  expect_error(op("Cast", {x}, 19, to(17)), StatusCode::kUnsupported, "float8e4m3fn");
  expect_error(op("Cast", {x}, 21, to(22)), StatusCode::kUnsupported, "int4");
  expect_error(op("Cast", {x}, 13, to(8)), StatusCode::kUnsupported, "string");
  expect_error(op("Cast", {x}, 13, to(16)), StatusCode::kUnsupported, "bfloat16");
  expect_error(op("Cast", {x}, 13, to(99)), StatusCode::kInvalidModel, "99");
  expect_error(op("Cast", {x}, 13), StatusCode::kInvalidModel, "to");
}

TEST(ElementwiseMisc, CastLike) {
  expect_op(op("CastLike", {t<float>({2}, {1.9f, -1.9f}), t<int8_t>({}, {0})}, 15),
            t<int8_t>({2}, {1, -1}));
  expect_op(op("CastLike", {t<int32_t>({2}, {0, 5}), b({1}, {0})}, 15), b({2}, {0, 1}));
}

TEST(ElementwiseMisc, Where) {
  const Tensor cond = b({2, 2}, {1, 0, 0, 1});
  expect_op(op("Where", {cond, t<float>({2, 2}, {1, 2, 3, 4}), t<float>({2, 2}, {9, 8, 7, 6})}),
            t<float>({2, 2}, {1, 8, 7, 4}));
  // Three-way broadcast: [2,1] condition, [2] X, scalar Y.
  expect_op(op("Where", {b({2, 1}, {1, 0}), t<int64_t>({2}, {1, 2}), t<int64_t>({}, {-1})}),
            t<int64_t>({2, 2}, {1, 2, -1, -1}));
  expect_op(op("Where", {b({3}, {0, 1, 0}), f16({1}, {1.5f}), f16({3}, {7, 8, 9})}),
            f16({3}, {7, 1.5f, 9}));
  expect_op(op("Where", {b({2}, {1, 0}), b({2}, {0, 0}), b({2}, {1, 1})}), b({2}, {0, 1}));
  expect_op(op("Where", {b({1}, {0}), t<uint8_t>({2}, {1, 2}), t<uint8_t>({2}, {3, 4})}),
            t<uint8_t>({2}, {3, 4}));
  expect_error(op("Where", {t<float>({1}, {1}), t<float>({1}, {1}), t<float>({1}, {1})}),
               StatusCode::kUnsupported, "float32");
  expect_error(op("Where", {cond, t<float>({1}, {1}), t<double>({1}, {1})}),
               StatusCode::kInvalidModel, "dtype");
  expect_error(op("Where", {b({3}, {1, 1, 1}), t<float>({2}, {1, 2}), t<float>({1}, {1})}),
               StatusCode::kInvalidModel, "broadcast");
}

TEST(ElementwiseMisc, Identity) {
  expect_op(op("Identity", {t<int64_t>({2, 1}, {3, -4})}), t<int64_t>({2, 1}, {3, -4}));
  expect_op(op("Identity", {b({}, {1})}, 21), b({}, {1}));
}

TEST(ElementwiseMisc, Dropout) {
  const Tensor x = t<float>({2, 2}, {1, -2, 3, -4});
  expect_op(op("Dropout", {x}, 13), x);
  expect_op(op("Dropout", {x}, 7, attrs({{"ratio", 0.3f}})), x);
  // The optional mask is all true (bool from opset 10; the data's dtype in opset 7).
  OpCase with_mask = op("Dropout", {x}, 13);
  with_mask.num_outputs = 2;
  expect_output(with_mask, b({2, 2}, {1, 1, 1, 1}), 1);
  with_mask.opset = 7;
  expect_output(with_mask, t<float>({2, 2}, {1, 1, 1, 1}), 1);
  // ratio and training_mode inputs (opset 12): inference only.
  expect_op(op("Dropout", {x, t<float>({}, {0.5f}), b({}, {0})}, 12), x);
  OpCase training = op("Dropout", {x, t<float>({}, {0.5f}), b({}, {1})}, 13);
  expect_error(training, StatusCode::kUnsupported, "training");
  training.inputs[2].constant = true;  // known at import: refused by shape inference
  expect_error(training, StatusCode::kUnsupported, "training");
  expect_error(op("Dropout", {x, t<float>({}, {0.5f})}, 10), StatusCode::kInvalidModel, "1 input");
  expect_error(op("Dropout", {t<int32_t>({1}, {1})}, 13), StatusCode::kUnsupported, "int32");
}

}  // namespace elementwise_misc_test
}  // namespace kiln::testing
