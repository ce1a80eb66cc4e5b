#pragma once
// Helpers shared by the nn family's op tests (tests/ops/nn_*_test.cc).

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ir/graph.h"
#include "ops/infer_graph.h"
#include "testing/op_runner.h"
#include "testing/tensor_compare.h"

namespace kiln::nn_test {

using testing::OpCase;
using testing::OpInput;

inline ir::Attributes attrs(std::initializer_list<std::pair<std::string, ir::AttrValue>> list) {
  ir::Attributes a;
  for (const auto& [name, value] : list) a.set(name, value);
  return a;
}
using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

inline OpInput in(Tensor t) { return OpInput{std::move(t), false}; }
inline OpInput constant(Tensor t) { return OpInput{std::move(t), true}; }
inline OpInput absent() { return OpInput{std::nullopt, false}; }

// Runs the case and returns its outputs; a failure is a test failure (empty result).
inline std::vector<Tensor> run_ok(const OpCase& c) {
  auto r = testing::run_op(c);
  if (!r.is_ok()) {
    ADD_FAILURE() << c.op_type << " failed: " << r.status().to_string();
    return {};
  }
  return std::move(r).value();
}

// Expects `actual` to be a float32 tensor of `dims` close to `values`.
inline void expect_f32(const std::vector<Tensor>& outs, size_t i, Dims dims,
                       std::vector<float> values, double atol = 1e-5) {
  ASSERT_GT(outs.size(), i);
  const Tensor expected = testing::f32(std::move(dims), std::move(values));
  EXPECT_EQ(testing::compare_tensors(outs[i], expected, {.rtol = 1e-5, .atol = atol}), "");
}

// Expects the case to fail with `code` and a message naming the node and containing `fragment`.
using ::kiln::testing::expect_error;

// A desc with dims given as numbers or symbol names: sym(DType::kF32, {"batch", 3, 224, 224}).
inline ir::TensorDesc sym(DType t, std::vector<std::variant<int64_t, std::string>> dims) {
  ir::Shape s;
  for (auto& d : dims) {
    if (auto* v = std::get_if<int64_t>(&d)) {
      s.push_back(ir::Dim::known(*v));
    } else {
      s.push_back(ir::Dim::named(std::get<std::string>(d)));
    }
  }
  return ir::TensorDesc::of(t, std::move(s));
}

// Runs only the shape function of one node over the given descs (values may be nullptr).
inline Result<std::vector<ir::TensorDesc>> infer(const std::string& op, int opset,
                                                 const ir::Attributes& a,
                                                 std::vector<ir::TensorDesc> inputs,
                                                 std::vector<const Tensor*> values = {},
                                                 int num_outputs = 1) {
  ir::Node node;
  node.name = "node0";
  node.op_type = op;
  node.opset = opset;
  node.attrs = a;
  for (size_t i = 0; i < inputs.size(); ++i) node.inputs.push_back(static_cast<ir::ValueId>(i));
  for (int i = 0; i < num_outputs; ++i) node.outputs.push_back(static_cast<ir::ValueId>(100 + i));
  values.resize(inputs.size(), nullptr);
  std::vector<const ir::TensorDesc*> ptrs;
  for (const auto& d : inputs) ptrs.push_back(&d);
  const ops::ResolvedOp resolved = ops::resolve_op(node);
  if (resolved.def == nullptr || resolved.since_version == 0) {
    return internal_error("op {} at opset {} is not registered", op, opset);
  }
  KILN_ASSIGN_OR_RETURN(ops::NodeInference inf, ops::infer_node(node, resolved, ptrs, values));
  return inf.outputs;
}

inline std::string desc_text(const Result<std::vector<ir::TensorDesc>>& r, size_t i = 0) {
  if (!r.is_ok()) return r.status().to_string();
  return r.value()[i].to_string();
}

}  // namespace kiln::nn_test
