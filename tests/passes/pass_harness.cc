#include "passes/pass_harness.h"

#include <gtest/gtest.h>

#include "frontend/onnx/importer.h"
#include "io/random_input.h"
#include "ops/infer_graph.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {

ir::Graph import_model(const OnnxBuilder& builder) {
  Result<ir::Graph> graph = frontend::import_onnx_bytes(builder.bytes(), ".");
  EXPECT_TRUE(graph.is_ok()) << graph.status().to_string();
  return graph.is_ok() ? std::move(graph).value() : ir::Graph{};
}

PassResult run_pass(const OnnxBuilder& builder, const passes::PassDef& pass) {
  PassResult r;
  r.before = import_model(builder);
  r.after = r.before;
  passes::PassContext ctx{r.log};
  Status st = pass.run(r.after, ctx);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  st = r.after.verify();
  EXPECT_TRUE(st.is_ok()) << st.to_string() << "\n" << r.after.dump();
  st = ops::infer_graph_shapes(r.after);
  EXPECT_TRUE(st.is_ok()) << st.to_string() << "\n" << r.after.dump();
  return r;
}

std::vector<std::string> op_types(const ir::Graph& graph) {
  std::vector<std::string> out;
  for (const ir::Node& n : graph.nodes) {
    out.push_back(n.domain.empty() ? n.op_type : n.domain + "." + n.op_type);
  }
  return out;
}

void expect_same_outputs(const ir::Graph& before, const ir::Graph& after,
                         runtime::NamedTensors inputs, Tolerance tol) {
  uint64_t seed = 1;
  for (ir::ValueId v : before.inputs) {
    const ir::Value& in = before.value(v);
    if (inputs.count(in.name) || in.initializer) continue;
    ASSERT_TRUE(in.desc.is_static()) << "give a value for dynamic input " << in.name;
    Result<Tensor> t = io::random_tensor(in.desc.dtype, in.desc.static_dims(), seed++);
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    inputs[in.name] = *t;
  }
  auto run = [&](const ir::Graph& g) -> std::vector<Tensor> {
    auto exec = runtime::ReferenceExecutor::create(g);
    EXPECT_TRUE(exec.is_ok()) << exec.status().to_string() << "\n" << g.dump();
    if (!exec.is_ok()) return {};
    auto out = exec->run(inputs);
    EXPECT_TRUE(out.is_ok()) << out.status().to_string() << "\n" << g.dump();
    return out.is_ok() ? *out : std::vector<Tensor>{};
  };
  std::vector<Tensor> want = run(before);
  std::vector<Tensor> got = run(after);
  ASSERT_EQ(want.size(), got.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(compare_tensors(got[i], want[i], tol), "")
        << "output " << before.value(before.outputs[i]).name << "\n"
        << after.dump();
  }
}

}  // namespace kiln::testing
