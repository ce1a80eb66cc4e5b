#pragma once
// Small-model helpers shared by the fusion pass tests.

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ops/infer_graph.h"
#include "passes/pass_harness.h"
#include "testing/op_runner.h"

namespace kiln::testing {

// A Constant node (as torch.onnx emits for scalars) producing `output`.
inline void constant_node(OnnxBuilder& b, const std::string& output, std::vector<int64_t> dims,
                          std::vector<float> values) {
  auto& n = b.node("Constant", {}, {output}, output + "_const");
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  for (float v : values) t->add_float_data(v);
}

// Deterministic weights of mixed signs in about [-1, 1].
inline std::vector<float> weights(int64_t n, float phase = 0.0f) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    v[static_cast<size_t>(i)] = std::sin(0.7f * static_cast<float>(i) + phase);
  }
  return v;
}

// x [1, 2, 5, 5] -> Conv "conv" (3x3, pads 1, weights w [3, 2, 3, 3], bias b [3]) -> "c"
// [1, 3, 5, 5]. The caller adds what reads "c" and the outputs.
inline OnnxBuilder conv_model(int opset = 17, bool bias = true) {
  OnnxBuilder b(opset);
  b.input("x", 1, {1, 2, 5, 5});
  b.initializer("w", {3, 2, 3, 3}, weights(54));
  std::vector<std::string> inputs = {"x", "w"};
  if (bias) {
    b.initializer("b", {3}, {0.1f, -0.2f, 0.3f});
    inputs.push_back("b");
  }
  auto& conv = b.node("Conv", inputs, {"c"}, "conv");
  set_attr_ints(conv, "pads", {1, 1, 1, 1});
  return b;
}

inline std::string log_text(const passes::PassLog& log) {
  std::string s;
  for (const auto& e : log.entries()) s += e.pass + ": " + e.message + "\n";
  return s;
}

}  // namespace kiln::testing

namespace kiln::testing {

// Runs `pass_list` in order on a copy of `before`; each must succeed and leave a graph that
// verifies and passes shape inference. runs_blocked: PassContext's (null: the layout passes' rule).
inline ir::Graph run_passes(const ir::Graph& before,
                            std::initializer_list<const passes::PassDef*> pass_list,
                            passes::PassLog& log, passes::BlockedConvCheck runs_blocked = {}) {
  ir::Graph g = before;
  passes::PassContext ctx{log, nullptr, std::move(runs_blocked)};
  for (const passes::PassDef* pass : pass_list) {
    Status st = pass->run(g, ctx);
    EXPECT_TRUE(st.is_ok()) << pass->name << ": " << st.to_string();
    st = g.verify();
    if (st.is_ok()) st = ops::infer_graph_shapes(g);
    EXPECT_TRUE(st.is_ok()) << pass->name << ": " << st.to_string() << "\n" << g.dump();
  }
  return g;
}

// The node producing graph value `name`.
inline const ir::Node* producer_of(const ir::Graph& g, const std::string& name) {
  const ir::ValueId v = g.find_value(name);
  for (const ir::Node& n : g.nodes) {
    for (ir::ValueId o : n.outputs) {
      if (o == v) return &n;
    }
  }
  return nullptr;
}

}  // namespace kiln::testing
