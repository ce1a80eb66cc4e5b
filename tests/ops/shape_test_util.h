#pragma once
// Helpers for the shape family's op tests (tests/ops/shape*_test.cc).

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ops/infer_graph.h"
#include "testing/op_runner.h"
#include "testing/tensor_compare.h"

namespace kiln::shape_test {

using testing::f32;
using testing::i64;
using testing::OpCase;
using testing::OpInput;

template <typename T>
Tensor tensor(Dims dims, std::vector<T> values) {
  return Tensor::from_vector<T>(std::move(dims), values);
}
inline Tensor i32(Dims dims, std::vector<int32_t> v) { return tensor<int32_t>(std::move(dims), v); }

inline OpInput in(Tensor t) { return OpInput{std::move(t), false}; }
inline OpInput cin(Tensor t) { return OpInput{std::move(t), true}; }  // an initializer
inline OpInput none() { return OpInput{std::nullopt, false}; }

// Runs the case and returns its outputs; fails the test (and returns {}) on an error.
inline std::vector<Tensor> run(const OpCase& c) {
  auto r = testing::run_op(c);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? *r : std::vector<Tensor>{};
}

// Output 0 of the case equals `expected` exactly (dtype, dims and values).
inline void expect_output(const OpCase& c, const Tensor& expected) {
  const std::vector<Tensor> out = run(c);
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(testing::compare_tensors(out[0], expected, {0.0, 0.0}), "");
}

// The case fails with `code` and a message naming the node and containing `fragment`.
using ::kiln::testing::expect_error;

// --- shape inference alone, on symbolic descs ---

inline ir::Dim K(int64_t v) { return ir::Dim::known(v); }
inline ir::Dim S(const char* s) { return ir::Dim::named(s); }
inline ir::Dim U() { return ir::Dim::unknown(); }
inline ir::TensorDesc desc(DType t, ir::Shape s) { return ir::TensorDesc::of(t, std::move(s)); }

struct InferCase {
  std::string op_type;
  int opset = 17;
  ir::Attributes attrs;
  std::vector<ir::TensorDesc> inputs;         // dtype kUndefined: an absent optional input
  std::vector<std::optional<Tensor>> values;  // known values (by input index)
  int num_outputs = 1;
};

inline Result<ops::NodeInference> infer(const InferCase& c) {
  ir::Node node;
  node.name = "node0";
  node.op_type = c.op_type;
  node.attrs = c.attrs;
  node.opset = c.opset;
  std::vector<const ir::TensorDesc*> descs;
  std::vector<const Tensor*> values;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const bool present = c.inputs[i].dtype != DType::kUndefined;
    node.inputs.push_back(present ? static_cast<ir::ValueId>(i) : ir::kNoValue);
    descs.push_back(&c.inputs[i]);
    values.push_back(i < c.values.size() && c.values[i] ? &*c.values[i] : nullptr);
  }
  for (int i = 0; i < c.num_outputs; ++i) node.outputs.push_back(100 + i);
  const ops::ResolvedOp op = ops::resolve_op(node);
  if (op.def == nullptr || op.since_version == 0) return internal_error("no such op in test");
  return ops::infer_node(node, op, descs, values);
}

// The inferred desc of output 0 as text, e.g. "float32[batch,150528]"; the error text on failure.
inline std::string inferred(const InferCase& c, size_t output = 0) {
  auto r = infer(c);
  if (!r.is_ok()) return r.status().to_string();
  return r->outputs[output].to_string();
}

}  // namespace kiln::shape_test
