#pragma once
// Runs a single op through the same path a model takes (graph, shape inference, reference
// executor), for op tests. Inputs may be marked constant to exercise shape inference with known
// values.

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor.h"
#include "ir/attribute.h"
#include "runtime/reference_executor.h"

namespace kiln::testing {

struct OpInput {
  std::optional<Tensor> tensor;  // nullopt: the optional input is left out
  bool constant = false;         // an initializer rather than a graph input
};

struct OpCase {
  std::string op_type;
  int opset = 17;  // of the op's domain
  ir::Attributes attrs;
  std::vector<OpInput> inputs;
  int num_outputs = 1;
  std::string domain;  // "" is ai.onnx
};

// The one-node graph run_op runs: node "node0", inputs "in<i>" (initializers when constant),
// outputs "out<i>", shapes inferred; and the feeds for its non-constant inputs.
struct OpGraph {
  ir::Graph graph;
  runtime::NamedTensors feeds;
};
Result<OpGraph> build_op_graph(const OpCase& c);

// Builds a one-node graph, infers shapes, runs it. Errors carry the op's own message.
Result<std::vector<Tensor>> run_op(const OpCase& c);
Result<std::vector<Tensor>> run_op(const OpCase& c, const runtime::ExecutorOptions& options);

// Runs the case and expects it to fail with `code`, naming the node ("node0") and containing
// `fragment` in the message.
void expect_error(const OpCase& c, StatusCode code, const std::string& fragment);

// Shorthand for tensors in tests.
Tensor f32(Dims dims, std::vector<float> values);
Tensor i64(Dims dims, std::vector<int64_t> values);

}  // namespace kiln::testing
