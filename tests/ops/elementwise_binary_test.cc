// Broadcasting element-wise ops with two or more inputs. Expected values are computed by hand.
#include <cmath>
#include <limits>

#include "elementwise_test_util.h"
#include "ir/graph.h"
#include "ops/infer_graph.h"

namespace kiln::testing {
namespace {

using namespace ew;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr int32_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int32_t kI32Max = std::numeric_limits<int32_t>::max();

TEST(ElementwiseBinary, ArithmeticBroadcasts) {
  const Tensor a = t<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_op(op("Add", {a, t<float>({3}, {10, 20, 30})}),
            t<float>({2, 3}, {11, 22, 33, 14, 25, 36}));
  expect_op(op("Sub", {a, t<float>({2, 1}, {1, 2})}), t<float>({2, 3}, {0, 1, 2, 2, 3, 4}));
  expect_op(op("Mul", {t<float>({}, {2}), a}), t<float>({2, 3}, {2, 4, 6, 8, 10, 12}));
  expect_op(op("Div", {a, t<float>({1, 1}, {2})}), t<float>({2, 3}, {0.5, 1, 1.5, 2, 2.5, 3}));
  // [2,1] op [1,3] -> [2,3]
  expect_op(op("Add", {t<float>({2, 1}, {1, 2}), t<float>({1, 3}, {10, 20, 30})}),
            t<float>({2, 3}, {11, 21, 31, 12, 22, 32}));
  // Rank-3 broadcast in the middle axis.
  expect_op(op("Mul", {t<float>({2, 1, 2}, {1, 2, 3, 4}), t<float>({3, 1}, {1, 10, 100})}),
            t<float>({2, 3, 2}, {1, 2, 10, 20, 100, 200, 3, 4, 30, 40, 300, 400}));
  expect_op(op("Add", {f16({2}, {1.5f, 2.0f}), f16({1}, {0.25f})}), f16({2}, {1.75f, 2.25f}));
  expect_op(op("Sub", {t<double>({2}, {1, 2}), t<double>({2}, {0.5, 4})}),
            t<double>({2}, {0.5, -2}));
  expect_op(op("Add", {t<float>({0, 3}, {}), t<float>({3}, {1, 2, 3})}), t<float>({0, 3}, {}));
}

TEST(ElementwiseBinary, IntegerArithmeticIsWellDefined) {
  expect_op(op("Add", {t<int32_t>({2}, {kI32Max, -5}), t<int32_t>({2}, {1, 3})}),
            t<int32_t>({2}, {kI32Min, -2}));  // wraps
  expect_op(op("Mul", {t<uint8_t>({2}, {16, 3}), t<uint8_t>({2}, {17, 5})}),
            t<uint8_t>({2}, {16, 15}));  // 272 mod 256
  expect_op(op("Mul", {t<uint16_t>({1}, {65535}), t<uint16_t>({1}, {65535})}),
            t<uint16_t>({1}, {1}));  // (2^16-1)^2 mod 2^16
  // Division truncates toward zero; x / 0 = 0; INT_MIN / -1 wraps to INT_MIN.
  expect_op(
      op("Div", {t<int32_t>({5}, {-7, 7, 7, kI32Min, 9}), t<int32_t>({5}, {2, -2, 0, -1, 3})}),
      t<int32_t>({5}, {-3, -3, 0, kI32Min, 3}));
  expect_op(op("Div", {t<float>({2}, {1, -1}), t<float>({2}, {0, 0})}),
            t<float>({2}, {kInf, -kInf}));
}

TEST(ElementwiseBinary, Mod) {
  const Tensor a = t<int32_t>({5}, {-7, 7, -7, 5, kI32Min});
  const Tensor m = t<int32_t>({5}, {3, -3, -3, 0, -1});
  // fmod=0: sign of the divisor (Python %); x mod 0 = 0; INT_MIN mod -1 = 0.
  expect_op(op("Mod", {a, m}), t<int32_t>({5}, {2, -2, -1, 0, 0}));
  // fmod=1: sign of the dividend (C %).
  expect_op(op("Mod", {a, m}, 17, attrs({{"fmod", int64_t{1}}})),
            t<int32_t>({5}, {-1, 1, -1, 0, 0}));
  expect_op(op("Mod", {t<float>({2}, {-7.5f, 7.5f}), t<float>({1}, {2.0f})}, 17,
               attrs({{"fmod", int64_t{1}}})),
            t<float>({2}, {-1.5f, 1.5f}));
  expect_op(op("Mod", {t<uint8_t>({2}, {200, 7}), t<uint8_t>({2}, {7, 0})}),
            t<uint8_t>({2}, {4, 0}));
  expect_error(op("Mod", {t<float>({1}, {1}), t<float>({1}, {1})}), StatusCode::kInvalidModel,
               "fmod");
  expect_error(op("Mod", {a, m}, 17, attrs({{"fmod", int64_t{2}}})), StatusCode::kInvalidModel,
               "fmod");
}

TEST(ElementwiseBinary, Pow) {
  expect_op(op("Pow", {t<float>({3}, {2, 4, -2}), t<float>({3}, {3, 0.5f, 2})}),
            t<float>({3}, {8, 2, 4}));
  expect_op(op("Pow", {t<float>({2}, {2, 3}), t<float>({}, {2})}), t<float>({2}, {4, 9}));
  // Mixed dtypes from opset 12.
  expect_op(op("Pow", {t<float>({2}, {2, 0.5f}), t<int64_t>({2}, {-1, 2})}, 12),
            t<float>({2}, {0.5f, 0.25f}));
  expect_op(op("Pow", {t<int32_t>({2}, {2, 9}), t<float>({2}, {0.5f, 0.5f})}, 12),
            t<int32_t>({2}, {1, 3}));  // 1.414 truncates to 1
  // Integer exponents are exact; negative exponents give the truncated reciprocal.
  expect_op(
      op("Pow", {t<int64_t>({6}, {2, 3, 2, 1, -1, 0}), t<int64_t>({6}, {40, 3, -1, -5, -3, -1})}),
      t<int64_t>({6}, {int64_t{1} << 40, 27, 0, 1, -1, 0}));
  expect_op(op("Pow", {t<int32_t>({1}, {2}), t<int32_t>({1}, {32})}),
            t<int32_t>({1}, {0}));  // wraps
  // Before opset 12 the exponent must have the base's dtype.
  expect_error(op("Pow", {t<float>({1}, {2}), t<double>({1}, {2})}, 11), StatusCode::kInvalidModel,
               "dtype");
  expect_error(op("Pow", {t<float>({1}, {2}), t<int64_t>({1}, {2})}, 11), StatusCode::kUnsupported,
               "int64");
}

TEST(ElementwiseBinary, BitShift) {
  const Tensor x = t<uint8_t>({4}, {1, 255, 16, 3});
  const Tensor s = t<uint8_t>({4}, {3, 1, 4, 8});
  expect_op(op("BitShift", {x, s}, 17, attrs({{"direction", std::string("LEFT")}})),
            t<uint8_t>({4}, {8, 254, 0, 0}));
  expect_op(op("BitShift", {x, s}, 17, attrs({{"direction", std::string("RIGHT")}})),
            t<uint8_t>({4}, {0, 127, 1, 0}));
  expect_op(op("BitShift", {t<uint64_t>({1}, {1}), t<uint64_t>({1}, {63})}, 17,
               attrs({{"direction", std::string("LEFT")}})),
            t<uint64_t>({1}, {uint64_t{1} << 63}));
  expect_error(op("BitShift", {x, s}, 17, attrs({{"direction", std::string("UP")}})),
               StatusCode::kInvalidModel, "direction");
  expect_error(op("BitShift", {t<int32_t>({1}, {1}), t<int32_t>({1}, {1})}, 17,
                  attrs({{"direction", std::string("LEFT")}})),
               StatusCode::kUnsupported, "int32");
}

TEST(ElementwiseBinary, PRelu) {
  expect_op(op("PRelu", {t<float>({2, 2}, {-1, 2, -3, 4}), t<float>({2}, {0.5f, 0.25f})}),
            t<float>({2, 2}, {-0.5f, 2, -1.5f, 4}));
  expect_op(op("PRelu", {t<int32_t>({3}, {-4, 0, 4}), t<int32_t>({}, {3})}, 9),
            t<int32_t>({3}, {-12, 0, 4}));
  // Unidirectional: the slope may not grow X.
  expect_error(op("PRelu", {t<float>({2}, {1, 2}), t<float>({3, 2}, {1, 2, 3, 4, 5, 6})}),
               StatusCode::kInvalidModel, "slope");
  expect_error(op("PRelu", {t<float>({1, 2}, {1, 2}), t<float>({3, 2}, {1, 2, 3, 4, 5, 6})}),
               StatusCode::kInvalidModel, "slope");
  // Opset 6: a 1-D slope applies per channel (axis 1).
  expect_op(op("PRelu", {t<float>({1, 2, 2}, {-1, -1, -1, -1}), t<float>({2}, {0.5f, 2})}, 6),
            t<float>({1, 2, 2}, {-0.5f, -0.5f, -2, -2}));
}

TEST(ElementwiseBinary, LegacyBroadcast) {
  const Tensor a = t<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  // broadcast=1, axis=0: B lines up with A's first axis.
  expect_op(op("Add", {a, t<float>({2}, {10, 20})}, 6,
               attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{0}}})),
            t<float>({2, 3}, {11, 12, 13, 24, 25, 26}));
  // Without axis B is right-aligned.
  expect_op(op("Mul", {a, t<float>({3}, {1, 0, -1})}, 6, attrs({{"broadcast", int64_t{1}}})),
            t<float>({2, 3}, {1, 0, -3, 4, 0, -6}));
  expect_error(op("Add", {a, t<float>({3}, {1, 2, 3})}, 6), StatusCode::kInvalidModel, "broadcast");
  expect_error(op("Add", {a, t<float>({2}, {1, 2})}, 6,
                  attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{1}}})),
               StatusCode::kInvalidModel, "axis");
  expect_op(op("Equal", {t<int32_t>({2, 2}, {1, 2, 3, 4}), t<int32_t>({2}, {1, 4})}, 1,
               attrs({{"broadcast", int64_t{1}}})),
            b({2, 2}, {1, 0, 0, 1}));
}

TEST(ElementwiseBinary, InvalidInputs) {
  expect_error(op("Add", {t<float>({2, 3}, {1, 2, 3, 4, 5, 6}), t<float>({4}, {1, 2, 3, 4})}),
               StatusCode::kInvalidModel, "broadcast");
  expect_error(op("Add", {t<float>({1}, {1}), t<int32_t>({1}, {1})}), StatusCode::kInvalidModel,
               "dtype");
  expect_error(op("Mul", {b({1}, {1}), b({1}, {1})}), StatusCode::kUnsupported, "bool");
}

TEST(ElementwiseBinary, Variadic) {
  const Tensor x = t<float>({2, 2}, {1, 5, -3, 0});
  const Tensor y = t<float>({2}, {2, -1});
  const Tensor z = t<float>({}, {4});
  expect_op(op("Max", {x, y, z}), t<float>({2, 2}, {4, 5, 4, 4}));
  expect_op(op("Min", {x, y, z}), t<float>({2, 2}, {1, -1, -3, -1}));
  expect_op(op("Sum", {x, y, z}), t<float>({2, 2}, {7, 8, 3, 3}));
  expect_op(op("Mean", {x, y, z}), t<float>({2, 2}, {7.0f / 3, 8.0f / 3, 1, 1}));
  expect_op(op("Sum", {x}), x);
  expect_op(op("Max", {t<float>({2}, {kNaN, 1}), t<float>({2}, {1, 2})}), t<float>({2}, {kNaN, 2}));
  expect_op(op("Max", {t<int64_t>({2}, {-5, 7}), t<int64_t>({1}, {0})}, 12),
            t<int64_t>({2}, {0, 7}));
  expect_op(op("Mean", {f16({2}, {1, 2}), f16({2}, {2, 5})}), f16({2}, {1.5f, 3.5f}));
  expect_error(op("Max", {t<int64_t>({1}, {1})}, 11), StatusCode::kUnsupported, "int64");
  expect_error(op("Sum", {t<int32_t>({1}, {1})}), StatusCode::kUnsupported, "int32");
  expect_error(op("Min", {x, t<double>({1}, {1})}), StatusCode::kInvalidModel, "dtype");
  expect_error(op("Sum", {x, t<float>({3}, {1, 2, 3})}), StatusCode::kInvalidModel, "broadcast");
}

TEST(ElementwiseBinary, Comparisons) {
  const Tensor a = t<int32_t>({2, 2}, {1, 2, 3, 4});
  const Tensor c = t<int32_t>({2}, {2, 3});
  expect_op(op("Equal", {a, c}), b({2, 2}, {0, 0, 0, 0}));
  expect_op(op("Equal", {a, t<int32_t>({2, 1}, {2, 3})}), b({2, 2}, {0, 1, 1, 0}));
  expect_op(op("Less", {a, c}), b({2, 2}, {1, 1, 0, 0}));
  expect_op(op("Greater", {a, c}), b({2, 2}, {0, 0, 1, 1}));
  expect_op(op("LessOrEqual", {a, c}), b({2, 2}, {1, 1, 0, 0}));
  expect_op(op("GreaterOrEqual", {a, c}), b({2, 2}, {0, 0, 1, 1}));
  expect_op(op("LessOrEqual", {t<float>({3}, {1, 2, kNaN}), t<float>({}, {2})}), b({3}, {1, 1, 0}));
  expect_op(op("Equal", {b({3}, {1, 0, 1}), b({1}, {1})}), b({3}, {1, 0, 1}));
  expect_op(op("Equal", {f16({2}, {0.5f, 1}), f16({2}, {0.5f, 2})}), b({2}, {1, 0}));
  expect_error(op("Less", {b({1}, {1}), b({1}, {0})}), StatusCode::kUnsupported, "bool");
  expect_error(op("Equal", {a, t<int64_t>({1}, {1})}), StatusCode::kInvalidModel, "dtype");
}

TEST(ElementwiseBinary, Logic) {
  const Tensor p = b({2, 2}, {0, 0, 1, 1});
  const Tensor q = b({2}, {0, 1});
  expect_op(op("And", {p, q}), b({2, 2}, {0, 0, 0, 1}));
  expect_op(op("Or", {p, q}), b({2, 2}, {0, 1, 1, 1}));
  expect_op(op("Xor", {p, q}), b({2, 2}, {0, 1, 1, 0}));
  expect_error(op("And", {p, t<int32_t>({1}, {1})}), StatusCode::kUnsupported, "int32");
}

// Shape inference keeps symbolic dims and copes with unknown ranks.
TEST(ElementwiseBinary, SymbolicShapeInference) {
  ir::Graph g;
  g.opset_imports[""] = 17;
  const ir::ValueId x = g.add_value(
      "x", ir::TensorDesc::of(DType::kF32, {ir::Dim::named("batch"), ir::Dim::known(1)}));
  const ir::ValueId y = g.add_value("y", ir::TensorDesc::of_dims(DType::kF32, {3}));
  const ir::ValueId u = g.add_value("u", ir::TensorDesc::unknown_shape(DType::kF32));
  const ir::ValueId out = g.add_value("out");
  const ir::ValueId out2 = g.add_value("out2");
  for (ir::ValueId v : {x, y, u}) {
    g.value(v).is_graph_input = true;
    g.inputs.push_back(v);
  }
  g.nodes.push_back({"add", "Add", "", {x, y}, {out}, {}, 17});
  g.nodes.push_back({"less", "Less", "", {out, u}, {out2}, {}, 17});
  g.outputs = {out, out2};
  ASSERT_TRUE(ops::infer_graph_shapes(g).is_ok());
  EXPECT_EQ(g.value(out).desc.to_string(), "float32[batch,3]");
  EXPECT_EQ(g.value(out2).desc.dtype, DType::kBool);
  EXPECT_FALSE(g.value(out2).desc.has_rank());
}

}  // namespace
}  // namespace kiln::testing
