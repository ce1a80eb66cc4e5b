#include "testing/op_runner.h"

#include <gtest/gtest.h>

#include "ir/graph.h"
#include "ops/infer_graph.h"

namespace kiln::testing {

Result<std::vector<Tensor>> run_op(const OpCase& c) { return run_op(c, {}); }

Result<OpGraph> build_op_graph(const OpCase& c) {
  OpGraph out;
  ir::Graph& g = out.graph;
  g.opset_imports[c.domain] = c.opset;
  ir::Node node;
  node.name = "node0";
  node.op_type = c.op_type;
  node.domain = c.domain;
  node.attrs = c.attrs;
  node.opset = c.opset;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    if (!c.inputs[i].tensor) {
      node.inputs.push_back(ir::kNoValue);
      continue;
    }
    const Tensor& t = *c.inputs[i].tensor;
    const std::string name = "in" + std::to_string(i);
    const ir::ValueId v = g.add_value(name, ir::TensorDesc::of_dims(t.dtype(), t.dims()));
    if (c.inputs[i].constant) {
      g.value(v).initializer = t;
    } else {
      g.value(v).is_graph_input = true;
      g.inputs.push_back(v);
      out.feeds[name] = t;
    }
    node.inputs.push_back(v);
  }
  for (int i = 0; i < c.num_outputs; ++i) {
    const ir::ValueId v = g.add_value("out" + std::to_string(i));
    g.value(v).is_graph_output = true;
    g.outputs.push_back(v);
    node.outputs.push_back(v);
  }
  g.nodes.push_back(std::move(node));
  KILN_RETURN_IF_ERROR(ops::check_graph_ops(g));
  KILN_RETURN_IF_ERROR(ops::infer_graph_shapes(g));
  return out;
}

Result<std::vector<Tensor>> run_op(const OpCase& c, const runtime::ExecutorOptions& options) {
  KILN_ASSIGN_OR_RETURN(OpGraph og, build_op_graph(c));
  KILN_ASSIGN_OR_RETURN(auto exec, runtime::ReferenceExecutor::create(og.graph, options));
  return exec.run(og.feeds);
}

void expect_error(const OpCase& c, StatusCode code, const std::string& fragment) {
  auto r = run_op(c);
  ASSERT_FALSE(r.is_ok()) << c.op_type << " succeeded; expected an error containing '" << fragment
                          << "'";
  EXPECT_EQ(r.status().code(), code) << r.status().to_string();
  EXPECT_NE(r.status().message().find("node0"), std::string::npos) << r.status().to_string();
  EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().to_string();
}

Tensor f32(Dims dims, std::vector<float> values) {
  return Tensor::from_vector<float>(std::move(dims), values);
}
Tensor i64(Dims dims, std::vector<int64_t> values) {
  return Tensor::from_vector<int64_t>(std::move(dims), values);
}

}  // namespace kiln::testing
