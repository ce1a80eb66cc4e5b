#pragma once
// Helpers shared by the element-wise op tests.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "testing/op_runner.h"
#include "testing/tensor_compare.h"

namespace kiln::testing::ew {

template <typename T>
Tensor t(Dims dims, std::vector<T> values) {
  return Tensor::from_vector<T>(std::move(dims), values);
}
inline Tensor b(Dims dims, std::vector<int> values) {  // bool tensor from 0/1
  Tensor out(DType::kBool, std::move(dims));
  for (size_t i = 0; i < values.size(); ++i) out.data<bool>()[i] = values[i] != 0;
  return out;
}
inline Tensor f16(Dims dims, const std::vector<float>& values) {
  Tensor out(DType::kF16, std::move(dims));
  for (size_t i = 0; i < values.size(); ++i) out.data<Half>()[i] = Half(values[i]);
  return out;
}

inline OpCase op(std::string op_type, std::vector<Tensor> inputs, int opset = 17,
                 ir::Attributes attrs = {}) {
  OpCase c;
  c.op_type = std::move(op_type);
  c.opset = opset;
  c.attrs = std::move(attrs);
  for (Tensor& x : inputs) c.inputs.push_back({std::move(x), false});
  return c;
}

inline ir::Attributes attrs(std::vector<std::pair<std::string, ir::AttrValue>> list) {
  ir::Attributes a;
  for (auto& [name, value] : list) a.set(name, std::move(value));
  return a;
}

// Runs the case and compares output `index` with `expected` (dtype, dims and values).
inline void expect_output(const OpCase& c, const Tensor& expected, size_t index = 0,
                          Tolerance tol = {1e-5, 1e-6}) {
  auto r = run_op(c);
  ASSERT_TRUE(r.is_ok()) << c.op_type << ": " << r.status().to_string();
  ASSERT_GT(r->size(), index);
  EXPECT_EQ(compare_tensors((*r)[index], expected, tol), "") << c.op_type;
}

// Runs the case twice, once with every input a graph input and once with every input a constant
// initializer (exercising inference-time evaluation), and checks output 0 both times.
inline void expect_op(OpCase c, const Tensor& expected, Tolerance tol = {1e-5, 1e-6}) {
  expect_output(c, expected, 0, tol);
  for (OpInput& in : c.inputs) in.constant = true;
  expect_output(c, expected, 0, tol);
}

// The case fails with `code`, and the message names the node and contains `fragment`.
using ::kiln::testing::expect_error;

}  // namespace kiln::testing::ew
