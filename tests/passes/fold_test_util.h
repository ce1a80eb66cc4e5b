#pragma once
// Helpers shared by the cleanup/folding pass tests: initializers of non-float32 dtypes, running a
// pass on a graph edited after import, and checking log entries.

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "passes/pass.h"
#include "testing/onnx_builder.h"

namespace kiln::testing {

inline onnx::TensorProto& typed_initializer(OnnxBuilder& b, const std::string& name, int elem_type,
                                            const std::vector<int64_t>& dims) {
  onnx::TensorProto* t = b.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(elem_type);
  for (int64_t d : dims) t->add_dims(d);
  return *t;
}

inline void int64_initializer(OnnxBuilder& b, const std::string& name, std::vector<int64_t> dims,
                              const std::vector<int64_t>& values) {
  onnx::TensorProto& t = typed_initializer(b, name, onnx::TensorProto::INT64, dims);
  for (int64_t v : values) t.add_int64_data(v);
}

inline void uint8_initializer(OnnxBuilder& b, const std::string& name, std::vector<int64_t> dims,
                              const std::vector<uint8_t>& values) {
  onnx::TensorProto& t = typed_initializer(b, name, onnx::TensorProto::UINT8, dims);
  for (uint8_t v : values) t.add_int32_data(v);
}

inline void bool_initializer(OnnxBuilder& b, const std::string& name, std::vector<int64_t> dims,
                             const std::vector<bool>& values) {
  onnx::TensorProto& t = typed_initializer(b, name, onnx::TensorProto::BOOL, dims);
  for (bool v : values) t.add_int32_data(v ? 1 : 0);
}

inline void double_initializer(OnnxBuilder& b, const std::string& name, std::vector<int64_t> dims,
                               const std::vector<double>& values) {
  onnx::TensorProto& t = typed_initializer(b, name, onnx::TensorProto::DOUBLE, dims);
  for (double v : values) t.add_double_data(v);
}

// Runs `pass` on a graph built or edited by hand (run_pass imports a builder's model instead) and
// checks that the graph is still structurally valid.
inline passes::PassLog run_on(ir::Graph& graph, const passes::PassDef& pass) {
  passes::PassLog log;
  passes::PassContext ctx{log};
  const Status st = pass.run(graph, ctx);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  const Status verified = graph.verify();
  EXPECT_TRUE(verified.is_ok()) << verified.to_string() << "\n" << graph.dump();
  return log;
}

// Succeeds when one of `pass`'s log entries names every one of `names`.
inline ::testing::AssertionResult logged(const passes::PassLog& log, std::string_view pass,
                                         const std::vector<std::string>& names) {
  std::string all;
  for (const passes::PassLogEntry& e : log.entries()) {
    all += "\n  " + e.pass + ": " + e.message;
    if (e.pass != pass) continue;
    bool every = true;
    for (const std::string& n : names) every = every && e.message.find(n) != std::string::npos;
    if (every) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "no " << pass
         << " entry names all of the nodes; log:" << (all.empty() ? " (empty)" : all);
}

}  // namespace kiln::testing
