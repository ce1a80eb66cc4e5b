#pragma once
// Helpers for the math op tests: shape inference on symbolic descs and short tensor builders.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ops/infer_graph.h"
#include "testing/op_runner.h"
#include "testing/tensor_compare.h"

// The tests build OpCase with designated initializers and leave defaulted fields out on purpose.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace kiln::testing::math {

// Shape inference alone for one node whose inputs are `descs` (a default TensorDesc leaves the
// input out); `values` (optional, same length) makes inputs constant. Returns the output descs.
inline Result<std::vector<ir::TensorDesc>> infer_one(
    const std::string& op_type, int opset, const ir::Attributes& attrs,
    const std::vector<ir::TensorDesc>& descs, const std::vector<std::optional<Tensor>>& values = {},
    int num_outputs = 1) {
  ir::Graph g;
  g.opset_imports[""] = opset;
  ir::Node node;
  node.name = "node0";
  node.op_type = op_type;
  node.attrs = attrs;
  node.opset = opset;
  for (size_t i = 0; i < descs.size(); ++i) {
    if (descs[i].dtype == DType::kUndefined) {
      node.inputs.push_back(ir::kNoValue);
      continue;
    }
    const ir::ValueId v = g.add_value("in" + std::to_string(i), descs[i]);
    if (i < values.size() && values[i]) {
      g.value(v).initializer = *values[i];
    } else {
      g.value(v).is_graph_input = true;
      g.inputs.push_back(v);
    }
    node.inputs.push_back(v);
  }
  for (int i = 0; i < num_outputs; ++i) {
    const ir::ValueId v = g.add_value("out" + std::to_string(i));
    g.outputs.push_back(v);
    node.outputs.push_back(v);
  }
  g.nodes.push_back(std::move(node));
  KILN_RETURN_IF_ERROR(ops::check_graph_ops(g));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(g));
  std::vector<ir::TensorDesc> out;
  for (ir::ValueId v : g.outputs) out.push_back(g.value(v).desc);
  return out;
}

inline ir::Dim sym(const char* s) { return ir::Dim::named(s); }
inline ir::Dim num(int64_t v) { return ir::Dim::known(v); }

// Expects run_op to succeed with one output equal to `expected` (within tolerance).
inline void expect_output(const OpCase& c, const Tensor& expected, size_t index = 0,
                          Tolerance tol = {1e-5, 1e-6}) {
  auto r = run_op(c);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  ASSERT_GT(r->size(), index);
  EXPECT_EQ(compare_tensors((*r)[index], expected, tol), "");
}

// Expects run_op to fail with `code` and a message naming the node and containing `fragment`.
using ::kiln::testing::expect_error;

inline OpInput in(Tensor t, bool constant = false) { return OpInput{std::move(t), constant}; }
inline OpInput absent() { return OpInput{std::nullopt, false}; }

template <typename T>
Tensor tensor(Dims dims, std::vector<T> values) {
  return Tensor::from_vector<T>(std::move(dims), values);
}

}  // namespace kiln::testing::math
